package main

// The replay: one Prometheus rules.AlertingRule per alert, evaluated at every step of the
// window with a QueryFunc that answers from the remote server, and the firing episodes read
// off the rule's own alert state after each evaluation.

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
)

type replayOptions struct {
	start, end   time.Time
	step         time.Duration // 0: the group's interval, else 1m
	perStep      bool          // one instant query per step instead of batched range queries
	chunkSteps   int
	maxSeries    int
	maxEpisodes  int
	maxLabelSets int
}

// target is one alerting rule of the input with its group's settings.
type target struct {
	group       string
	index       int // position of the rule in its group
	rule        *rules.AlertingRule
	expr        string
	forDur      time.Duration
	keepFiring  time.Duration
	interval    time.Duration
	queryOffset time.Duration
	limit       int
}

type episodeOut struct {
	Start   string            `json:"start"`
	End     string            `json:"end"`
	Seconds float64           `json:"seconds"`
	Ongoing bool              `json:"ongoing"`
	Labels  map[string]string `json:"labels"`
}

type alertOut struct {
	Group              string              `json:"group"`
	Alert              string              `json:"alert"`
	Index              int                 `json:"index"`
	Expr               string              `json:"expr"`
	RuleLabels         map[string]string   `json:"rule_labels"`
	For                float64             `json:"for_seconds"`
	KeepFiringFor      float64             `json:"keep_firing_for_seconds"`
	StepSeconds        float64             `json:"step_seconds"`
	QueryOffsetSeconds float64             `json:"query_offset_seconds"`
	Evaluations        int                 `json:"evaluations"`
	Queries            int                 `json:"queries"`
	EpisodesTotal      int                 `json:"episodes_total"`
	FiringSeconds      float64             `json:"firing_seconds"`
	LongestSeconds     float64             `json:"longest_seconds"`
	Longest            *episodeOut         `json:"longest"`
	Episodes           []episodeOut        `json:"episodes"`
	EpisodesTruncated  bool                `json:"episodes_truncated"`
	LabelSetsTotal     int                 `json:"label_sets_total"`
	LabelSets          []map[string]string `json:"label_sets"`
	LabelSetsTruncated bool                `json:"label_sets_truncated"`
	EvalErrors         int                 `json:"eval_errors"`
	FirstEvalError     string              `json:"first_eval_error,omitempty"`
	Error              string              `json:"error,omitempty"`
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func newTarget(group string, index int, name, expr string, p parser.Parser, hold, keep time.Duration,
	groupLabels, lbls, anns map[string]string) (*target, error) {
	vec, err := p.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := rules.NewAlertingRule(name, vec, hold, keep, rules.FromMaps(groupLabels, lbls), labels.FromMap(anns),
		labels.EmptyLabels(), "", false, logger)
	return &target{group: group, index: index, rule: r, expr: vec.String(), forDur: hold, keepFiring: keep}, nil
}

// usesStartEnd: an `@ start()` / `@ end()` modifier means the range of a range query, so such
// an expr is evaluated with one instant query per step (where start() = end() = the step).
func usesStartEnd(e string, p parser.Parser) bool {
	expr, err := p.ParseExpr(e)
	if err != nil {
		return false
	}
	found := false
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		switch x := n.(type) {
		case *parser.VectorSelector:
			found = found || x.StartOrEnd != 0
		case *parser.SubqueryExpr:
			found = found || x.StartOrEnd != 0
		}
		return nil
	})
	return found
}

type tracker struct {
	o        replayOptions
	out      *alertOut
	open     map[uint64]*episodeOut
	openAt   map[uint64]time.Time
	seenSets map[uint64]struct{}
}

func (tr *tracker) observe(r *rules.AlertingRule, ts time.Time) {
	firing := map[uint64]labels.Labels{}
	r.ForEachActiveAlert(func(a *rules.Alert) {
		if a.State == rules.StateFiring {
			firing[a.Labels.Hash()] = a.Labels
		}
	})
	for h, l := range firing {
		if _, ok := tr.open[h]; ok {
			continue
		}
		tr.open[h] = &episodeOut{Start: stamp(ts), Labels: l.Map()}
		tr.openAt[h] = ts
		if _, ok := tr.seenSets[h]; !ok {
			tr.seenSets[h] = struct{}{}
			if len(tr.out.LabelSets) < tr.o.maxLabelSets {
				tr.out.LabelSets = append(tr.out.LabelSets, l.Map())
			} else {
				tr.out.LabelSetsTruncated = true
			}
		}
	}
	for h, ep := range tr.open {
		if _, ok := firing[h]; !ok {
			tr.close(h, ep, ts, false)
		}
	}
}

