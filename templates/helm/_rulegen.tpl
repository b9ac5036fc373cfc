{{- /* @@NOTICE@@ */}}
{{- /*
The library chart of a project: rulegen build writes it once, as
charts/rulegen-library/templates/_rulegen.tpl (Chart.yaml "type: library"), and each app chart
holds it as the subchart charts/<app>/charts/rulegen-library, a symlink to
../../rulegen-library; its templates/prometheusrule.yaml (read that file first) is one include
of rulegen.v3.prometheusrule. Nothing here names an app, a group or an alert. Named templates
start with "rulegen.v3." (the chart layout's version), so a chart and a subchart made by
different rulegen versions never redefine each other's; within v3 a name keeps what it takes
and returns, whichever rulegen version wrote the file Helm happens to load last.

One define per job, each with a usage comment: what it takes, what it returns, an example.
An include returns text only, so a define that builds maps or lists fills a dict its caller
passes ("out", or the first element of the list) instead.

Values are read defensively: a knob that is absent, null or not of the expected kind (a
string where a map belongs...) counts as unset, so odd values render the defaults, never a
template error. Every map is read through rulegen.v3.maps. Gates, group toggles and
"disabled" count only as the booleans true/false. values.schema.json rejects such values
before anything renders; --skip-schema-validation gets this fallback. Values are never
changed in place: every map the template changes is its own copy.
*/}}

{{- /*
rulegen.v3.load: the one entry point. Takes (dict "root" . "out" $rg); fills $rg with what
templates/prometheusrule.yaml writes:
  render      true when every gate is on and at least one group is left;
  name, namespace, labels, annotations   of the PrometheusRule;
  groups      the rule groups left, each rule with every knob applied.
Example:
  {{- $rg := dict }}{{ include "rulegen.v3.load" (dict "root" . "out" $rg) }}
  {{- if $rg.render }}...{{ end }}
*/}}
{{- define "rulegen.v3.load" }}
{{- $c := dict "root" .root }}
{{- include "rulegen.v3.files" $c }}
{{- $chart := $c.chart }}
{{- $p := dict }}{{ include "rulegen.v3.maps" (list $p $chart "params" "slos") }}
{{- $_ := set $c "params" $p.params }}
{{- $_ := set $c "sloOf" (dict) }}
{{- range $name, $slo := $p.slos }}
{{- if and (kindIs "map" $slo) (kindIs "string" (get $slo "group")) }}
{{- $_ := set $c.sloOf (get $slo "group") (merge (dict "slo" $name) $slo) }}
{{- end }}
{{- end }}
{{- $m := dict }}{{ include "rulegen.v3.maps" (list $m .root.Values (get $chart "valuesKey")) }}
{{- $cfg := get $m (get $chart "valuesKey") }}
{{- $k := dict }}
{{- include "rulegen.v3.maps" (list $k $cfg "disabled" "customRules" "groups" "slos"
      "additionalRuleLabels" "additionalRuleAnnotations" "labels" "annotations") }}
{{- $_ := set $c "knobs" $k }}
{{- $gates := include "rulegen.v3.gates" (list .root.Values (get $chart "gates")) }}
{{- $_ := set $c "oldBase" (printf "%s/%s/#" (get $chart "runbookBase") (get $chart "app")) }}
{{- $_ := set $c "newBase" (include "rulegen.v3.runbookBase" (list $chart (get $cfg "runbookUrl"))) }}
{{- include "rulegen.v3.groups" $c }}
{{- include "rulegen.v3.metadata" (dict "c" $c "out" .out) }}
{{- $_ := set .out "render" (and (eq $gates "true") (gt (len $c.groups) 0)) }}
{{- $_ := set .out "groups" $c.groups }}
{{- end }}

{{- /*
rulegen.v3.maps: reads maps defensively. Takes (list $out $from "key"...); sets $out.<key>
to $from.<key> when that is a map, else to an empty dict (also when $from is no map). Returns
nothing; $from is not changed (the maps in $out are $from's own: copy before changing them).
Example:
  {{- $k := dict }}{{ include "rulegen.v3.maps" (list $k .Values.prometheusRule "labels") }}
  {{- range $name, $value := $k.labels }}...{{ end }}
*/}}
{{- define "rulegen.v3.maps" }}
{{- $out := first . }}
{{- $from := index . 1 }}
{{- range $key := slice . 2 }}
{{- $x := and (kindIs "map" $from) (get $from $key) }}
{{- if kindIs "map" $x }}{{ $_ := set $out $key $x }}{{ else }}{{ $_ := set $out $key (dict) }}{{ end }}
{{- end }}
{{- end }}

