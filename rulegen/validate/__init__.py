"""Validation: pipeline step 2 of 4 (load -> validate -> render -> test).

Checks live in :mod:`rulegen.validate.checks`, one module per family (in the manner of
yamllint's rules and pint's checks). Each module has a docstring that documents its codes and
exposes either ``check_file(lf, ctx)`` (runs on raw data, before the model exists) or
``check_spec(spec, ctx)`` (runs on one built :class:`~rulegen.spec.Spec`) or
``check_project(specs, ctx)`` (runs across all specs), each yielding
:class:`~rulegen.findings.Finding` objects. ``ctx.partial`` holds the specs
:mod:`rulegen.validate.partial` builds without the alerts that fail the schema (checked, never
rendered): only project checks that cannot read a left-out alert as a dangling reference look
at them (the recording-rule flow, :mod:`rulegen.validate.checks.flow`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..config import Config
from ..findings import Finding, has_errors
from ..spec import LoadedFile, Spec, build_spec
from ..spec.owners import add_owner_label
from .checks import REGISTRY


@dataclass
class Context:
    """What checks may read besides the spec: the project config and root, and ``reference``:
    the project's other specs when only some files are validated (``rulegen validate
    rules/x.yaml``), built for cross-references (recording rules, related alerts) and never
    reported on. ``at_ref``: the specs are a Git ref's (``rulegen diff``, ``check --base``), so
    checks comparing them with a file of the working tree (the Alertmanager configuration) skip
    that comparison, which would judge the base by the pull request's file."""

    config: Config = field(default_factory=Config)
    root: Path = Path(".")
    reference: list = field(default_factory=list)
    at_ref: bool = False
    #: the rest of each spec whose schema errors all lie in alerts (:mod:`.partial`), set for
    #: the project checks (see the module docstring)
    partial: list = field(default_factory=list)


@dataclass
class Result:
    """Outcome of :func:`validate`: the specs that could be built and every finding."""

    specs: list[Spec]
    findings: list[Finding]

    @property
    def ok(self) -> bool:
        return not has_errors(self.findings)


def validate(files: list[LoadedFile], ctx: Context | None = None) -> Result:
    """Run every check on ``files``.

    A file whose YAML or schema is broken yields its findings and no spec; the other files are
    still checked. When only alerts of a file fail the schema, the rest of its spec is checked
    in the same run (:mod:`rulegen.validate.partial`). Findings are filtered and re-graded by ``ctx.config`` and sorted.
    """
    ctx = ctx or Context()
    return finish([check_file(lf, ctx) for lf in files], ctx)


def check_file(lf: LoadedFile, ctx: Context) -> tuple[list[Finding], Spec | None, Spec | None]:
    """The per-file part of :func:`validate`: the findings of one loaded file (loader, file
    and spec checks), its spec (None when it could not be built) and, when only alerts fail
    the schema, the rest of the spec that was checked (:func:`rulegen.validate.partial.partial_spec`),
    else None."""
    findings: list[Finding] = list(lf.findings)
    if lf.data is None:
        return findings, None, None
    file_findings = []
    for mod in REGISTRY:
        fn = getattr(mod, "check_file", None)
        if fn is not None:
            file_findings.extend(fn(lf, ctx))
    findings.extend(file_findings)
    if any(f.is_error and f.code.startswith("RG2") for f in file_findings):
        # the model needs schema-valid data (YAML traps, RG108, do not block it); when only
        # alerts fail the schema, the rest of the spec is checked in the same run, but not
        # returned (not rendered, not seen by project checks): see rulegen.validate.partial
        from .partial import partial_spec
        rest = partial_spec(lf)
        if rest is not None:
            for mod in REGISTRY:
                fn = getattr(mod, "check_spec", None)
                if fn is not None:
                    findings.extend(fn(rest, ctx))
        return findings, None, rest
    spec = build_spec(lf)
    add_owner_label(spec, ctx.config.owners)  # the label the chart renders: every check sees it
    for mod in REGISTRY:
        fn = getattr(mod, "check_spec", None)
        if fn is not None:
            findings.extend(fn(spec, ctx))
    return findings, spec, None


def reference_spec(lf: LoadedFile, ctx: Context) -> Spec | None:
    """The spec of ``lf`` for :attr:`Context.reference`: built when the file checks find no
    schema error (as :func:`check_file` decides), else None; its findings are dropped."""
    if lf.data is None:
        return None
    for mod in REGISTRY:
        fn = getattr(mod, "check_file", None)
        if fn is not None and any(f.is_error and f.code.startswith("RG2") for f in fn(lf, ctx)):
            return None
    spec = build_spec(lf)
    add_owner_label(spec, ctx.config.owners)
    return spec


def finish(per_file: list[tuple[list[Finding], Spec | None, Spec | None]], ctx: Context) -> Result:
    """The rest of :func:`validate` once :func:`check_file` ran on every file, in file order:
    the project checks (and those of partly checked specs), then the config."""
    findings: list[Finding] = []
    specs: list[Spec] = []
    partials: list[Spec] = []
    for file_findings, spec, partial in per_file:
        findings.extend(file_findings)
        if spec is not None:
            specs.append(spec)
        if partial is not None:
            partials.append(partial)
    ctx.partial = partials
    for mod in REGISTRY:
        fn = getattr(mod, "check_project", None)
        if fn is not None:
            findings.extend(fn(specs, ctx))
    return Result(specs=specs, findings=ctx.config.apply(findings))


def validate_texts(texts: dict[str, str], config: Config | None = None) -> Result:
    """Validate specs given as text, ``{display path: YAML text}``, without touching the disk
    (tests, the corpus benchmark, editors). Same checks and config handling as
    :func:`validate`; never raises for bad content."""
    from ..spec import load_text
    files = [load_text(text, path) for path, text in texts.items()]
    return validate(files, Context(config=config or Config()))

