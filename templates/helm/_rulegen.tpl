{{- /* @@NOTICE@@ */}}
{{- /* rulegen-checksum: sha256:@@RULEGEN_CHECKSUM@@ */}}
{{- /*
Helpers of templates/prometheusrule.yaml (read that file first). The same bytes in every
chart rulegen renders into: nothing here names an app, a group or an alert. Named templates
start with "rulegen.v2." (the chart layout's version), so a chart and a subchart made by
different rulegen versions never redefine each other's.

Values are read defensively: a knob that is absent, null or not of the expected kind (a
string where a map belongs...) counts as unset, so odd values render the defaults, never a
template error. Maps are read with one idiom, on one line:
  $x := get $map "key" ... if not (kindIs "map" $x) ... $x = dict
Gates, group toggles and "disabled" count only as the booleans true/false.
values.schema.json rejects such values before anything renders; --skip-schema-validation
gets this fallback.
*/}}

{{- /*
rulegen.v2.load: (dict "root" . "out" $rg). Finds this template's rules file and fills $rg
with what templates/prometheusrule.yaml writes:
  render      true when every gate is on and at least one group is left;
  name, namespace, labels, annotations   of the PrometheusRule;
  groups      the rule groups left, each rule with every knob applied.
The rules file is the one under rules/ whose "# rulegen-chart:" line names this template
(several specs can render into one chart, each through its own template file).
*/}}
{{- define "rulegen.v2.load" }}
{{- $root := .root }}
{{- $rg := .out }}
{{- $chart := dict }}
{{- $rules := dict }}
{{- $rulesText := "" }}
{{- range $path, $_ := $root.Files.Glob "rules/*.rules.yaml" }}
{{- $text := $root.Files.Get $path }}
{{- $line := regexFind "(?m)^# rulegen-chart: .*$" $text }}
{{- $settings := fromJson (trimPrefix "# rulegen-chart: " $line) }}
{{- if and $line (kindIs "string" (get $settings "template")) (hasSuffix (printf "/templates/%s" (get $settings "template")) $root.Template.Name) }}
{{- $chart = $settings }}
{{- $rules = fromYaml $text }}
{{- $rulesText = $text }}
{{- if hasKey $rules "Error" }}
{{- fail (printf "%s: %s" $path (get $rules "Error")) }}
{{- end }}
{{- end }}
{{- end }}
{{- if not (get $chart "template") }}
{{- fail (printf "%s: no rules/*.rules.yaml names this template in its \"# rulegen-chart:\" line; run rulegen build" $root.Template.Name) }}
{{- end }}

{{- /* Alerts with parameters: "# rulegen-params:" lines, by position "<group>.<rule>". */}}
{{- $paramsAt := dict }}
{{- range $line := regexFindAll "(?m)^# rulegen-params: .*$" $rulesText -1 }}
{{- $p := fromJson (trimPrefix "# rulegen-params: " $line) }}
{{- $_ := set $paramsAt (toString (get $p "at")) $p }}
{{- end }}

{{- /* SLOs: "# rulegen-slo:" lines, by group position "<group>"; each holds the SLO's name,
       its ticket alert and, by rule position in the group, the texts that depend on the
       objective, written with [[objective]], [[budget]], [[objective_percent]] and
       [[budget_percent]]. */}}
{{- $sloAt := dict }}
{{- range $line := regexFindAll "(?m)^# rulegen-slo: .*$" $rulesText -1 }}
{{- $s := fromJson (trimPrefix "# rulegen-slo: " $line) }}
{{- $_ := set $sloAt (toString (get $s "at")) $s }}
{{- end }}

