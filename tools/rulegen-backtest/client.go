package main

// The HTTP side: instant and range queries against a Prometheus server's HTTP API
// (/api/v1/query, /api/v1/query_range), with a bearer token file, extra headers, a CA file
// and a per-request timeout. Every response is size-bounded and every failure is an error
// that names the URL (never the credentials).

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
)

// fatalError stops the whole run (connection, authentication, server errors, limits).
type fatalError struct{ msg string }

func (e *fatalError) Error() string { return e.msg }

// queryError is the server refusing one expression (HTTP 400/422): that alert reports it.
type queryError struct{ msg string }

func (e *queryError) Error() string { return e.msg }

type client struct {
	base     *url.URL
	http     *http.Client
	headers  http.Header
	token    string
	maxBytes int64
}

type clientOptions struct {
	url       string
	tokenFile string
	headers   []string
	caFile    string
	timeout   time.Duration
	maxBytes  int64
}

func newClient(o clientOptions) (*client, error) {
	u, err := url.Parse(o.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url %q is not an http:// or https:// URL with a host", redact(o.url))
	}
	if u.User != nil {
		return nil, fmt.Errorf("--url %s carries credentials: pass a bearer token file instead", redact(o.url))
	}
	u.RawQuery, u.Fragment = "", ""
	c := &client{base: u, headers: http.Header{}, maxBytes: o.maxBytes}
	for _, h := range o.headers {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("--header %q is not 'Name: value'", name)
		}
		c.headers.Add(name, strings.TrimSpace(value))
	}
	if o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("cannot read the bearer token file %s: %v", o.tokenFile, errors.Unwrap(err))
		}
		c.token = strings.TrimSpace(string(b))
		if c.token == "" || strings.ContainsAny(c.token, "\r\n") {
			return nil, fmt.Errorf("the bearer token file %s is empty or holds more than one line", o.tokenFile)
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // the scrubbed environment has no proxy settings; never take one from it
	tr.MaxIdleConnsPerHost = 16
	if o.caFile != "" {
		pem, err := os.ReadFile(o.caFile)
		if err != nil {
			return nil, fmt.Errorf("cannot read the CA file %s: %v", o.caFile, errors.Unwrap(err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the CA file %s holds no PEM certificate", o.caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	c.http = &http.Client{
		Transport: tr,
		Timeout:   o.timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // never carry the token to another place
		},
	}
	return c, nil
}

// redact drops user info and the query from a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable URL>"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

type apiResponse struct {
	Status    string          `json:"status"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Data      json.RawMessage `json:"data"`
}

type apiData struct {
	ResultType string          `json:"resultType"`
	Result     json.RawMessage `json:"result"`
}

type apiSeries struct {
	Metric     map[string]string `json:"metric"`
	Values     [][2]any          `json:"values"`
	Value      [2]any            `json:"value"`
	Histograms [][2]any          `json:"histograms"`
	Histogram  [2]any            `json:"histogram"`
}

func (c *client) post(ctx context.Context, path string, form url.Values) (*apiData, error) {
	u := *c.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	where := u.String()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, where, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, &fatalError{fmt.Sprintf("cannot build a request to %s: %v", where, err)}
	}
	for k, vs := range c.headers {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			// another alert's replay failed and cancelled this one: its error is the one to
			// report (replayAll skips context.Canceled), not "cannot reach ...: context canceled"
			return nil, ctx.Err()
		}
		var nerr net.Error
		if errors.As(err, &nerr) && nerr.Timeout() {
			return nil, &fatalError{fmt.Sprintf("%s did not answer within %s (--timeout)", where, c.http.Timeout)}
		}
		return nil, &fatalError{fmt.Sprintf("cannot reach %s: %v", where, rootCause(err))}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		var nerr net.Error
		if errors.As(err, &nerr) && nerr.Timeout() {
			return nil, &fatalError{fmt.Sprintf("%s did not answer within %s (--timeout)", where, c.http.Timeout)}
		}
		return nil, &fatalError{fmt.Sprintf("reading the answer of %s failed: %v", where, rootCause(err))}
	}
	if int64(len(body)) > c.maxBytes {
		return nil, &fatalError{fmt.Sprintf("the answer of %s is larger than %d bytes (--max-response-bytes): "+
			"the query selects too much; narrow it or shorten the window", where, c.maxBytes)}
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, &fatalError{fmt.Sprintf("%s refused the request (HTTP %d): check the bearer token file and headers",
			where, resp.StatusCode)}
	case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnprocessableEntity:
		var r apiResponse
		if json.Unmarshal(body, &r) == nil && r.Error != "" {
			return nil, &queryError{fmt.Sprintf("%s: %s", r.ErrorType, r.Error)}
		}
		return nil, &fatalError{fmt.Sprintf("%s answered HTTP %d without a Prometheus error body", where, resp.StatusCode)}
	case resp.StatusCode != http.StatusOK:
		return nil, &fatalError{fmt.Sprintf("%s answered HTTP %d %s", where, resp.StatusCode, snippet(body))}
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		return nil, &fatalError{fmt.Sprintf("%s did not answer with a Prometheus API success response: %s", where, snippet(body))}
	}
	var d apiData
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return nil, &fatalError{fmt.Sprintf("%s answered malformed data: %v", where, err)}
	}
	return &d, nil
}

func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// snippet: at most 120 printable characters of a body, for messages.
func snippet(b []byte) string {
	s := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, string(b))
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return strconv.Quote(strings.TrimSpace(s))
}

func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// instant runs an instant query at t (template queries and --per-step evaluation).
func (c *client) instant(ctx context.Context, q string, t time.Time, maxSeries int) (promql.Vector, error) {
	d, err := c.post(ctx, "/api/v1/query", url.Values{"query": {q}, "time": {formatTime(t)}})
	if err != nil {
		return nil, err
	}
	switch d.ResultType {
	case "vector":
		var ss []apiSeries
		if err := json.Unmarshal(d.Result, &ss); err != nil {
			return nil, &fatalError{fmt.Sprintf("malformed vector answer: %v", err)}
		}
		if len(ss) > maxSeries {
			return nil, tooMany(len(ss), maxSeries)
		}
		vec := make(promql.Vector, 0, len(ss))
		for _, s := range ss {
			p := s.Value
			if s.Histogram[0] != nil {
				p = [2]any{s.Histogram[0], "0"}
			}
			ts, v, err := point(p)
			if err != nil {
				return nil, err
			}
			_ = ts
			vec = append(vec, promql.Sample{Metric: labels.FromMap(s.Metric), T: t.UnixMilli(), F: v})
		}
		return vec, nil
	case "scalar":
		var p [2]any
		if err := json.Unmarshal(d.Result, &p); err != nil {
			return nil, &fatalError{fmt.Sprintf("malformed scalar answer: %v", err)}
		}
		_, v, err := point(p)
		if err != nil {
			return nil, err
		}
		return promql.Vector{{Metric: labels.EmptyLabels(), T: t.UnixMilli(), F: v}}, nil
	default:
		return nil, &queryError{"rule result is not a vector or scalar"}
	}
}

// rangeSeries is one series of a range query: its labels and (timestamp ms, value) points.
type rangeSeries struct {
	metric labels.Labels
	ts     []int64
	vals   []float64
}

// rangeQuery runs q over [start, end] at step; at most maxSeries series are accepted.
func (c *client) rangeQuery(ctx context.Context, q string, start, end time.Time, step time.Duration, maxSeries int) ([]rangeSeries, error) {
	d, err := c.post(ctx, "/api/v1/query_range", url.Values{
		"query": {q}, "start": {formatTime(start)}, "end": {formatTime(end)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', 3, 64)},
	})
	if err != nil {
		return nil, err
	}
	if d.ResultType != "matrix" {
		return nil, &queryError{"rule result is not a vector or scalar"}
	}
	var ss []apiSeries
	if err := json.Unmarshal(d.Result, &ss); err != nil {
		return nil, &fatalError{fmt.Sprintf("malformed matrix answer: %v", err)}
	}
	if len(ss) > maxSeries {
		return nil, tooMany(len(ss), maxSeries)
	}
	out := make([]rangeSeries, 0, len(ss))
	for _, s := range ss {
		rs := rangeSeries{metric: labels.FromMap(s.Metric)}
		pts := s.Values
		for _, h := range s.Histograms { // a native histogram result: its value reads as 0 here
			pts = append(pts, [2]any{h[0], "0"})
		}
		for _, p := range pts {
			ts, v, err := point(p)
			if err != nil {
				return nil, err
			}
			rs.ts = append(rs.ts, ts)
			rs.vals = append(rs.vals, v)
		}
		out = append(out, rs)
	}
	return out, nil
}

func tooMany(n, limit int) error {
	return &fatalError{fmt.Sprintf("a query returned %d series, more than --max-series %d: "+
		"the result is too large to replay; narrow the expr or raise the limit", n, limit)}
}

// point parses one [unix seconds, "value"] pair into (milliseconds, value).
func point(p [2]any) (int64, float64, error) {
	f, ok := p[0].(float64)
	s, ok2 := p[1].(string)
	if !ok || !ok2 {
		return 0, 0, &fatalError{fmt.Sprintf("malformed sample %v in the answer", p)}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, 0, &fatalError{fmt.Sprintf("malformed sample value %q in the answer", s)}
	}
	return int64(math.Round(f * 1000)), v, nil
}