{{- /*
rulegen.v3.layers: (list $into $layer...) sets every key of each map $layer into the map
$into, later layers winning; an empty string is a value like any other. Returns nothing.
Example (labels: the rule's own < global < group < the rule's knob):
  {{- include "rulegen.v3.layers" (list $labels $k.additionalRuleLabels $group $rule) }}
*/}}
{{- define "rulegen.v3.layers" }}
{{- $into := first . }}
{{- range $layer := rest . }}
{{- range $k, $v := $layer }}
{{- $_ := set $into $k $v }}
{{- end }}
{{- end }}
{{- end }}

{{- /*
rulegen.v3.files: takes the context dict $c (with "root", the chart's top-level context)
and finds the metadata file rules/*.meta.yaml whose "template" names this template (several
specs can render into one chart, each through its own template file), then the rules file it
names under rules/. Sets $c.chart (the metadata: settings, "params", "slos"; see the comments
in that file) and $c.rules (the parsed rules file); fails when no metadata file names the
template, its rules file is missing or a file is no YAML. Example:
  {{- $c := dict "root" . }}{{ include "rulegen.v3.files" $c }}{{ get $c.chart "app" }}
*/}}
{{- define "rulegen.v3.files" }}
{{- $c := . }}
{{- $root := .root }}
{{- $_ := set $c "chart" (dict) }}
{{- range $path, $_ := $root.Files.Glob "rules/*.meta.yaml" }}
{{- $meta := $root.Files.Get $path | fromYaml }}
{{- if hasKey $meta "Error" }}
{{- fail (printf "%s: %s" $path (get $meta "Error")) }}
{{- end }}
{{- $template := get $meta "template" }}
{{- if and (kindIs "string" $template) (hasSuffix (printf "/templates/%s" $template) $root.Template.Name) }}
{{- $rulesPath := printf "rules/%s" (get $meta "rules") }}
{{- $text := $root.Files.Get $rulesPath }}
{{- if not $text }}
{{- fail (printf "%s: %s names the rules file %s, which is missing or empty; run rulegen build"
      $root.Template.Name $path $rulesPath) }}
{{- end }}
{{- $rules := fromYaml $text }}
{{- if hasKey $rules "Error" }}
{{- fail (printf "%s: %s" $rulesPath (get $rules "Error")) }}
{{- end }}
{{- $_ := set $c "chart" $meta }}
{{- $_ := set $c "rules" $rules }}
{{- end }}
{{- end }}
{{- if not (get $c.chart "template") }}
{{- fail (printf "%s: no rules/*.meta.yaml names this template (template: ...); run rulegen build"
      $root.Template.Name) }}
{{- end }}
{{- end }}

{{- /*
rulegen.v3.text: a text of the metadata file -> the string: a list of pieces (a long text,
cut so that no line of the file is over 120 characters) joined, else the value as a string.
Example:
  {{ include "rulegen.v3.text" (list "up == " "0") }}  -> up == 0
*/}}
{{- define "rulegen.v3.text" }}{{ if kindIs "slice" . }}{{ join "" . }}{{ else }}{{ toString . }}{{ end }}{{ end }}

{{- /*
rulegen.v3.gates: (list .Values $gates) -> "true" when each "a.b" path of $gates is the
boolean true in the values (also when there are no gates), else "". Example:
  {{- if eq (include "rulegen.v3.gates" (list .Values (list "monitoring.enabled"))) "true" }}
*/}}
{{- define "rulegen.v3.gates" }}
{{- $values := first . }}
{{- $on := true }}
{{- range $gate := index . 1 }}
{{- $v := $values }}
{{- range $part := splitList "." $gate }}
{{- $v = and (kindIs "map" $v) (get $v $part) }}
{{- end }}
{{- $on = and $on (kindIs "bool" $v) $v }}
{{- end }}
{{- if $on }}true{{ end }}
{{- end }}