{{- /* The knobs, under .Values.<valuesKey>. */}}
{{- $cfg := get $root.Values (get $chart "valuesKey") }}{{ if not (kindIs "map" $cfg) }}{{ $cfg = dict }}{{ end }}
{{- $disabled := get $cfg "disabled" }}{{ if not (kindIs "map" $disabled) }}{{ $disabled = dict }}{{ end }}
{{- $custom := get $cfg "customRules" }}{{ if not (kindIs "map" $custom) }}{{ $custom = dict }}{{ end }}
{{- $toggles := get $cfg "groups" }}{{ if not (kindIs "map" $toggles) }}{{ $toggles = dict }}{{ end }}
{{- $sloKnobs := get $cfg "slos" }}{{ if not (kindIs "map" $sloKnobs) }}{{ $sloKnobs = dict }}{{ end }}
{{- $globalLabels := get $cfg "additionalRuleLabels" }}{{ if not (kindIs "map" $globalLabels) }}{{ $globalLabels = dict }}{{ end }}
{{- $globalAnnotations := get $cfg "additionalRuleAnnotations" }}{{ if not (kindIs "map" $globalAnnotations) }}{{ $globalAnnotations = dict }}{{ end }}

{{- /* Gates: each "a.b" path of .Values must be the boolean true. */}}
{{- $gates := true }}
{{- range $gate := get $chart "gates" }}
{{- $v := $root.Values }}
{{- range $part := splitList "." $gate }}
{{- $v = and (kindIs "map" $v) (get $v $part) }}
{{- end }}
{{- $gates = and $gates (kindIs "bool" $v) $v }}
{{- end }}

{{- /* runbookUrl: the rules file links each alert to <runbookBase>/<app>/#<anchor>; a
       runbookUrl in values replaces that base. A runbook_url the spec wrote itself to
       another address is kept. */}}
{{- $oldBase := printf "%s/%s/#" (get $chart "runbookBase") (get $chart "app") }}
{{- $newBase := get $cfg "runbookUrl" }}
{{- if and (kindIs "string" $newBase) $newBase }}
{{- $newBase = printf "%s/%s/#" (trimSuffix "/" $newBase) (get $chart "app") }}
{{- else }}
{{- $newBase = $oldBase }}
{{- end }}

