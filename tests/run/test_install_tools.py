"""scripts/install-tools.sh stamps promtool and helm the way their upstream release builds do
(promtool says "version 3.16.0", not "v0.316.0"), and rebuilds a binary whose recipe changed.

The first two tests run the real tools (CI builds them with the script into the per-user cache). The
others run the script against a stand-in ``go`` that records what it was asked to build, so
the recipe and the stamp logic are checked without compiling anything."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from helpers import REPO

SCRIPT = REPO / "scripts" / "install-tools.sh"


def _stale(tool: Path, current: bool) -> None:
    """Skip (fail in CI) when ``tool`` was built by an older recipe of the script: locally the
    shared tools folder is rebuilt by the next `make tools`, in CI it always is."""
    if not current:
        msg = f"{tool} was built by an older scripts/install-tools.sh; run it again to rebuild"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)


def test_promtool_reports_the_prometheus_release(promtool_bin):
    out = subprocess.run([str(promtool_bin), "--version"], capture_output=True, text=True,
                         timeout=60).stdout
    _stale(promtool_bin, "version v0.316.0 (branch: ," not in out)
    assert out.splitlines()[0].startswith("promtool, version 3.16.0 (branch: HEAD, revision: "), out
    assert re.search(r"^  tags:\s+netgo,builtinassets$", out, re.M), out
    assert re.search(r"^  build date:\s+\d{8}-\d\d:\d\d:\d\d$", out, re.M), out


def test_helm_reports_its_release(helm_bin):
    out = subprocess.run([str(helm_bin), "version"], capture_output=True, text=True, timeout=60).stdout
    _stale(helm_bin, 'GitTreeState:""' not in out)
    assert out.startswith('version.BuildInfo{Version:"v3.22.0", GitCommit:'), out
    assert 'GitTreeState:"clean"' in out, out


FAKE_GO = r"""#!/usr/bin/env bash
# stand-in for `go`: answers what install-tools.sh asks and logs builds
set -e
log="$FAKE_GO_LOG"
case "$1 $2" in
  "list -m")
    case "${@: -1}" in
      github.com/prometheus/prometheus) echo v0.316.0 ;;
      helm.sh/helm/v3) echo v3.22.0 ;;
      k8s.io/client-go) echo v0.37.0 ;;
      github.com/prometheus-operator/prometheus-operator) echo v0.85.0 ;;
      github.com/prometheus/alertmanager) echo v0.35.0 ;;
    esac ;;
  "mod edit") ;;
  "mod download")
    mod="${@: -1}"; mod="${mod%@*}"
    dir="$FAKE_GO_ROOT/$mod"; mkdir -p "$dir/example/prometheus-operator-crd"; echo 3.16.0 > "$dir/VERSION"
    echo "kind: CustomResourceDefinition" > "$dir/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml"
    echo '{"Version":"v0.316.0","Time":"2026-11-05T15:06:51Z"}' > "$dir.info"
    printf '{\n\t"Path": "%s",\n\t"Version": "%s",\n\t"Info": "%s",\n\t"Dir": "%s"%s\n}\n' \
      "$mod" "$(case $mod in helm*) echo v3.22.0;; *operator) echo v0.85.0;; *) echo v0.316.0;; esac)" "$dir.info" "$dir" \
      "$([[ -n $FAKE_GO_HASH ]] && printf ',\n\t"Origin": {\n\t\t"VCS": "git",\n\t\t"Hash": "%s"\n\t}' "$FAKE_GO_HASH")" ;;
  "build -trimpath")
    out=""; prev=""
    for a in "$@"; do [[ $prev == -o ]] && out=$a; prev=$a; done
    echo "build $*" >> "$log"
    printf '#!/bin/sh\necho fake\n' > "$out"; chmod +x "$out" ;;
  *) echo "fake go: unexpected $*" >&2; exit 3 ;;
esac
"""


#: What the script builds, in order (issues 27, 28: the servers, the backtest and routing helpers;
#: issue 25: the batch renderer on the Helm module, stamped with its revision like helm).
ALL = ["promtool", "prometheus", "rulegen-backtest", "alertmanager", "amtool", "rulegen-amroute", "helm",
       "rulegen-helmrender"]


def _built(line: str) -> str:
    """The binary a logged build writes (its -o file, without .tmp)."""
    return Path(line.split(" -o ", 1)[1].split()[0]).name.removesuffix(".tmp")


def _run(tmp_path: Path, hash_: str = "", tools_dir: Path | None = None, script: Path = SCRIPT,
         ok: bool = True, unset: bool = False) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Run the script with the stand-in go; ``tools_dir`` is RULEGEN_TOOLS_DIR (default
    ``tmp_path/tools``; left unset with ``unset``); XDG_CACHE_HOME is ``tmp_path/cache``."""
    fake = tmp_path / "fakebin"
    fake.mkdir(exist_ok=True)
    (fake / "go").write_text(FAKE_GO)
    (fake / "go").chmod(0o755)
    log = tmp_path / "go.log"
    log.write_text("")
    env = {k: v for k, v in os.environ.items() if k not in ("RULEGEN_TOOLS_DIR", "XDG_CACHE_HOME")}
    env.update({"PATH": f"{fake}:/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "cache"),
                "FAKE_GO_LOG": str(log), "FAKE_GO_ROOT": str(tmp_path / "mods"), "FAKE_GO_HASH": hash_})
    if not unset:
        env["RULEGEN_TOOLS_DIR"] = str(tools_dir or tmp_path / "tools")
    r = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert (r.returncode == 0) == ok, r.stderr
    return r, log.read_text().splitlines()