{{- /*
rulegen.v3.runbookBase: (list $chart $runbookUrl) -> what each generated runbook_url starts
with: "<runbookUrl>/<app>/#" when the knob runbookUrl is a non-empty string (one trailing
"/" dropped), else the rules file's own "<runbookBase>/<app>/#". A runbook_url the spec wrote
itself to another address is kept (see rulegen.v3.annotations). Example:
  {{ include "rulegen.v3.runbookBase" (list $chart "https://wiki/rb/") }}  -> https://wiki/rb/app/#
*/}}
{{- define "rulegen.v3.runbookBase" }}
{{- $chart := first . }}
{{- $url := index . 1 }}
{{- if and (kindIs "string" $url) $url }}
{{- printf "%s/%s/#" (trimSuffix "/" $url) (get $chart "app") }}
{{- else }}
{{- printf "%s/%s/#" (get $chart "runbookBase") (get $chart "app") }}
{{- end }}
{{- end }}

{{- /*
rulegen.v3.groups: takes the context dict $c of rulegen.v3.load (rules, knobs...); sets
$c.groups to the rule groups left: each group as the rules file has it, its rules with every
knob applied (rulegen.v3.group), and only while one rule is left. Returns nothing. Example:
  {{- include "rulegen.v3.groups" $c }}{{ len $c.groups }}
*/}}
{{- define "rulegen.v3.groups" }}
{{- $c := . }}
{{- $groups := list }}
{{- range $group := get $c.rules "groups" }}
{{- $g := dict "c" $c "group" $group "rules" (list) }}
{{- include "rulegen.v3.group" $g }}
{{- if $g.rules }}
{{- $new := omit $group "rules" }}
{{- $_ := set $new "rules" $g.rules }}
{{- $groups = append $groups $new }}
{{- end }}
{{- end }}
{{- $_ := set $c "groups" $groups }}
{{- end }}

{{- /*
rulegen.v3.group: takes $g, a dict with "c" (the context) and "group" (as in the rules
file); sets $g.rules to its rules left with every knob applied, empty when
groups.<name>.enabled or slos.<slo>.enabled is false. Also sets what its rules read: the
SLO fields of rulegen.v3.slo, the group's alerts with parameters ($g.params, from the
metadata file) and the group's additionalRuleLabels/Annotations. Each rule is passed its key
in the metadata file: its name, "<name>#2" for the second rule of that name in the group,
and so on. Example:
  {{- $g := dict "c" $c "group" $group }}{{ include "rulegen.v3.group" $g }}{{ len $g.rules }}
*/}}
{{- define "rulegen.v3.group" }}
{{- $g := . }}
{{- $m := dict }}{{ include "rulegen.v3.maps" (list $m .c.knobs.groups (get .group "name")) }}
{{- $toggle := get $m (get .group "name") }}
{{- include "rulegen.v3.slo" $g }}
{{- $pm := dict }}{{ include "rulegen.v3.maps" (list $pm .c.params (get .group "name")) }}
{{- $_ := set $g "params" (get $pm (get .group "name")) }}
{{- $_ := set $g "rules" (list) }}
{{- if not (or $g.sloOff (and (kindIs "bool" (get $toggle "enabled")) (not (get $toggle "enabled")))) }}
{{- include "rulegen.v3.maps" (list $g $toggle "additionalRuleLabels" "additionalRuleAnnotations") }}
{{- $seen := dict }}
{{- range $rule := get $g.group "rules" }}
{{- $name := toString (get $rule "alert" | default (get $rule "record")) }}
{{- $n := add1 (get $seen $name | default 0) }}{{ $_ := set $seen $name $n }}
{{- $key := $name }}{{ if gt $n 1 }}{{ $key = printf "%s#%d" $name $n }}{{ end }}
{{- $r := dict }}
{{- include "rulegen.v3.rule" (dict "g" $g "rule" $rule "key" $key "out" $r) }}
{{- if $r }}{{ $_ := set $g "rules" (append $g.rules $r) }}{{ end }}
{{- end }}
{{- end }}
{{- end }}

