"""RG776: what Helm renders from an app chart's ``charts/`` besides the chart library link
(adversarial review: ``charts/shop/charts/zz -> ../../llama-swap`` deployed llama-swap's alerts a
second time from shop's release, and a plain folder with a Chart.yaml and a PrometheusRule
template deployed anything, while ``rulegen check`` passed).

It fires on a link into another app's chart (declared or not), an undeclared folder or
``.tgz``, a file, a folder without Chart.yaml, a second link to the library, ``charts/`` as a
link; it stays quiet on the bundled project, on declared subcharts (folder and ``.tgz``, by the
name in the subchart's own Chart.yaml), on the entries Helm skips, on a link already RG742, and
on the awesome-prometheus-alerts corpus imported and built (111 charts).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import struct
import tarfile
import zlib
from pathlib import Path

import pytest

from rulegen.cli import main
from rulegen.render import subcharts

from helpers import CORPUS

CHART = "charts/noctaya"
SUB = f"{CHART}/charts"
RULE_TEMPLATE = ("apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata: {name: extra}\n"
                 "spec:\n  groups:\n    - name: x\n      rules:\n        - alert: LlamaSwapDown\n"
                 "          expr: up == 0\n")


def _run(capsys, root: Path, *args: str) -> tuple[int, str]:
    code = main(["-C", str(root), *args])
    out, err = capsys.readouterr()
    return code, out + err


def _rg776(text: str) -> list[str]:
    """The paths of the RG776 findings in a command's output."""
    return re.findall(r"^(\S+):0:0: error RG776 ", text, re.M)


def _chart_dir(folder: Path, name: str, template: str = RULE_TEMPLATE) -> None:
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 1.2.3\n", encoding="utf-8")
    (folder / "templates/x.yaml").write_text(template, encoding="utf-8")


