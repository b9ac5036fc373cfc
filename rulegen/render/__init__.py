"""Rendering: pipeline step 3 of 5 (load -> validate -> render -> check outputs -> test).

:func:`plan` turns validated specs into the full list of output files, in memory, without
touching the disk: ``build`` writes them (:mod:`rulegen.gitops.write`), ``check`` compares them
(:mod:`rulegen.gitops.check`); what they say (knobs, links, site settings) is checked by the
next stage, :mod:`rulegen.outputs`. One module per output:

* :mod:`.helm` the chart's rules file and its Helm-gated PrometheusRule template,
* :mod:`.library` the project's chart library (``charts/rulegen-library``) and each chart's
  symlink to it,
* :mod:`.values` the chart's ``values.yaml`` keys and ``values.schema.json``,
* :mod:`.promtool_tests` promtool test files,
* :mod:`.runbook` runbook pages, home page and alert index (:mod:`.notes`: their team notes),
* :mod:`.site` the ``nav`` of ``mkdocs.yml``,
* :mod:`.plain` plain Prometheus rule files (``--format rules``),
* :mod:`.sums` one sum file per spec (and for the site and the chart library): what rulegen
  wrote, so a hand edit is refused (:func:`rulegen.gitops.write.compare`).

Codes:

* ``RG701`` a shared chart file (``values.yaml``, ``values.schema.json``) cannot be updated: it
  is not valid YAML/JSON (reported at the parser's position), not UTF-8, not a regular file,
  or has a shape rulegen cannot extend safely (the message says which). Fix the file by hand
  and rerun ``rulegen build``. Bad: a ``values.yaml`` holding ``monitoring: [enabled``; good:
  ``monitoring: {enabled: false}``.
* ``RG772`` (warning) a chart's ``Chart.yaml`` does not declare the chart library
  (``charts/rulegen-library``, the chart's subchart through a symlink) in its
  ``dependencies``, and rulegen cannot add it: the file is no YAML mapping, or its
  ``dependencies`` is not a block list. ``helm template`` and Argo CD render the chart, but
  ``helm lint`` fails. Bad: ``dependencies: [{name: redis}]``; good: a block list, to which
  ``build`` adds ``- name: rulegen-library`` with ``version: 3.0.0``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import Config, load_config
from ..findings import Finding, RulegenError, Severity
from ..fs import read as fs_read
from ..fs import yamlbound
from . import ownership
from ..parallel import split_map
from ..spec import Spec

RUNBOOK_DIR = "runbooks"
#: The site's own stylesheet and script, written under ``runbooks/assets/`` (listed in
#: mkdocs.yml's ``extra_css`` and ``extra_javascript``; see docs/runbook-site.md).
ASSETS_DIR = "assets"
ASSETS = ("rulegen.css", "rulegen.js")


@dataclass(frozen=True)
class Output:
    """One file ``build`` writes.

    Attributes:
        path: relative to the project root, POSIX separators.
        content: the whole new text.
        owned: True for files rulegen generates whole (they carry the generated-file notice, are
            listed in their source's sum file, :mod:`.sums`, and hand edits are refused); False for files people share with rulegen
            (``values.yaml``, ``values.schema.json``, ``mkdocs.yml``), which are merged.
        source: the spec file it comes from, or ``""`` for site-wide files
            (:data:`rulegen.render.library.SOURCE` for the chart library's files); a sum file's
            source is the source whose files it lists.
        link: True for a symlink (the link of a chart to the chart library,
            :mod:`rulegen.render.library`): ``content`` is the link's text, its target.
    """

    path: str
    content: str
    owned: bool
    source: str = ""
    link: bool = False


class SharedFileError(ValueError):
    """A shared file (values.yaml, values.schema.json, mkdocs.yml) that is not UTF-8 text or
    not a regular file: rulegen merges into it, so it must not be taken for missing and
    overwritten."""


def _read(root: Path, rel: str, exact: bool = False) -> str | None:
    r"""Text of ``rel``, or None when missing (or, for a generated page, not UTF-8).

    ``exact`` (shared files: ``values.yaml``, ``values.schema.json``, ``mkdocs.yml``): no
    newline translation, so a CRLF file reaches the merge as CRLF and keeps its line endings
    (the merged text is written back as is). Otherwise universal newlines: a generated page
    is regenerated with ``\n`` endings whatever the checkout did to it, and only its team
    notes are carried over.

    Read through :func:`rulegen.fs.read.read_text` (size checked before reading); a YAML
    file's alias expansion is bounded (:mod:`rulegen.fs.yamlbound`).

    Raises:
        SharedFileError: ``exact`` and the file is not UTF-8 or not a regular file (a shared
            file holds people's keys).
        rulegen.fs.read.InputRefused: the file is over the input size limit (``RG756``), or
            YAML whose aliases expand too far (``RG105``).
    """
    p = root / rel
    try:
        if not fs_read.is_regular(p):
            if exact and (p.exists() or p.is_symlink()):
                raise SharedFileError(f"{rel} exists but is not a regular file; remove or rename it")
            return None
        text = fs_read.read_text(p, rel, exact=exact)
        if rel.endswith((".yaml", ".yml")):
            yamlbound.check_text(text, rel)
        return text
    except UnicodeDecodeError as e:
        if exact:
            raise SharedFileError(f"{rel} is not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset "
                          f"{e.start}); save it as UTF-8") from None
        return None
    except OSError:
        return None


def _headers(style: str, source: str) -> list[str]:
    return [ownership.comment(style, ownership.notice(source))]


def plan(specs: list[Spec], root: Path, fmt: str = "helm",
         config: Config | None = None) -> tuple[list[Output], list[Finding]]:
    """Every output file for ``specs``, sorted by path, plus findings about outputs that could
    not be made (``RG701``: a shared file is not valid YAML/JSON; ``RG720``, ``RG721``: team
    notes moved or made safe, :mod:`.notes`). What the outputs say is checked afterwards, by
    :mod:`rulegen.outputs`.

    ``fmt`` is ``helm`` (charts) or ``rules`` (plain Prometheus rule files under ``rules-out/``).
    ``config``: the project's loaded configuration (:class:`rulegen.config.Config`: the allowed
    severities, which the values schema accepts in ``customRules.<Alert>.severity``, the
    PrometheusRule labels a new chart's values.yaml starts with, ``charts.rule_selector_labels``,
    and the base URLs of the runbook site's query links); None reads ``.rulegen.yaml`` under ``root``
    (for callers that have no loaded project).

    Raises:
        RulegenError: ``mkdocs.yml`` cannot be read.
    """
    # imported here, not at module level: validation imports rulegen.render.helm and
    # rulegen.render.promtool_tests for a helper each, and should not pay for ruamel and Jinja
    from . import library, runbook, site
    cfg = config if config is not None else load_config(root)
    ordered = sorted(specs, key=lambda s: s.app)
    in_chart: dict[str, list[Spec]] = {}
    for spec in ordered:
        in_chart.setdefault(spec.chart.path, []).append(spec)
    from . import routing_md
    job = _Job(specs, root, fmt, site.site_url(root), cfg.severities, in_chart, cfg.rule_selector_labels,
               routing_md.page_lines(specs, root, cfg), cfg)
    outs: list[Output] = []
    findings: list[Finding] = []
    # Shared chart files by path. Several specs may render into one chart (each its own
    # template): each merges into the text the previous one planned, not into the disk's,
    # or the last spec's merge would drop the others' keys and build/check would never settle.
    shared: dict[str, Output] = {}

    def shared_text(_root, path: str, exact: bool) -> str | None:
        return shared[path].content if path in shared else _read(root, path, exact=True)

    planned_chart_files: set[str] = set()
    shared_templates: list[tuple[str, str]] = []  # (spec file, template another spec's output holds)
    for spec, (rules, tfile, (page, page_findings), chart_files) in zip(ordered, split_map(job.per_spec, ordered)):
        src = spec.file
        if fmt == "rules":
            outs.append(Output(f"rules-out/{spec.app}.rules.yaml", rules, True, src))
        else:
            for path, text in rules:  # the rules file, its metadata file and the template
                if path not in planned_chart_files:  # a template several specs share: once
                    planned_chart_files.add(path)
                    outs.append(Output(path, text, True, src))
                else:  # ... and listed in the sum file of each
                    shared_templates.append((src, path))
            link = library.link_path(spec.chart.path)
            if link not in planned_chart_files:  # the chart's symlink to the chart library
                planned_chart_files.add(link)
                outs.append(Output(link, library.link_target(spec.chart.path), True, src, link=True))
            if chart_files is None:  # several specs in this chart: each merges into the text planned before it
                chart_files = job.values_files(spec, shared_text)
            for path, text, finding in chart_files:
                if finding is not None:
                    findings.append(finding)
                else:
                    shared[path] = Output(path, text, False, src)
            cpath = f"{spec.chart.path}/Chart.yaml"
            if cpath not in shared:
                _chart_yaml(root, cpath, spec, src, shared, findings)
        if tfile is not None:
            outs.append(Output(test_file_path(spec), tfile, True, src))
        findings.extend(page_findings)
        outs.append(Output(f"{RUNBOOK_DIR}/{spec.app}.md", page, True, src))
    outs.extend(shared.values())
    if specs and fmt != "rules":  # the chart library, once per project
        outs.extend(Output(path, text, True, library.SOURCE) for path, text in library.files())
    if specs:
        outs.extend(_site_files(specs, root, findings, cfg))
    from . import sums
    outs.extend(Output(path, text, True, source)
                for path, text, source in sums.outputs(outs, shared_templates, {s.file: s.app for s in specs}))
    return sorted(outs, key=lambda o: o.path), findings


def _chart_yaml(root: Path, cpath: str, spec: Spec, src: str, shared: dict, findings: list) -> None:
    """Plan the chart's ``Chart.yaml``: a new one (:func:`rulegen.render.site.chart_yaml`) for a
    new chart; for every chart, the chart library declared in its ``dependencies`` when it is
    not (:func:`rulegen.render.library.declare`, for ``helm lint``), else nothing; RG772
    when rulegen cannot add it."""
    from . import library, site
    try:
        existing = _read(root, cpath, exact=True) if (root / cpath).exists() or (root / cpath).is_symlink() else None
    except (SharedFileError, fs_read.InputRefused):
        existing, text = "", None
    else:
        text = library.declare(site.chart_yaml(spec) if existing is None else existing)
    if text is None:
        findings.append(Finding(cpath, 1, 1, "RG772", Severity.WARNING,
                                f"{cpath} does not declare the chart library among its dependencies, and rulegen "
                                "cannot add it (not a YAML mapping, or `dependencies` is not a block list): "
                                "`helm template` renders, but `helm lint` fails (\"chart metadata is missing these "
                                f"dependencies\"); add `- name: {library.NAME}` with `version: {library.VERSION}` "
                                "to its dependencies (no repository)"))
    elif text != existing:
        shared[cpath] = Output(cpath, text, False, src)


@dataclass(frozen=True)
class _Job:
    """What :func:`plan` renders every spec with: the project's specs, root and output format,
    mkdocs' ``site_url``, the allowed severities, the specs of
    each chart (by chart path, in app order) and the rule-selector labels of a new chart."""

    specs: list
    root: Path
    fmt: str
    site_url: str
    severities: tuple
    in_chart: dict
    selector_labels: dict | None = None
    routing: dict | None = None  # app -> alert -> routing line (rulegen.render.routing_md)
    #: the project's configuration (its ``prometheus_scopes`` shown on the pages)
    config: object = None

    def per_spec(self, spec: Spec):
        """What each spec renders on its own, independent of the shared files planned before
        it: its rule file, promtool tests, runbook page (with its findings) and, when
        no other spec renders into its chart, its values files (the bulk of the work, so it
        runs on two cores for a large project; see rulegen.parallel)."""
        from . import helm, notes, promtool_tests, runbook
        root, site_url, src = self.root, self.site_url, spec.file
        if self.fmt == "rules":
            from . import plain
            rules = plain.render_rules_file(spec, site_url, _headers("yaml", src))
        else:
            rules = helm.render_chart(spec, root, site_url, _headers("yaml", src))
        tests = promtool_tests.render_test_file(spec, site_url, _headers("yaml", src))
        page = runbook.render_page(spec, self.specs, _headers("markdown", src),
                                   helm.uses_fullname(spec, root), helm.name_suffix(spec),
                                   (self.routing or {}).get(spec.app), site_url, self.config)
        pp = f"{RUNBOOK_DIR}/{spec.app}.md"
        page_findings: list[Finding] = []
        page = notes.page(page, _read(root, pp), pp, page_findings)
        # the chart's values files, when no other spec renders into the chart: merged into the
        # disk's text as the loop of plan would, but here, on two cores
        alone = len(self.in_chart[spec.chart.path]) == 1
        chart_files = self.values_files(spec, _read) if self.fmt != "rules" and alone else None
        return rules, tests, (page, page_findings), chart_files

    def values_files(self, spec: Spec, text_of) -> list[tuple[str, str | None, Finding | None]]:
        """(path, new text or None, finding or None) of the spec's values.yaml and
        values.schema.json, each merged into ``text_of(root, path, exact=True)``."""
        from . import values
        root, site_url = self.root, self.site_url
        vpath = f"{spec.chart.path}/values.yaml"
        out = []
        try:
            out.append((vpath, values.render_values(spec, text_of(root, vpath, exact=True), site_url,
                                                      self.selector_labels), None))
        except Exception as e:  # ruamel errors: report, do not crash
            mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
            line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
            out.append((vpath, None, Finding(vpath, line, col, "RG701", Severity.ERROR,
                                             f"cannot update values.yaml: {str(e).splitlines()[0]}; "
                                             "fix the YAML by hand")))
        spath = f"{spec.chart.path}/values.schema.json"
        try:
            out.append((spath, values.render_values_schema(spec, text_of(root, spath, exact=True),
                                                           self.in_chart[spec.chart.path], self.severities), None))
        except ValueError as e:
            out.append((spath, None, Finding(spath, 1, 1, "RG701", Severity.ERROR,
                                             f"cannot update values.schema.json: {e}; fix the JSON by hand")))
        return out


def _site_files(specs: list[Spec], root: Path, findings: list[Finding], cfg) -> list[Output]:
    """The site-wide files: home page, the site's stylesheet and script (with the base URLs of
    its PromQL links, ``cfg.prometheus_url``/``grafana_url``), alert index and the ``nav`` of
    ``mkdocs.yml`` (when there is one); notes findings of the pages go to ``findings``.
    ``cfg``: the project's :class:`rulegen.config.Config` (its default owners fill the index).

    Raises:
        RulegenError: ``mkdocs.yml`` cannot be read.
    """
    from . import notes, runbook_index, site, values
    outs = []
    home = f"{RUNBOOK_DIR}/index.md"
    outs.append(Output(home, notes.page(runbook_index.render_home(specs, _headers("markdown", "rules/")), _read(root, home),
                                        home, findings, "home"),
                       True))
    for name in ASSETS:  # the site's stylesheet and script (mkdocs.yml: extra_css, extra_javascript)
        outs.append(Output(f"{RUNBOOK_DIR}/{ASSETS_DIR}/{name}", runbook_index.render_asset(
            name, _headers("css", "rules/"), specs, (cfg.prometheus_url, cfg.grafana_url)), True))
    idx = f"{RUNBOOK_DIR}/alerts.md"
    outs.append(Output(idx, notes.page(runbook_index.render_alert_index(specs, _headers("markdown", "rules/"), cfg.owners),
                                       _read(root, idx), idx, findings), True))
    try:
        mk_text = _read(root, "mkdocs.yml", exact=True)
    except SharedFileError as e:
        raise RulegenError(str(e)) from None
    # The nav is rewritten through ruamel.yaml, which writes "\n": give it LF text and put
    # the file's own line ending back.
    lf_text = None if mk_text is None else mk_text.replace("\r\n", "\n")
    mk = site.render_mkdocs(specs, lf_text, root)
    if mk is not None and mk == lf_text:
        mk = mk_text  # nav current: the file as it is, mixed line endings and all
    elif mk is not None and values.line_ending(mk_text) == "\r\n":
        mk = mk.replace("\r\n", "\n").replace("\n", "\r\n")
    if mk is not None:
        outs.append(Output("mkdocs.yml", mk, False))
    return outs


def test_file_path(spec: Spec) -> str:
    """Where a spec's promtool test file is written: ``<chart>/tests/<app>.test.yaml``, so it
    travels with the chart in review (Helm renders only ``templates/``)."""
    return f"{spec.chart.path}/tests/{spec.app}.test.yaml"


__all__ = ["Output", "plan", "test_file_path", "RulegenError"]
