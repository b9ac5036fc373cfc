"""``rulegen test --mutate``: would the tests notice if a rule were wrong?

For every alert and recording rule with tests, :func:`rulegen.run.mutants.mutants_of` makes
small wrong versions (mutants) of it. Each mutant goes through the same path as the real rule:

1. per app, one spec holds the real rule groups and one copy of them per mutant (group names
   suffixed ``--rulegen-mutant-<n>``, the mutated rule swapped in); the ordinary render entry
   point (:func:`rulegen.render.plan`) renders it and the real ``helm template`` renders the
   chart, so escaping, values and gates are what ships;
2. the rendered groups are split back per mutant (names restored), and each mutant gets a
   promtool test file with the spec's own tests that can see it (those asserting on the
   mutated rule or on a rule that reads it), run against the rules those tests need (the
   mutated rule, the rules asserted on, and the recording rules they read), annotations
   kept as for plain tests (:func:`rulegen.run.testing.write_test_files`). A test group
   that provably cannot tell the mutant from the rule (:mod:`rulegen.run.unseen`: the
   changed selector matches none of its input series, say) is left out, and a mutant left
   with none is not run at all: it survives, as it would have, is scored as any survivor
   (counted, or left out when declared equivalent or excluded), and the report's "skipped:
   cannot change a test" line says how many went each way. A mutant's test groups go one to a file, so the
   cheapest can run first; a baseline's too, so a group that several rules' baselines share,
   with the same rules, runs once;
3. the real rule is laid out the same way (the *baseline*): each of its test groups that ran
   on one of its mutants must pass there (they run once the mutants have), or the run stops,
   so a mutant's verdict comes only from its change; a group no mutant ran decides no
   verdict and is not run on the rule;
4. the test files of the run go to ``promtool test rules`` processes in small batches (at
   most one process per CPU at once by default, each batch with its own time limit, progress
   on stderr for long runs), whose JUnit reports say which test groups failed; a mutant's
   files run cheapest first, and once one fails the mutant is killed and runs no more.

A mutant is *killed* when at least one of its tests fails, and *survives* otherwise. A
survivor is reported in words with its spec line and what test would kill it, unless the
rule declares it equivalent (``equivalent_mutants: [{mutant: <text>, reason: ...}]``): then
it is left out of the score. The score is killed / (mutants - declared equivalent), per
rule and overall; ``--min-mutation-score P`` fails the run below P%.

Rules generated from ``slos:`` (:mod:`rulegen.spec.slo`) have no spec text to declare
equivalents in, and a matcher in them is the spec's ``sli`` selector copied as written: when
every series the generated tests feed carries that matcher's value (``job="api"`` on both the
bad and the total counter), removing it changes nothing they can see, and the mutant tests
only rulegen's generator (whose own tests cover it). Such a surviving ``matcher`` mutant of a
generated rule is *excluded* from the score, with the reason printed (:data:`GENERATED_REASON`;
:data:`SIDE_REASON` for an ``slo``/``slo_service`` matcher of a burn-rate alert, whose other
side keeps it), so every valid SLO can reach 100%; any other survivor of a generated rule counts.
"""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import promql_parser as pp
import yaml

from ..fs.write import atomic_write, fresh_dir
from ..promql.syntax import nodes, parsed
from ..spec import Spec
from .mutants import Mutant, mutants_of
from .rounds import run_rounds
from .testing import render_rule_groups, test_document, write_group_file, write_test_files

SUFFIX = "--rulegen-mutant-"
WORK_DIR = ".rulegen/mutate"
#: Why a surviving matcher mutant of a rule generated from ``slos:`` is not counted.
GENERATED_REASON = ("generated from SLO {slo}: the matcher is the spec's `sli` selector copied as written, and "
                    "every series the generated tests feed carries it, so only rulegen's generator could drop "
                    "it (its own tests cover that); excluded from the score")

#: Why a surviving ``slo``/``slo_service`` matcher mutant of a generated burn-rate alert is not counted.
SIDE_REASON = ("generated from SLO {slo}: the comparison matches this SLO's error ratio with its recorded budget "
               "on all labels, and the other side's selector keeps the `{label}` matcher, so dropping it here "
               "changes no result (an equivalent mutant); excluded from the score")

#: rules per combined render: Helm refuses a template file over 5 MiB (a rule renders to
#: well under 1 KiB, so 2,000 stay far below it)
MAX_RULES_PER_RENDER = 2000