{{- /*
rulegen.v3.slo: takes $g of rulegen.v3.group; when the group is an SLO's (the metadata
file's slos.<slo>.group names it) reads slos.<slo> from the knobs. Sets $g.slo (the SLO's
metadata with its name as "slo", or an empty dict), $g.budget (the error budget of
slos.<slo>.objective as decimal text, see rulegen.v3.budget, or "" when not set), $g.sloOff
(slos.<slo>.enabled is false) and $g.ticketOff (slos.<slo>.ticket is false). Example:
  {{- include "rulegen.v3.slo" $g }}{{ if $g.sloOff }}...{{ end }}
*/}}
{{- define "rulegen.v3.slo" }}
{{- $g := . }}
{{- $m := dict }}{{ include "rulegen.v3.maps" (list $m .c.sloOf (toString (get .group "name"))) }}
{{- $slo := get $m (toString (get .group "name")) }}
{{- $knob := dict }}
{{- $_ := set $g "budget" "" }}
{{- if $slo }}
{{- $k := dict }}{{ include "rulegen.v3.maps" (list $k .c.knobs.slos (get $slo "slo")) }}
{{- $knob = get $k (get $slo "slo") }}
{{- if hasKey $knob "objective" }}
{{- $_ := set $g "budget" (include "rulegen.v3.budget" (list (get $knob "objective") (get $slo "slo"))) }}
{{- end }}
{{- end }}
{{- $_ := set $g "slo" $slo }}
{{- $_ := set $g "sloOff" (and (kindIs "bool" (get $knob "enabled")) (not (get $knob "enabled"))) }}
{{- $_ := set $g "ticketOff" (and (kindIs "bool" (get $knob "ticket")) (not (get $knob "ticket"))) }}
{{- end }}

{{- /*
rulegen.v3.rule: takes (dict "g" $g "rule" $rule "key" $key "out" $r), a rule of the rules
file in the group $g (of rulegen.v3.group), $key its key in the metadata file (see
rulegen.v3.group). Fills the empty dict $r with the rule
as it renders (alert or record, expr, for, keep_firing_for, labels, annotations), or leaves
it empty when disabled.<Rule> is true or it is the ticket alert of an SLO whose ticket is off.
When slos.<slo>.objective is set, the SLO's budget rule (the metadata file's budgetRule, the
one rule that holds the objective) gets the budgetExpr with [[budget]] replaced by $g.budget.
Labels: the rule's own < additionalRuleLabels < the group's < customRules.<Rule>.labels
(< customRules.<Alert>.severity, see rulegen.v3.alert). Example:
  {{- $r := dict }}{{ include "rulegen.v3.rule" (dict "g" $g "rule" $rule "key" "Up" "out" $r) }}
*/}}
{{- define "rulegen.v3.rule" }}
{{- $g := .g }}{{ $k := .g.c.knobs }}{{ $rule := .rule }}{{ $r := .out }}
{{- $name := get $rule "alert" | default (get $rule "record") }}
{{- $off := get $k.disabled $name }}
{{- if not (or (and (kindIs "bool" $off) $off) (and $g.ticketOff (eq $name (get $g.slo "ticket")))) }}
{{- $m := dict }}{{ include "rulegen.v3.maps" (list $m $k.customRules $name) }}
{{- $o := get $m $name }}
{{- $om := dict }}{{ if $o }}{{ include "rulegen.v3.maps" (list $om $o "labels" "params" "annotations") }}{{ end }}
{{- $_ := set $r "expr" (get $rule "expr") }}
{{- if and $g.budget (eq .key (toString (get $g.slo "budgetRule"))) }}
{{- $_ := set $r "expr" (replace "[[budget]]" $g.budget (include "rulegen.v3.text" (get $g.slo "budgetExpr"))) }}
{{- end }}
{{- $labels := deepCopy (get $rule "labels" | default dict) }}
{{- include "rulegen.v3.layers" (list $labels $k.additionalRuleLabels $g.additionalRuleLabels $om.labels) }}
{{- if hasKey $rule "alert" }}
{{- include "rulegen.v3.alert"
      (dict "g" $g "rule" $rule "key" .key "o" $o "om" $om "labels" $labels "out" $r) }}
{{- else }}
{{- $_ := set $r "record" (get $rule "record") }}
{{- end }}
{{- $_ := set $r "labels" $labels }}
{{- end }}
{{- end }}