{{- $groups := list }}
{{- range $gi, $group := get $rules "groups" }}
{{- $toggle := get $toggles (get $group "name") }}{{ if not (kindIs "map" $toggle) }}{{ $toggle = dict }}{{ end }}
{{- /* An SLO's group: slos.<name>.enabled: false drops it, .ticket: false its ticket
       alert, .objective replaces the objective in the texts the SLO line names. */}}
{{- $slo := get $sloAt (toString $gi) }}{{ if not (kindIs "map" $slo) }}{{ $slo = dict }}{{ end }}
{{- $sloKnob := dict }}
{{- $sloTexts := dict }}
{{- $objective := dict }}
{{- if $slo }}
{{- $sloKnob = get $sloKnobs (get $slo "slo") }}{{ if not (kindIs "map" $sloKnob) }}{{ $sloKnob = dict }}{{ end }}
{{- $sloTexts = get $slo "rules" }}{{ if not (kindIs "map" $sloTexts) }}{{ $sloTexts = dict }}{{ end }}
{{- if hasKey $sloKnob "objective" }}
{{- $objective = include "rulegen.v2.objective" (list (get $sloKnob "objective") (get $slo "slo")) | fromJson }}
{{- end }}
{{- end }}
{{- $sloOff := and (kindIs "bool" (get $sloKnob "enabled")) (not (get $sloKnob "enabled")) }}
{{- $ticketOff := and (kindIs "bool" (get $sloKnob "ticket")) (not (get $sloKnob "ticket")) }}
{{- if not (or $sloOff (and (kindIs "bool" (get $toggle "enabled")) (not (get $toggle "enabled")))) }}
{{- $groupLabels := get $toggle "additionalRuleLabels" }}{{ if not (kindIs "map" $groupLabels) }}{{ $groupLabels = dict }}{{ end }}
{{- $groupAnnotations := get $toggle "additionalRuleAnnotations" }}{{ if not (kindIs "map" $groupAnnotations) }}{{ $groupAnnotations = dict }}{{ end }}
{{- $out := list }}
{{- range $ri, $rule := get $group "rules" }}
{{- $name := get $rule "alert" | default (get $rule "record") }}
{{- $off := get $disabled $name }}
{{- if not (or (and (kindIs "bool" $off) $off) (and $ticketOff (eq $name (get $slo "ticket")))) }}
{{- $o := get $custom $name }}{{ if not (kindIs "map" $o) }}{{ $o = dict }}{{ end }}
{{- $ruleLabels := get $o "labels" }}{{ if not (kindIs "map" $ruleLabels) }}{{ $ruleLabels = dict }}{{ end }}
{{- $r := dict "expr" (get $rule "expr") }}
{{- $sloText := get $sloTexts (toString $ri) }}{{ if not (and $objective (kindIs "map" $sloText)) }}{{ $sloText = dict }}{{ end }}
{{- if hasKey $sloText "expr" }}
{{- $_ := set $r "expr" (include "rulegen.v2.fill" (list (get $sloText "expr") $objective)) }}
{{- end }}
{{- /* Labels: the rule's own < additionalRuleLabels < the group's < customRules.<Rule>.labels
       < customRules.<Rule>.severity. */}}
{{- $labels := deepCopy (get $rule "labels" | default dict) }}
{{- range $layer := list $globalLabels $groupLabels $ruleLabels }}
{{- range $k, $v := $layer }}
{{- $_ := set $labels $k $v }}
{{- end }}
{{- end }}
{{- if hasKey $rule "alert" }}
{{- $_ := set $r "alert" (get $rule "alert") }}
{{- if and (kindIs "string" (get $o "severity")) (get $o "severity") }}
{{- $_ := set $labels "severity" (get $o "severity") }}
{{- end }}
{{- /* Parameters: customRules.<Alert>.params.<name> replaces [[name]] in the expr as the
       spec wrote it; parameters not set keep their defaults. */}}
{{- $set := get $o "params" }}{{ if not (kindIs "map" $set) }}{{ $set = dict }}{{ end }}
{{- $p := get $paramsAt (printf "%d.%d" $gi $ri) }}
{{- if and $p $set }}
{{- $expr := get $p "expr" }}
{{- range $k, $default := get $p "defaults" }}
{{- $v := $default }}
{{- if hasKey $set $k }}{{ $v = include "rulegen.v2.param" (get $set $k) | default $default }}{{ end }}
{{- $expr = replace (printf "[[%s]]" $k) $v $expr }}
{{- end }}
{{- $_ := set $r "expr" $expr }}
{{- end }}
{{- $for := get $o "for" | default (get $rule "for") }}
{{- if $for }}{{ $_ := set $r "for" (toString $for) }}{{ end }}
{{- $keep := get $o "keepFiringFor" | default (get $rule "keep_firing_for") }}
{{- if $keep }}{{ $_ := set $r "keep_firing_for" (toString $keep) }}{{ end }}
{{- /* Annotations: the rule's own (runbook_url on the new base) < additionalRuleAnnotations
       < the group's < customRules.<Rule>.annotations. */}}
{{- $annotations := deepCopy (get $rule "annotations" | default dict) }}
{{- if hasKey $sloText "description" }}
{{- $_ := set $annotations "description" (include "rulegen.v2.fill" (list (get $sloText "description") $objective)) }}
{{- end }}
{{- $url := get $annotations "runbook_url" }}
{{- if and (kindIs "string" $url) (hasPrefix $oldBase $url) }}
{{- $_ := set $annotations "runbook_url" (printf "%s%s" $newBase (trimPrefix $oldBase $url)) }}
{{- end }}
{{- $ruleAnnotations := get $o "annotations" }}{{ if not (kindIs "map" $ruleAnnotations) }}{{ $ruleAnnotations = dict }}{{ end }}
{{- range $layer := list $globalAnnotations $groupAnnotations $ruleAnnotations }}
{{- range $k, $v := $layer }}
{{- $_ := set $annotations $k $v }}
{{- end }}
{{- end }}
{{- $_ := set $r "annotations" $annotations }}
{{- else }}
{{- $_ := set $r "record" (get $rule "record") }}
{{- end }}
{{- $_ := set $r "labels" $labels }}
{{- $out = append $out $r }}
{{- end }}
{{- end }}
{{- if $out }}
{{- $g := omit $group "rules" }}
{{- $_ := set $g "rules" $out }}
{{- $groups = append $groups $g }}
{{- end }}
{{- end }}
{{- end }}