@dataclass
class MutantResult:
    """A mutant and its verdict: ``killed_by`` names the test groups that failed on it (in
    the test files that ran: a killed mutant's remaining files are not run, except for a
    declared equivalent, whose files all run);
    ``equivalent`` is the declared reason, if any; ``invalid`` says why promtool could not
    run it (such a mutant is left out of the score)."""

    app: str
    spec: Spec
    rule: object
    mutant: Mutant
    killed_by: list = field(default_factory=list)
    equivalent: str | None = None
    invalid: str = ""
    #: why a survivor of a rule generated from ``slos:`` is left out of the score ("": counted)
    excluded: str = ""
    #: the parts of :attr:`excluded`: (its template, :data:`GENERATED_REASON` or
    #: :data:`SIDE_REASON`; the SLO; the label of a side matcher, else ""), which the report
    #: groups by (:func:`excluded_groups`)
    exclusion: tuple = ()
    #: no test of the rule can tell this mutant from the rule (:mod:`rulegen.run.unseen`):
    #: it was not run, and survives
    unseen: bool = False

    @property
    def killed(self) -> bool:
        return bool(self.killed_by)

    @property
    def counted(self) -> bool:
        return not self.invalid and self.equivalent is None and not self.excluded

    def line(self) -> int:
        return self.spec.source.pos(self.rule.path + (self.mutant.field,))[0]

    def describe(self) -> str:
        """The survivor in words: what changed and what test would kill it (where: each
        report gives the rule, file and line beside it, once)."""
        return (f"no test fails when {self.mutant.text}: add {self.mutant.hint}, or declare it "
                f"equivalent (equivalent_mutants: [{{mutant: {_quote(self.mutant.text)}, reason: ...}}])")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass
class RuleScore:
    """Mutants of one rule: ``killed`` of ``total`` counted (declared equivalents and mutants
    promtool could not run are not counted)."""

    app: str
    name: str
    killed: int
    total: int
    equivalent: int

    @property
    def percent(self) -> float:
        return 100.0 if not self.total else 100.0 * self.killed / self.total


@functools.lru_cache(maxsize=4096)
def _names_read(expr: str) -> frozenset[str]:
    """The metric names ``expr`` reads (selector names and ``__name__="..."`` matchers); empty
    when it does not parse. Cached per text: a test's exprs are asked about once per mutant
    and test group."""
    ast = parsed(expr)
    if ast is None:
        return frozenset()
    names: set[str] = set()
    for n in nodes(ast):
        if isinstance(n, pp.VectorSelector):
            if n.name:
                names.add(n.name)
            for m in n.matchers.matchers:
                if m.name == "__name__" and m.op == pp.MatchOp.Equal:
                    names.add(m.value)
    return frozenset(names)


class _Deps:
    """Which rules of a spec read which: recording rule names read by each rule's expr."""

    def __init__(self, spec: Spec):
        self.rules = [r for _, r in spec.rules()]
        self.records = {r.name for r in self.rules if not r.is_alert}
        self.reads = {id(r): _names_read(r.expr) for r in self.rules}
        self.alerts_read = any(n in ("ALERTS", "ALERTS_FOR_STATE") for v in self.reads.values() for n in v)

    def dependents(self, rule) -> set[str]:
        """``rule``'s name and the names of rules that read it, transitively."""
        out = {rule.name}
        changed = True
        while changed:
            changed = False
            for r in self.rules:
                if r.name not in out and self.reads[id(r)] & out & (self.records | {rule.name}):
                    out.add(r.name)
                    changed = True
        if self.alerts_read and rule.is_alert:
            out |= {r.name for r in self.rules}
        return out

    def needed(self, names: set[str]) -> set[str] | None:
        """``names`` and the recording rules they read, transitively; None: keep every rule
        (a rule reads ``ALERTS``)."""
        if self.alerts_read:
            return None
        out = set(names)
        changed = True
        while changed:
            changed = False
            for r in self.rules:
                if r.name in out:
                    more = self.reads[id(r)] & self.records - out
                    if more:
                        out |= more
                        changed = True
        return out


def _test_names(test: dict, default: str) -> set[str]:
    """Rule names a planned promtool test group asserts on (alertnames and names its
    ``promql_expr_test`` exprs read)."""
    names = {a.get("alertname", default) for a in test.get("alert_rule_test") or []}
    for p in test.get("promql_expr_test") or []:
        names |= _names_read(str(p.get("expr", "")))
    return names


