"""RG519: the queries of runbook ``promql`` blocks parse as PromQL (trial: an unbalanced
``sum by (code) (rate(x[5m])`` passed validate, build and check, and the page offered "Open in
Prometheus" for it), at the character at fault; placeholders the reader fills in are not
errors, and the bundled specs have none."""

from __future__ import annotations

import pytest

from rulegen.cli import main
from rulegen.validate import validate_texts
from rulegen.validate.checks.runbook import _query_error

from helpers import REPO

SPEC = """\
app: demo
runbook:
  context:
    - title: "Traffic:"
      promql: sum(rate(http_requests_total[5m]))
  sections:
    - title: Reasons
      blocks:
        - promql: ["up", "count(up)"]
groups:
  - name: demo
    rules:
      - alert: DemoErrors
        expr: sum by (code) (rate(http_requests_total{code=~"5.."}[5m])) > 1
        for: 5m
        severity: critical
        summary: Errors.
        description: More than one request a second fails.
        runbook:
          diagnosis:
            - title: "Which codes:"
              promql:
                - sum by (code) (rate(http_requests_total[5m]))
                - up{job="demo"}
"""


def findings(text: str):
    res = validate_texts({"rules/demo.yaml": text})
    return [(f.line, f.col, f.code, f.severity.value, f.message) for f in res.findings]


def at(text: str, needle: str) -> tuple[int, int]:
    i = text.index(needle)
    return text.count("\n", 0, i) + 1, i - (text.rfind("\n", 0, i) + 1) + 1


def test_valid_queries_have_no_findings():
    assert findings(SPEC) == []


def test_rg519_an_unbalanced_diagnosis_query_at_its_unclosed_parenthesis():
    text = SPEC.replace("- sum by (code) (rate(http_requests_total[5m]))",
                        "- sum by (code) (rate(http_requests_total[5m])")
    [(line, col, code, severity, message)] = findings(text)
    where = at(text, "(rate(http_requests_total[5m])\n")
    assert (line, col, code, severity) == (*where, "RG519", "error")
    assert message.startswith("runbook query does not parse as PromQL: unclosed left parenthesis; "
                              "add the missing `)`")
    assert "Open in Prometheus" in message


@pytest.mark.parametrize("old, new, needle", [
    ("promql: sum(rate(http_requests_total[5m]))", "promql: sum(rate(http_requests_total[5m])))", "[5m])))"),
    ('promql: ["up", "count(up)"]', 'promql: ["up", "count(up"]', "(up\""),
    ('- up{job="demo"}', '- up{job="demo"} = 1', "= 1"),
])
def test_rg519_in_context_sections_and_one_string_blocks(old, new, needle):
    text = SPEC.replace(old, new)
    got = findings(text)
    line, col = at(text, needle)
    col += 6 if needle == "[5m])))" else 0  # the extra `)`
    assert [(line, col, code) for line, col, code, *_ in got] == [(line, col, "RG519")]


def test_rg519_fails_build_and_check(tmp_path, capsys):
    root = tmp_path / "p"
    root.mkdir()
    assert main(["-C", str(root), "new", "demo"]) == 0
    spec = root / "rules/demo.yaml"
    text = spec.read_text(encoding="utf-8")
    assert "- sum by (code) (rate(http_requests_total{job=\"demo\"}[5m]))\n" in text
    query = '- sum by (code) (rate(http_requests_total{job="demo"}[5m]))\n'
    spec.write_text(text.replace(query, query.replace("))", ")")), encoding="utf-8")
    capsys.readouterr()
    assert main(["-C", str(root), "build"]) != 0
    assert main(["-C", str(root), "check"]) != 0
    assert "RG519" in capsys.readouterr().err


@pytest.mark.parametrize("query", [
    'up{namespace="<ns>", pod="<pod>"}', 'rate(x[<window>])', "sum by (<label>) (x)", "x > $THRESHOLD",
    "x > ${THRESHOLD}", 'x{a="{{ $labels.a }}"}', "rate(x[{{ $value }}])", "up{namespace=‹namespace›}",
    "x > [[threshold]]", 'label_replace(x, <dst>, "$1", "a", "(.*)")', "up{namespace=<ns>}",
    "topk(<n>, x) > <threshold>", "x # not <a>( comment",
    # a `#` inside quotes starts no comment (it hid the placeholder after it: RG519 on a valid
    # query), and a carriage return ends a comment as Prometheus' lexer reads it
    'sum(rate(x{a="#"}[<window>]))', "x # c\r> <threshold>",
])
def test_rg519_quiet_on_placeholders_the_reader_fills(query):
    assert _query_error(query) is None


@pytest.mark.parametrize("query, offset, message", [
    ("sum(rate(x[<w>])", 3, "unclosed left parenthesis"),  # the `(`, not the placeholder
    ('sum(x{ns="<ns>"}', 3, "unclosed left parenthesis"),
    ("x{a=<ns>} = <n>", 10, 'unexpected "="; compare with "=="'),
])
def test_rg519_reports_what_no_placeholder_fill_fixes(query, offset, message):
    assert _query_error(query) == (offset, message)


def test_rg519_an_slo_alert_runbook_query_is_reported_once():
    # the page alert is two rules (the 14.4x and 6x pairs) carrying the same runbook
    text = """\
app: demo
slos:
  - name: availability
    objective: 99.5
    description: Requests that do not fail.
    sli:
      events:
        bad: http_requests_total{code=~"5.."}
        total: http_requests_total
    page:
      runbook:
        diagnosis:
          - promql: sum(rate(http_requests_total[5m])
"""
    got = [f for f in findings(text) if f[2] == "RG519"]
    assert [(line, col) for line, col, *_ in got] == [at(text, "(rate(")]


def test_bundled_specs_have_no_rg519():
    res = validate_texts({f"rules/{p.name}": p.read_text(encoding="utf-8") for p in (REPO / "rules").glob("*.yaml")})
    assert [f for f in res.findings if f.code == "RG519"] == []


def test_rg519_quiet_on_every_corpus_expr_as_a_runbook_query(shared_dir):
    # the corpora hold no runbook blocks: their exprs (valid PromQL) stand for the queries a team
    # pastes into one. Read from ../shared/corpus, not copied: "Awesome Prometheus alerts" by
    # Samuel Berthe and contributors (CC BY 4.0), kube-prometheus-stack's rendered rules (Apache-2.0)
    import yaml

    from helpers import CORPUS
    files = sorted(CORPUS.glob("*/*.yml")) + [CORPUS.parents[1] / "kube-prometheus-stack/rendered-defaults.yaml"]
    exprs = [r["expr"] for f in files for d in yaml.safe_load_all(f.read_text(encoding="utf-8")) if d
             for g in (d.get("groups") or (d.get("spec") or {}).get("groups") or []) for r in g.get("rules") or []]
    assert len(exprs) > 1000
    assert [e for e in exprs if _query_error(str(e)) is not None] == []
