"""Issue 23, classes 3 and 6: writes never go through a committed symlink, and no input file
can exhaust time or memory (rulegen/fs: one writer, one bounded reader, bounded YAML).

Class 3: every command that writes (``baseline``, ``derive-tests``, ``new``, ``import``,
``build``) once wrote through a fixed temporary name beside its target (``.X.yaml.tmp``,
``..rulegen-baseline.yaml.tmp``, ``.X.yaml.rulegen-new``, ``.X.yaml.rulegen-tmp``); a pull
request committing a symlink under that name made rulegen overwrite a file outside the
project. Each test plants such links to a file outside the project, runs the command, and
checks that it still succeeds and that the outside file is byte for byte unchanged. A
target that is itself a link leaving the project is refused (RG747).

Class 6: a YAML alias bomb, a FIFO and a file over the size limit are refused with their
code, in seconds and without reading the file.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rulegen.baseline import BASELINE_FILE
from rulegen.cli import main
from rulegen.fs import read as fs_read
from rulegen.fs import write as fs_write
from rulegen.fs import yamlbound

from helpers import REPO
from helpers.chartfixture import mini_chart

PRECIOUS = b"export PATH=/usr/bin  # someone's shell start-up file\n"

RULES = """\
groups:
  - name: shop
    rules:
      - alert: ShopDown
        expr: up{job="shop"} == 0
        for: 5m
        labels:
          severity: critical
        annotations:
          summary: Shop is down
          description: No shop target is up.
"""


def _run(root: Path, *args: str) -> int:
    return main(["-C", str(root), *args])


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file outside the project (``tmp/outside/bashrc``); the project is ``tmp/proj``."""
    (tmp_path / "outside").mkdir()
    f = tmp_path / "outside" / "bashrc"
    f.write_bytes(PRECIOUS)
    (tmp_path / "proj").mkdir()
    return f


def _plant(root: Path, victim: Path, *names: str) -> None:
    for name in names:
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.symlink_to(victim)


def _intact(victim: Path) -> None:
    assert victim.read_bytes() == PRECIOUS
    assert sorted(p.name for p in victim.parent.iterdir()) == ["bashrc"]


# --- class 3: fixed temporary names -------------------------------------------------------------

def test_import_does_not_write_through_links_at_the_old_temp_names(tmp_path, victim, capsys):
    root = tmp_path / "proj"
    (root / "src").mkdir()
    (root / "src" / "shop.rules.yml").write_text(RULES, encoding="utf-8")
    # the names rulegen import used for the spec, the baseline and the conventions
    _plant(root, victim, "rules/.shop-rules.yaml.tmp", "..rulegen-baseline.yaml.tmp", "..rulegen.yaml.tmp")
    assert _run(root, "import", "src/shop.rules.yml") == 0, capsys.readouterr().err
    _intact(victim)
    assert "alert: ShopDown" in (root / "rules" / "shop-rules.yaml").read_text(encoding="utf-8")
    assert (root / BASELINE_FILE).is_file() and not (root / BASELINE_FILE).is_symlink()


def test_baseline_does_not_write_through_a_link_at_its_old_temp_name(tmp_path, victim, capsys):
    root = tmp_path / "proj"
    (root / "src").mkdir()
    (root / "src" / "shop.rules.yml").write_text(RULES, encoding="utf-8")
    assert _run(root, "import", "src/shop.rules.yml") == 0
    expected = (root / BASELINE_FILE).read_text(encoding="utf-8")
    (root / BASELINE_FILE).unlink()  # `rulegen baseline` then writes it again
    _plant(root, victim, "..rulegen-baseline.yaml.tmp")
    assert _run(root, "baseline") == 0, capsys.readouterr().err
    _intact(victim)
    assert (root / BASELINE_FILE).read_text(encoding="utf-8") == expected


def test_new_does_not_write_through_a_link_at_its_old_temp_name(tmp_path, victim, capsys):
    root = tmp_path / "proj"
    (root / "rules").mkdir()
    _plant(root, victim, "rules/.shop.yaml.rulegen-new")
    assert _run(root, "new", "shop") == 0, capsys.readouterr().err
    _intact(victim)
    assert "app: shop" in (root / "rules" / "shop.yaml").read_text(encoding="utf-8")