def plan_app(spec: Spec, root: Path, work: Path, test_text: str | dict,
             only: set[str] | None = None) -> tuple[list, list]:
    """Render every mutant of ``spec`` (with as few ``plan`` and ``helm template`` runs as
    Helm's file size allows: :data:`MAX_RULES_PER_RENDER`) and write their promtool files
    under ``work/<app>``; each variant holds only the rules its tests need. ``only``: names of
    the rules to mutate (None: every rule with tests); the spec stays whole, so tests another
    rule owns that also assert on a chosen one keep what they state (their annotations).

    Returns (results, files): a :class:`MutantResult` per mutant (verdict not yet known), and
    per promtool test file ``(path, rule name, index into results, or -1 for the rule's
    baseline)``: which variant it tests.

    Raises:
        RulegenError: helm failed.
    """
    from ..render.promtool_tests import annotation_filters
    doc = yaml.safe_load(test_text) if isinstance(test_text, str) else test_text
    tests = doc.get("tests") or []
    filters = annotation_filters(spec)
    deps = _Deps(spec)
    variants: list = []  # (rule, mutant or None)
    results: list[MutantResult] = []
    for group, rule in spec.rules():
        if not rule.tests or (only is not None and rule.name not in only):
            continue
        variants.append((group, rule, None))
        for m in mutants_of(spec, group, rule):
            variants.append((group, rule, m))
            results.append(MutantResult(spec.app, spec, rule, m, equivalent=rule.equivalent_mutants.get(m.text)))
    if not variants:
        return [], []
    app_dir = work / spec.app
    # per rule: the tests that can see it and the rules those tests need (None: all)
    needs = {}
    for _g, rule, _m in variants:
        if id(rule) not in needs:
            seen = deps.dependents(rule)
            chosen = [t for t in tests if _test_names(t, "") & seen]
            keep = deps.needed(set().union(*(_test_names(t, "") for t in chosen)) | {rule.name}) if chosen else set()
            needs[id(rule)] = (chosen, keep)
    files = []
    index = {}  # variant number -> its result index, or -1 for a baseline
    mi = 0
    for k, (_g, _rule, m) in enumerate(variants):
        index[k] = -1 if m is None else mi
        mi += m is not None
    seen_by = _tests_that_see(spec, variants, needs, results, index)
    # a few renders of at most MAX_RULES_PER_RENDER rules each (Helm refuses template files
    # over 5 MiB): each holds, per variant, the groups of the rules its tests need
    chunk: list = []
    size = 0
    for k, (_g, rule, m) in enumerate(variants):
        keep = needs[id(rule)][1]
        if not seen_by[k]:
            continue
        n = sum(1 for _, r in spec.rules() if keep is None or r.name in keep)
        if chunk and size + n > MAX_RULES_PER_RENDER:
            files += _render_chunk(spec, root, app_dir, chunk, variants, needs, seen_by, doc, filters, index, deps)
            chunk, size = [], 0
        chunk.append(k)
        size += n
    if chunk:
        files += _render_chunk(spec, root, app_dir, chunk, variants, needs, seen_by, doc, filters, index, deps)
    return results, files


def _tests_that_see(spec: Spec, variants: list, needs: dict, results: list, index: dict) -> dict:
    """Variant number -> the tests it runs: a baseline all those that can see its rule, a
    mutant those of them that could tell it from the rule (:func:`rulegen.run.unseen.cannot_change`);
    a mutant left with none is marked :attr:`MutantResult.unseen` (it survives unrun)."""
    from .unseen import cannot_change, records_of
    records = records_of(spec)
    out = {}
    for k, (_g, rule, m) in enumerate(variants):
        chosen = needs[id(rule)][0]
        if m is None or not chosen:
            out[k] = chosen
            continue
        out[k] = [t for t in chosen if not cannot_change(rule, m, t, records)]
        results[index[k]].unseen = not out[k]
    return out


