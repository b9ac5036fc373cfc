"""promtool series notation (rulegen.promql.series): reading, expanding and writing values."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rulegen.promql.series import (ValuesError, exact_number, expand, sample_values, series_labels,
                                   series_name, series_text, short_number)


def test_expand_counts_steps():
    assert expand("1+1x2 _ stale") == ["n", "n", "n", "_", "stale"]
    assert expand("_x2 1 -2.5e3 Inf NaN .5 5.") == ["_", "_"] + ["n"] * 6
    assert expand("{{schema:0 sum:1 count:1}}x2 1") == ["n"] * 4
    assert expand("") == []


def test_0x5_is_a_run_of_zeros_not_hexadecimal():
    # Prometheus' series-description lexer reads no hexadecimal: `0x5` is 0 six times
    assert expand("0x5") == ["n"] * 6
    assert sample_values("0x5") == [0.0] * 6


@pytest.mark.parametrize("bad", ["0xff", "0x1f", "1,2", "1+", "x3", "1x", "_x", "stal"])
def test_not_notation_is_an_error(bad):
    # the validation copy accepted `0xff` as a hexadecimal number, which promtool rejects
    with pytest.raises(ValuesError, match="not promtool series notation"):
        expand(bad)


def test_inf_and_nan_in_any_case():
    # Prometheus reads Inf and NaN whatever their case; the validation copy rejected `INF`
    assert expand("INF -inf nAn") == ["n"] * 3
    got = sample_values("INF -inf nAn")
    assert got[0] == math.inf and got[1] == -math.inf and math.isnan(got[2])


def test_sample_values():
    assert sample_values("1+2x3 _ stale 5 -1-1x1") == [1, 3, 5, 7, 5, -1, -2]
    assert sample_values("{{schema:0 sum:5 count:5}} 2 junk") == [2]


def test_number_texts():
    assert short_number(0.1 + 0.2) == "0.3"
    assert short_number(2.0) == "2"
    assert short_number(math.inf) == "inf"
    assert exact_number(Decimal("1.50")) == "1.5"
    assert exact_number(Decimal("-0")) == "0"
    assert exact_number(1e-7) == "0.0000001"
    assert exact_number(0.1 + 0.2) == "0.30000000000000004"
    assert exact_number(3.0) == "3"


def test_series_text_and_back():
    assert series_text("up", {}) == "up"
    assert series_text("up", {"b": "2", "a": "1"}) == 'up{b="2", a="1"}'
    assert series_labels('up{job="api"}') == {"__name__": "up", "job": "api"}
    assert series_labels('up{job=~"api"}') is None
    assert series_labels("rate(up[5m])") is None
    assert series_name('up{job="a"}') == "up"
    assert series_name('{__name__="up"}') == "up"
    assert series_name("{}") == ""


def test_series_text_escapes_quotes_and_backslashes():
    # the SLO and derive copies wrote values unescaped: `a"b` gave `x{l="a"b"}`, not PromQL
    assert series_text("x", {"l": 'a"b\\c'}) == r'x{l="a\"b\\c"}'
    assert series_labels(series_text("x", {"l": 'a"b\\c\nd'})) == {"__name__": "x", "l": 'a"b\\c\nd'}


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True),
                       st.text(st.characters(blacklist_categories=("Cs",)), max_size=12), max_size=4))
def test_series_text_reads_back_as_its_labels(labels):
    labels = {k: v for k, v in labels.items() if v != "" and k != "__name__"}
    assert series_labels(series_text("m", labels)) == {"__name__": "m", **labels}
