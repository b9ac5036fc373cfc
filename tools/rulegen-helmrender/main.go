// rulegen-helmrender renders many charts the way `helm template` renders each, in one process.
//
// `rulegen check` renders every chart of a project with each of its values files (the Argo CD
// sync check); one `helm template` process per render spends most of its time starting up.
// This helper runs, for each job, the code path of `helm template RELEASE CHART --namespace NS
// --values FILE... --set S...` of the pinned Helm module (cmd/helm's runInstall: NameAndChart,
// LocateChart, values.Options.MergeValues, loader.Load, the installable and dependency checks,
// then action.Install in client-only dry-run mode) and prints the manifest as `helm template`
// prints it (the release manifest, then each hook after "---\n# Source: PATH").
//
// It reads one JSON object on stdin:
//
//	{"jobs": [{"release": "r", "chart": "/abs/chart", "namespace": "default",
//	           "values": ["/abs/values.yaml", ...], "set": ["a.b=true", ...]}, ...]}
//
// and writes one JSON object: {"results": [{"ok": true, "manifest": "..."} or
// {"ok": false, "error": "..."}, ...]}, one result per job, in order (a manifest that is not
// UTF-8 counts as failed: JSON cannot carry its bytes). A job that fails here is
// rendered again by rulegen with the real `helm template`, whose error text the findings quote,
// so this helper's error text is never shown. Jobs run on at most two goroutines.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
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
}

// render is `helm template` of one job (cmd/helm/template.go and runInstall in install.go of
// the pinned module), without the flags rulegen never passes.
func render(j job) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	settings := cli.New()
	if j.Namespace != "" {
		settings.SetNamespace(j.Namespace)
	}
	cfg := new(action.Configuration)
	cfg.Log = func(string, ...interface{}) {}
	client := action.NewInstall(cfg)
	client.DryRunOption = "true"
	client.DryRun = true
	client.ReleaseName = "release-name"
	client.Replace = true
	client.ClientOnly = true
	client.APIVersions = chartutil.VersionSet(nil)
	client.IncludeCRDs = false

	name, chartRef, err := client.NameAndChart([]string{j.Release, j.Chart})
	if err != nil {
		return "", err
	}
	client.ReleaseName = name
	cp, err := client.ChartPathOptions.LocateChart(chartRef, settings)
	if err != nil {
		return "", err
	}
	valueOpts := &values.Options{ValueFiles: j.Values, Values: j.Set}
	vals, err := valueOpts.MergeValues(getter.All(settings))
	if err != nil {
		return "", err
	}
	ch, err := loader.Load(cp)
	if err != nil {
		return "", err
	}
	if err := installable(ch); err != nil {
		return "", err
	}
	if req := ch.Metadata.Dependencies; req != nil {
		if err := action.CheckDependencies(ch, req); err != nil {
			return "", err
		}
	}
	client.Namespace = settings.Namespace()
	rel, err := client.RunWithContext(context.Background(), ch, vals)
	if err != nil {
		return "", err
	}
	var manifests bytes.Buffer
	fmt.Fprintln(&manifests, strings.TrimSpace(rel.Manifest))
	if !client.DisableHooks {
		for _, m := range rel.Hooks {
			fmt.Fprintf(&manifests, "---\n# Source: %s\n%s\n", m.Path, m.Manifest)
		}
	}
	if !utf8.Valid(manifests.Bytes()) {
		// JSON would replace the bytes that are not UTF-8 its own way: left to helm itself
		return "", fmt.Errorf("the manifest is not UTF-8")
	}
	return manifests.String(), nil
}

func installable(ch *chart.Chart) error {
	switch ch.Metadata.Type {
	case "", "application":
		return nil
	}
	return fmt.Errorf("%s charts are not installable", ch.Metadata.Type)
}

func main() {
	var in struct {
		Jobs []job `json:"jobs"`
	}
	data, err := io.ReadAll(os.Stdin)
	if err == nil {
		err = json.Unmarshal(data, &in)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "rulegen-helmrender: reading the jobs: %v\n", err)
		os.Exit(2)
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
				out, err := render(in.Jobs[i])
				if err != nil {
					results[i] = result{Error: err.Error()}
				} else {
					results[i] = result{OK: true, Manifest: out}
				}
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
