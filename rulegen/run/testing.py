"""``rulegen test``: promtool unit tests against the rules Helm actually renders.

Pipeline step 4 of 4. For each app:

1. validate the specs and plan the outputs in memory (what ``rulegen build`` would write);
2. copy the app's chart into ``.rulegen/test/<app>/chart`` with the planned template, values and
   values schema laid over it, and render it with the real ``helm template`` with every gate
   set true and the chart's own rule knobs removed (:func:`values_for_tests`: the tests test the
   spec's rules, not a deployment's overrides; escaping, gating and defaults are what is
   tested, not a copy of the rules);
3. write the PrometheusRules' ``spec.groups`` to ``.rulegen/test/<app>/rules.yaml`` and the
   promtool test file next to it: the planned one plus the SLOs' tests, generated now
   (:func:`rulegen.spec.slo.with_tests`; the committed file holds only the declared tests); where test groups state different annotations, one
   rule file and test file per set (``rules.2.yaml`` with ``<app>.2.test.yaml``, ...), each
   alert keeping only the annotations its tests state (see
   :func:`rulegen.render.promtool_tests.annotation_filters`);
4. run the real ``promtool test rules`` on all test files, split into batches run in parallel
   (one promtool process per CPU by default), and read results from promtool's JUnit report.

Failures are reported against the spec (``file:line`` of the test, the alert, the eval time,
expected versus got as a diff). Coverage: per alert, whether a passing test shows it firing
and one shows it not firing; a recording rule is covered when a passing ``promql_expr_test``
reads it. A test with an input series that nothing it evaluates can select (RG608: a
misspelled metric or label) counts for nothing. ``--min-coverage P`` fails the run when fewer than P% of rules are covered.

With ``--mutate`` (implied by ``--min-mutation-score``), once the tests pass, every rule
with tests is mutation tested (:mod:`rulegen.run.mutation`): per rule the mutants killed out
of the total, each survivor in words with its spec line, and the overall score, which
``--min-mutation-score P`` holds to P%; ``--junit`` then also holds one testsuite of mutants
per app.

The last line printed is ``N passed, N failed`` (test groups), which CI systems read.
"""

from __future__ import annotations

import difflib
import re
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..fs.containment import refuse_tree
from ..findings import RulegenError
from ..fs.write import atomic_write, copy_tree, fresh_dir
from ..promql.syntax import nodes, parsed
from ..render.promtool_tests import RULES_FILE, annotation_filters, filter_annotations
from ..render.values import gate_values
from ..render.yamltext import values_yaml
from ..spec import Spec
from ..spec.durations import DurationError, parse_ms
from ..tools import helm, promtool
from ..render import library

WORK_DIR = ".rulegen/test"


@dataclass
class TestCase:
    """One declared test (a promtool test group) and where it is written in the spec."""

    app: str
    spec: Spec
    rule: object
    test: object
    name: str  # promtool test group name: "<Rule>: <test name>"
    line: int = 0
    passed: bool | None = None
    failure: str = ""


@dataclass
class RuleCoverage:
    """Coverage of one rule. ``boundary`` is None for rules without ``for``; otherwise True
    when one passing test shows the alert quiet at an eval_time and firing at a later one
    (both sides of the ``for`` boundary)."""

    app: str
    name: str
    kind: str  # "alert" or "record"
    fires: bool
    quiet: bool
    boundary: bool | None = None

    @property
    def covered(self) -> bool:
        return self.fires and self.quiet and self.boundary is not False

    def missing(self) -> str:
        if self.kind == "record":
            return "a promql_expr_test that reads it"
        need = [x for x, ok in (("a firing case", self.fires), ("a non-firing case", self.quiet),
                                ("a case on each side of the `for` boundary", self.boundary is not False))
                if not ok]
        return " and ".join(need)


@dataclass
class Coverage:
    """Per-rule test coverage (see :class:`RuleCoverage`)."""

    rows: list = field(default_factory=list)

    @property
    def percent(self) -> float:
        if not self.rows:
            return 100.0
        return 100.0 * sum(1 for r in self.rows if r.covered) / len(self.rows)


def select(cases: list[TestCase], apps: list[str], alerts: list[str], text: str | None) -> list[TestCase]:
    """Cases matching every given filter (``apps``/``alerts`` any-of, ``text`` substring)."""
    out = []
    for c in cases:
        if apps and c.app not in apps:
            continue
        if alerts and c.rule.name not in alerts:
            continue
        if text and text not in c.name:
            continue
        out.append(c)
    return out


