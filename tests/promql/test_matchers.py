"""Label matcher semantics (rulegen.promql.matchers), with the values Prometheus 3 gives.

Prometheus compiles a regex matcher as ``^(?s:regex)$`` with Go's RE2: anchored at both
ends, ``.`` matching a newline, ``\\d``/``\\w``/``\\s`` ASCII only. A label a series lacks is
matched as ``""``.
"""

from __future__ import annotations

import promql_parser
import pytest

from rulegen.promql.matchers import matches, op_text, regex, selector_matchers, selects


@pytest.mark.parametrize("op, pattern, value, want", [
    ("=", "api", "api", True),
    ("=", "api", "apix", False),
    ("=", "", "", True),            # `job=""` selects series without `job`
    ("!=", "api", "", True),
    ("!=", "api", "api", False),
    ("=~", "foo", "foobar", False),  # anchored at both ends
    ("=~", "foo.*", "foobar", True),
    ("=~", ".*foo", "foobar", False),
    ("=~", "5..", "500", True),
    ("=~", "a|b", "b", True),
    ("=~", "", "", True),
    ("!~", ".+", "", True),
    ("!~", "5..", "500", False),
    ("=~", "(?i)API", "api", True),
])
def test_matcher_verdicts(op, pattern, value, want):
    assert matches(op, pattern, value) is want


def test_dot_matches_a_newline_as_in_prometheus_3():
    # Prometheus 3 wraps the regex in (?s:...). The label-flow copy read `.` without DOTALL
    # unless the regex said (?s), so a value with a newline was judged not selected.
    assert matches("=~", "a.b", "a\nb") is True
    assert matches("=~", ".*", "line1\nline2") is True
    assert matches("!~", ".+", "\n") is False


def test_shorthand_classes_are_ascii_as_in_re2():
    # RE2's \d is [0-9]; Python's str regex \d also takes other scripts' digits, so every
    # copy (label flow, SLO, derive) judged an Arabic-Indic three a digit.
    assert matches("=~", r"\d+", "\u0663") is False
    assert matches("=~", r"\d+", "123") is True
    assert matches("=~", r"\w+", "\u00e9") is False


@pytest.mark.parametrize("pattern", [r"\pL+", r"\p{Greek}", "[[:alpha:]]+", r"a\z", r"\bx", "(?P<n>x)",
                                     r"(?i)\d", "("])
def test_regexes_python_reads_otherwise_are_not_known(pattern):
    assert regex(pattern) is None
    assert matches("=~", pattern, "x") is None
    assert matches("!~", pattern, "x") is None


def test_unknown_operator_is_not_known():
    assert matches("==", "a", "a") is None


def test_selects_refuses_on_any_refusal_and_is_unknown_otherwise():
    ms = [("__name__", "=", "up"), ("job", "=~", r"\pL+"), ("env", "=", "prod")]
    assert selects(ms, {"__name__": "up", "job": "x", "env": "dev"}) is False
    assert selects(ms, {"__name__": "up", "job": "x", "env": "prod"}) is None
    assert selects(ms[::2], {"__name__": "up", "env": "prod"}) is True
    assert selects([("job", "!=", "")], {}) is False


def test_selector_matchers_reads_ops_and_the_metric_name():
    vs = promql_parser.parse('up{a="1", b!="2", c=~"3", d!~"4"}')
    assert selector_matchers(vs) == [("a", "=", "1"), ("b", "!=", "2"), ("c", "=~", "3"), ("d", "!~", "4"),
                                     ("__name__", "=", "up")]
    assert [op_text(m) for m in vs.matchers.matchers] == ["=", "!=", "=~", "!~"]
    assert selector_matchers(promql_parser.parse('{job="x"}')) == [("job", "=", "x")]