def test_promtool_is_stamped_with_the_release_like_promu_does(tmp_path):
    _, builds = _run(tmp_path, hash_="0123456789abcdef0123456789abcdef01234567")
    assert [_built(b) for b in builds] == ALL
    promtool, helm = builds[0], builds[-1]
    v = "github.com/prometheus/common/version"
    assert "-tags netgo,builtinassets" in promtool
    for flag in (f"-X {v}.Version=3.16.0", f"-X {v}.Revision=0123456789abcdef0123456789abcdef01234567",
                 f"-X {v}.Branch=HEAD", f"-X {v}.BuildDate=20261105-15:06:51", f"-X {v}.BuildUser="):
        assert flag in promtool, flag
    h = "helm.sh/helm/v3"
    for flag in (f"-X {h}/internal/version.version=v3.22.0",
                 f"-X {h}/internal/version.gitCommit=0123456789abcdef0123456789abcdef01234567",
                 f"-X {h}/internal/version.gitTreeState=clean",
                 f"-X {h}/pkg/chartutil.k8sVersionMinor=37"):
        assert flag in helm, flag


def test_an_old_build_is_rebuilt_and_a_current_one_kept(tmp_path):
    _run(tmp_path)
    stamp = tmp_path / "tools" / "bin" / ".promtool.version"
    assert "Version=3.16.0" in stamp.read_text()
    r, builds = _run(tmp_path)
    assert builds == [] and "promtool v0.316.0 already in" in r.stdout  # same recipe: nothing to do
    stamp.write_text("v0.316.0\n")  # what the script wrote before it stamped the release
    r, builds = _run(tmp_path)
    assert len(builds) == 1 and "cmd/promtool" in builds[0]  # only promtool's recipe differs
    _, builds = _run(tmp_path, hash_="fedcba9876543210fedcba9876543210fedcba98")
    # a known revision changes the recipes that stamp it (the rulegen helpers stamp no revision)
    assert [_built(b) for b in builds] == [t for t in ALL if t not in ("rulegen-amroute", "rulegen-backtest")]


def test_revision_falls_back_to_unknown_without_a_pin(tmp_path):
    _, builds = _run(tmp_path)
    assert "-X github.com/prometheus/common/version.Revision=unknown" in builds[0]


def test_tools_are_built_into_the_per_user_cache_by_default(tmp_path):
    """No RULEGEN_TOOLS_DIR: the tools go to ${XDG_CACHE_HOME}/rulegen/tools/bin, outside the
    checkout (a pull request can write the checkout), never to .tools/bin."""
    r, builds = _run(tmp_path, unset=True)
    assert len(builds) == len(ALL)
    cache = tmp_path / "cache" / "rulegen" / "tools" / "bin"
    assert (cache / "helm").is_file() and (cache / "promtool").is_file(), r.stdout
    assert not (REPO / ".tools").exists()


def test_a_tools_dir_inside_the_checkout_is_refused(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    script = checkout / "scripts" / "install-tools.sh"
    script.write_text(SCRIPT.read_text())
    r, builds = _run(tmp_path, tools_dir=checkout / ".tools", script=script, ok=False)
    assert r.returncode == 2 and builds == []
    assert "is inside the checkout" in r.stderr and "RULEGEN_TOOLS_DIR" in r.stderr
    assert not (checkout / ".tools").exists()


def test_the_prometheusrule_crd_is_fetched_into_the_tools_folder_without_a_build(tmp_path):
    """Issue 29: the pinned Prometheus Operator module is downloaded (source only) and its
    PrometheusRule CRD copied to <tools>/crds/, where `rulegen check` reads it."""
    r, builds = _run(tmp_path)
    crd = tmp_path / "tools" / "crds" / "monitoring.coreos.com_prometheusrules.yaml"
    assert crd.read_text() == "kind: CustomResourceDefinition\n"
    assert (tmp_path / "tools" / "crds" / ".prometheus-operator.version").read_text() == "v0.85.0\n"
    assert not any("prometheus-operator" in b for b in builds)  # promtool and helm only
    assert "PrometheusRule CRD of prometheus-operator v0.85.0" in r.stdout


def test_the_backtest_helper_must_pin_the_prometheus_of_promtool(tmp_path):
    """tools/rulegen-backtest is built on the same Prometheus module as promtool: a copy of the
    script whose helper pins another version stops with a message naming both."""
    import shutil
    copy = tmp_path / "repo"
    shutil.copytree(REPO / "scripts", copy / "scripts")
    shutil.copytree(REPO / "tools", copy / "tools")
    fake = (FAKE_GO.replace('github.com/prometheus/prometheus) echo v0.316.0 ;;',
                            'github.com/prometheus/prometheus) case "$PWD" in *rulegen-backtest) echo v0.315.0 ;; '
                            '*) echo v0.316.0 ;; esac ;;'))
    assert fake != FAKE_GO
    global_fake = FAKE_GO
    try:
        globals()["FAKE_GO"] = fake
        r, builds = _run(tmp_path, script=copy / "scripts" / "install-tools.sh", ok=False)
    finally:
        globals()["FAKE_GO"] = global_fake
    assert "tools/rulegen-backtest pins github.com/prometheus/prometheus v0.315.0, tools/promtool v0.316.0" in r.stderr
    assert "rulegen-backtest" not in [_built(b) for b in builds]