{{- /* The PrometheusRule itself: name, namespace, labels and annotations. */}}
{{- $name := get $chart "name" }}
{{- if not $name }}
{{- $name = get $chart "app" }}
{{- if get $chart "fullname" }}
{{- $name = include (get $chart "fullname") $root }}
{{- if get $chart "nameSuffix" }}{{ $name = printf "%s-%s" $name (get $chart "nameSuffix") }}{{ end }}
{{- end }}
{{- end }}
{{- $meta := dict "app.kubernetes.io/name" (get $chart "app") "app.kubernetes.io/managed-by" $root.Release.Service }}
{{- if get $chart "labelsHelper" }}
{{- $meta = include (get $chart "labelsHelper") $root | fromYaml }}
{{- end }}
{{- $metaLabels := get $cfg "labels" }}{{ if not (kindIs "map" $metaLabels) }}{{ $metaLabels = dict }}{{ end }}
{{- range $k, $v := $metaLabels }}
{{- $_ := set $meta $k $v }}
{{- end }}
{{- $_ := set $rg "render" (and $gates (gt (len $groups) 0)) }}
{{- $_ := set $rg "name" $name }}
{{- $_ := set $rg "namespace" (get $chart "namespace" | default $root.Release.Namespace) }}
{{- $_ := set $rg "labels" $meta }}
{{- $metaAnnotations := get $cfg "annotations" }}{{ if not (kindIs "map" $metaAnnotations) }}{{ $metaAnnotations = dict }}{{ end }}
{{- $_ := set $rg "annotations" $metaAnnotations }}
{{- $_ := set $rg "groups" $groups }}
{{- end }}

{{- /* rulegen.v2.objective: (list $value $slo) -> JSON of the texts an SLO objective of
       $value percent gives (see rulegen/spec/slo.py, ObjectiveTexts): "objective" and
       "budget" as ratios, "objective_percent" and "budget_percent". Computed on decimal
       digits, not floats, so 99.9 gives a budget of exactly 0.001 and the spec's own objective
       gives back the rules file's bytes. $value: a number, or a string holding a decimal
       number (--set gives strings); anything outside (0, 100) fails the render. */}}
{{- define "rulegen.v2.objective" }}
{{- $text := include "rulegen.v2.param" (index . 0) }}
{{- if and (kindIs "float64" (index . 0)) (regexMatch "e" $text) }}
{{- /* a float Go prints with an exponent (0.00001 is 1e-05): 12 decimals, zeros trimmed */}}
{{- $text = trimSuffix "." (regexReplaceAll "0+$" (printf "%.12f" (index . 0)) "") }}
{{- end }}
{{- $slo := index . 1 }}
{{- if not (regexMatch "^[0-9]{1,3}([.][0-9]{1,12})?$" $text) }}
{{- fail (printf "slos.%s.objective: %s is not a percentage such as 99.9" $slo (toString (index . 0))) }}
{{- end }}
{{- $parts := splitList "." $text }}
{{- $frac := "" }}{{ if gt (len $parts) 1 }}{{ $frac = index $parts 1 }}{{ end }}
{{- $k := len $frac }}
{{- $n := atoi (printf "%s%s" (index $parts 0) $frac) }}
{{- $total := atoi (printf "100%s" (repeat $k "0")) }}
{{- if not (and (gt $n 0) (lt $n $total)) }}
{{- fail (printf "slos.%s.objective: %s is not between 0 and 100 (exclusive)" $slo $text) }}
{{- end }}
{{- $b := sub $total $n }}
{{- dict "objective" (include "rulegen.v2.decimal" (list $n (add $k 2))) "budget" (include "rulegen.v2.decimal" (list $b (add $k 2))) "objective_percent" (include "rulegen.v2.decimal" (list $n $k)) "budget_percent" (include "rulegen.v2.decimal" (list $b $k)) | toJson }}
{{- end }}

