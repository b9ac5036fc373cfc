// rulegen-amroute asks Alertmanager's own routing code which receivers label sets reach.
//
// It reads one JSON object on stdin:
//
//	{"config": "<alertmanager.yml text>", "label_sets": [{"alertname": "X", ...}, ...]}
//
// loads the configuration with Alertmanager's config package (config.Load: the checks
// `alertmanager` and `amtool check-config` run, with their error text), builds the route tree
// with dispatch.NewRoute and matches every label set against it. It writes one JSON object:
//
//	{"error": "<Alertmanager's error>"}                       when the configuration is invalid
//	{"default": "<root receiver>", "receivers": [{"name": "r", "integrations": 1}, ...],
//	 "results": [[{"receiver": "r", "route": "<route id>", "continue": false}, ...], ...]}
//
// ("integrations": how many notifier configurations the receiver has, 0 for a receiver that
// notifies nobody) and one result per label set, in order: the routes that match it (a `continue: true` route
// followed by the routes after it), as Alertmanager's dispatcher would notify them.
// Nothing is read but stdin: the configuration's file references (templates, password files)
// are neither opened nor followed.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"github.com/prometheus/alertmanager/config"
	"github.com/prometheus/alertmanager/dispatch"
	"github.com/prometheus/alertmanager/featurecontrol"
	"github.com/prometheus/alertmanager/matcher/compat"
	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
)

type input struct {
	Config    string              `json:"config"`
	LabelSets []map[string]string `json:"label_sets"`
}

type match struct {
	Receiver string `json:"receiver"`
	Route    string `json:"route"`
	Continue bool   `json:"continue"`
}

type receiver struct {
	Name         string `json:"name"`
	Integrations int    `json:"integrations"`
}

// integrations counts the notifier configurations of r: every field of config.Receiver whose
// name ends in "Configs" is a list of one notifier kind (EmailConfigs, PagerdutyConfigs, ...).
func integrations(r config.Receiver) int {
	n := 0
	v := reflect.ValueOf(r)
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if strings.HasSuffix(f.Name, "Configs") && v.Field(i).Kind() == reflect.Slice {
			n += v.Field(i).Len()
		}
	}
	return n
}

type output struct {
	Error     string     `json:"error,omitempty"`
	Default   string     `json:"default,omitempty"`
	Receivers []receiver `json:"receivers,omitempty"`
	Results   [][]match  `json:"results,omitempty"`
}

func run(in io.Reader) output {
	var req input
	dec := json.NewDecoder(in)
	if err := dec.Decode(&req); err != nil {
		return output{Error: fmt.Sprintf("rulegen-amroute: reading the request: %v", err)}
	}
	cfg, err := config.Load(req.Config)
	if err != nil {
		return output{Error: err.Error()}
	}
	root := dispatch.NewRoute(cfg.Route, nil)
	out := output{Default: root.RouteOpts.Receiver, Receivers: []receiver{}, Results: [][]match{}}
	for _, r := range cfg.Receivers {
		out.Receivers = append(out.Receivers, receiver{Name: r.Name, Integrations: integrations(r)})
	}
	for _, ls := range req.LabelSets {
		set := model.LabelSet{}
		for k, v := range ls {
			set[model.LabelName(k)] = model.LabelValue(v)
		}
		found := []match{}
		for _, r := range root.Match(set) {
			found = append(found, match{Receiver: r.RouteOpts.Receiver, Route: r.ID(), Continue: r.Continue})
		}
		out.Results = append(out.Results, found)
	}
	return out
}

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: rulegen-amroute < request.json (see the package comment)")
		os.Exit(2)
	}
	// The matcher syntax Alertmanager itself accepts when started without feature flags.
	compat.InitFromFlags(promslog.NewNopLogger(), featurecontrol.NoopFlags{})
	out := run(os.Stdin)
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if out.Error != "" {
		os.Exit(1)
	}
}