def test_derive_tests_does_not_write_through_a_link_at_its_old_temp_name(project, tmp_path, capsys):
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    victim = outside / "bashrc"
    victim.write_bytes(PRECIOUS)
    spec = project / "rules" / "shapes.yaml"
    for p in (project / "rules").iterdir():
        p.unlink()
    spec.write_text(SHAPES_SPEC, encoding="utf-8")
    _plant(project, victim, "rules/.shapes.yaml.rulegen-tmp")
    assert _run(project, "derive-tests") == 0, capsys.readouterr()
    _intact(victim)
    assert "rules/shapes.yaml:5: ShapeDown: 3 test(s) derived" in capsys.readouterr().out
    assert "tests:" in spec.read_text(encoding="utf-8")


SHAPES_SPEC = """\
app: shapes
groups:
  - name: shapes
    rules:
      - alert: ShapeDown
        expr: up{job="shapes"} == 0
        for: 5m
        severity: warning
        summary: Down.
        description: Down.
"""


def test_build_does_not_write_through_links_in_its_output_folders(project, tmp_path, capsys):
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    victim = outside / "bashrc"
    victim.write_bytes(PRECIOUS)
    # a fixed name, and a leftover-temp-file name of a dead process, which build removes
    _plant(project, victim, "runbooks/.index.md.tmp", "runbooks/.index.md.999999999.x.rulegen-tmp")
    index = (project / "runbooks" / "index.md")
    index.write_text("stale\n", encoding="utf-8")  # build must rewrite it
    assert _run(project, "build", "--force") == 0, capsys.readouterr().err
    _intact(victim)
    assert index.read_text(encoding="utf-8") != "stale\n"
    assert not (project / "runbooks/.index.md.999999999.x.rulegen-tmp").is_symlink()  # the link, not its target


def test_a_link_leaving_the_project_inside_a_chart_stops_build_before_any_write(project, tmp_path, capsys):
    """Inside a chart every file is chart data helm may read (``.Files.Get``), so a committed
    link there, even at a temp-file name, is refused at validation (RG742) and nothing is written."""
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    victim = outside / "bashrc"
    victim.write_bytes(PRECIOUS)
    _plant(project, victim, "charts/llama-swap/templates/.prometheusrule.yaml.tmp")
    index = (project / "runbooks" / "index.md")
    index.write_text("stale\n", encoding="utf-8")
    assert _run(project, "build", "--force") == 1
    err = capsys.readouterr()
    assert "RG742 charts/llama-swap/templates/.prometheusrule.yaml.tmp is a symlink to" in err.out + err.err
    _intact(victim)
    assert index.read_text(encoding="utf-8") == "stale\n"


def test_the_writer_draws_a_new_name_when_a_link_holds_one(tmp_path, victim, monkeypatch):
    root = tmp_path / "proj"
    names = iter(["aaaa", "aaaa", "bbbb"])
    monkeypatch.setattr(fs_write.secrets, "token_hex", lambda n: next(names))
    (root / f".out.txt.{os.getpid()}.aaaa.rulegen-tmp").symlink_to(victim)
    fs_write.atomic_write(root / "out.txt", "new\n", root=root)
    _intact(victim)
    assert (root / "out.txt").read_text() == "new\n"
    assert sorted(p.name for p in root.iterdir()) == [f".out.txt.{os.getpid()}.aaaa.rulegen-tmp", "out.txt"]


# --- class 3: a target that is itself a link leaving the project --------------------------------

def test_a_baseline_that_is_a_link_outside_is_refused_with_rg747(tmp_path, victim, capsys):
    root = tmp_path / "proj"
    (root / "src").mkdir()
    (root / "src" / "shop.rules.yml").write_text(RULES, encoding="utf-8")
    assert _run(root, "import", "src/shop.rules.yml") == 0
    (root / BASELINE_FILE).unlink()
    (root / BASELINE_FILE).symlink_to(tmp_path / "outside" / "gone.yaml")  # dangling: no baseline yet
    capsys.readouterr()
    assert _run(root, "baseline") == 2
    err = capsys.readouterr().err
    assert (f"RG747 {BASELINE_FILE} cannot be written: {BASELINE_FILE} is a symlink to "
            f"{tmp_path / 'outside' / 'gone.yaml'}, outside the project") in err
    _intact(victim)