def _gzip_as_helm(data: bytes) -> bytes:
    """``data`` gzipped with the header ``helm package`` writes (FEXTRA and FCOMMENT set),
    which Python's streaming tar reader refuses."""
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = comp.compress(data) + comp.flush()
    extra = b"+aHR0cHM6Ly95b3V0dS5iZS96OVV6MWljandyTQo=Helm"
    header = b"\x1f\x8b\x08\x14" + b"\x00" * 4 + b"\x00\xff" + struct.pack("<H", len(extra)) + extra + b"Helm\x00"
    return header + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def _tgz(path: Path, name: str, folder: str | None = None) -> None:
    """A chart archive at ``path``: ``<folder>/Chart.yaml`` naming ``name`` and a template."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for rel, text in ((f"{folder or name}/Chart.yaml", f"apiVersion: v2\nname: {name}\nversion: 1.2.3\n"),
                          (f"{folder or name}/templates/x.yaml", RULE_TEMPLATE)):
            data = text.encode()
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(_gzip_as_helm(buf.getvalue()))


def _declare(root: Path, *names: str) -> None:
    cy = root / CHART / "Chart.yaml"
    cy.write_text(cy.read_text(encoding="utf-8") + "".join(f"  - name: {n}\n    version: 1.2.3\n" for n in names),
                  encoding="utf-8")


# -- it fires -------------------------------------------------------------------------------------


@pytest.mark.parametrize("make, words", [
    (lambda r: (r / SUB / "zz").symlink_to("../../llama-swap"),
     "is a symlink to '../../llama-swap', into the chart of app llama-swap (charts/llama-swap): Helm renders "
     "every subchart under charts/noctaya/charts/ into this chart's release, so llama-swap's alerts would be "
     "deployed a second time (duplicate pages)"),
    (lambda r: (r / SUB / "zz").symlink_to("../../llama-swap/templates"),
     "is a symlink to '../../llama-swap/templates', into the chart of app llama-swap"),
    (lambda r: _chart_dir(r / SUB / "zz", "extra"),
     "is a folder Helm renders into this chart's release as the subchart 'extra', which charts/noctaya/Chart.yaml "
     "does not declare among its dependencies: its templates deploy objects no spec declares (a PrometheusRule "
     "among them means alerts twice, duplicate pages)"),
    (lambda r: _tgz(r / SUB / "zz", "redis"),
     "is a file under charts/noctaya/charts/, where Helm loads every entry as a subchart (`helm template` fails"),
    (lambda r: _tgz(r / SUB / "zz.tgz", "redis", folder="whatever"),
     "is a chart archive Helm renders into this chart's release as the subchart 'redis', which"),
    (lambda r: (r / SUB / "zz.tgz").write_bytes(b"not gzip"),
     "is a .tgz rulegen cannot read as a chart archive (it is no gzipped tar archive"),
    (lambda r: (r / SUB / "zz").write_text("notes\n", encoding="utf-8"),
     "is a file under charts/noctaya/charts/, where Helm loads every entry as a subchart"),
    (lambda r: (r / SUB / "zz/templates").mkdir(parents=True) or (r / SUB / "zz/templates/x.yaml").write_text(
        RULE_TEMPLATE, encoding="utf-8"),
     "is a folder without a readable Chart.yaml naming a chart"),
    (lambda r: (r / SUB / "zz").symlink_to("../../rulegen-library"),
     "is a symlink to '../../rulegen-library', the chart library under another name"),
    (lambda r: shutil.copytree(r / "charts/rulegen-library", r / SUB / "zz"),
     "is a folder holding the chart library ('rulegen-library'), which Helm renders into this chart's release "
     "a second time"),
    (lambda r: (r / SUB / "zz").symlink_to("../../missing"),
     "is a symlink to '../../missing', leading nowhere"),
])
def test_an_entry_helm_renders_undeclared_is_refused_by_validate_and_check(project, capsys, make, words):
    make(project)
    rel = f"{SUB}/zz.tgz" if (project / SUB / "zz.tgz").exists() else f"{SUB}/zz"
    for cmd in ("validate", "check", "build"):
        code, out = _run(capsys, project, cmd)
        assert code == 1, (cmd, out)
        assert _rg776(out) == [rel], (cmd, out)
        assert f"{rel}:0:0: error RG776 {rel} {words}" in out, (cmd, out)


def test_a_link_to_another_apps_chart_is_refused_even_when_declared(project, capsys):
    (project / SUB / "zz").symlink_to("../../llama-swap")
    _declare(project, "llama-swap")
    code, out = _run(capsys, project, "validate")
    assert code == 1 and _rg776(out) == [f"{SUB}/zz"], out
    assert "into the chart of app llama-swap" in out
    # a run on one spec knows the other apps' charts too (Context.reference)
    code, out = _run(capsys, project, "validate", "rules/noctaya.yaml")
    assert code == 1 and "into the chart of app llama-swap" in out, out


def test_a_declared_folder_linking_into_another_apps_chart_is_refused(project, capsys):
    """Its own Chart.yaml (declared), its templates and rules linked to llama-swap's: Helm
    renders llama-swap's PrometheusRule again from noctaya's release."""
    sub = project / SUB / "zz"
    sub.mkdir()
    (sub / "Chart.yaml").write_text("apiVersion: v2\nname: zz\nversion: 1.2.3\n", encoding="utf-8")
    (sub / "templates").symlink_to("../../../llama-swap/templates")
    (sub / "rules").symlink_to("../../../llama-swap/rules")
    _declare(project, "zz")
    code, out = _run(capsys, project, "validate")
    assert code == 1 and _rg776(out) == [f"{SUB}/zz/rules"], out
    assert (f"{SUB}/zz/rules is a symlink to '../../../llama-swap/rules', into the chart of app llama-swap "
            f"(charts/llama-swap), inside the subchart {SUB}/zz Helm renders") in out


def test_charts_folder_as_a_link_is_refused(project, capsys):
    shutil.move(project / SUB, project / "elsewhere")
    (project / SUB).symlink_to("../../elsewhere")
    code, out = _run(capsys, project, "validate")
    assert code == 1 and _rg776(out) == [SUB], out
    assert f"{SUB} is a symlink to '../../elsewhere': Helm renders every chart in the folder it leads to" in out


def test_the_message_names_what_is_wrong_why_and_the_fix(project, capsys):
    _chart_dir(project / SUB / "extra", "extra")
    _, out = _run(capsys, project, "validate")
    [line] = [ln for ln in out.splitlines() if " RG776 " in ln]
    assert line.startswith(f"{SUB}/extra:0:0: error RG776 ")
    assert "`rulegen check` never sees them; remove it, or, when it is the team's own subchart, declare it in " \
           "Chart.yaml (`- name: extra` with its version under `dependencies:`)" in line


def test_rg776_cannot_be_switched_off(project, capsys):
    (project / SUB / "zz").symlink_to("../../llama-swap")
    cfg = project / ".rulegen.yaml"
    text = cfg.read_text(encoding="utf-8")
    assert not re.search(r"^checks:", text, re.M)
    cfg.write_text(text + "\nchecks:\n  disable: [RG776]\n", encoding="utf-8")
    code, out = _run(capsys, project, "validate")
    assert code != 0 and "RG776 keeps rulegen inside the project" in out, out


# -- it stays quiet -------------------------------------------------------------------------------


def test_the_bundled_project_is_quiet(project, capsys):
    code, out = _run(capsys, project, "validate")
    assert code == 0 and _rg776(out) == [], out
    assert sorted(p.name for p in (project / SUB).iterdir()) == ["rulegen-library"]


def test_declared_subcharts_folder_and_tgz_are_accepted(project, capsys):
    """Declared by the name in the subchart's own Chart.yaml, not by the folder or file name
    (helm dependency's rule); undeclaring one brings its finding back."""
    _chart_dir(project / SUB / "cache-folder", "memcached")
    _tgz(project / SUB / "redis-1.2.3.tgz", "redis")
    (project / SUB / "redis-1.2.3.tgz.prov").write_text("provenance\n", encoding="utf-8")
    code, out = _run(capsys, project, "validate")
    assert code == 1 and _rg776(out) == [f"{SUB}/cache-folder", f"{SUB}/redis-1.2.3.tgz"], out
    _declare(project, "memcached", "redis")
    code, out = _run(capsys, project, "validate")
    assert code == 0 and _rg776(out) == [], out
    _chart_dir(project / SUB / "cache2", "memcached2")
    _declare(project, "cache2")  # the folder's name declares nothing
    code, out = _run(capsys, project, "validate")
    assert code == 1 and _rg776(out) == [f"{SUB}/cache2"], out


@pytest.mark.tools("helm")
def test_a_declared_subchart_passes_check_and_helm_renders_it(project, capsys):
    _chart_dir(project / SUB / "cache", "memcached",
               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: memcached-cm}\n")
    _declare(project, "memcached")
    code, out = _run(capsys, project, "check")
    assert code == 0 and _rg776(out) == [], out


def test_entries_helm_skips_are_quiet(project, capsys):
    _chart_dir(project / SUB / "_skipped", "skipped")
    _chart_dir(project / SUB / ".hidden", "hidden")
    (project / SUB / "_notes.txt").write_text("x\n", encoding="utf-8")
    (project / SUB / "empty").mkdir()
    code, out = _run(capsys, project, "validate")
    assert code == 0 and _rg776(out) == [], out


def test_a_link_outside_is_rg742_only(project, capsys):
    (project / SUB / "etc").symlink_to("/etc")
    code, out = _run(capsys, project, "validate")
    assert code == 1 and f"{SUB}/etc:0:0: error RG742 " in out
    assert _rg776(out) == [], out


def test_requirements_yaml_declares_for_an_old_chart(tmp_path):
    chart = tmp_path / "charts/a"
    (chart / "charts").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v1\nname: a\nversion: 1.0.0\n", encoding="utf-8")
    (chart / "requirements.yaml").write_text("dependencies:\n  - name: redis\n    version: 1.2.3\n", encoding="utf-8")
    _tgz(chart / "charts/redis-1.2.3.tgz", "redis")
    assert subcharts.declared_names(tmp_path, "charts/a") == {"redis"}
    assert subcharts.entry_problems(tmp_path, "charts/a") == []
    os.remove(chart / "requirements.yaml")
    assert [p.path for p in subcharts.entry_problems(tmp_path, "charts/a")] == ["charts/a/charts/redis-1.2.3.tgz"]


def test_an_archive_that_unpacks_too_far_before_chart_yaml_is_not_read_on(tmp_path, monkeypatch):
    monkeypatch.setattr(subcharts, "MAX_UNPACKED", 4096)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("big/zeros")
        info.size = 8192
        tar.addfile(info, io.BytesIO(b"\0" * 8192))
    (tmp_path / "big.tgz").write_bytes(_gzip_as_helm(buf.getvalue()))
    assert subcharts.archive_chart_name(str(tmp_path / "big.tgz"), "big.tgz") == \
        (None, "it unpacks to more than 4096 bytes before its Chart.yaml")


@pytest.mark.slow
def test_the_imported_corpus_is_quiet(tmp_path, capsys, shared_dir):
    """awesome-prometheus-alerts imported and built: 111 app charts, each with its library link
    and nothing else under charts/; validate and the findings of check hold no RG776."""
    assert main(["-C", str(tmp_path), "import", str(CORPUS)]) == 0
    assert main(["-C", str(tmp_path), "build"]) == 0
    capsys.readouterr()
    entries = sorted(p.name for p in tmp_path.glob("charts/*/charts/*"))
    assert len(entries) == 111 and set(entries) == {"rulegen-library"}
    code, out = _run(capsys, tmp_path, "validate")
    assert code == 0 and _rg776(out) == [], out
