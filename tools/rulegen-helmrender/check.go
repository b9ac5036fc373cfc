package main

// The sync check of one rendered manifest: its documents split as Argo CD splits `helm
// template`'s output (k8s.io/apimachinery's YAML reader, which kubectl uses too), each
// PrometheusRule read as Kubernetes reads it (sigs.k8s.io/yaml to JSON, then JSON numbers as
// the API server decodes them), admitted by the API server (crd.go) and by the operator's
// webhook (webhook.go). The PrometheusRules are those a sync applies: the documents, and the
// items of lists (applied, below).
//
// rulegen's own check (rulegen/gitops/sync.py) explains what this helper rejects, and must
// find nothing in what it passes: a PrometheusRule is judged only when rulegen reads it exactly
// as Kubernetes does (yaml11.go) and rulegen's own checks could not report more than the API
// server and the webhook; anything else is "unjudged" and left to rulegen.

import (
	"bufio"
	"encoding/json"
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
		root := node.Content[0]
		var objects []object
		if child(root, "items") == nil {
			if !isPrometheusRule(root) {
				continue
			}
			js, err := sigsyaml.YAMLToJSON(doc)
			if err != nil {
				return notJudged(fmt.Sprintf("document %d: %v", n, err))
			}
			var obj map[string]interface{}
			if err := utiljson.Unmarshal(js, &obj); err != nil {
				return notJudged(fmt.Sprintf("document %d: %v", n, err))
			}
			objects = []object{{node: root, obj: obj, size: len(js), where: fmt.Sprintf("document %d", n)}}
		} else {
			// a list, or an object with items: the objects a sync applies from it
			js, err := sigsyaml.YAMLToJSON(doc)
			if err != nil {
				return notJudged(fmt.Sprintf("document %d: %v", n, err))
			}
			var v interface{}
			if err := utiljson.Unmarshal(js, &v); err != nil {
				return notJudged(fmt.Sprintf("document %d: %v", n, err))
			}
			if why := applied(root, v, "$", nil, &objects); why != "" {
				return notJudged(fmt.Sprintf("document %d: %s", n, why))
			}
			for i := range objects {
				objects[i].where = fmt.Sprintf("document %d, %s", n, objects[i].where)
			}
		}
		for _, o := range objects {
			if o.kind() != "PrometheusRule" {
				continue
			}
			out.Count++
			kind, why, meta := c.judgeRule(o)
			out.Metadata = append(out.Metadata, meta)
			switch {
			case kind == unjudged:
				return notJudged(fmt.Sprintf("%s: %s", o.where, strings.Join(why, "; ")))
			case kind == invalid:
				out.Verdict = invalid
				out.Why = append(out.Why, fmt.Sprintf("%s: %s", o.where, strings.Join(why, "; ")))
			}
		}
	}
	return out
}

// judgeRule is the verdict on one PrometheusRule o (a document, or an item of a list), with
// its metadata as rendered.
func (c *checker) judgeRule(o object) (string, []string, ruleMetadata) {
	var meta ruleMetadata
	obj := o.obj
	if m, ok := obj["metadata"].(map[string]interface{}); ok {
		meta = ruleMetadata{Name: m["name"], Labels: m["labels"]}
	}
	if why := sameReading(o.node, obj, "$"); why != "" {
		return unjudged, []string{why}, meta
	}
	size := o.size
	if o.named != nil {
		// a kind-less item of a typed list, named by it (as kubectl's decoder names it)
		named := make(map[string]interface{}, len(obj)+2)
		for k, v := range obj {
			named[k] = v
		}
		for k, v := range o.named {
			named[k] = v
		}
		obj = named
	}
	if size < 0 {
		js, err := json.Marshal(obj)
		if err != nil {
			return unjudged, []string{err.Error()}, meta
		}
		size = len(js)
	}
	if v, _ := obj["apiVersion"].(string); v != c.crd.apiVersion {
		return unjudged, []string{fmt.Sprintf("apiVersion %q is not the CRD's %s", v, c.crd.apiVersion)}, meta
	}
	// before admit prunes and coerces obj: rulegen's check reads the spec as it was rendered
	rendered, judged := asRendered(obj, size)
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

// object is one object a sync applies from a document: its YAML node and the same as
// Kubernetes read it (checked alike by sameReading before it is judged); named, for a
// kind-less item of a top-level list, the kind and apiVersion kubectl gives it; size, the
// length of its JSON (-1: not measured yet); where, where it is in the manifest.
type object struct {
	node  *yaml.Node
	obj   map[string]interface{}
	named map[string]string
	size  int
	where string
}

// kind is o's kind as Kubernetes reads it ("" when it is not a string).
func (o object) kind() string {
	if o.named != nil {
		return o.named["kind"]
	}
	kind, _ := o.obj["kind"].(string)
	return kind
}

// applied appends to out the objects a sync applies from node (a document's root, or an
// item of a list; v the same as Kubernetes read it; named as for object): the object itself,
// or, when its items are a list, the objects applied from each item, as rulegen's
// rulegen/tools/helm.py applied unpacks them (Argo CD's repo server unpacks any object whose
// items are a list, and drops a top-level one whose items are null and that has no spec nor
// status; kubectl flattens nested lists, and gives a kind-less item of a top-level list the
// list's kind less "List" and its apiVersion). The result is "" or why rulegen's YAML 1.1
// reading might unpack otherwise (a kind, an apiVersion or items read otherwise): the
// manifest is then not judged.
func applied(node *yaml.Node, v interface{}, path string, named map[string]string, out *[]object) string {
	m, ok := v.(map[string]interface{})
	if node.Kind != yaml.MappingNode || !ok {
		return "" // not an object: never applied (Argo CD refuses the manifest)
	}
	top := path == "$"
	if top || named != nil {
		for _, k := range []string{"kind", "apiVersion"} {
			if c := child(node, k); c != nil {
				if why := sameReading(c, m[k], path+"."+k); why != "" {
					return why
				}
			}
		}
	}
	kind, _ := m["kind"].(string)
	apiVersion, _ := m["apiVersion"].(string)
	if named != nil && (kind != "" || apiVersion != "") {
		named = nil
	}
	itemsNode := child(node, "items")
	if itemsNode == nil {
		*out = append(*out, object{node: node, obj: m, named: named, size: -1, where: path})
		return ""
	}
	if itemsNode.Kind != yaml.SequenceNode {
		if why := sameReading(itemsNode, m["items"], path+".items"); why != "" {
			return why
		}
		if top && m["items"] == nil && child(node, "spec") == nil && child(node, "status") == nil {
			return ""
		}
		*out = append(*out, object{node: node, obj: m, named: named, size: -1, where: path})
		return ""
	}
	items, ok := m["items"].([]interface{})
	if !ok || len(items) != len(itemsNode.Content) {
		return path + ".items: read otherwise by YAML 1.1"
	}
	if named != nil {
		kind = named["kind"]
	}
	var itemNames map[string]string
	if top {
		itemNames = map[string]string{"kind": strings.TrimSuffix(kind, "List"), "apiVersion": apiVersion}
	}
	for i, item := range itemsNode.Content {
		if why := applied(item, items[i], fmt.Sprintf("%s.items[%d]", path, i), itemNames, out); why != "" {
			return why
		}
	}
	return ""
}

// child is the value of key in mapping node, nil when it has none.
func child(node *yaml.Node, key string) *yaml.Node {
	if node.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if k := node.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return node.Content[i+1]
		}
	}
	return nil
}