def test_new_into_a_rules_folder_linked_outside_is_refused_with_rg747(tmp_path, victim, capsys):
    root = tmp_path / "proj"
    (root / "rules").symlink_to(victim.parent, target_is_directory=True)
    assert _run(root, "new", "shop") == 2
    assert f"RG747 rules/shop.yaml cannot be written: rules is a symlink to {victim.parent}" in capsys.readouterr().err
    _intact(victim)


def test_the_writer_refuses_a_target_outside_the_root(tmp_path, victim):
    root = tmp_path / "proj"
    with pytest.raises(fs_read.RulegenError, match=r"^RG747 .*outside the project"):
        fs_write.atomic_write(root / ".." / "outside" / "bashrc", "x", root=root)
    _intact(victim)


def test_a_work_folder_linked_outside_is_refused_before_anything_is_removed(tmp_path, victim):
    root = tmp_path / "proj"
    (root / ".rulegen").symlink_to(victim.parent, target_is_directory=True)
    with pytest.raises(fs_read.RulegenError, match=r"^RG747 .rulegen/test cannot be written: .rulegen is a symlink"):
        fs_write.fresh_dir(root, ".rulegen/test")
    _intact(victim)


# --- class 6: alias bombs, special files, size ---------------------------------------------------

def _bomb(indent: str = "") -> str:
    lines = [f'{indent}x0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        lines.append(f"{indent}x{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def _cli(root: Path, *args: str, timeout: float = 60, env: dict | None = None) -> tuple[int, str, float, int]:
    """Run rulegen in a child process: (exit code, stderr, seconds, peak RSS of children in KiB)."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "rulegen", "-C", str(root), *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)
    took = time.monotonic() - start
    return proc.returncode, proc.stdout + proc.stderr, took, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def test_an_alias_bomb_in_a_plain_rule_file_is_refused_in_seconds(tmp_path):
    (tmp_path / "bomb.rules.yml").write_text(_bomb() + RULES, encoding="utf-8")
    code, out, took, _ = _cli(tmp_path, "import", "bomb.rules.yml", timeout=60)
    assert code == 1, out
    assert ("bomb.rules.yml:1:1: error RG105 the YAML expands to more than 1000000 values through aliases" in out
            and "raise the limit with RULEGEN_MAX_YAML_VALUES=<values>" in out), out
    assert took < 15, took
    assert not (tmp_path / "rules").exists()


def test_an_alias_bomb_in_a_chart_template_is_refused_by_a_static_import(tmp_path):
    template = ("apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: shop\n"
                "  annotations:\n" + _bomb("    ") + "spec:\n" + "\n".join("  " + ln for ln in RULES.splitlines()) + "\n")
    mini_chart(tmp_path, "enabled: true\n", {"rules.yaml": "{{- if .Values.enabled }}\n" + template + "{{- end }}\n"},
               name="shop")
    code, out, took, _ = _cli(tmp_path, "import", "shop", "--static", timeout=60)
    assert code == 1, out
    assert "shop/templates/rules.yaml:1:1: error RG105 the YAML expands to more than 1000000 values" in out, out
    assert took < 15, took


def test_an_alias_bomb_in_the_baseline_is_refused(tmp_path, capsys):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "shapes.yaml").write_text(SHAPES_SPEC, encoding="utf-8")
    (tmp_path / BASELINE_FILE).write_text(_bomb() + "version: 2\nfindings: []\n", encoding="utf-8")
    assert _run(tmp_path, "validate") == 2
    assert f"RG105 {BASELINE_FILE}: the YAML expands to more than 1000000 values" in capsys.readouterr().err


def test_the_alias_limit_can_be_raised(monkeypatch):
    text = "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nb: [*a, *a, *a]\n"   # 48 values: 1 + 1 + 11 + 1 + 34
    assert yamlbound.problem(text) is None
    monkeypatch.setenv("RULEGEN_MAX_YAML_VALUES", "20")
    assert "more than 20 values" in yamlbound.problem(text)
    monkeypatch.setenv("RULEGEN_MAX_YAML_VALUES", "1000")
    assert yamlbound.problem(text) is None


def test_a_fifo_values_yaml_is_refused_by_a_static_import_without_hanging(tmp_path):
    chart = mini_chart(tmp_path, "", {"rules.yaml": "{{- if .Values.enabled }}\n" + RULES + "{{- end }}\n"},
                       name="shop")
    (chart / "values.yaml").unlink()
    os.mkfifo(chart / "values.yaml")
    code, out, took, _ = _cli(tmp_path, "import", "shop", "--static", timeout=30)
    assert code == 2, out
    assert "RG760 shop/values.yaml is a FIFO (named pipe), not a regular file" in out, out


def test_a_fifo_spec_is_a_finding_not_a_hang(tmp_path):
    (tmp_path / "rules").mkdir()
    os.mkfifo(tmp_path / "rules" / "shop.yaml")
    code, out, _, _ = _cli(tmp_path, "validate", timeout=30)
    assert code == 1, out
    assert "rules/shop.yaml:0:0: error RG760 rules/shop.yaml is a FIFO (named pipe), not a regular file" in out, out


def test_a_values_yaml_over_the_limit_is_refused_before_it_is_read(tmp_path):
    chart = mini_chart(tmp_path, "", {"rules.yaml": "{{- if .Values.enabled }}\n" + RULES + "{{- end }}\n"},
                       name="shop")
    subprocess.run(["truncate", "-s", "3G", str(chart / "values.yaml")], check=True)  # sparse: no disk used
    code, out, took, rss_kib = _cli(tmp_path, "import", "shop", "--static", timeout=60)
    assert code == 2, out
    assert (f"RG756 {chart / 'values.yaml'}: is 3221225472 bytes, more than the limit of 33554432 bytes for this "
            "input file, so it was not read" in out and "RULEGEN_MAX_INPUT_BYTES=<bytes>" in out), out
    assert rss_kib < 400 * 1024, rss_kib  # the 3 GB were never read (reading them needs > 3 GB)


def test_the_reader_never_reads_a_file_over_the_limit(tmp_path, monkeypatch):
    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:
        f.truncate(2 * 1024 ** 3)
    reads = []
    real = os.read
    monkeypatch.setattr(fs_read.os, "read", lambda fd, n: reads.append(n) or real(fd, n))
    with pytest.raises(fs_read.InputRefused) as e:
        fs_read.read_bytes(big, "big.yaml")
    assert e.value.code == "RG756" and reads == []
    assert str(e.value).startswith("RG756 big.yaml: is 2147483648 bytes, more than the limit of 33554432 bytes")


def test_the_size_limit_is_set_by_an_environment_variable(tmp_path, monkeypatch):
    f = tmp_path / "f.yaml"
    f.write_bytes(b"a: 1\n" * 400)  # 2000 bytes
    monkeypatch.setenv("RULEGEN_MAX_INPUT_BYTES", "1000")
    with pytest.raises(fs_read.InputRefused, match="more than the limit of 1000 bytes"):
        fs_read.read_text(f)
    monkeypatch.setenv("RULEGEN_MAX_INPUT_BYTES", "5000")
    assert fs_read.read_text(f) == "a: 1\n" * 400
    monkeypatch.setenv("RULEGEN_MAX_INPUT_BYTES", "lots")
    with pytest.raises(fs_read.RulegenError, match="RULEGEN_MAX_INPUT_BYTES='lots' is not a positive whole number"):
        fs_read.read_text(f)


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path, monkeypatch):
    f = tmp_path / "f.yaml"
    f.write_bytes(b"x" * 100)
    real = os.read
    monkeypatch.setattr(fs_read.os, "read", lambda fd, n: real(fd, n) + b"y" * 200)
    with pytest.raises(fs_read.InputRefused, match="grew while it was read"):
        fs_read.read_bytes(f, limit=150)


def test_the_reader_translates_line_endings_only_when_asked(tmp_path):
    f = tmp_path / "f.md"
    f.write_bytes(b"a\r\nb\rc\n")
    assert fs_read.read_text(f) == "a\nb\nc\n"
    assert fs_read.read_text(f, exact=True) == "a\r\nb\rc\n"


def test_the_package_reads_and_writes_only_through_rulegen_fs():
    """No module outside rulegen/fs opens, reads or writes project files by itself (the
    exceptions write into temporary folders under /tmp made for one tool run, or read
    rulegen's own package files)."""
    allowed = {
        "rulegen/commands/schema.py": {"SCHEMA_PATH.read_text"},     # the package's own schema
        "rulegen/gitops/diff.py": {".write_text("},                     # tempfile.TemporaryDirectory
        "rulegen/gitops/crd.py": {"Path(path).read_text"},              # the pinned CRD in the tools cache
        "rulegen/gitops/admission.py": {".write_text("},                # tempfile.TemporaryDirectory
        "rulegen/validate/checks/promql.py": {".write_text("},          # tempfile.TemporaryDirectory
        "rulegen/tools/helm.py": {".write_text("},                      # tempfile.TemporaryDirectory
        "rulegen/tools/promtool.py": {"junit.read_text", ".write_text("},  # promtool's own report, in a temp folder
        "rulegen/render/helm.py": {"/ name).read_text"},                # rulegen's templates
        "rulegen/render/jinja.py": {"Path(__file__).read_text"},
        "rulegen/render/runbook_index.py": {"/ name).read_text"},
        "rulegen/validate/checks/schema.py": {"SCHEMA_PATH.read_text", "Path(__file__).read_bytes"},
        "rulegen/importer/plan.py": {"SCHEMA_PATH.read_text"},  # the packaged schema, copied into a project
        # the same, by `rulegen new`, and its starter mkdocs.yml (rulegen's own template)
        "rulegen/starter.py": {"SCHEMA_PATH.read_text", '"starter-mkdocs.yml").read_text'},
        "rulegen/codecache.py": {"path.read_bytes", "def write_bytes"},  # the per-user cache
        "rulegen/validate/checks/runbook.py": {"codecache.write_bytes", "codecache.read_bytes"},
        # the rules and private (0600) token/header/CA files of one backtest run, in a
        # tempfile.TemporaryDirectory made for it
        "rulegen/live/backtest.py": {"rules.write_text(", "fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL"},
        "rulegen/live/client.py": {"opener.open(req"},           # an HTTP request, not a file
        # a started program's stdin/stdout/stderr files, in the tempfile.TemporaryDirectory made
        # for it (process.Started: files, not pipes, so the program never waits for rulegen)
        "rulegen/tools/process.py": {'(home / "stdin").write_text(', 'open(home / "stdout"', 'open(home / "stderr"',
                                     'open(home / "stdin", "rb")'},
    }
    import re
    pat = re.compile(r"(?<!fs_read)\.(read_text|read_bytes|write_text|write_bytes)\(|\bopen\(|os\.replace\(|shutil\.copy|"
                     r"\.tmp\b|rulegen-new|mkstemp")
    found = []
    for f in sorted((REPO / "rulegen").rglob("*.py")):
        rel = f.relative_to(REPO).as_posix()
        if rel.startswith("rulegen/fs/"):
            continue
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if pat.search(code) and not any(a in code for a in allowed.get(rel, ())) \
                    and "tarfile.open" not in code and "os.fdopen" not in code and "def " not in code:
                found.append(f"{rel}:{n}: {line.strip()}")
    assert found == []


def test_copying_a_chart_for_rulegen_test_refuses_a_device_and_skips_tests(tmp_path):
    src = tmp_path / "chart"
    (src / "templates").mkdir(parents=True)
    (src / "tests").mkdir()
    (src / "Chart.yaml").write_text("name: c\n")
    (src / "tests" / "x.test.yaml").write_text("tests: []\n")
    fs_write.copy_tree(src, tmp_path / "copy", skip=("tests",))
    assert sorted(p.relative_to(tmp_path / "copy").as_posix() for p in (tmp_path / "copy").rglob("*")) == \
        ["Chart.yaml", "templates"]
    (src / "templates" / "zero.yaml").symlink_to("/dev/zero")  # copytree copied this forever
    with pytest.raises(fs_read.InputRefused, match="zero.yaml: is a character device"):
        fs_write.copy_tree(src, tmp_path / "copy2", skip=("tests",))
