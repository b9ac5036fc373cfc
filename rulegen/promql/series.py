"""promtool's series notation (``input_series`` of a rule test), read and written once.

A test input series is a ``series`` text (a selector with equality matchers only, such as
``http_requests_total{job="api"}``) and ``values`` in promtool's expanding notation
(Prometheus docs, "Unit testing for rules"), tokens separated by spaces:

* ``a`` one sample; ``axn`` ``n + 1`` samples of ``a``;
* ``a+bxn`` / ``a-bxn`` ``n + 1`` samples from ``a``, adding (subtracting) ``b`` each step;
* ``_`` a missing sample, ``_xn`` ``n`` of them; ``stale`` a staleness marker;
* ``{{schema:0 sum:1 count:1}}`` a native histogram (``...x n`` and ``+``/``-`` runs too).

Numbers are PromQL numbers (``1``, ``-2.5e3``, ``.5``, ``Inf``, ``NaN`` in any case). The
series-description lexer of Prometheus reads no hexadecimal (``0x5`` is five more ``0``
samples, and ``0xff`` is an error).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal

from .matchers import selector_matchers
from .syntax import parsed

_NUM = r"[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|(?i:inf|nan))"
_TOKEN = re.compile(rf"^(?P<a>{_NUM})(?:(?P<op>[+-])(?P<b>{_NUM}))?(?:x(?P<n>\d+))?$")
_BLANK = re.compile(r"^_(?:x(?P<n>\d+))?$")
_HIST = re.compile(r"\{\{[^}]*\}\}(?:[+-]\{\{[^}]*\}\})?(?:x\d+)?")


class ValuesError(ValueError):
    """``values`` text is not in promtool's expanding notation."""


def _runs(text: str):
    """(kind, samples) of each token of ``values`` text: ``("hist", n)`` for native histogram
    runs, ``("_", n)``, ``("stale", 1)``, ``("n", [values])`` for numbers, and
    ``("bad", token)`` for a token that is not notation."""
    rest = str(text).strip()
    for m in _HIST.finditer(rest):
        xm = re.search(r"x(\d+)$", m.group(0))
        yield "hist", int(xm.group(1)) + 1 if xm else 1
    for tok in _HIST.sub(" ", rest).split():
        if tok == "stale":
            yield "stale", 1
            continue
        b = _BLANK.match(tok)
        if b:
            yield "_", int(b.group("n")) if b.group("n") else 1
            continue
        m = _TOKEN.match(tok)
        if not m:
            yield "bad", tok
            continue
        a = float(m.group("a"))
        n = int(m.group("n")) if m.group("n") else 0
        step = float(m.group("b")) if m.group("b") else 0.0
        if m.group("op") == "-":
            step = -step
        yield "n", [a + i * step for i in range(n + 1)]


def expand(text: str) -> list[str]:
    """Expand promtool ``values`` into one item per step: ``"n"`` (a sample), ``"_"`` (none)
    or ``"stale"``. ``"1+1x2 _ stale"`` -> ``["n", "n", "n", "_", "stale"]``; native
    histograms count as samples, before the rest.

    Raises:
        ValuesError: a token is not valid notation.
    """
    out: list[str] = []
    for kind, got in _runs(text):
        if kind == "bad":
            raise ValuesError(f"`{got}` is not promtool series notation; write values separated by "
                              "spaces as a, a+bxn, a-bxn, axn, _, _xn or stale (e.g. \"1+1x5 stale\")")
        if kind == "n":
            out.extend(["n"] * len(got))
        else:
            out.extend(["n" if kind == "hist" else kind] * got)
    return out


def sample_values(text: str) -> list[float]:
    """The numbers in promtool ``values`` (``"1+2x3 _ stale"`` -> 1, 3, 5, 7), ``Inf`` and
    ``NaN`` included; histograms, ``_``, ``stale`` and tokens that are not notation are
    skipped."""
    return [v for kind, got in _runs(text) if kind == "n" for v in got]


def short_number(v: float) -> str:
    """A number as PromQL or ``values`` text, short: 2 not 2.0, 0.15 not 0.15000000000000002
    (12 significant digits at most); ``inf``/``nan`` as Python writes them."""
    if math.isfinite(v):
        v = float(format(v, ".12g"))
    if math.isfinite(v) and v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def decimal_text(d: Decimal) -> str:
    """A Decimal as PromQL number text, without exponent or trailing zeros (``0.005``)."""
    s = format(d.normalize(), "f")
    return s if s not in ("-0",) else "0"


def exact_number(x) -> str:
    """A number as PromQL or ``values`` text, exactly: integers without ``.0``, Decimals
    exactly, floats as the shortest text that reads back as the same float (never an
    exponent)."""
    if isinstance(x, Decimal):
        return decimal_text(x)
    if float(x).is_integer():
        return str(int(x))
    text = repr(float(x))
    return text if "e" not in text else format(Decimal(text), "f")


def _quoted(value: str) -> str:
    """``value`` as a PromQL double-quoted string."""
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def series_text(metric: str, labels: Mapping) -> str:
    """A series as ``input_series`` writes it: ``metric{a="x", b="y"}``, labels in the order
    given, values quoted as PromQL strings (``\\``, ``"`` and newlines escaped)."""
    inner = ", ".join(f"{k}={_quoted(v)}" for k, v in labels.items())
    return f"{metric}{{{inner}}}" if inner else metric


def series_labels(text: str) -> dict | None:
    """Labels (``__name__`` included) of a ``series`` text such as ``up{job="api"}``, or None
    when it does not parse as a plain selector with equality matchers."""
    ast = parsed(text)
    if type(ast).__name__ != "VectorSelector" or ast.matchers.or_matchers:
        return None
    labels = {}
    for label, op, value in selector_matchers(ast):
        if op != "=":
            return None
        labels[label] = value
    return labels


def series_name(text: str) -> str:
    """The metric name of a ``series`` text (``up{job="a"}`` -> ``up``), read leniently
    (also from text that does not parse), or ``""``."""
    m = re.match(r"\s*([a-zA-Z_:][a-zA-Z0-9_:]*)", text)
    if m:
        return m.group(1)
    m = re.search(r"__name__\s*=\s*\"([^\"]*)\"", text)
    return m.group(1) if m else ""