def collect_cases(specs: list[Spec]) -> list[TestCase]:
    """Every declared test, in spec order."""
    out = []
    for spec in specs:
        for _, rule in spec.rules():
            for t in rule.tests:
                line, _ = spec.source.pos(t.path)
                out.append(TestCase(spec.app, spec, rule, t, f"{rule.name}: {t.name}", line))
    return out


#: The knobs (keys under the values key) that change the rules themselves; ``rulegen test``
#: removes them (see :func:`values_for_tests`). ``runbookUrl`` (the site's address) and the
#: PrometheusRule's own ``labels`` and ``annotations`` stay as the chart sets them.
RULE_KNOBS = ("disabled", "groups", "customRules", "additionalRuleLabels", "additionalRuleAnnotations")


def values_for_tests(spec: Spec) -> dict:
    """The values ``rulegen test`` renders ``spec``'s chart with: every gate true, and each of
    :data:`RULE_KNOBS` under ``chart.values_key`` set to null, which Helm reads as "delete this
    key from the chart's values.yaml". So the tests test the spec's rules as the spec defines
    them: a ``customRules.<Alert>.for``, a ``disabled`` alert or group, extra labels or an
    SLO's ``objective`` set in the chart's values.yaml (a deployment's choice) cannot fail (or
    pass) a spec's test.
    """
    out = gate_values(spec.chart.gates)
    knobs = out.setdefault(spec.chart.values_key, {})
    if isinstance(knobs, dict):  # a gate may not be the values key itself (the schema forbids it)
        for k in RULE_KNOBS + (("slos",) if spec.slos else ()):  # slos: in values.yaml only with SLOs
            knobs.setdefault(k, None)
    return out


def render_rule_groups(spec: Spec, outputs, root: Path, app_dir: Path) -> list[dict]:
    """Copy ``spec``'s chart into ``app_dir/chart`` with the planned ``outputs`` laid over it
    and render it with the real ``helm template`` with :func:`values_for_tests` (every gate on,
    the chart's own rule knobs removed); returns the rule groups of its PrometheusRules (a
    rule file's ``groups:``).

    Raises:
        RulegenError: the chart holds a link leading outside the project or a special file
            (RG742, RG760: nothing is copied), helm failed or rendered no rule group.
    """
    refuse_tree(root, spec.chart.path, "chart folder")
    refuse_tree(root, library.LIBRARY_DIR, "chart library")
    app_dir = fresh_dir(root, app_dir)  # RG747 when a link on the way leads outside the project
    chart_src = root / spec.chart.path
    chart = app_dir / "chart"
    # the chart's link to the chart library is not followed: the library is copied in as a
    # folder, the planned one laid over the project's (rulegen.render.library)
    sub = f"charts/{library.NAME}"
    # an older rulegen's copy of the library in the chart, which build removes, neither
    skip_paths = (sub,) + (("templates/_rulegen.tpl",) if library.is_old_copy(root, spec.chart.path) else ())
    if chart_src.is_dir():
        copy_tree(chart_src, chart, skip=("tests",), skip_paths=skip_paths)
    else:
        chart.mkdir(parents=True)
    if (root / library.LIBRARY_DIR).is_dir():
        copy_tree(root / library.LIBRARY_DIR, chart / sub)
    prefix, lib = spec.chart.path + "/", library.LIBRARY_DIR + "/"
    for o in outputs:
        if o.link:
            continue
        if o.path.startswith(prefix) and not o.path.startswith(prefix + "tests/"):
            atomic_write(chart / o.path[len(prefix):], o.content, sync=False)
        elif o.path.startswith(lib):
            atomic_write(chart / sub / o.path[len(lib):], o.content, sync=False)
    rendered = helm.template(chart, values=[values_yaml(values_for_tests(spec))], root=root)
    groups = rendered.rule_groups()
    if not groups:
        raise RulegenError(f"{spec.chart.path}: helm rendered no rule group with the gates on")
    return groups


def _dump(doc: dict) -> str:
    return yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False,
                     allow_unicode=True, width=100000)


