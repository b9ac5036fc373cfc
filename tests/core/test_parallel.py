"""rulegen.parallel: a forked child's half gives the same findings and outputs as one process.

Projects of 16+ specs are loaded, validated and rendered on two cores; specs made by the
child cross a pipe pickled, without their data and positions (remade from the text when a
finding needs them). These tests run one project both ways and compare every byte.
"""

from __future__ import annotations

import json
import os
import pickle
import time

import pytest

import rulegen.parallel as parallel
from rulegen.cli import main
from rulegen.spec import load_text
from rulegen.spec.loader import LoadedFile

N_APPS = 20


def spec_text(i: int, related: str | None = None, alert_of: int | None = None,
              chart: str | None = None) -> str:
    """A small valid spec for app ``svc-NN``: two alerts, one of them named after app
    ``alert_of`` when given (an alert name two apps share), optionally a related alert, and
    ``chart.path`` when given (on line 2)."""
    app = f"svc-{i:02d}"
    if chart:
        return spec_text(i, related, alert_of).replace("\n", f"\nchart: {{path: {chart}}}\n", 1)
    first = f"Svc{alert_of if alert_of is not None else i:02d}Down"
    rel = f"\n          related:\n            - alert: {related}" if related else ""
    return f"""app: {app}
runbook: {{owner: {{team: t{i % 3}}}}}
groups:
  - name: {app}
    rules:
      - alert: {first}
        expr: up{{job="{app}"}} == 0
        for: 5m
        severity: critical
        summary: "{app} is down."
        description: "{{{{ $labels.instance }}}} of {app} has been down for 5 minutes."
        runbook:
          explanation: Prometheus cannot scrape {app}.
          causes: ["The pods crash."]
          diagnosis: [{{commands: "kubectl -n {app} get pods"}}]
          resolution: ["Restart the deployment."]{rel}
      - alert: Svc{i:02d}Errors
        expr: |
          sum(rate(http_requests_total{{job="{app}", code=~"5.."}}[5m]))
            / sum(rate(http_requests_total{{job="{app}"}}[5m])) > 0.05
        for: 10m
        severity: warning
        summary: "{app} returns 5xx."
        description: "{app} error ratio is {{{{ $value | humanizePercentage }}}}."
        runbook:
          explanation: Too many requests fail.
          causes: ["A bad deploy."]
          diagnosis: [{{commands: "kubectl -n {app} logs deploy/{app}"}}]
          resolution: ["Roll back."]
"""


@pytest.fixture
def forks(monkeypatch):
    """Count the forks split_map makes, and let it fork whatever this machine's CPU count
    (``RULEGEN_JOBS=1`` still turns it off)."""
    count = [0]
    real = os.fork

    def fork():
        count[0] += 1
        return real()

    monkeypatch.setattr(parallel.os, "fork", fork)
    monkeypatch.setattr(parallel, "_enabled",
                        lambda n: n >= parallel.MIN_ITEMS and os.environ.get("RULEGEN_JOBS") != "1")
    return count


def many(project, broken: dict | None = None) -> None:
    """Add N_APPS specs to the project; ``broken``: spec index -> spec_text keyword args."""
    for i in range(N_APPS):
        (project / "rules" / f"svc-{i:02d}.yaml").write_text(spec_text(i, **(broken or {}).get(i, {})),
                                                             encoding="utf-8")


def tree(root) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.parts}


def run(capsys, monkeypatch, jobs: str, *argv) -> tuple[int, str]:
    monkeypatch.setenv("RULEGEN_JOBS", jobs)
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_split_map_is_the_list_comprehension(forks):
    items = list(range(40))
    assert parallel.split_map(lambda x: x * x, items) == [x * x for x in items]
    assert forks[0] == 1
    # a result that does not pickle: this process computes the child's half itself
    got = parallel.split_map(lambda x: (lambda: x) if x >= 30 else x, items)
    assert [g() if callable(g) else g for g in got] == items
    # an exception in the child's share is raised here, as the loop would raise it
    with pytest.raises(ZeroDivisionError):
        parallel.split_map(lambda x: 1 / (x - 35), items)
    # two failing items: the first in list order wins, whichever process met it
    def two(x):
        if x == 0:
            raise ValueError("first")
        if x == 39:
            raise KeyError("last")
        return x
    with pytest.raises(ValueError, match="first"):
        parallel.split_map(two, items)