{{- /*
rulegen.v3.alert: what only alerts have, for rulegen.v3.rule: takes its dict plus "o" (the
knob customRules.<Alert>), "om" (that knob's maps) and "labels" (the rule's labels, changed
in place). Sets $r.alert, customRules.<Alert>.severity
into the labels, the expr with customRules.<Alert>.params (rulegen.v3.params), for and
keep_firing_for (customRules.<Alert>.for, .keepFiringFor, else the rule's), and
$r.annotations (rulegen.v3.annotations). Returns nothing. Example:
  {{- include "rulegen.v3.alert"
        (dict "g" $g "rule" $rule "key" "Up" "o" $o "om" $om "labels" $l "out" $r) }}
*/}}
{{- define "rulegen.v3.alert" }}
{{- $r := .out }}{{ $rule := .rule }}{{ $o := .o }}
{{- $_ := set $r "alert" (get $rule "alert") }}
{{- if and (kindIs "string" (get $o "severity")) (get $o "severity") }}
{{- $_ := set .labels "severity" (get $o "severity") }}
{{- end }}
{{- $pm := dict }}{{ include "rulegen.v3.maps" (list $pm .g.params .key) }}
{{- $p := get $pm .key }}
{{- if and $p .om.params }}
{{- $_ := set $r "expr" (include "rulegen.v3.params" (list $p .om.params)) }}
{{- end }}
{{- $for := get $o "for" | default (get $rule "for") }}
{{- if $for }}{{ $_ := set $r "for" (toString $for) }}{{ end }}
{{- $keep := get $o "keepFiringFor" | default (get $rule "keep_firing_for") }}
{{- if $keep }}{{ $_ := set $r "keep_firing_for" (toString $keep) }}{{ end }}
{{- $annotations := deepCopy (get $rule "annotations" | default dict) }}
{{- include "rulegen.v3.annotations" (dict "c" .g.c "g" .g "om" .om "out" $annotations) }}
{{- $_ := set $r "annotations" $annotations }}
{{- end }}

{{- /*
rulegen.v3.annotations: takes (dict "c" $c "g" $g "om" $om "out" $a), $a a copy of the
alert's own annotations, and changes $a in place: runbook_url moved from the rules file's
base to the knob runbookUrl's (rulegen.v3.runbookBase), then additionalRuleAnnotations < the
group's < customRules.<Alert>.annotations. Returns nothing. Example:
  {{- include "rulegen.v3.annotations" (dict "c" $c "g" $g "om" $om "out" $a) }}
*/}}
{{- define "rulegen.v3.annotations" }}
{{- $a := .out }}{{ $c := .c }}
{{- $url := get $a "runbook_url" }}
{{- if and (kindIs "string" $url) (hasPrefix $c.oldBase $url) }}
{{- $_ := set $a "runbook_url" (printf "%s%s" $c.newBase (trimPrefix $c.oldBase $url)) }}
{{- end }}
{{- include "rulegen.v3.layers"
      (list $a $c.knobs.additionalRuleAnnotations .g.additionalRuleAnnotations .om.annotations) }}
{{- end }}

{{- /*
rulegen.v3.params: (list $p $set) -> the expr of $p, an alert of the metadata file's
"params" (its expr as the spec wrote it, its defaults), with each [[name]] replaced by
customRules.<Alert>.params.<name> from the map $set (rulegen.v3.param), or by the default
when not set or of no usable kind. Example:
  {{ include "rulegen.v3.params" (list $p (dict "threshold" 0.95)) }}  -> ... > 0.95
*/}}
{{- define "rulegen.v3.params" }}
{{- $line := first . }}
{{- $set := index . 1 }}
{{- $expr := include "rulegen.v3.text" (get $line "expr") }}
{{- range $k, $d := get $line "defaults" }}
{{- $default := include "rulegen.v3.text" $d }}
{{- $v := $default }}
{{- if hasKey $set $k }}{{ $v = include "rulegen.v3.param" (get $set $k) | default $default }}{{ end }}
{{- $expr = replace (printf "[[%s]]" $k) $v $expr }}
{{- end }}
{{- toString $expr }}
{{- end }}