func (tr *tracker) close(h uint64, ep *episodeOut, ts time.Time, ongoing bool) {
	ep.End, ep.Ongoing = stamp(ts), ongoing
	ep.Seconds = ts.Sub(tr.openAt[h]).Seconds()
	tr.out.EpisodesTotal++
	tr.out.FiringSeconds += ep.Seconds
	if tr.out.Longest == nil || ep.Seconds > tr.out.Longest.Seconds {
		tr.out.Longest, tr.out.LongestSeconds = ep, ep.Seconds
	}
	if len(tr.out.Episodes) < tr.o.maxEpisodes {
		tr.out.Episodes = append(tr.out.Episodes, *ep)
	} else {
		tr.out.EpisodesTruncated = true
	}
	delete(tr.open, h)
	delete(tr.openAt, h)
}

// replay evaluates one alerting rule over the window; a fatalError aborts the whole run,
// any other error is the alert's own (reported in its "error").
func replay(ctx context.Context, c *client, t *target, o replayOptions, p parser.Parser) (*alertOut, error) {
	step := stepOf(o.step, t)
	out := &alertOut{
		Group: t.group, Alert: t.rule.Name(), Index: t.index, Expr: t.expr, RuleLabels: t.rule.Labels().Map(),
		For: t.forDur.Seconds(), KeepFiringFor: t.keepFiring.Seconds(), StepSeconds: step.Seconds(),
		QueryOffsetSeconds: t.queryOffset.Seconds(), Episodes: []episodeOut{}, LabelSets: []map[string]string{},
	}
	tr := &tracker{o: o, out: out, open: map[uint64]*episodeOut{}, openAt: map[uint64]time.Time{},
		seenSets: map[uint64]struct{}{}}
	perStep := o.perStep || usesStartEnd(t.expr, p)
	var steps []time.Time
	for ts := o.start; !ts.After(o.end); ts = ts.Add(step) {
		steps = append(steps, ts)
	}
	// batch[i]: the expr's result at steps[chunk+i] minus the query offset.
	var batch []promql.Vector
	var chunk0 int
	query := func(ctx context.Context, q string, qt time.Time) (promql.Vector, error) {
		out.Queries++
		if !perStep && q == t.expr && batch != nil {
			i := int(qt.Sub(steps[chunk0].Add(-t.queryOffset)) / step)
			if i >= 0 && i < len(batch) && steps[chunk0+i].Add(-t.queryOffset).Equal(qt) {
				out.Queries--
				return batch[i], nil
			}
		}
		return c.instant(ctx, q, qt, o.maxSeries)
	}
	for chunk0 = 0; chunk0 < len(steps); chunk0 += o.chunkSteps {
		n := min(o.chunkSteps, len(steps)-chunk0)
		batch = nil
		if !perStep {
			first, last := steps[chunk0].Add(-t.queryOffset), steps[chunk0+n-1].Add(-t.queryOffset)
			series, err := c.rangeQuery(ctx, t.expr, first, last, step, o.maxSeries)
			out.Queries++
			if err != nil {
				return alertError(out, err)
			}
			batch = make([]promql.Vector, n)
			for _, s := range series {
				for k, ms := range s.ts {
					i := int((ms - first.UnixMilli()) / step.Milliseconds())
					if i >= 0 && i < n {
						batch[i] = append(batch[i], promql.Sample{Metric: s.metric, T: ms, F: s.vals[k]})
					}
				}
			}
		}
		for i := 0; i < n; i++ {
			ts := steps[chunk0+i]
			_, err := t.rule.Eval(ctx, t.queryOffset, ts, query, nil, t.limit)
			out.Evaluations++
			if err != nil {
				var fe *fatalError
				var qe *queryError
				if errors.As(err, &fe) {
					return nil, fe
				}
				if errors.As(err, &qe) && perStep {
					return alertError(out, err)
				}
				out.EvalErrors++
				if out.FirstEvalError == "" {
					out.FirstEvalError = stamp(ts) + ": " + err.Error()
				}
			}
			tr.observe(t.rule, ts)
		}
	}
	if len(steps) > 0 {
		for h, ep := range tr.open {
			tr.close(h, ep, steps[len(steps)-1], true)
		}
	}
	out.LabelSetsTotal = len(tr.seenSets)
	sortEpisodes(out.Episodes)
	return out, nil
}

func alertError(out *alertOut, err error) (*alertOut, error) {
	var fe *fatalError
	if errors.As(err, &fe) {
		return nil, fe
	}
	out.Error = err.Error()
	return out, nil
}
