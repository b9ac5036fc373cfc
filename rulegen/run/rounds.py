"""How the promtool files of a mutation run are run (:mod:`rulegen.run.mutation` lays them
out): in rounds, each mutant's test groups cheapest first until one fails, then the baselines
its verdict rests on; in batches of :data:`BATCH_FILES` files, at most ``jobs`` ``promtool
test rules`` processes at once, each batch within :data:`BATCH_TIMEOUT_S`, with a progress
line every :data:`PROGRESS_EVERY_S` on long runs."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from ..findings import RulegenError
from ..fs import read as fs_read


def _read(test_file: Path) -> tuple[int, frozenset | None]:
    """(rough promtool cost, names of the test groups) of a test file: the cost is the
    evaluation steps summed over its test groups (the last ``eval_time`` over the evaluation
    interval; a rule file is evaluated at each). An unreadable file: (a cost that puts it
    last, None)."""
    from ..spec.durations import DurationError, parse_ms
    try:
        doc = yaml.load(fs_read.read_text(test_file), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        step = max(parse_ms(str(doc.get("evaluation_interval") or "1m")), 1)
        total = 0
        for t in doc.get("tests") or []:
            last = [parse_ms(str(a.get("eval_time", "0s"))) for kind in ("alert_rule_test", "promql_expr_test")
                    for a in t.get(kind) or []]
            total += 1 + max(last, default=0) // max(parse_ms(str(t.get("interval") or "1m")), step, 1)
        return total, frozenset(str(t.get("name")) for t in doc.get("tests") or [])
    except (OSError, RulegenError, UnicodeDecodeError, yaml.YAMLError, DurationError, AttributeError, TypeError):
        return 1 << 30, None  # unknown: last


def _check_baseline(f: Path, app: str, name: str, cases) -> None:
    """Raise when a rule's own tests (a baseline file's ``cases``) do not all pass."""
    if isinstance(cases, str):
        raise RulegenError(f"{app} {name}: {cases} on the rule itself; see {f}")
    if not cases or any(not c.passed for c in cases):
        why = "; ".join(c.name for c in cases or [] if not c.passed) or "promtool ran none of them"
        raise RulegenError(f"{app} {name}: its tests do not pass on the rule itself as mutation "
                           f"testing lays it out ({why}); see {f}")


def run_rounds(files: list, results: list, jobs: int, root: Path, report=None) -> None:
    """Run the promtool ``files`` (``(path, app, rule name, result index or -1)``: -1 for a
    rule's baseline) and record each mutant's verdict in ``results`` (its
    :class:`rulegen.run.mutation.MutantResult` objects: ``killed_by``, ``invalid``). A mutant's files run cheapest first (:func:`_read`),
    one per round, and a killed mutant runs no more of them: the verdict is the same, since a
    mutant is killed by any failing test group (its files hold the same rules, so one that
    promtool cannot load is found in the first). A mutant declared equivalent runs all its
    files in the first round, so a note that a test kills it names the same test group.

    Then the baselines: a rule's baseline file runs when its test group ran on one of that
    rule's mutants (a verdict rests only on groups that ran; a group no mutant ran can change
    none), and a baseline file of the same content (test and rule files) as an earlier one is
    not run again: it has that one's results.

    Raises:
        RulegenError: a rule's tests do not pass on the rule itself (or do not finish).
    """
    info: dict = {}

    def read(path: Path) -> tuple[int, frozenset | None]:
        if path not in info:
            info[path] = _read(path)
        return info[path]

    per_mutant: dict[int, list] = {}
    first: list = []
    baselines: list = []
    for entry in files:
        if entry[3] < 0:
            baselines.append(entry)
        elif results[entry[3]].equivalent is not None:
            first.append(entry)
        else:
            per_mutant.setdefault(entry[3], []).append(entry)
    for fs in per_mutant.values():
        fs.sort(key=lambda e: read(e[0])[0])
    progress = _Progress(sum(len(fs) for fs in per_mutant.values()) + len(first) + len(baselines), report)
    ran: set = set()  # (app, rule name, test group name; None: every group) run on a mutant
    rnd = 0
    todo = first + [fs[0] for fs in per_mutant.values()]
    while todo:
        outcome = _run_files([e[0] for e in todo], jobs, root, progress)
        for f, app, name, i in todo:
            ran.update((app, name, t) for t in read(f)[1] or [None])
            cases = outcome.get(str(f))
            res = results[i]
            if isinstance(cases, str):
                res.invalid = cases  # promtool did not finish in time
            elif not cases:
                res.invalid = "promtool could not load the mutant"
            else:
                res.killed_by.extend(c.name for c in cases if not c.passed)
        rnd += 1
        todo = [fs[rnd] for i, fs in per_mutant.items()
                if rnd < len(fs) and not results[i].killed and not results[i].invalid]

    def needed(entry) -> bool:
        _f, app, name, _i = entry
        groups = read(entry[0])[1]
        return groups is None or (app, name, None) in ran or any((app, name, t) in ran for t in groups)

    _run_baselines([e for e in baselines if needed(e)], jobs, root, progress)


def _run_baselines(files: list, jobs: int, root: Path, progress: _Progress) -> None:
    """Run the baseline ``files`` (as :func:`run_rounds` takes them), each content once.

    Raises:
        RulegenError: a rule's tests do not pass on the rule itself (or do not finish).
    """
    same: dict = {}  # a baseline file -> an earlier baseline file of the same content
    seen: dict = {}
    todo = []
    for entry in files:
        key = _content(entry[0])
        if key is not None and key in seen:
            same[entry] = seen[key]
            continue
        if key is not None:
            seen[key] = entry
        todo.append(entry)
    if not todo:
        return
    outcome = _run_files([e[0] for e in todo], jobs, root, progress)
    for entry, twin in same.items():
        outcome[str(entry[0])] = outcome.get(str(twin[0]))
    for f, app, name, _i in todo + list(same):
        _check_baseline(f, app, name, outcome.get(str(f)))


def _content(test_file: Path) -> str | None:
    """The text of a promtool test file and of each rule file it names: its whole input (two
    files of the same content give the same results); None when unreadable."""
    try:
        text = fs_read.read_text(test_file)
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        rules = [fs_read.read_text(test_file.parent / str(r)) for r in doc.get("rule_files") or []]
    except (OSError, RulegenError, UnicodeDecodeError, yaml.YAMLError, AttributeError, TypeError):
        return None
    return "\0".join([text, *rules])


#: promtool test files per process: small batches, so the work spreads evenly over ``jobs``
#: processes and one slow batch times out alone
BATCH_FILES = 12
#: seconds one batch may take; a batch that takes longer is run again file by file, each with
#: this limit (a file over it: its mutant is not runnable, a baseline stops the run)
BATCH_TIMEOUT_S = 600
#: seconds between progress lines on stderr
PROGRESS_EVERY_S = 15.0


class _Progress:
    """Progress lines for long runs (promtool files run of the most to run), handed to
    ``report`` (a callable taking the line; None: no progress)."""

    def __init__(self, total: int, report=None):
        import time
        self.total, self.done, self.report = total, 0, report
        self.start = self.last = time.monotonic()

    def add(self, n: int) -> None:
        import time
        self.done += n
        now = time.monotonic()
        if self.report is not None and now - self.last >= PROGRESS_EVERY_S:
            self.last = now
            self.report(f"rulegen: mutation testing: {self.done} promtool file(s) run, at most "
                        f"{max(self.total - self.done, 0)} to go ({now - self.start:.0f} s)")


def _run_files(paths: list[Path], jobs: int, root: Path, progress: _Progress) -> dict:
    """promtool on ``paths`` in batches of :data:`BATCH_FILES`, ``jobs`` processes at once,
    each batch within :data:`BATCH_TIMEOUT_S`; returns file -> its test group results (a
    string instead when promtool did not finish with that file alone in time)."""
    from ..tools import promtool
    batches = [paths[i:i + BATCH_FILES] for i in range(0, len(paths), BATCH_FILES)]

    def one(batch: list[Path]) -> list:
        try:
            runs = [promtool.test_rules(batch, cwd=batch[0].parent, root=root, timeout=BATCH_TIMEOUT_S)]
        except promtool.PromtoolTimeout:
            if len(batch) == 1:
                return [(str(batch[0]), f"promtool did not finish within {BATCH_TIMEOUT_S} s")]
            return [x for f in batch for x in one([f])]
        return [(c.file, c) for r in runs for c in r.cases]

    outcome: dict = {}
    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(batches)))) as pool:
        for batch, got in zip(batches, pool.map(one, batches)):
            for f, c in got:
                if isinstance(c, str):
                    outcome[f] = c
                else:
                    outcome.setdefault(f, []).append(c)
            progress.add(len(batch))
    return outcome