{{- /*
rulegen.v3.metadata: (dict "c" $c "out" $rg) sets the PrometheusRule's name, namespace,
labels and annotations into $rg. Name: the spec's chart.name, else the chart's fullname
helper (plus "-<nameSuffix>" for a template other than the default), else the app.
Namespace: the spec's chart.namespace, else the release's. Labels: the chart's labels
helper (else name and managed-by) < the knob labels. Annotations: the knob annotations.
Example:
  {{- include "rulegen.v3.metadata" (dict "c" $c "out" $rg) }}{{ $rg.name }}
*/}}
{{- define "rulegen.v3.metadata" }}
{{- $root := .c.root }}{{ $chart := .c.chart }}
{{- $name := get $chart "name" }}
{{- if not $name }}
{{- $name = get $chart "app" }}
{{- if get $chart "fullname" }}
{{- $name = include (get $chart "fullname") $root }}
{{- if get $chart "nameSuffix" }}{{ $name = printf "%s-%s" $name (get $chart "nameSuffix") }}{{ end }}
{{- end }}
{{- end }}
{{- $labels := dict "app.kubernetes.io/name" (get $chart "app") "app.kubernetes.io/managed-by" $root.Release.Service }}
{{- if get $chart "labelsHelper" }}
{{- $labels = include (get $chart "labelsHelper") $root | fromYaml }}
{{- end }}
{{- include "rulegen.v3.layers" (list $labels .c.knobs.labels) }}
{{- $_ := set .out "name" $name }}
{{- $_ := set .out "namespace" (get $chart "namespace" | default $root.Release.Namespace) }}
{{- $_ := set .out "labels" $labels }}
{{- $_ := set .out "annotations" .c.knobs.annotations }}
{{- end }}

{{- /*
rulegen.v3.budget: (list $value $slo) -> the error budget an SLO objective of $value percent
leaves, as a ratio in decimal text (see rulegen/spec/slo/texts.py, budget_text): 100 minus
the objective, over 100. Computed on decimal digits, not floats, so 99.9 gives exactly 0.001
and the spec's own objective gives back the rules file's bytes. $value: as
rulegen.v3.percent takes it; fails the render outside (0, 100) and at or below 1 (a ratio
written where a percentage is meant: the message gives the value times 100). Example:
  {{ include "rulegen.v3.budget" (list 99.9 "availability") }}  -> 0.001
*/}}
{{- define "rulegen.v3.budget" }}
{{- $slo := index . 1 }}
{{- $text := include "rulegen.v3.percent" . }}
{{- $parts := splitList "." $text }}
{{- $frac := "" }}{{ if gt (len $parts) 1 }}{{ $frac = index $parts 1 }}{{ end }}
{{- $k := len $frac }}
{{- $n := atoi (printf "%s%s" (index $parts 0) $frac) }}
{{- $total := atoi (printf "100%s" (repeat $k "0")) }}
{{- if not (and (gt $n 0) (lt $n $total)) }}
{{- fail (printf "slos.%s.objective: %s is not between 0 and 100 (exclusive)" $slo $text) }}
{{- end }}
{{- $one := atoi (printf "1%s" (repeat $k "0")) }}
{{- if le $n $one }}
{{- $times := "" }}
{{- if ge $k 2 }}{{ $times = include "rulegen.v3.decimal" (list $n (sub $k 2)) }}
{{- else }}{{ $times = toString (mul $n (ternary 100 10 (eq $k 0))) }}{{ end }}
{{- fail (printf "slos.%s.objective: %s is a ratio where a percentage is meant (at or below 1, the SLO would never page); write the percentage: %s" $slo $text (ternary "a value below 100, e.g. 99.9" $times (eq $n $one))) }}
{{- end }}
{{- include "rulegen.v3.decimal" (list (sub $total $n) (add $k 2)) }}
{{- end }}

