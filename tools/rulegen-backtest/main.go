// rulegen-backtest replays Prometheus alerting rules over a past time window against a
// remote Prometheus server and reports, per alert, its firing episodes.
//
// Each alert is a rules.AlertingRule of the pinned Prometheus module (the same state machine
// the server runs: `for`, `keep_firing_for`, templated labels (annotations with --annotations), the group's
// `limit` and `query_offset`), evaluated at every step of [--start, --end]. Its expr is read
// from the server: by default with range queries (one per --chunk-steps steps; a range query
// is by definition the instant query evaluated at each step), with --per-step as one
// /api/v1/query per step; template queries are always instant queries at the step.
//
// Output (stdout, only when the whole run succeeded): one JSON document
// {"start", "end", "alerts": [...]} (see alertOut). Errors: one line on stderr, exit status
// 2 for bad input, 3 for connection, authentication, server or size-limit failures.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rulegen-backtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		headers, alerts                             multiFlag
		o                                           replayOptions
		co                                          clientOptions
		rulesFile, startS, endS, stepS, headersFile string
		parallel                                    int
		withAnnotations                             bool
	)
	fs.StringVar(&rulesFile, "rules", "", "rule file: a Prometheus rules file or PrometheusRule document(s)")
	fs.StringVar(&co.url, "url", "", "Prometheus base URL (http:// or https://)")
	fs.StringVar(&co.tokenFile, "bearer-token-file", "", "file holding a bearer token")
	fs.Var(&headers, "header", "extra request header 'Name: value' (repeatable)")
	fs.StringVar(&headersFile, "headers-file", "", "file of extra request headers, one 'Name: value' a line (kept off the command line)")
	fs.StringVar(&co.caFile, "ca-file", "", "PEM CA bundle for https")
	fs.DurationVar(&co.timeout, "timeout", 30*time.Second, "timeout of each request")
	fs.Int64Var(&co.maxBytes, "max-response-bytes", 256<<20, "largest answer accepted")
	fs.StringVar(&startS, "start", "", "window start: RFC 3339 or unix seconds")
	fs.StringVar(&endS, "end", "", "window end: RFC 3339 or unix seconds")
	fs.StringVar(&stepS, "step", "", "evaluation step (default: the group's interval, else 1m)")
	fs.Var(&alerts, "alert", "replay only alerts of this name (repeatable)")
	fs.BoolVar(&o.perStep, "per-step", false, "one instant query per step instead of range queries")
	fs.IntVar(&o.chunkSteps, "chunk-steps", 1440, "steps per range query")
	fs.IntVar(&o.maxSeries, "max-series", 10000, "most series one query may return")
	fs.IntVar(&o.maxEpisodes, "max-episodes", 1000, "most episodes listed per alert (all are counted)")
	fs.IntVar(&o.maxLabelSets, "max-label-sets", 100, "most label sets listed per alert (all are counted)")
	fs.IntVar(&parallel, "parallel", 4, "alerts replayed at once")
	fs.BoolVar(&withAnnotations, "annotations", false,
		"expand the annotations at every evaluation too (they never change the alert state or labels; "+
			"off, the replay skips their templates and the queries in them)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "rulegen-backtest: "+format+"\n", a...)
		return code
	}
	if headersFile != "" {
		b, err := os.ReadFile(headersFile)
		if err != nil {
			return fail(2, "cannot read the headers file %s: %v", headersFile, errors.Unwrap(err))
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(line) != "" {
				headers = append(headers, strings.TrimRight(line, "\r"))
			}
		}
	}
	co.headers = headers
	var err error
	if rulesFile == "" || co.url == "" || startS == "" || endS == "" {
		return fail(2, "--rules, --url, --start and --end are required")
	}
	if o.start, err = parseTime(startS); err != nil {
		return fail(2, "--start: %v", err)
	}
	if o.end, err = parseTime(endS); err != nil {
		return fail(2, "--end: %v", err)
	}
	if o.end.Before(o.start) {
		return fail(2, "--end %s is before --start %s", stamp(o.end), stamp(o.start))
	}
	if stepS != "" {
		d, err := model.ParseDuration(stepS)
		if err != nil || d <= 0 {
			return fail(2, "--step %q is not a positive duration", stepS)
		}
		o.step = time.Duration(d)
	}
	if o.chunkSteps < 1 || o.maxSeries < 1 || o.maxEpisodes < 0 || o.maxLabelSets < 0 || parallel < 1 || co.timeout <= 0 {
		return fail(2, "--chunk-steps, --max-series, --parallel and --timeout must be positive")
	}
	p := parser.NewParser(parser.Options{})
	targets, err := loadTargets(rulesFile, alerts, p, withAnnotations)
	if err != nil {
		return fail(2, "%v", err)
	}
	const maxSteps = 1_000_000
	for _, t := range targets {
		st := stepOf(o.step, t)
		if o.end.Sub(o.start)/st > maxSteps {
			return fail(2, "%s/%s: the window %s..%s at step %s is more than %d evaluations; use a larger --step",
				t.group, t.rule.Name(), stamp(o.start), stamp(o.end), st, maxSteps)
		}
	}
	c, err := newClient(co)
	if err != nil {
		return fail(2, "%v", err)
	}
	outs, err := replayAll(c, targets, o, p, parallel)
	if err != nil {
		return fail(3, "%v", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"start": stamp(o.start), "end": stamp(o.end), "alerts": outs}); err != nil {
		return fail(3, "encoding the result: %v", err)
	}
	if _, err := stdout.Write(buf.Bytes()); err != nil {
		return fail(3, "writing the result: %v", err)
	}
	return 0
}

