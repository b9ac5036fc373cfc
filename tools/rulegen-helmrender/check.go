package main

// The sync check of one rendered manifest: its documents split as Argo CD splits `helm
// template`'s output (k8s.io/apimachinery's YAML reader, which kubectl uses too), each
// PrometheusRule read as Kubernetes reads it (sigs.k8s.io/yaml to JSON, then JSON numbers as
// the API server decodes them), admitted by the API server (crd.go) and by the operator's
// webhook (webhook.go).
//
// rulegen's own check (rulegen/gitops/sync.py) explains what this helper rejects, and must
// find nothing in what it passes: a PrometheusRule is judged only when rulegen reads it exactly
// as Kubernetes does (yaml11.go) and rulegen's own checks could not report more than the API
// server and the webhook; anything else is "unjudged" and left to rulegen.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

const (
	valid    = "valid"    // every PrometheusRule passes the CRD schema and the webhook
	invalid  = "invalid"  // one of them does not
	unjudged = "unjudged" // this helper does not judge the manifest: rulegen does
)

// verdict on one manifest; Count is how many PrometheusRules it holds (-1: not counted), and
// Metadata their metadata as rendered (for a valid manifest).
type verdict struct {
	Verdict  string
	Why      []string
	Count    int
	Metadata []ruleMetadata
}

// ruleMetadata is a PrometheusRule's name and labels as rendered (before the API server's
// pruning), as rulegen's rule-selector label check (RG739) reads them.
type ruleMetadata struct {
	Name   interface{} `json:"name"`
	Labels interface{} `json:"labels"`
}

type checker struct {
	crd *crdSchema
}

func newChecker(crdPath string) (*checker, error) {
	crd, err := loadCRD(crdPath)
	if err != nil {
		return nil, fmt.Errorf("the CRD could not be read: %w", err)
	}
	return &checker{crd: crd}, nil
}

// judge is the verdict on the PrometheusRules of manifest (a rendered chart, YAML documents).
func (c *checker) judge(manifest string) verdict {
	notJudged := func(why string) verdict { return verdict{Verdict: unjudged, Why: []string{why}, Count: -1} }
	if why := streamProblem(manifest); why != "" {
		return notJudged(why)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	out := verdict{Verdict: valid}
	for n := 1; ; n++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return notJudged(err.Error())
		}
		var node yaml.Node
		if err := yaml.Unmarshal(doc, &node); err != nil {
			return notJudged(fmt.Sprintf("document %d: %v", n, err))
		}
		if node.Kind == 0 || len(node.Content) == 0 {
			continue // empty, or comments only: no object
		}
		if why := structureProblem(&node, "$"); why != "" {
			return notJudged(fmt.Sprintf("document %d: %s", n, why))
		}
		if !isPrometheusRule(node.Content[0]) {
			continue
		}
		out.Count++
		kind, why, meta := c.judgeRule(doc, node.Content[0])
		out.Metadata = append(out.Metadata, meta)
		switch {
		case kind == unjudged:
			return notJudged(fmt.Sprintf("document %d: %s", n, strings.Join(why, "; ")))
		case kind == invalid:
			out.Verdict = invalid
			out.Why = append(out.Why, fmt.Sprintf("document %d: %s", n, strings.Join(why, "; ")))
		}
	}
	return out
}

// judgeRule is the verdict on one PrometheusRule document (its text and its YAML node), with
// its metadata as rendered.
func (c *checker) judgeRule(doc []byte, node *yaml.Node) (string, []string, ruleMetadata) {
	var meta ruleMetadata
	js, err := sigsyaml.YAMLToJSON(doc)
	if err != nil {
		return unjudged, []string{err.Error()}, meta
	}
	var obj map[string]interface{}
	if err := utiljson.Unmarshal(js, &obj); err != nil {
		return unjudged, []string{err.Error()}, meta
	}
	if m, ok := obj["metadata"].(map[string]interface{}); ok {
		meta = ruleMetadata{Name: m["name"], Labels: m["labels"]}
	}
	if why := sameReading(node, obj, "$"); why != "" {
		return unjudged, []string{why}, meta
	}
	if v, _ := obj["apiVersion"].(string); v != c.crd.apiVersion {
		return unjudged, []string{fmt.Sprintf("apiVersion %q is not the CRD's %s", v, c.crd.apiVersion)}, meta
	}
	// before admit prunes and coerces obj: rulegen's check reads the spec as it was rendered
	rendered, judged := asRendered(obj, len(js))
	if !judged {
		return unjudged, rendered, meta
	}
	unknown, rejected := c.crd.admit(obj)
	if len(unknown) > 0 {
		return unjudged, unknown, meta
	}
	if len(rejected) > 0 {
		return invalid, prefixed("CRD schema: ", rejected), meta
	}
	rejected = append(prefixed("webhook: ", webhook(obj)), prefixed("as rendered: ", rendered)...)
	if len(rejected) > 0 {
		return invalid, rejected, meta
	}
	return valid, nil, meta
}

// isPrometheusRule: node (a document's root) is a mapping whose kind is PrometheusRule, as
// rulegen tells one (a mapping with kind "PrometheusRule", whatever its apiVersion).
func isPrometheusRule(node *yaml.Node) bool {
	if node.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "kind" {
			return v.Kind == yaml.ScalarNode && v.Value == "PrometheusRule"
		}
	}
	return false
}