{{- /*
rulegen.v3.percent: (list $value $slo) -> $value as decimal text of at most 3 whole and 12
fraction digits, or fails the render naming slos.<$slo>.objective. $value: a number, or a
string holding a decimal number (--set gives strings); a float Go prints with an exponent
(0.00001 is 1e-05) is written with 12 decimals, zeros trimmed. Example:
  {{ include "rulegen.v3.percent" (list 0.00001 "availability") }}  -> 0.00001
*/}}
{{- define "rulegen.v3.percent" }}
{{- $value := first . }}
{{- $text := include "rulegen.v3.param" $value }}
{{- if and (kindIs "float64" $value) (regexMatch "e" $text) }}
{{- $text = trimSuffix "." (regexReplaceAll "0+$" (printf "%.12f" $value) "") }}
{{- end }}
{{- if not (regexMatch "^[0-9]{1,3}([.][0-9]{1,12})?$" $text) }}
{{- fail (printf "slos.%s.objective: %s is not a percentage such as 99.9" (index . 1) (toString $value)) }}
{{- end }}
{{- $text }}
{{- end }}

{{- /*
rulegen.v3.decimal: (list $n $d) -> the decimal text of $n x 10^-$d ($n >= 0, whole): no
trailing zeros after the point, no point when whole. Example:
  {{ include "rulegen.v3.decimal" (list 5 3) }}  -> 0.005      (list 995 1) -> 99.5
*/}}
{{- define "rulegen.v3.decimal" }}
{{- $d := int (index . 1) }}
{{- $digits := printf "%0*d" (add $d 1) (index . 0) }}
{{- $whole := substr 0 (int (sub (len $digits) $d)) $digits }}
{{- $frac := regexReplaceAll "0+$" (substr (int (sub (len $digits) $d)) (len $digits) $digits) "" }}
{{- $whole }}{{ if $frac }}.{{ $frac }}{{ end }}
{{- end }}

{{- /*
rulegen.v3.param: a parameter value from values -> its PromQL text: a string (a duration)
as it is; a number in decimal, whole numbers without ".0" or an exponent (values files give
float64, --set gives int64); anything else "" (the caller keeps its default). Example:
  {{ include "rulegen.v3.param" 1000000.0 }}  -> 1000000      "5m" -> 5m      2.5e-07 -> 2.5e-07
*/}}
{{- define "rulegen.v3.param" }}
{{- if kindIs "string" . }}{{ . }}
{{- else if or (kindIs "int64" .) (kindIs "int" .) }}{{ . }}
{{- else if kindIs "float64" . }}
{{- if and (eq . (float64 (int64 .))) (lt (float64 -1e15) .) (lt . (float64 1e15)) }}{{ int64 . }}
{{- else }}{{ . }}{{ end }}
{{- end }}
{{- end }}