def test_split_map_shares_uneven_work_and_survives_a_dying_child(forks, monkeypatch):
    parent = os.getpid()
    items = list(range(60))

    def slow_start(x):
        if x < 5:
            time.sleep(0.05)  # the front is slow: the child takes more than half
        return (x, os.getpid() == parent)

    got = parallel.split_map(slow_start, items)
    assert [x for x, _ in got] == items
    assert sum(not mine for _, mine in got) > 30  # the child did the larger share
    # a child that dies part-way: its share is computed here, in order
    def dies(x):
        if os.getpid() != parent and x == 50:
            os._exit(3)
        return x * 2
    assert parallel.split_map(dies, items) == [x * 2 for x in items]
    # more items than tokens: a token stands for a run of items
    monkeypatch.setattr(parallel, "_MAX_TOKENS", 7)
    assert parallel.split_map(lambda x: -x, items) == [-x for x in items]


def test_findings_located_on_the_childs_specs_are_the_same(project, capsys, monkeypatch, forks):
    # project-level findings (RG412 shared alert name, RG420 unknown related alert) on specs
    # of the second half, which the child loads: their lines come from remade positions
    # RG414 reads the spec's data (chart.path) in the parent: data remade on first use too
    many(project, {17: {"alert_of": 3}, 18: {"chart": "charts/svc-16"}, 19: {"related": "Svc99Down"}})
    code1, one = run(capsys, monkeypatch, "1", "-C", str(project), "validate", "--output", "json")
    assert forks[0] == 0
    code2, two = run(capsys, monkeypatch, "2", "-C", str(project), "validate", "--output", "json")
    assert forks[0] == 1
    assert (code1, one) == (code2, two)
    got = {(f["code"], f["file"], f["line"]) for f in json.loads(one)["findings"]}
    assert ("RG412", "rules/svc-17.yaml", 6) in got
    assert ("RG420", "rules/svc-19.yaml", 18) in got
    assert ("RG414", "rules/svc-18.yaml", 2) in got


def test_build_and_check_give_the_same_bytes_either_way(project, capsys, monkeypatch, forks):
    many(project)
    assert run(capsys, monkeypatch, "1", "-C", str(project), "build")[0] == 0
    sequential = tree(project)
    assert run(capsys, monkeypatch, "2", "-C", str(project), "build", "--force")[0] == 0
    assert forks[0] >= 2  # load and render
    assert tree(project) == sequential
    assert run(capsys, monkeypatch, "2", "-C", str(project), "check")[0] == 0
    # drift in a spec the child renders is found and shown the same way
    spec = project / "rules/svc-18.yaml"
    spec.write_text(spec.read_text().replace("for: 10m", "for: 15m"))
    c1, out1 = run(capsys, monkeypatch, "1", "-C", str(project), "check")
    c2, out2 = run(capsys, monkeypatch, "2", "-C", str(project), "check")
    assert c1 == c2 == 1 and out1 == out2 and "svc-18" in out1


def test_a_loaded_file_travels_without_data_and_remakes_it_on_use():
    text = spec_text(4)
    lf = load_text(text, "rules/svc-04.yaml")
    moved = pickle.loads(pickle.dumps(lf))
    assert "positions" not in moved.__dict__ and "data" not in moved.__dict__
    assert moved.data == lf.data  # data first: it has no class-level default to fall back on
    moved = pickle.loads(pickle.dumps(lf))
    assert moved.pos(("groups", 0, "rules", 1, "expr")) == lf.pos(("groups", 0, "rules", 1, "expr")) == (18, 15)
    assert (moved.data, moved.positions, moved.key_positions, moved.plain) == (
        lf.data, lf.positions, lf.key_positions, lf.plain)
    # a LoadedFile not made from its text keeps everything it holds
    made = LoadedFile(path="x.yaml", text="", data={"app": "x"}, positions={("app",): (3, 6)})
    back = pickle.loads(pickle.dumps(made))
    assert back.data == {"app": "x"} and back.pos(("app",)) == (3, 6)
    with pytest.raises(AttributeError):
        back.nothing_here  # noqa: B018
