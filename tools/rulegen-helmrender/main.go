// rulegen-helmrender renders many charts the way `helm template` renders each, in one process,
// and judges the PrometheusRules they render the way the Argo CD sync of them would.
//
// `rulegen check` renders every chart of a project with each of its values files (the Argo CD
// sync check); one `helm template` process per render spends most of its time starting up.
// This helper runs, for each job, the code path of `helm template RELEASE CHART --namespace NS
// --values FILE... --set S...` of the pinned Helm module (cmd/helm's runInstall: NameAndChart,
// LocateChart, values.Options.MergeValues, loader.Load, the installable and dependency checks,
// then action.Install in client-only dry-run mode) and prints the manifest as `helm template`
// prints it (the release manifest, then each hook after "---\n# Source: PATH"); render.go.
//
// With "check" in the request it also judges every PrometheusRule of each rendered manifest as
// the sync would (check.go): the Kubernetes API server's own structural-schema validation of
// the Prometheus Operator's PrometheusRule CRD (the pinned CRD file; crd.go), then the
// operator's own admission-webhook rule validation, operator.ValidateRule of the pinned
// prometheus-operator module (webhook.go). A job whose PrometheusRules all pass is answered
// without its manifest; rulegen then neither parses nor checks it. Any other job (a rule
// rejected, or one this helper cannot judge exactly as rulegen would: yaml11.go) carries its
// manifest, and rulegen checks it itself and says why (this helper's reasons are never shown).
//
// It reads one JSON object on stdin:
//
//	{"jobs": [{"release": "r", "chart": "/abs/chart", "namespace": "default",
//	           "values": ["/abs/values.yaml", ...], "set": ["a.b=true", ...]}, ...],
//	 "check": {"crd": "/abs/monitoring.coreos.com_prometheusrules.yaml"}}   (optional)
//
// and writes one JSON object: {"results": [{"ok": true, "manifest": "..."} or
// {"ok": false, "error": "..."}, ...]}, one result per job, in order (a manifest that is not
// UTF-8 counts as failed: JSON cannot carry its bytes). With "check", a rendered job's result
// also holds "prometheusrules" (how many the manifest holds), "verdict" ("valid": all pass,
// the manifest is left out; "invalid": the CRD schema or the webhook rejects one; "unjudged":
// this helper does not judge it) and "why" (its reasons, for tests and debugging). A job that
// fails here is rendered again by rulegen with the real `helm template`, whose error text the
// findings quote, so this helper's error text is never shown. Jobs run on at most two
// goroutines.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

type job struct {
	Release   string   `json:"release"`
	Chart     string   `json:"chart"`
	Namespace string   `json:"namespace"`
	Values    []string `json:"values"`
	Set       []string `json:"set"`
}

type result struct {
	OK       bool   `json:"ok"`
	Manifest string `json:"manifest,omitempty"`
	Error    string `json:"error,omitempty"`
	// with "check" only
	PrometheusRules *int     `json:"prometheusrules,omitempty"`
	Verdict         string   `json:"verdict,omitempty"`
	Why             []string `json:"why,omitempty"`
	// a valid render's PrometheusRules: each one's metadata name and labels, which rulegen's
	// rule-selector label check (RG739) reads in place of the manifest
	Metadata []ruleMetadata `json:"metadata"`
}

type request struct {
	Jobs  []job `json:"jobs"`
	Check *struct {
		CRD string `json:"crd"`
	} `json:"check"`
}

// run is one job: rendered, then judged by chk when the request asks for the check (chk is
// nil when it does not; a checker that could not be made judges nothing).
func run(j job, chk *checker, checkErr error) result {
	out, err := render(j)
	if err != nil {
		return result{Error: err.Error()}
	}
	r := result{OK: true, Manifest: out}
	if chk == nil && checkErr == nil {
		return r
	}
	var v verdict
	if checkErr != nil {
		v = verdict{Verdict: unjudged, Why: []string{checkErr.Error()}, Count: -1}
	} else {
		v = chk.judge(out)
	}
	if v.Count >= 0 {
		n := v.Count
		r.PrometheusRules = &n
	}
	r.Verdict, r.Why = v.Verdict, v.Why
	if v.Verdict == valid {
		r.Manifest, r.Metadata = "", v.Metadata
		if r.Metadata == nil {
			r.Metadata = []ruleMetadata{}
		}
	}
	return r
}

func main() {
	// A short run that allocates much and keeps little (each render's templates, values and
	// parsed documents are garbage once it is done): collecting at 5x the live heap instead of
	// 2x spends about a sixth less CPU on the 100-chart benchmark, for some 40 MB more; the
	// soft limit brings the default back when a project's renders would grow past it.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
	var in request
	data, err := io.ReadAll(os.Stdin)
	if err == nil {
		err = json.Unmarshal(data, &in)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "rulegen-helmrender: reading the jobs: %v\n", err)
		os.Exit(2)
	}
	var chk *checker
	var checkErr error
	if in.Check != nil {
		chk, checkErr = newChecker(in.Check.CRD)
	}
	results := make([]result, len(in.Jobs))
	workers := runtime.NumCPU()
	if workers > 2 {
		workers = 2
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = run(in.Jobs[i], chk, checkErr)
			}
		}()
	}
	for i := range in.Jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string][]result{"results": results}); err != nil {
		fmt.Fprintf(os.Stderr, "rulegen-helmrender: %v\n", err)
		os.Exit(2)
	}
}
