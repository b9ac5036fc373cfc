"""Which test input series feed an expression: the selectors it reads (through the project's
recording rules), whether a promtool ``input_series`` can be selected by one of them, and
whether a series that cannot looks like a mistake (a typo) rather than a deliberate contrast.

Matchers are judged by :mod:`rulegen.promql.matchers` (None, "cannot tell", for a regex not
read like RE2); series texts read by :func:`rulegen.promql.series.series_labels`.
"""

from __future__ import annotations

from .labelflow import RecordingRules, recording_variants
from .matchers import matches, op_text, selector_matchers, selects
from .series import series_labels
from .syntax import nodes, parsed


def selectors(expr, recording_rules: RecordingRules | None = None) -> list | None:
    """Every series selector ``expr`` reads, those of the project's recording rules it reads
    included (transitively), as lists of (label, op, value) matchers (``__name__`` for the
    metric name). None when ``expr``, or a recording rule it reads, does not parse."""
    rr = recording_rules or {}
    out: list = []
    seen: set[str] = set()
    todo = [expr]
    while todo:
        e = todo.pop()
        ast = parsed(e) if isinstance(e, str) else e
        if ast is None:
            return None  # the expression or a recording rule it reads does not parse
        for node in nodes(ast):
            if type(node).__name__ != "VectorSelector":
                continue
            ms = selector_matchers(node)
            groups = [ms] if not node.matchers.or_matchers else [
                [(m.name, op_text(m), m.value) for m in g] + ([("__name__", "=", node.name)] if node.name else [])
                for g in node.matchers.or_matchers]
            out.extend(groups)
            for g in groups:
                for name in rr:
                    if name not in seen and all(matches(op, v, name) is not False
                                                for lab, op, v in g if lab == "__name__"):
                        if any(lab == "__name__" for lab, _, _ in g):
                            seen.add(name)
                            todo.extend(e2 for e2, _ in recording_variants(rr[name]))
    return out


def series_feed(expr: str, series_selector_text: str,
                recording_rules: RecordingRules | None = None) -> bool | None:
    """Can the test input series ``series_selector_text`` (promtool's ``series``, e.g.
    ``http_requests_total{job="api"}``) be selected by ``expr`` or by a recording rule of the
    project that ``expr`` reads (transitively)?

    Returns True when a selector matches it, False when no selector can (a misspelled metric
    or label value: the test feeds nothing), None when it cannot be told (the expression or
    the series does not parse, or a regex is not understood)."""
    labels = series_labels(series_selector_text)
    sels = selectors(expr, recording_rules)
    if labels is None or sels is None:
        return None
    return _feeds(labels, sels)


def _feeds(labels: dict, sels: list) -> bool | None:
    """:func:`series_feed` for the series ``labels`` and the selectors ``sels`` (both known)."""
    unknown = False
    for ms in sels:
        verdict = selects(ms, labels)
        if verdict is True:
            return True
        if verdict is None:
            unknown = True
    return None if unknown else False


def _typo(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by one edit (insert, delete, replace or swap of two neighbours),
    and are long enough (3+ characters) for that to read as a typo rather than another word."""
    if a == b or min(len(a), len(b)) < 3 or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and
                                  a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


def missed_by_mistake(expr: str, series_selector_text: str,
                      recording_rules: RecordingRules | None = None, values_on_purpose: bool = False) -> str | None:
    """Why the test input series ``series_selector_text`` looks meant for ``expr`` but can
    never be selected by it, or None.

    Stricter than ``series_feed(...) is False``: a series that a selector's matchers reject
    on purpose (``status="True"`` where the alert wants ``status="False"``: a test that the
    filter works) is not a mistake. A mistake is a series whose metric name no selector reads
    (the result is then ``"metric"``), or one that a selector of its metric rejects only
    through a typo-like difference: a label value one edit away from an equality matcher's
    (``job="apx"`` for ``job="api"``) or a label name one edit away from a required one
    (``jbo`` for ``job``). Returns ``"metric"`` or the matcher it misses (``job="api"``).

    ``values_on_purpose``: the caller knows the series is there to be rejected (a test that
    expects nothing while it is there, or that feeds a sibling series with the same metric
    and label names): then a label value one edit away (``code="200"`` for ``code="500"``)
    is deliberate too; a metric name or label name no selector reads is still a mistake."""
    labels = series_labels(series_selector_text)
    sels = selectors(expr, recording_rules)
    if labels is None or sels is None or _feeds(labels, sels) is not False:
        return None
    hint = None
    for ms in sels:
        if any(lab == "__name__" and matches(op, v, labels.get("__name__", "")) is False for lab, op, v in ms):
            continue  # another metric: this selector was never the series' target
        if any(lab == "__name__" and op != "=" for lab, op, _ in ms) or \
                not any(lab == "__name__" for lab, _, _ in ms):
            return None  # a selector on any metric name (regex, none): its filters were the target
        typo = None
        for lab, op, v in ms:
            if lab == "__name__" or matches(op, v, labels.get(lab, "")) is not False:
                continue
            if op == "=" and lab in labels and _typo(labels[lab], v):
                if values_on_purpose:
                    return None  # another value of the right label: the filter is what is tested
                typo = f'{lab}="{v}"'
            elif op == "=" and lab not in labels and any(_typo(k, lab) for k in labels):
                typo = f'{lab}="{v}"'
            else:
                return None  # a deliberate other value: the test checks the filter
        if typo is None:
            return None
        hint = hint or typo
    return hint or "metric"