{{- /*
rulegen.v3.scalar: (list $value $indent) writes $value (a string, or anything toString turns
into one) as a YAML scalar that reads back as exactly that string. Not toYaml: Helm's YAML
writer (go-yaml v2) folds lines longer than 80 characters, quotes differently, drops the
line break of "\n"-only and NEL texts and writes C1 controls raw. Written with Go's
text/template and sprig functions only (no regular expression, which costs a compile per
call; "and"/"or" stop at the first argument that decides). The scalar is, the first that fits:
  plain       no YAML reader (1.1 or 1.2) could take it for anything else: printable ASCII
              that is either a word: starting with a letter or "_", without ": " or " #",
              not ending with a space or ":", not a YAML word (true, yes, on, null... in any
              case); or a duration: digits and the units s m h d w y, starting with a digit
              and ending with a unit (5m);
  |  or  |-   a literal block, lines indented to column $indent (0: never, for keys and
              one-line places), for multi-line text a block holds exactly: every character
              printable (Go's strconv.IsPrint) or a line break, no line ending in a space,
              not starting with a space or a line break, not ending with two line breaks;
  "..."       else: Go's %q quoting (strconv.Quote), whose escapes (\n, \t, \x7f, \u0085,
              \u2028, \ufeff...) are all YAML double-quoted escapes of the same characters.
Example:
  expr: {{ include "rulegen.v3.scalar" (list $rule.expr 12) }}
  -> expr: up == 0        expr: "a: b"        expr: |-  (then the lines, at column 12)
*/}}
{{- define "rulegen.v3.scalar" }}
{{- $s := toString (index . 0) }}
{{- $first := substr 0 1 $s }}
{{- if and $s
      (eq (trimAll
        " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~" $s) "")
      (or (and (contains $first "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
               (not (contains ": " $s)) (not (contains " #" $s)) (not (hasSuffix " " $s)) (not (hasSuffix ":" $s))
               (or (gt (len $s) 5) (not (has (lower $s) (list "y" "n" "yes" "no" "on" "off" "true" "false" "null")))))
          (and (contains $first "0123456789") (eq (trimAll "0123456789smhdwy" $s) "")
               (not (contains (substr (int (sub (len $s) 1)) -1 $s) "0123456789")))) }}
{{- $s }}
{{- else if and (ne (index . 1) 0) (contains "\n" $s) (not (hasPrefix " " $s)) (not (hasPrefix "\n" $s))
      (not (contains " \n" $s)) (not (hasSuffix " " $s)) (not (hasSuffix "\n\n" $s))
      (eq (printf "%q" (replace "\n" "" $s))
          (printf "\"%s\"" (replace "\"" "\\\"" (replace "\\" "\\\\" (replace "\n" "" $s))))) }}
{{- if hasSuffix "\n" $s }}|{{ else }}|-{{ end }}
{{- $pad := repeat (int (index . 1)) " " }}
{{- range $line := splitList "\n" (trimSuffix "\n" $s) }}
{{ if $line }}{{ $pad }}{{ $line }}{{ end }}
{{- end }}
{{- else }}
{{- printf "%q" $s }}
{{- end }}
{{- end }}

{{- /*
rulegen.v3.prometheusrule: the whole PrometheusRule of the chart whose context is passed (each
chart's templates/prometheusrule.yaml is one include of it). Takes the chart's root context
"."; returns the manifest, or nothing when a gate is off or no group is left. Strings are
written with rulegen.v3.scalar, which reads back byte for byte; numbers with toYaml.
Example:
  {{- include "rulegen.v3.prometheusrule" . }}
*/}}
{{- define "rulegen.v3.prometheusrule" }}
{{- $rg := dict }}
{{- include "rulegen.v3.load" (dict "root" . "out" $rg) }}
{{- if $rg.render }}
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ include "rulegen.v3.scalar" (list $rg.name 0) }}
  namespace: {{ include "rulegen.v3.scalar" (list $rg.namespace 0) }}
  labels:
    {{- range $k, $v := $rg.labels }}
    {{ include "rulegen.v3.scalar" (list $k 0) }}: {{ include "rulegen.v3.scalar" (list $v 0) }}
    {{- end }}
  {{- with $rg.annotations }}
  annotations:
    {{- range $k, $v := . }}
    {{ include "rulegen.v3.scalar" (list $k 0) }}: {{ include "rulegen.v3.scalar" (list $v 0) }}
    {{- end }}
  {{- end }}
spec:
  groups:
    {{- range $group := $rg.groups }}
    - name: {{ include "rulegen.v3.scalar" (list $group.name 8) }}
      {{- range $key := list "interval" "query_offset" }}
      {{- if hasKey $group $key }}
      {{ $key }}: {{ include "rulegen.v3.scalar" (list (get $group $key) 8) }}
      {{- end }}
      {{- end }}
      {{- if hasKey $group "limit" }}
      limit: {{ int64 $group.limit | toYaml }}
      {{- end }}
      rules:
        {{- range $rule := $group.rules }}
        {{- if hasKey $rule "alert" }}
        - alert: {{ include "rulegen.v3.scalar" (list $rule.alert 12) }}
        {{- else }}
        - record: {{ include "rulegen.v3.scalar" (list $rule.record 12) }}
        {{- end }}
          expr: {{ include "rulegen.v3.scalar" (list $rule.expr 12) }}
          {{- range $key := list "for" "keep_firing_for" }}
          {{- if hasKey $rule $key }}
          {{ $key }}: {{ include "rulegen.v3.scalar" (list (get $rule $key) 12) }}
          {{- end }}
          {{- end }}
          {{- range $key := list "labels" "annotations" }}
          {{- with get $rule $key }}
          {{ $key }}:
            {{- range $k, $v := . }}
            {{ include "rulegen.v3.scalar" (list $k 0) }}: {{ include "rulegen.v3.scalar" (list $v 14) }}
            {{- end }}
          {{- end }}
          {{- end }}
        {{- end }}
    {{- end }}
{{- end }}
{{- end }}
