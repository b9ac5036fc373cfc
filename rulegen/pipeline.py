"""The steps every command shares: load and validate specs, then plan the outputs.

Commands in :mod:`rulegen.commands` call these and decide what to print; nothing here prints.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import baseline
from .config import Config, load_config
from .fs.containment import describe, tree_problems
from .findings import Finding, RulegenError, Severity, has_errors
from .parallel import split_map
from .spec import LoadedFile, Spec, find_spec_files, load_file, shown_path
from .validate import Context, check_file, finish, reference_spec

if TYPE_CHECKING:
    from .render import Output

DEFAULT_SPEC_DIR = "rules"


@dataclass
class Loaded:
    """Validated specs of a project and the findings about them."""

    root: Path
    config: Config
    specs: list[Spec]
    findings: list[Finding]

    @property
    def ok(self) -> bool:
        return not has_errors(self.findings)


def load_project(root: Path, paths: list[str] | None = None, meanwhile=None,
                 stale_baseline_is_error: bool = False, use_baseline: bool = True) -> Loaded:
    """Load and validate the specs under ``paths`` (default ``rules/``) of the project at ``root``.

    The project's baseline (:mod:`rulegen.baseline`) makes baselined policy findings warnings;
    an entry that matches nothing is RG811, an error when ``stale_baseline_is_error`` (``check``)
    and a warning otherwise. ``use_baseline=False`` gives the findings as they are (for
    ``rulegen baseline``).

    ``meanwhile``: run by this process while a forked child loads its share of a large project
    (see :func:`rulegen.parallel.split_map`); :func:`warm_render` for commands that render next.

    Raises:
        RulegenError: no spec found, or the project config or baseline file is invalid.
    """
    config = load_config(root)
    if not paths and not (root / DEFAULT_SPEC_DIR).is_dir():
        raise RulegenError("no rules/ folder here: run rulegen from the project root, "
                           "or name the spec files or folders to use")
    targets = [Path(p) if Path(p).is_absolute() else root / p for p in (paths or [DEFAULT_SPEC_DIR])]
    top = root.resolve()
    for t in targets:
        if not t.resolve().is_relative_to(top):
            # outputs are written under root and name their spec: a spec from elsewhere would
            # put an absolute, machine-specific path into generated files
            raise RulegenError(f"{t} is outside the project folder {top}; run rulegen in (or -C) the "
                               "project that holds the spec")
    ctx = Context(config=config, root=root)
    files = find_spec_files(targets)
    if paths:
        ctx.reference = _reference_specs(root, files, ctx)

    seen: dict = {}  # the project's real path and folders, looked at once a run (load_contained)

    def one(f: Path):
        return check_file(load_contained(f, root, seen), ctx)

    # validate(load_paths(targets, root), ctx), each file loaded and checked on two cores
    # when there are many (rulegen.parallel); same findings, same order. The first file is
    # checked before the fork: what the checks import or prepare on first use (the schema's
    # compiled validator, ...) is then done once, and the forked child inherits it
    first = [one(f) for f in files[:1]]
    result = finish(first + split_map(one, files[1:], meanwhile), ctx)
    findings = result.findings
    if use_baseline:
        app_of = {s.file: s.app for s in result.specs}
        findings = baseline.apply(findings, baseline.load(root), app_of, stale_baseline_is_error,
                                  None if not paths else {s.app for s in result.specs})
    return Loaded(root=root, config=config, specs=result.specs, findings=findings)


def load_contained(f: Path, root: Path, seen: dict | None = None) -> LoadedFile:
    """:func:`rulegen.spec.load_file` of spec file ``f`` of the project at ``root``, unless ``f``
    is a symlink leading outside the project or a special file: then nothing is read and the
    file holds one finding, RG742 or RG760 (see :mod:`rulegen.validate.checks.paths`).
    ``seen``: a dict shared by the calls of one run (see
    :func:`rulegen.fs.containment.escaping_link`)."""
    seen = {} if seen is None else seen
    rel = Path(os.path.relpath(f, root)).as_posix()
    problems = tree_problems(root, rel, limit=1, seen=seen)
    shown = shown_path(f, root, seen[""])  # the project's real path, found by tree_problems
    if problems:
        code, path, detail = problems[0]
        return LoadedFile(path=rel, text="", findings=[Finding(
            rel, 0, 0, code, Severity.ERROR, f"{describe(code, path, detail)[6:]}; the spec was not read: "
            "make it a regular file of the project")])
    return load_file(f, shown)


def _reference_specs(root: Path, files: list[Path], ctx: Context) -> list[Spec]:
    """The specs under ``rules/`` of the project at ``root`` other than ``files`` (those asked
    for), for the checks' cross-references when only some files are validated: an alert of
    ``rules/a.yaml`` may read a recording rule of ``rules/b.yaml``. Files that do not load or
    fail the schema are left out; nothing is reported about any of them."""
    folder = root / DEFAULT_SPEC_DIR
    if not folder.is_dir():
        return []
    asked = {f.resolve() for f in files}
    try:
        others = [f for f in find_spec_files([folder]) if f.resolve() not in asked]
    except RulegenError:
        return []
    out = []
    for f in others:
        spec = reference_spec(load_contained(f, root), ctx)
        if spec is not None:
            out.append(spec)
    return out


def warm_render() -> None:
    """Import what rendering and the link check use and compile the templates (about a quarter
    of a second), so that it overlaps loading, and a child forked to render inherits it."""
    import markdown.extensions.toc  # noqa: F401  (the link check's slugify; anchor() of odd names)
    from .outputs import links  # noqa: F401
    from .render import helm, jinja, promtool_tests, runbook, site, values  # noqa: F401
    env = jinja.environment()
    for name in ("runbook_page.md.j2", "home.md.j2", "alerts_index.md.j2"):
        env.get_template(name)


def plan_project(loaded: Loaded, fmt: str = "helm") -> tuple[list[Output], list[Finding]]:
    """Outputs of a validated project (:func:`rulegen.render.plan`) and the findings about
    them: those that could not be made and what the output stage reports on every plan
    (:func:`rulegen.outputs.check_plan`), passed through the project config like validation
    findings."""
    from .outputs import check_plan
    from .render import plan  # jinja2, markdown, ruamel: only the commands that render pay for them
    from .render.safe import html_policy
    with html_policy(loaded.config.allow_html):  # raw HTML in spec Markdown: escaped, or cleaned by nh3
        outputs, findings = plan(loaded.specs, loaded.root, fmt, loaded.config)
    findings += check_plan(outputs, loaded.specs, loaded.root, fmt)
    return outputs, loaded.config.apply(findings)