// annotationsIf: the annotations, or none when they are not wanted.
func annotationsIf(want bool, a map[string]string) map[string]string {
	if want {
		return a
	}
	return nil
}

// stepOf: the evaluation step of t: --step, else its group's interval, else 1m.
func stepOf(step time.Duration, t *target) time.Duration {
	switch {
	case step > 0:
		return step
	case t.interval > 0:
		return t.interval
	default:
		return time.Minute
	}
}

func replayAll(c *client, targets []*target, o replayOptions, p parser.Parser, parallel int) ([]*alertOut, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outs := make([]*alertOut, len(targets))
	errs := make([]error, len(targets))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(parallel, len(targets)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				outs[i], errs[i] = replay(ctx, c, targets[i], o, p)
				if errs[i] != nil {
					cancel()
				}
			}
		}()
	}
	for i := range targets {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return outs, nil
}

func parseTime(s string) (time.Time, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return time.UnixMilli(int64(math.Round(f * 1000))).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither RFC 3339 nor unix seconds", s)
	}
	return t.UTC(), nil
}

// loadTargets reads the alerting rules of a rules file or of PrometheusRule documents
// (`spec.groups`, as `helm template` renders them), parsed by Prometheus' rulefmt.
func loadTargets(path string, only []string, p parser.Parser, withAnnotations bool) ([]*target, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", path, errors.Unwrap(err))
	}
	var groups []any
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if g, ok := doc["groups"].([]any); ok {
			groups = append(groups, g...)
		} else if spec, ok := doc["spec"].(map[string]any); ok && doc["kind"] == "PrometheusRule" {
			if g, ok := spec["groups"].([]any); ok {
				groups = append(groups, g...)
			}
		}
	}
	content, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rgs, errs := rulefmt.Parse(content, false, model.UTF8Validation, p, logger)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %v", path, errors.Join(errs...))
	}
	want := map[string]bool{}
	for _, a := range only {
		want[a] = true
	}
	var out []*target
	for _, g := range rgs.Groups {
		for i, r := range g.Rules {
			if r.Alert == "" || (len(want) > 0 && !want[r.Alert]) {
				continue
			}
			t, err := newTarget(g.Name, i, r.Alert, r.Expr, p, time.Duration(r.For), time.Duration(r.KeepFiringFor),
				g.Labels, r.Labels, annotationsIf(withAnnotations, r.Annotations))
			if err != nil {
				return nil, fmt.Errorf("%s: group %s alert %s: %v", path, g.Name, r.Alert, err)
			}
			t.interval, t.limit = time.Duration(g.Interval), g.Limit
			if g.QueryOffset != nil {
				t.queryOffset = time.Duration(*g.QueryOffset)
			}
			out = append(out, t)
		}
	}
	if len(out) == 0 && len(want) > 0 {
		return nil, fmt.Errorf("%s holds no alert named %s", path, strings.Join(only, ", "))
	}
	return out, nil
}

func sortEpisodes(eps []episodeOut) {
	sort.SliceStable(eps, func(i, j int) bool { return eps[i].Start < eps[j].Start })
}