def write_test_files(spec: Spec, test_text: str | dict, groups: list[dict], dest: Path,
                     stem: str | None = None, filters: dict | None = None) -> list[Path]:
    """Lay out promtool files in ``dest`` for the planned test file ``test_text`` (its text,
    or its parsed document) run against rendered rule ``groups``: test groups whose alerts
    keep the same annotations share one rule file (see
    :func:`rulegen.render.promtool_tests.annotation_filters`; ``filters`` is its result for
    ``spec`` when already made). The first pair is ``rules.yaml`` and ``<stem>.test.yaml``
    (``stem`` defaults to the app), the next ``rules.2.yaml`` and ``<stem>.2.test.yaml``, and
    so on. Returns the test files."""
    stem = stem or spec.app
    doc = yaml.safe_load(test_text) if isinstance(test_text, str) else test_text
    filters = annotation_filters(spec) if filters is None else filters
    parts: dict = {}
    for t in doc.get("tests") or []:
        keep = filters.get(t.get("name"), {})
        key = repr(sorted(keep.items()))
        parts.setdefault(key, (keep, []))[1].append(t)
    dest.mkdir(parents=True, exist_ok=True)
    files = []
    for i, (keep, tests) in enumerate(parts.values(), start=1):
        suffix = "" if i == 1 else f".{i}"
        rules_name = RULES_FILE if i == 1 else f"rules{suffix}.yaml"
        atomic_write(dest / rules_name, _dump({"groups": filter_annotations(groups, keep)}), sync=False)
        f = dest / f"{stem}{suffix}.test.yaml"
        atomic_write(f, _dump({**doc, "rule_files": [rules_name], "tests": tests}), sync=False)
        files.append(f)
    return files


def write_group_file(doc: dict, test: dict, groups: list[dict], dest: Path, stem: str, filters: dict,
                     written: set) -> Path:
    """Lay out one test group ``test`` of the test document ``doc`` in ``dest``, against the
    rendered rule ``groups`` with the annotations its tests state (``filters``, from
    :func:`rulegen.render.promtool_tests.annotation_filters`): ``<stem>.test.yaml`` and a rule
    file named after its content's digest, ``rules-<sha256, 16 hex>.yaml``, written once per
    ``dest`` (``written``: the names written there so far, updated). Test groups of one
    folder that need the same rules share one rule file, and two files laid out alike read
    alike. Returns the test file."""
    import hashlib
    text = _dump({"groups": filter_annotations(groups, filters.get(test.get("name"), {}))})
    rules_name = f"rules-{hashlib.sha256(text.encode()).hexdigest()[:16]}.yaml"
    dest.mkdir(parents=True, exist_ok=True)
    if rules_name not in written:
        atomic_write(dest / rules_name, text, sync=False)
        written.add(rules_name)
    f = dest / f"{stem}.test.yaml"
    atomic_write(f, _dump({**doc, "rule_files": [rules_name], "tests": [test]}), sync=False)
    return f


def prepare_app(spec: Spec, outputs, root: Path, work: Path) -> list[Path]:
    """Render ``spec``'s chart with helm (gates on) and lay out its promtool files in
    ``work/<app>`` (:func:`write_test_files`, the tests of :func:`test_document`); returns the
    test files, none when the spec has no test.

    Raises:
        RulegenError: helm failed or rendered no rule group.
    """
    doc = test_document(spec, root)
    if doc is None:
        return []
    app_dir = work / spec.app
    groups = render_rule_groups(spec, outputs, root, app_dir)
    return write_test_files(spec, doc, groups, app_dir)


def test_document(spec: Spec, root: Path) -> dict | None:
    """The promtool test document ``rulegen test`` runs for ``spec``: its test file as
    :func:`rulegen.render.promtool_tests.render_test_file` writes it, with every test of
    ``spec``, the generated SLO tests included when ``spec`` carries them
    (:func:`rulegen.spec.slo.with_tests`); None when it has no test."""
    from ..render.promtool_tests import render_test_file
    from ..render.site import site_url
    text = render_test_file(spec, site_url(root), [])
    return None if text is None else yaml.safe_load(text)


def failure_line(c: TestCase) -> int:
    """Spec line of the assertion promtool reports failed (the ``eval_time`` of the matching
    ``alert_rule_test``/``promql_expr_test``), else the test's own line."""
    m = re.search(r"time: ([0-9a-z.]+)", c.failure)
    if not m:
        return c.line
    try:
        at = parse_ms(m.group(1))
    except DurationError:
        return c.line
    for kind in ("alert_rule_test", "promql_expr_test"):
        for i, a in enumerate(c.test.data.get(kind) or []):
            try:
                if parse_ms(a.get("eval_time", "")) == at:
                    return c.spec.source.pos(c.test.path + (kind, i, "eval_time"))[0]
            except DurationError:
                continue
    return c.line