def _render_chunk(spec: Spec, root: Path, app_dir: Path, chunk: list[int], variants: list, needs: dict,
                  seen_by: dict, doc: dict, filters: dict, index: dict, deps: _Deps) -> list:
    """Render the variants numbered in ``chunk`` with one ``plan`` and one ``helm template``
    and write their promtool files; returns ``(path, rule name, result index)`` per file. A
    mutant declared equivalent gets its tests laid out as ``rulegen test`` lays them out;
    any other mutant, and a baseline, one test file per test group in its folder
    (:func:`rulegen.run.testing.write_group_file`), with only the rules that group needs (the
    variant's rule, those it asserts on and the recording rules they read:
    :meth:`_Deps.needed`; the others cannot change what it asserts): a mutant's cheapest
    groups run first, and a group several rules' baselines share runs once
    (:func:`rulegen.run.rounds.run_rounds`)."""
    from ..render import plan
    # the spec's own groups first, under their own names: the chart's values (and the values
    # schema, which knows each group by name) are the spec's; their rendered rules are not used
    combined_groups = [replace(g, rules=[replace(r, tests=[], runbook={}) for r in g.rules]) for g in spec.groups]
    for k in chunk:
        _g, rule, m = variants[k]
        keep = needs[id(rule)][1]
        for g in spec.groups:
            # tests and runbook content do not reach the rules: left out, they cost nothing
            rules = [replace(m.rule if m is not None and r is rule else r, tests=[], runbook={})
                     for r in g.rules if keep is None or r.name in keep]
            if rules:
                combined_groups.append(replace(g, name=f"{g.name}{SUFFIX}{k}", rules=rules))
    combined = replace(spec, groups=combined_groups, runbook={})
    outputs, _findings = plan([combined], root)
    rendered = render_rule_groups(combined, outputs, root, app_dir / f"chart-render-{chunk[0]}")
    by_variant: dict[int, list[dict]] = {}
    for g in rendered:
        name, _, k = str(g.get("name", "")).rpartition(SUFFIX)
        if name and k.isdigit():
            by_variant.setdefault(int(k), []).append({**g, "name": name})
    files = []
    for k in chunk:
        _g, rule, m = variants[k]
        idx = index[k]
        label = "baseline" if m is None else f"m{idx}"
        dest = app_dir / f"{_slug(rule.name)}-{label}"
        if m is not None and m.text in rule.equivalent_mutants:
            for f in write_test_files(spec, {**doc, "tests": seen_by[k]}, by_variant.get(k, []), dest,
                                      filters=filters):
                files.append((f, rule.name, idx))
            continue
        written: set = set()
        for j, t in enumerate(seen_by[k]):
            groups = _only(by_variant.get(k, []), deps.needed(_test_names(t, "") | {rule.name}))
            f = write_group_file(doc, t, groups, dest, f"{spec.app}.{j}", filters, written)
            files.append((f, rule.name, idx))
    return files


def _only(groups: list[dict], names: set[str] | None) -> list[dict]:
    """The rendered rule ``groups`` (a rule file's ``groups:``) with only the rules named in
    ``names`` (None: all), in their order; groups left empty are left out."""
    if names is None:
        return groups
    out = []
    for g in groups:
        rules = [r for r in g.get("rules") or [] if (r.get("alert") or r.get("record")) in names]
        if rules:
            out.append({**g, "rules": rules})
    return out


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)


def run_mutation(loaded, outputs, root: Path, apps: list[str], rules: set | None,
                 jobs: int, progress=None) -> tuple[list[MutantResult], list[RuleScore]]:
    """Make, render and run every mutant of the rules with tests (``rules``: only these
    ``(app, name)`` pairs, None for all) of the given ``apps``; returns the results and the
    per-rule scores. ``progress``, when given, is called with a progress line (text) at most
    every :data:`rulegen.run.rounds.PROGRESS_EVERY_S` seconds on long runs.

    Raises:
        RulegenError: helm failed, or a rule's tests fail on the rule itself as laid out here.
    """
    work = fresh_dir(root, WORK_DIR)  # RG747 when a link on the way leads outside the project
    all_results: list[MutantResult] = []
    files: list = []
    specs = []
    for spec in loaded.specs:
        doc = test_document(spec, root) if spec.app in apps else None
        if doc is None:
            continue
        specs.append((spec, doc, None if rules is None else {n for a, n in rules if a == spec.app}))
    # helm renders one app while Python lays out another
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        planned = list(pool.map(lambda sp: plan_app(sp[0], root, work, sp[1], sp[2]), specs))
    for results, fs in planned:
        base = len(all_results)
        all_results.extend(results)
        files.extend((f, spec.app, name, -1 if i < 0 else base + i) for f, name, i in fs)
    if not files:
        return all_results, []
    run_rounds(files, all_results, jobs, root, progress)
    exclude_generated(all_results)
    return all_results, scores(all_results)


def exclude_generated(results: list[MutantResult]) -> None:
    """Mark the surviving ``matcher`` mutants of rules generated from ``slos:`` as excluded
    (see the module docstring), with :data:`GENERATED_REASON` or :data:`SIDE_REASON`."""
    for r in results:
        if r.killed or r.invalid or r.equivalent is not None or r.mutant.kind != "matcher":
            continue
        slo = next((g.slo for g in r.spec.groups if g.slo is not None and any(x is r.rule for x in g.rules)), None)
        side = _SIDE.match(r.mutant.text) if r.rule.is_alert else None  # slo/slo_service matcher removed
        if slo is not None:
            r.exclusion = (SIDE_REASON, slo, side.group(1)) if side else (GENERATED_REASON, slo, "")
            r.excluded = r.exclusion[0].format(slo=slo, label=r.exclusion[2])


