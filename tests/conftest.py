"""Shared test fixtures (shared helpers that are not fixtures: the ``helpers`` package).

Tests that need the real ``helm``/``promtool`` use the ``helm_bin``/``promtool_bin`` fixtures
or the ``tools`` marker (``@pytest.mark.tools`` needs both, ``@pytest.mark.tools("helm")`` only
the tools it names; checked before any fixture is set up, so a module-scoped fixture that calls
helm never runs without it): locally they skip with the install command when a tool is
missing; in CI (``CI`` set) a missing tool fails the test instead, so CI can never pass by
skipping.

Hypothesis runs without a deadline (the ``rulegen`` settings profile): how long one example
takes depends on the load of the machine, not on the code, so a deadline only made the
property tests flaky under load. Example counts stay as each test sets them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings

from rulegen.tools import find

from helpers import REPO, SHARED

TOOLS = ("helm", "promtool")  # the default of the ``tools`` marker
KNOWN_TOOLS = find.NAMES

settings.register_profile("rulegen", deadline=None)
settings.load_profile("rulegen")


def _need(name: str) -> Path:
    p = find.find(name, REPO)
    if p is None:
        msg = f"{name} is not installed; run scripts/install-tools.sh (or make tools)"
        if os.environ.get("CI"):
            pytest.fail(msg + " — CI must run this test for real")
        pytest.skip(msg)
    return p


#: Test modules that take a minute or more on two busy cores (measured with ``--durations``),
#: heaviest first. They run before all others, so ``pytest -n 2`` (xdist hands out tests in
#: collection order) ends on short tests on both workers instead of one worker finishing a
#: long module alone. A stale entry costs only speed; whole modules move, so each module's
#: fixtures are still set up once per worker.
HEAVY_FIRST = (
    "run/test_mutation.py", "e2e/test_corpus.py", "validate/test_slos.py", "run/test_unseen.py",
    "run/test_slo_mutation.py", "e2e/test_browser.py", "e2e/test_browser_owners.py",
    "e2e/test_llama_swap.py", "run/test_derive.py", "load/test_fuzz_loader.py",
    "render/test_helm_gates.py", "render/test_helm_escaping.py", "importer/test_adoption.py",
    "importer/test_kps.py", "core/test_parallel.py", "e2e/test_determinism.py", "e2e/test_starter.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the modules of :data:`HEAVY_FIRST` first, in its order; every other test keeps its
    place (the same order on every xdist worker, as xdist requires)."""
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
    tests = Path(__file__).parent

    def key(pair):
        index, item = pair
        try:
            rel = Path(item.fspath).relative_to(tests).as_posix()
        except ValueError:
            rel = ""
        return (rank.get(rel, len(rank)), index)

    items[:] = [item for _, item in sorted(enumerate(items), key=key)]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (locally) or fail (in CI) a test marked ``tools`` whose tools are missing, before
    its fixtures run. The marker's arguments name the tools (default: helm and promtool).

    Raises:
        ValueError: the marker names a tool rulegen does not run.
    """
    marker = item.get_closest_marker("tools")
    if marker is None:
        return
    for name in marker.args or TOOLS:
        if name not in KNOWN_TOOLS:
            raise ValueError(f"{item.nodeid}: pytest.mark.tools({name!r}): not one of {KNOWN_TOOLS}")
        _need(name)


@pytest.fixture(scope="session")
def helm_bin() -> Path:
    """Path of the real helm (see module docstring)."""
    return _need("helm")


@pytest.fixture(scope="session")
def promtool_bin() -> Path:
    """Path of the real promtool (see module docstring)."""
    return _need("promtool")


@pytest.fixture(scope="session")
def prometheus_bin() -> Path:
    """Path of the real Prometheus server of the pinned release (see module docstring)."""
    return _need("prometheus")


@pytest.fixture(scope="session")
def alertmanager_bin() -> Path:
    """Path of the real Alertmanager of the pinned release (see module docstring)."""
    return _need("alertmanager")


@pytest.fixture(scope="session")
def amtool_bin() -> Path:
    """Path of the real amtool of the pinned Alertmanager release (see module docstring)."""
    return _need("amtool")


@pytest.fixture(scope="session")
def backtest_bin() -> Path:
    """Path of ``rulegen-backtest``, rulegen's alert replay helper built from the pinned
    Prometheus module (``tools/rulegen-backtest``; see module docstring)."""
    return _need("rulegen-backtest")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` beside the repository (seeds, corpus). CI lays it there; a clone elsewhere
    skips the tests that read it, except in CI, where its absence fails them."""
    if not SHARED.is_dir():
        msg = f"{SHARED} is missing (the project's shared/ folder is laid beside the repository)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return SHARED


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the bundled project (specs, charts, mkdocs.yml, runbooks, .rulegen.yaml, the
    Alertmanager configuration it names, deploy/, and the sum files, .rulegen-sums/) in a temp
    folder."""
    for name in ("rules", "charts", "runbooks", "deploy", ".rulegen-sums"):
        if (REPO / name).exists():
            shutil.copytree(REPO / name, tmp_path / name, symlinks=True)
    for name in ("mkdocs.yml", ".rulegen.yaml"):
        if (REPO / name).exists():
            shutil.copy(REPO / name, tmp_path / name)
    return tmp_path


@pytest.fixture(scope="module")
def linked_root(tmp_path_factory):
    """A project whose folders hold links of every kind: inside, outside, up, a loop, dangling
    (module-scoped: the property tests of containment and the fuzzing of path fields)."""
    base = tmp_path_factory.mktemp("prop")
    root = base / "proj"
    (root / "charts" / "demo").mkdir(parents=True)
    (base / "outside").mkdir()
    (root / "charts" / "in").symlink_to("demo")
    (root / "charts" / "out").symlink_to(base / "outside")
    (root / "charts" / "up").symlink_to("..")
    (root / "charts" / "upup").symlink_to("../..")
    (root / "charts" / "loop").symlink_to("loop")
    (root / "charts" / "dangling").symlink_to(base / "outside" / "missing")
    (root / "out").symlink_to("charts/out")
    return root


@pytest.fixture(scope="session")
def prometheus_server(prometheus_bin, promtool_bin, tmp_path_factory):
    """The real pinned Prometheus with :data:`helpers.prometheus.WINDOW_DAYS` days of known
    history (:mod:`helpers.prometheus`: the series, the episodes, the window), started once per
    session on a free loopback port and killed at the end. Yields a
    :class:`helpers.prometheus.PrometheusServer` (``.url``, ``.window``, ``.at(minute)``)."""
    from helpers.prometheus import start_prometheus
    server = start_prometheus(prometheus_bin, promtool_bin, tmp_path_factory.mktemp("prometheus"))
    try:
        yield server
    finally:
        server.stop()
