package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
)

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