def excluded_groups(results: list[MutantResult]) -> list[tuple[list[MutantResult], str]]:
    """The excluded ``results`` by rule and reason, in the order they first appear: per group
    its results and the reason once (a :data:`SIDE_REASON` naming each side label among them,
    `` `slo`/`slo_service` ``)."""
    groups: dict = {}
    for r in results:
        if r.excluded:
            key = (r.spec.file, r.line(), id(r.rule), r.exclusion[:2] if r.exclusion else r.excluded)
            groups.setdefault(key, []).append(r)
    out = []
    for rs in groups.values():
        template, slo, _label = rs[0].exclusion or (None, "", "")
        labels = "`/`".join(dict.fromkeys(r.exclusion[2] for r in rs if r.exclusion))
        out.append((rs, rs[0].excluded if template is None else template.format(slo=slo, label=labels)))
    return out


def brief(texts: list[str]) -> str:
    """Mutant texts listed briefly: repeats of one text (``x``, ``x (#2)``...) once, with the
    places they stand for (``x (#1-#4)``, ``x (#1, #3)``; ``#1`` is the text without a number)."""
    places: dict = {}
    for t in texts:
        m = re.fullmatch(r"(.*) \(#(\d+)\)", t)
        base, n = (m.group(1), int(m.group(2))) if m else (t, 1)
        places.setdefault(base, []).append(n)
    out = []
    for base, ns in places.items():
        if ns == [1]:
            out.append(base)
        elif ns == list(range(1, len(ns) + 1)):
            out.append(f"{base} (#1-#{len(ns)})")
        else:
            out.append(f"{base} ({', '.join(f'#{n}' for n in ns)})")
    return ", ".join(out)


_SIDE = re.compile(r"^matcher `(slo|slo_service)=\"[^`]*` removed")


def scores(results: list[MutantResult]) -> list[RuleScore]:
    """Per-rule scores, in the order rules first appear."""
    rows: dict = {}
    for r in results:
        key = (r.app, r.rule.name, id(r.rule))
        row = rows.setdefault(key, RuleScore(r.app, r.rule.name, 0, 0, 0))
        if r.equivalent is not None:
            row.equivalent += 1
        if not r.counted:
            continue
        row.total += 1
        row.killed += r.killed
    return list(rows.values())


def total_score(results: list[MutantResult]) -> float:
    counted = [r for r in results if r.counted]
    return 100.0 if not counted else 100.0 * sum(r.killed for r in counted) / len(counted)


def _declaration_line(spec: Spec, rule, text: str) -> int:
    """Spec line of ``rule``'s ``equivalent_mutants`` entry naming ``text`` (else the key)."""
    node = spec.source.data
    for part in rule.path:
        node = node[part]
    for i, e in enumerate(node.get("equivalent_mutants") or []):
        if e.get("mutant") == text:
            return spec.source.pos(rule.path + ("equivalent_mutants", i, "mutant"))[0]
    return spec.source.pos(rule.path + ("equivalent_mutants",))[0]


def write_junit(path: Path, results: list[MutantResult], suites: ET.Element | None = None) -> ET.Element:
    """Add one ``testsuite`` per app (``<app> mutants``) to ``suites`` (a new ``testsuites``
    element when None): a testcase per mutant, a failure per survivor (message: spec
    file:line), skipped for declared equivalents; writes the tree to ``path``."""
    if suites is None:
        suites = ET.Element("testsuites")
    by_app: dict = {}
    for r in results:
        by_app.setdefault(r.app, []).append(r)
    for app, rs in sorted(by_app.items()):
        s = ET.SubElement(suites, "testsuite", name=f"{app} mutants", tests=str(len(rs)),
                          failures=str(sum(1 for r in rs if r.counted and not r.killed)),
                          skipped=str(sum(1 for r in rs if not r.counted)))
        for r in rs:
            tc = ET.SubElement(s, "testcase", name=f"{r.rule.name}: {r.mutant.text}",
                               classname=f"{app}.{r.rule.name}", file=r.spec.file, line=str(r.line()))
            if r.equivalent is not None:
                ET.SubElement(tc, "skipped", message=f"declared equivalent: {r.equivalent}")
            elif r.invalid:
                ET.SubElement(tc, "skipped", message=r.invalid)
            elif r.excluded:
                ET.SubElement(tc, "skipped", message=r.excluded)
            elif not r.killed:
                f = ET.SubElement(tc, "failure", message=f"{r.spec.file}:{r.line()}")
                f.text = r.describe()
    atomic_write(path, ET.tostring(suites, encoding="utf-8", xml_declaration=True))
    return suites
