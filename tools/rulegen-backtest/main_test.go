package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
)

const promRule = `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: a}
spec:
  groups:
    - name: g1
      labels: {team: t}
      interval: 30s
      rules:
        - record: r
          expr: up
        - alert: Down
          expr: up == 0
          for: 2m
          labels: {severity: page}
---
kind: ConfigMap
data: {x: y}
---
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
spec:
  groups:
    - name: g2
      query_offset: 1m
      rules:
        - alert: Down
          expr: up == 0
          labels: {severity: info}
`

func parserFor() parser.Parser { return parser.NewParser(parser.Options{}) }

func write(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadTargetsReadsPrometheusRuleDocuments(t *testing.T) {
	p := write(t, promRule)
	ts, err := loadTargets(p, nil, parserFor(), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 {
		t.Fatalf("want 2 alerts, got %d", len(ts))
	}
	if ts[0].group != "g1" || ts[0].index != 1 || ts[0].interval.Seconds() != 30 || ts[0].forDur.Minutes() != 2 {
		t.Errorf("first target: %+v", ts[0])
	}
	if got := ts[0].rule.Labels().Get("team"); got != "t" {
		t.Errorf("group labels not merged: team=%q", got)
	}
	if ts[1].queryOffset.Minutes() != 1 {
		t.Errorf("query_offset: %v", ts[1].queryOffset)
	}
	if _, err := loadTargets(p, []string{"Nope"}, parserFor(), false); err == nil || !strings.Contains(err.Error(), "no alert named Nope") {
		t.Errorf("unknown alert: %v", err)
	}
	if _, err := loadTargets(write(t, "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: 'up =='\n"), nil, parserFor(), false); err == nil {
		t.Error("a bad expr must be an error")
	}
}

// fakeServer answers every range query with one series whose value is 1 at the steps in bad
// (indexes from the window start) and 0 elsewhere.
func fakeServer(t *testing.T, bad map[int]bool) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		start, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
		end, _ := strconv.ParseFloat(r.Form.Get("end"), 64)
		step, _ := strconv.ParseFloat(r.Form.Get("step"), 64)
		var vals [][2]any
		for ts := start; ts <= end+1e-9; ts += step {
			if bad[int((ts-1000)/step+0.5)] {
				vals = append(vals, [2]any{ts, "1"})
			}
		}
		res := []map[string]any{}
		if len(vals) > 0 {
			res = append(res, map[string]any{"metric": map[string]string{"job": "x"}, "values": vals})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success",
			"data": map[string]any{"resultType": "matrix", "result": res}})
	}))
}

func TestForAndKeepFiringForEpisodes(t *testing.T) {
	bad := map[int]bool{}
	for _, i := range []int{2, 3, 4, 5, 6, 10, 11, 20} {
		bad[i] = true
	}
	srv := fakeServer(t, bad)
	defer srv.Close()
	rules := write(t, `groups:
  - name: g
    rules:
      - alert: For2
        expr: up > 0
        for: 2m
      - alert: Kff
        expr: up > 0
        keep_firing_for: 3m
`)
	var out, errb bytes.Buffer
	code := run([]string{"--rules", rules, "--url", srv.URL, "--start", "1000", "--end", strconv.Itoa(1000 + 25*60),
		"--step", "1m", "--chunk-steps", "7"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc struct {
		Alerts []alertOut `json:"alerts"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range doc.Alerts {
		var eps []string
		for _, e := range a.Episodes {
			eps = append(eps, fmt.Sprintf("%.0f+%.0f", (mustTime(t, e.Start)-1000)/60, e.Seconds/60))
		}
		got[a.Alert] = strings.Join(eps, " ")
	}
	// for: 2m fires 2 steps after 2 (at 4) until 7: one episode of 3 minutes; 10-11 and 20 are too short
	if got["For2"] != "4+3" {
		t.Errorf("For2 episodes: %q", got["For2"])
	}
	// keep_firing_for: 3m bridges 7..9 (the gap before 10) and ends 3 minutes after 11 (at 15),
	// and 3 minutes after 20 (at 24)
	if got["Kff"] != "2+13 20+4" {
		t.Errorf("Kff episodes: %q", got["Kff"])
	}
}

func mustTime(t *testing.T, s string) float64 {
	t.Helper()
	v, err := parseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return float64(v.UnixMilli()) / 1000
}

func TestServerErrorsAreFatalAndPrintNothing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	rules := write(t, "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n")
	var out, errb bytes.Buffer
	code := run([]string{"--rules", rules, "--url", srv.URL, "--start", "1000", "--end", "2000"}, &out, &errb)
	if code != 3 || out.Len() != 0 || !strings.Contains(errb.String(), "answered HTTP 502") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// A replay cancelled because another alert's failed reports that failure, not "context canceled"
// (a server refusing connections printed "cannot reach ...: context canceled").
func TestTheFailureIsReportedNotTheCancellationItCaused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if strings.Contains(r.Form.Get("query"), "slow") {
			select { // held until the client gives up on it
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	rules := write(t, "groups:\n  - name: g\n    rules:\n      - alert: Slow\n        expr: slow == 0\n"+
		"      - alert: Fast\n        expr: fast == 0\n")
	var out, errb bytes.Buffer
	code := run([]string{"--rules", rules, "--url", srv.URL, "--start", "1000", "--end", "2000", "--parallel", "2"}, &out, &errb)
	if code != 3 || !strings.Contains(errb.String(), "answered HTTP 502") || strings.Contains(errb.String(), "canceled") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