{{- /* rulegen.v2.decimal: (list $n $d) -> the decimal text of $n x 10^-$d ($n >= 0, whole):
       no trailing zeros after the point, no point when whole (5 3 -> 0.005; 995 1 -> 99.5). */}}
{{- define "rulegen.v2.decimal" }}
{{- $d := int (index . 1) }}
{{- $digits := printf "%0*d" (add $d 1) (index . 0) }}
{{- $whole := substr 0 (int (sub (len $digits) $d)) $digits }}
{{- $frac := regexReplaceAll "0+$" (substr (int (sub (len $digits) $d)) (len $digits) $digits) "" }}
{{- $whole }}{{ if $frac }}.{{ $frac }}{{ end }}
{{- end }}

{{- /* rulegen.v2.fill: (list $text $texts) -> $text with [[objective]], [[budget]],
       [[objective_percent]] and [[budget_percent]] replaced from the map $texts. */}}
{{- define "rulegen.v2.fill" }}
{{- $s := index . 0 }}
{{- range $k, $v := index . 1 }}
{{- $s = replace (printf "[[%s]]" $k) $v $s }}
{{- end }}
{{- $s }}
{{- end }}

{{- /* rulegen.v2.param: a parameter value from values as PromQL text: a string (a duration)
       as it is; a number in decimal, whole numbers without ".0" or an exponent (values files
       give float64, --set gives int64); anything else "" (the default is kept). */}}
{{- define "rulegen.v2.param" }}
{{- if kindIs "string" . }}{{ . }}
{{- else if or (kindIs "int64" .) (kindIs "int" .) }}{{ . }}
{{- else if kindIs "float64" . }}
{{- if and (eq . (float64 (int64 .))) (lt (float64 -1e15) .) (lt . (float64 1e15)) }}{{ int64 . }}{{ else }}{{ . }}{{ end }}
{{- end }}
{{- end }}

{{- /*
rulegen.v2.scalar: (list $value $indent) writes $value (a string, or anything toString
turns into one) as a YAML scalar that reads back as exactly that string (Go's text/template
and sprig functions only: no regular expression, which costs a compile per call):
  plain       when no YAML reader (1.1 or 1.2) could take it for anything else: printable
              ASCII starting with a letter or "_", without ": " or " #", not ending with a
              space or ":", not a YAML word (true, yes, on, null...); or digits and the
              duration units s m h d w y, starting with a digit and ending with a unit (5m);
  |  or  |-   a literal block, lines indented to column $indent (0: never, for keys), for
              multi-line text a block holds exactly: every character printable (Go's
              strconv.IsPrint) or a line break, no line ending in a space, not starting
              with a space or a line break, not ending with two line breaks;
  "..."       else: Go's %q quoting (strconv.Quote), whose escapes (\n, \t, \x7f, \u0085,
              \u2028, \ufeff...) are all YAML double-quoted escapes of the same characters.
*/}}
{{- define "rulegen.v2.scalar" }}
{{- $s := toString (index . 0) }}
{{- $first := substr 0 1 $s }}
{{- if and $s (eq (trimAll " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~" $s) "") (or (and (contains $first "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_") (not (contains ": " $s)) (not (contains " #" $s)) (not (hasSuffix " " $s)) (not (hasSuffix ":" $s)) (or (gt (len $s) 5) (not (has (lower $s) (list "y" "n" "yes" "no" "on" "off" "true" "false" "null"))))) (and (contains $first "0123456789") (eq (trimAll "0123456789smhdwy" $s) "") (not (contains (substr (int (sub (len $s) 1)) -1 $s) "0123456789")))) }}
{{- $s }}
{{- else if and (ne (index . 1) 0) (contains "\n" $s) (not (hasPrefix " " $s)) (not (hasPrefix "\n" $s)) (not (contains " \n" $s)) (not (hasSuffix " " $s)) (not (hasSuffix "\n\n" $s)) (eq (printf "%q" (replace "\n" "" $s)) (printf "\"%s\"" (replace "\"" "\\\"" (replace "\\" "\\\\" (replace "\n" "" $s))))) }}
{{- if hasSuffix "\n" $s }}|{{ else }}|-{{ end }}
{{- $pad := repeat (int (index . 1)) " " }}
{{- range $line := splitList "\n" (trimSuffix "\n" $s) }}
{{ if $line }}{{ $pad }}{{ $line }}{{ end }}
{{- end }}
{{- else }}
{{- printf "%q" $s }}
{{- end }}
{{- end }}
