"""The fast schema pre-check (fastjsonschema) must agree with jsonschema on every document:
a spec it accepts skips jsonschema, so a wrong "yes" would hide schema errors."""

from __future__ import annotations

import copy
import random

from jsonschema import Draft202012Validator

from rulegen.spec import load_file
from rulegen.validate.checks import schema as schema_check

from helpers import REPO

ODD_VALUES = [None, True, False, 0, 5, -1, 1.5, "", "x", "5m", "1.5m", "0x15", "off", [], ["a"], {}, {"a": "b"},
              {"a": 1}, {"__x": "y"}, {"bad-name": "v"}, [{"markdown": "m"}], [{"markdown": "m", "commands": "c"}]]


def _paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, path + (i,))


def _mutate(data, rng):
    d = copy.deepcopy(data)
    paths = [p for p in _paths(d) if p]
    path = rng.choice(paths)
    parent = d
    for p in path[:-1]:
        parent = parent[p]
    action = rng.random()
    if action < 0.6:
        parent[path[-1]] = copy.deepcopy(rng.choice(ODD_VALUES))
    elif action < 0.8 and isinstance(parent, dict):
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent[rng.choice(["severty", "alert", "record", "exp_labels", "title", "zzz"])] = "x"
    else:
        parent.append(copy.deepcopy(rng.choice(ODD_VALUES)))
    return d


def test_precheck_agrees_with_jsonschema_on_bundled_and_mutated_specs():
    precheck = schema_check._precheck()
    assert precheck is not None
    full = Draft202012Validator(schema_check._fast_schema())
    published = Draft202012Validator(schema_check.schema())
    rng = random.Random(20261130)
    bases = [load_file(p).data for p in sorted((REPO / "rules").glob("*.yaml"))]
    docs = list(bases)
    for _ in range(400):
        docs.append(_mutate(rng.choice(bases), rng))
    disagree = []
    for d in docs:
        fast = precheck(d)
        slow = full.is_valid(d)
        if fast != slow:
            disagree.append(d)
        # where the fast schema accepts, the published schema must accept too (except RG205
        # cases, which _kinds reports separately)
        if fast:
            rules = [r for g in d.get("groups") or [] if isinstance(g, dict)
                     for r in (g.get("rules") or []) if isinstance(r, dict)]
            if all(("alert" in r) != ("record" in r) for r in rules):
                assert published.is_valid(d)
    assert disagree == []
    assert sum(precheck(d) for d in docs) > 50  # both outcomes were exercised
    assert sum(not precheck(d) for d in docs) > 120