def _regex(cases: list[TestCase]) -> str:
    return "^(?:" + "|".join(re.escape(c.name) for c in cases) + ")$"


def run_batches(files: list[Path], jobs: int, root: Path, run_regex: str | None) -> list[promtool.TestRun]:
    """Run promtool on ``files`` in ``jobs`` parallel batches."""
    jobs = max(1, min(jobs, len(files)))
    batches = [files[i::jobs] for i in range(jobs)]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda b: promtool.test_rules(b, cwd=b[0].parent, root=root, run=run_regex),
                             batches))


def readable_failure(text: str) -> str:
    """promtool's failure text with the ``exp`` and ``got`` blocks turned into a unified diff."""
    m = re.search(r"exp:(.*?),\s*\n\s*got:(.*)$", text, re.S)
    if not m:
        return text.strip()
    head = text[: m.start()].strip().rstrip(",")
    exp = _alerts_lines(m.group(1))
    got = _alerts_lines(m.group(2))
    diff = difflib.unified_diff(exp, got, "expected", "got", lineterm="", n=10)
    return head + "\n" + "\n".join(diff)


def _alerts_lines(block: str) -> list[str]:
    out = []
    for line in block.strip().splitlines():
        line = line.strip()
        if not line or line in ("[", "]", "],"):
            continue
        for part in re.findall(r"(Labels|Annotations):\{(.*?)\}(?=\s*$|\s*Annotations)", line):
            items = re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', part[1])
            out.append(f"{part[0]}:")
            out.extend(f"  {k}={v!r}" if "\\" in v else f'  {k}="{v}"' for k, v in items)
        if not line.startswith(("Labels", "Annotations")):
            out.append(line)
    return out


def coverage(specs: list[Spec], cases: list[TestCase]) -> Coverage:
    """Coverage from the passing cases (see module docstring and :class:`RuleCoverage`)."""
    cov = Coverage()
    fires: set = set()
    quiet: set = set()
    boundary: set = set()
    read: set = set()
    from ..validate.checks.tests import dead_series
    for c in cases:
        if not c.passed:
            continue
        d = c.test.data
        if dead_series(c.spec, c.rule, d):
            continue  # an input series feeds nothing (RG608): the verdict proves nothing
        seen_quiet: dict = {}
        for a in d.get("alert_rule_test") or []:
            key = (c.app, a.get("alertname", c.rule.name))
            try:
                at = parse_ms(a.get("eval_time", ""))
            except DurationError:
                continue
            if a.get("exp_alerts"):
                fires.add(key)
                if key in seen_quiet and seen_quiet[key] < at:
                    boundary.add(key)
            else:
                quiet.add(key)
                seen_quiet[key] = min(at, seen_quiet.get(key, at))
        for p in d.get("promql_expr_test") or []:
            for n in _metric_names(p.get("expr", c.rule.name)):
                read.add((c.app, n))
    for spec in specs:
        for _, r in spec.rules():
            key = (spec.app, r.name)
            if r.is_alert:
                has_for = bool(r.for_) and parse_ms(r.for_) > 0
                cov.rows.append(RuleCoverage(spec.app, r.name, "alert", key in fires, key in quiet,
                                             (key in boundary) if has_for else None))
            else:
                ok = key in read
                cov.rows.append(RuleCoverage(spec.app, r.name, "record", ok, ok))
    return cov


def _metric_names(expr: str) -> set[str]:
    ast = parsed(expr)  # the cached parse (nodes() of a fresh tree is a cache miss each time)
    if ast is None:
        return set()
    return {n.name for n in nodes(ast) if type(n).__name__ == "VectorSelector" and n.name}


def write_junit(path: Path, cases: list[TestCase]) -> None:
    """JUnit XML with one testcase per test group; ``file``/``line`` name the spec."""
    suites = ET.Element("testsuites")
    by_app: dict = {}
    for c in cases:
        by_app.setdefault(c.app, []).append(c)
    for app, cs in sorted(by_app.items()):
        s = ET.SubElement(suites, "testsuite", name=app, tests=str(len(cs)),
                          failures=str(sum(1 for c in cs if c.passed is False)))
        for c in cs:
            tc = ET.SubElement(s, "testcase", name=c.name, classname=f"{app}.{c.rule.name}",
                               file=c.spec.file, line=str(c.line))
            if c.passed is False:
                f = ET.SubElement(tc, "failure", message=f"{c.spec.file}:{c.line}")
                f.text = c.failure
    atomic_write(path, ET.tostring(suites, encoding="utf-8", xml_declaration=True))
