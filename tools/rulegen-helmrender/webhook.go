package main

// The Prometheus Operator's admission webhook for PrometheusRules, with the operator's own code
// of the release pinned in tools/prometheus-operator/go.mod (the one whose CRD file rulegen
// checks against): pkg/admission's validatePrometheusRules decodes the object the API server
// admitted into a monitoringv1.PrometheusRule and runs operator.ValidateRule on its spec (the
// spec as a rule file must be at most MaxConfigMapDataSize bytes, half a Secret, and must pass
// Prometheus' rulefmt.Parse, of the Prometheus module that operator release is built with).
//
// pkg/operator is the smallest package holding ValidateRule (pkg/admission imports it, and
// adds an HTTP server and controller-runtime's webhook machinery); its init sets Prometheus'
// label name validation to the legacy scheme, as the operator's own binary does.

import (
	"encoding/json"
	"fmt"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	promoperator "github.com/prometheus-operator/prometheus-operator/pkg/operator"
	"github.com/prometheus/prometheus/model/rulefmt"
	"sigs.k8s.io/yaml"
)

// webhook is the operator's validating webhook on obj (an object the API server admitted):
// its errors, none when it allows obj.
func webhook(obj map[string]interface{}) []string {
	raw, err := json.Marshal(obj)
	if err != nil {
		return []string{err.Error()}
	}
	promRule := &monitoringv1.PrometheusRule{}
	if err := json.Unmarshal(raw, promRule); err != nil {
		return []string{"decoding the PrometheusRule: " + err.Error()}
	}
	return messages(promoperator.ValidateRule(promRule.Spec))
}

// maxJudged is the largest spec, as a rule file, that this helper judges: a quarter of the
// webhook's limit. rulegen measures the limit on its own YAML dump of the spec, which indents,
// folds and quotes otherwise, so a spec near the limit is left to rulegen. A PrometheusRule
// whose JSON is at most maxJudgedJSON bytes is below it however it is dumped (block YAML is
// at most about three times its compact JSON).
var (
	maxJudged     = promoperator.MaxConfigMapDataSize / 4
	maxJudgedJSON = promoperator.MaxConfigMapDataSize / 8
)

// asRendered is what rulegen's own check of obj's spec finds beyond the webhook's
// (rulegen/gitops/sync.py dumps the spec as rendered as a rule file for `promtool check
// rules`, which is rulefmt.Parse with unknown fields refused); jsonSize is the size of obj as
// JSON. The webhook parses its decoded copy of the spec instead: the monitoringv1 types leave
// out empty strings, maps and lists, and ValidateRule empties partial_response_strategy and
// drops an empty interval and for (pkg/operator/rules.go); unknown fields are never judged
// here (crd.go). So the spec as rendered is parsed only when it holds one of those; without
// them the webhook's parse is the same. A spec too large to judge: judged is false.
func asRendered(obj map[string]interface{}, jsonSize int) (errs []string, judged bool) {
	differs := droppedByDecoding(obj["spec"], "")
	if jsonSize <= maxJudgedJSON && !differs {
		return nil, true
	}
	body, err := yaml.Marshal(obj["spec"])
	if err != nil {
		return []string{err.Error()}, true
	}
	if len(body) > maxJudged {
		return []string{fmt.Sprintf("the spec is %d bytes as a rule file, above the %d judged here", len(body), maxJudged)}, false
	}
	if !differs {
		return nil, true
	}
	_, parseErrs := rulefmt.Parse(body, false)
	return messages(parseErrs), true
}

// droppedByDecoding: v (JSON of a spec, under key) holds an empty string, map or list, or a
// partial_response_strategy.
func droppedByDecoding(v interface{}, key string) bool {
	if key == "partial_response_strategy" {
		return true
	}
	switch x := v.(type) {
	case string:
		return x == ""
	case map[string]interface{}:
		if len(x) == 0 {
			return true
		}
		for k, item := range x {
			if droppedByDecoding(item, k) {
				return true
			}
		}
	case []interface{}:
		if len(x) == 0 {
			return true
		}
		for _, item := range x {
			if droppedByDecoding(item, "") {
				return true
			}
		}
	}
	return false
}

func messages(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
