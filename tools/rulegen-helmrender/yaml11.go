package main

// When rulegen reads a rendered manifest exactly as Kubernetes does.
//
// rulegen parses manifests with PyYAML, which reads YAML 1.1's implicit types (`2024-01-31`
// a date, `1:30` the integer 90, `yes` a boolean, `1_000` an integer); Kubernetes reads them
// with sigs.k8s.io/yaml, which reads some of them otherwise (the date and `1:30` stay
// strings). Where the two readings of a PrometheusRule could differ, rulegen's check could
// report what the API server accepts (or the reverse), so this helper does not judge it. The
// tests below over-approximate: a scalar that might be of another type than a string for
// PyYAML is left to rulegen unless it is a plain decimal integer, which both read alike. The
// types and their forms are those of the YAML 1.1 type repository (yaml.org/type: bool, int,
// float, null, timestamp, merge, value); tests/gitops/test_sync_judge.py holds the tests to
// PyYAML's own reading.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	yaml11Int       = regexp.MustCompile(`^[-+]?(0b[0-1_]+|0[0-7_]+|(0|[1-9][0-9_]*)|0x[0-9a-fA-F_]+|[1-9][0-9_]*(:[0-5]?[0-9])+)$`)
	yaml11Float     = regexp.MustCompile(`^([-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$`)
	yaml11Timestamp = regexp.MustCompile(`^[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(([Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](\.[0-9]*)?([ \t]*(Z|[-+][0-9][0-9]?(:[0-9][0-9])?))?)?$`)
	yaml11Word      = regexp.MustCompile(`(?i)^(y|yes|n|no|true|false|on|off|null|~|<<|=|)$`)
	decimal         = regexp.MustCompile(`^[-+]?(0|[1-9][0-9]*)$`)
)

// mayNotBeString: plain scalar s might be read as another type than a string by YAML 1.1.
func mayNotBeString(s string) bool {
	if yaml11Word.MatchString(s) {
		return true
	}
	if s == "" || !strings.ContainsRune("0123456789+-.", rune(s[0])) {
		return false
	}
	return yaml11Int.MatchString(s) || yaml11Float.MatchString(s) || yaml11Timestamp.MatchString(s)
}

const quoted = yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle

// streamProblem: why the documents of manifest might be split or read otherwise by PyYAML
// than by Kubernetes' reader ("" when they would not): a document marker with content after
// it, a document end marker or a directive, or a character PyYAML refuses or reads as a line
// break (YAML 1.1's NEL, LS and PS) or a byte order mark.
func streamProblem(manifest string) string {
	for n, line := range strings.Split(manifest, "\n") {
		if strings.HasPrefix(line, "---") && line != "---" || strings.HasPrefix(line, "...") ||
			strings.HasPrefix(line, "%") {
			return fmt.Sprintf("line %d: %q", n+1, line)
		}
	}
	for _, r := range manifest {
		printable := r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0x7e || r >= 0xa0 && r <= 0xd7ff ||
			r >= 0xe000 && r <= 0xfffd && r != 0xfeff || r >= 0x10000 && r <= 0x10ffff
		if !printable || r == 0x2028 || r == 0x2029 {
			return fmt.Sprintf("character %U", r)
		}
	}
	return ""
}

// structureProblem: what in node (a document, walked whole) PyYAML would read otherwise or
// refuse, "" when nothing: an anchor or alias, an explicit tag, a merge key, a mapping key
// that is not a string, or a key given twice (PyYAML keeps the last).
func structureProblem(node *yaml.Node, path string) string {
	if node.Anchor != "" || node.Kind == yaml.AliasNode {
		return path + ": an anchor or alias"
	}
	if node.Style&yaml.TaggedStyle != 0 {
		return path + ": an explicit tag"
	}
	switch node.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, c := range node.Content {
			if why := structureProblem(c, fmt.Sprintf("%s[%d]", path, i)); why != "" {
				return why
			}
		}
	case yaml.MappingNode:
		seen := map[string]bool{}
		for i := 0; i+1 < len(node.Content); i += 2 {
			k := node.Content[i]
			if k.Kind != yaml.ScalarNode || k.Style&yaml.TaggedStyle != 0 || k.Anchor != "" ||
				k.Style&quoted == 0 && mayNotBeString(k.Value) {
				return fmt.Sprintf("%s: a key that may not be a string", path)
			}
			if seen[k.Value] {
				return fmt.Sprintf("%s.%s: given twice", path, k.Value)
			}
			seen[k.Value] = true
			if why := structureProblem(node.Content[i+1], path+"."+k.Value); why != "" {
				return why
			}
		}
	}
	return ""
}

// sameReading: where node (checked by structureProblem) and v, the same document as
// Kubernetes read it (JSON values: map, slice, string, int64, float64, bool, nil), may differ
// for PyYAML; "" when PyYAML reads exactly v.
func sameReading(node *yaml.Node, v interface{}, path string) string {
	differ := func() string { return fmt.Sprintf("%s: read otherwise by YAML 1.1", path) }
	switch node.Kind {
	case yaml.MappingNode:
		m, ok := v.(map[string]interface{})
		if !ok || len(m) != len(node.Content)/2 {
			return differ()
		}
		for i := 0; i+1 < len(node.Content); i += 2 {
			k := node.Content[i].Value
			item, ok := m[k]
			if !ok {
				return differ()
			}
			if why := sameReading(node.Content[i+1], item, path+"."+k); why != "" {
				return why
			}
		}
	case yaml.SequenceNode:
		s, ok := v.([]interface{})
		if !ok || len(s) != len(node.Content) {
			return differ()
		}
		for i, c := range node.Content {
			if why := sameReading(c, s[i], fmt.Sprintf("%s[%d]", path, i)); why != "" {
				return why
			}
		}
	case yaml.ScalarNode:
		if node.Style&quoted == 0 && mayNotBeString(node.Value) {
			n, isInt := v.(int64)
			if !decimal.MatchString(node.Value) || !isInt {
				return differ()
			}
			if parsed, err := strconv.ParseInt(strings.TrimPrefix(node.Value, "+"), 10, 64); err != nil || parsed != n {
				return differ()
			}
			return ""
		}
		if s, ok := v.(string); !ok || s != node.Value {
			return differ()
		}
	default:
		return differ()
	}
	return ""
}
