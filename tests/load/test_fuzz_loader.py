"""Fuzz the loader and the checks behind it through ``rulegen validate``: random text,
truncated and mutated bundled specs, huge files, deep nesting, alias bombs, self-referencing
anchors, binary junk. Every case must end in findings (exit 1) or a usage error (exit 2):
never a traceback, never a hang. Examples are bounded so the file runs in well under a
minute on 2 cores.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulegen.cli import main
from rulegen.validate import validate_texts
from rulegen.spec.loader import MAX_FILE_BYTES, MAX_NODES, load_text

from helpers import REPO

BUNDLED = sorted((REPO / "rules").glob("*.yaml"))
BUNDLED_TEXT = [p.read_text(encoding="utf-8") for p in BUNDLED]

FAST = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def validate_bytes(data: bytes) -> tuple[int, str]:
    """Run ``rulegen validate`` on one spec file holding ``data``; (exit code, output)."""
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / "rules").mkdir()
        (root / "rules" / "fuzz.yaml").write_bytes(data)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(["-C", str(root), "validate", "-o", "json"])
        return rc, out.getvalue() + err.getvalue()


def check(text: str | bytes, allow_clean: bool = False) -> str:
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    t0 = time.monotonic()
    rc, output = validate_bytes(data)
    assert time.monotonic() - t0 < 10, "validate took too long"
    assert "Traceback" not in output
    allowed = (0, 1, 2) if allow_clean else (1, 2)
    assert rc in allowed, output
    if rc == 1:
        assert '"errors": 0' not in output
    return output


@FAST
@given(st.text(max_size=400))
def test_random_text(text):
    check(text, allow_clean=False)


@FAST
@given(st.binary(max_size=400))
def test_binary_junk(data):
    check(data)


@settings(FAST, max_examples=100)
@given(st.sampled_from(range(len(BUNDLED_TEXT))), st.floats(0, 1))
def test_truncated_bundled_specs(i, frac):
    text = BUNDLED_TEXT[i]
    check(text[: int(len(text) * frac)], allow_clean=True)


@settings(max_examples=250, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(BUNDLED_TEXT))), st.floats(0, 1),
       st.sampled_from(["", ":", "- ", "{", "[", "]", "}", "&a ", "*a", "\t", "'", '"', "\n",
                        "  ", "{{", "}}", "{{ $label.x }}", "yes", "0x1F", "~", "!!binary ",
                        "? ", "<<: ", "%", "@", "\x85", "\u2028", "\ud800", "9" * 5000]),
       st.integers(0, 40))
def test_mutated_bundled_specs(i, frac, insert, cut):
    text = BUNDLED_TEXT[i]
    at = int(len(text) * frac)
    check(text[:at] + insert + text[at + cut:], allow_clean=True)


@settings(FAST, max_examples=60)
@given(st.integers(1, 400), st.sampled_from(["[", "{a: ", "- ", "a:\n"]))
def test_deep_nesting(depth, opener):
    if opener == "[":
        text = "app: " + "[" * depth + "]" * depth + "\n"
    elif opener == "{a: ":
        text = "app: " + "{a: " * depth + "1" + "}" * depth + "\n"
    elif opener == "- ":
        text = "app: x\ngroups:\n" + "".join("  " * k + "- \n" for k in range(depth))
    else:
        text = "".join("  " * k + "a:\n" for k in range(depth))
    check(text)


@settings(FAST, max_examples=30)
@given(st.integers(2, 12), st.integers(2, 12))
def test_billion_laughs(width, levels):
    lines = ["app: demo", "labels: &l0 {a: x}"]
    for k in range(1, levels):
        lines.append(f"l{k}: &l{k} [{', '.join([f'*l{k - 1}'] * width)}]")
    output = check("\n".join(lines) + "\n")
    if width ** (levels - 1) > MAX_NODES:
        assert "RG105" in output


@FAST
@given(st.sampled_from(["&a [*a]", "&a {x: *a}", "&a [1, [2, *a]]", "&a {x: [*a]}",
                        "&a [&b [*a, *b]]", "&a [*a, *a]"]),
       st.sampled_from(["groups", "labels", "runbook", "x"]))
def test_self_referencing_anchors(node, key):
    output = check(f"app: demo\n{key}: {node}\n")
    assert "RG104" in output


def test_huge_file_is_refused_quickly():
    t0 = time.monotonic()
    output = check("app: demo\n" + "# filler\n" * (MAX_FILE_BYTES // 9 + 1))
    assert "RG106" in output
    assert time.monotonic() - t0 < 5


def test_large_but_allowed_spec_finishes():
    # about 120 kB (10x the bundled spec): many groups of a small alert; slow to parse, bounded
    group = """\
  - name: g{n}
    rules:
      - alert: Demo{n}Down
        expr: up{{job="j{n}"}} == 0
        severity: warning
        summary: Down.
        description: "{{{{ $labels.instance }}}} is down."
"""
    text = "app: demo\ngroups:\n" + "".join(group.format(n=n) for n in range(600))
    assert len(text) > 110_000
    check(text, allow_clean=True)


def test_huge_flat_list_hits_the_node_limit():
    text = "app: demo\nlabels: [" + ", ".join(["a"] * (MAX_NODES + 10)) + "]\n"
    lf = load_text(text, "a.yaml")
    assert [(f.code, f.line, f.col) for f in lf.findings] == [("RG105", 1, 1)]


# -- regressions found by fuzzing ---------------------------------------------------------

def test_regression_self_reference_was_silently_none():
    # ruamel builds [None] for `&a [*a]`; the loader used to accept it as valid data
    lf = load_text("app: demo\ngroups: &a [*a]\n", "a.yaml")
    assert [f.code for f in lf.findings] == ["RG104"]


def test_regression_deep_flow_nesting_took_seconds():
    t0 = time.monotonic()
    lf = load_text("app: " + "[" * 5000 + "]" * 5000 + "\n", "a.yaml")
    assert [f.code for f in lf.findings] == ["RG105"]
    assert time.monotonic() - t0 < 1


# -- structure-aware: valid YAML in the spec's shape with random values ------------------------

_TEMPLATE_BITS = st.sampled_from(["{{", "}}", "{{-", "-}}", " ", "$labels", "$value", ".Value", "$",
                                  "$x", ":=", "=", "|", "(", ")", '"', "`", "'", "/*", "*/", "if",
                                  "else", "end", "range", "with", "define", "block", "template",
                                  "break", "humanize", "printf", "nil", "true", "1", "-3", ".x",
                                  ",", "\\", "\n", "a", "{{ $labels.instance }}"])
_TEMPLATE = st.lists(_TEMPLATE_BITS, max_size=12).map("".join)
_SCALAR = st.one_of(st.text(max_size=30), _TEMPLATE, st.integers(), st.booleans(), st.none(),
                    st.floats(allow_nan=True))


@st.composite
def _spec_like(draw):
    labels = draw(st.dictionaries(st.sampled_from(["team", "severity", "__x", "a-b", "x", "1"]),
                                  _SCALAR, max_size=3))
    rule = draw(st.fixed_dictionaries({
        draw(st.sampled_from(["alert", "record"])): st.one_of(st.sampled_from(["DemoDown", "demo", "a:b:c", ""]), _SCALAR),
        "expr": st.one_of(st.sampled_from(["up == 0", "sum(rate(x[5m])", "x > 0[5m]", "vector(1)"]), _SCALAR),
    }, optional={"labels": st.just(labels), "summary": _TEMPLATE, "description": _SCALAR,
                 "severity": _SCALAR, "for": _SCALAR,
                 "runbook": st.just({"related": [{"alert": "Nope"}]}),
                 "tests": st.just([{"name": "t", "input_series": [{"series": "up", "values": "0x5"}],
                                    "alert_rule_test": [{"eval_time": "5m", "alertname": "X"}]}])}))
    groups = [{"name": draw(st.sampled_from(["g", "g", " ", ""])), "rules": [rule, rule]}]
    return {"app": draw(st.sampled_from(["demo", "Demo", ""])), "labels": labels, "groups": groups}


@settings(FAST, max_examples=200)
@given(_spec_like())
def test_spec_shaped_documents(doc):
    import yaml
    check(yaml.safe_dump(doc, allow_unicode=True), allow_clean=True)


_SPEC_WITH_TEST = """\
app: demo
groups:
  - name: demo
    rules:
      - alert: DemoDown
        expr: up == 0
        for: 5m
        severity: critical
        summary: Down.
        description: Down.
        runbook: {causes: [it broke]}
        tests:
          - name: fires
            input_series: [{series: up, values: 0x10}]
            alert_rule_test:
              - eval_time: 10m
                alertname: DemoDown
                exp_alerts: []
"""


@pytest.mark.parametrize("key", ["groups", "rules", "tests", "alert_rule_test", "exp_alerts"])
@pytest.mark.parametrize("odd", ["1", "true", ".nan", "text"])
def test_a_list_key_holding_a_scalar_is_a_finding_not_a_traceback(key, odd):
    # regression: `groups: 1` (a truthy non-list) raised TypeError in the YAML-traps check
    import re as _re
    text = _re.sub(rf"^(\s*-?\s*{key}:).*$", rf"\1 {odd}", _SPEC_WITH_TEST, count=1, flags=_re.M)
    assert text != _SPEC_WITH_TEST
    result = validate_texts({"rules/demo.yaml": text})
    assert any(f.is_error for f in result.findings)


@pytest.mark.parametrize("value", ["9" * 400 + ".5m", "'" + "9" * 400 + "'"])
def test_a_duration_of_hundreds_of_digits_is_a_finding_not_a_traceback(value):
    # regression: the hint computed int(inf) and raised OverflowError
    text = _SPEC_WITH_TEST.replace("for: 5m", f"for: {value}")
    found = [f for f in validate_texts({"rules/demo.yaml": text}).findings if f.code == "RG302"]
    assert found and "far longer than the longest duration Prometheus takes" in found[0].message
