"""Rendering: pipeline step 3 of 4 (load -> validate -> render -> test).

:func:`plan` turns validated specs into the full list of output files, in memory, without
touching the disk: ``build`` writes them (:mod:`rulegen.gitops.write`), ``check`` compares them
(:mod:`rulegen.gitops.check`). One module per output:

* :mod:`.helm` the chart's rules file and its Helm-gated PrometheusRule template,
* :mod:`.values` the chart's ``values.yaml`` keys and ``values.schema.json``,
* :mod:`.promtool_tests` promtool test files,
* :mod:`.runbook` runbook pages, home page and alert index,
* :mod:`.site` the ``nav`` of ``mkdocs.yml``,
* :mod:`.plain` plain Prometheus rule files (``--format rules``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from ..findings import Finding, RulegenError, Severity
from ..fs import read as fs_read
from ..fs import yamlbound
from ..gitops import ownership
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
        owned: True for files rulegen generates whole (they carry the generated-file notice and
            a checksum, and hand edits are refused); False for files people share with rulegen
            (``values.yaml``, ``values.schema.json``, ``mkdocs.yml``), which are merged.
        source: the spec file it comes from, or ``""`` for site-wide files.
    """

    path: str
    content: str
    owned: bool
    source: str = ""


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
    return [ownership.comment(style, ownership.notice(source)), ownership.checksum_line(style)]


def _page(text: str, existing: str | None, path: str, findings: list[Finding],
          catch_all: str = "page") -> str:
    """Seal a generated page and carry the team notes of ``existing`` over; notes whose
    alert is gone move to the ``catch_all`` slot and are reported (``RG720``, warning)."""
    sealed = ownership.seal(text)
    if existing:
        kept = ownership.notes(existing)
        if kept:
            kept = _safe_notes(kept, existing, path, findings)
            empty = sealed
            sealed, moved = ownership.fill_notes(sealed, kept, catch_all)
            for name in moved:
                findings.append(Finding(path, 1, 1, "RG720", Severity.WARNING,
                                        f"team notes of `{name}`, which the page no longer has (renamed or "
                                        f"removed alert?), were moved to the `{catch_all}` notes slot; "
                                        "move them where they belong"))
            sealed = _page_check(sealed, empty, kept, catch_all, path, findings)
    return sealed


def _slot_label(name: str) -> str:
    return repr(name) if name in ("page", "home") else f"of alert {name!r}"


def _safe_notes(kept: dict[str, str], existing: str, path: str, findings: list[Finding]) -> dict[str, str]:
    """``kept`` notes made safe (:func:`rulegen.render.safe.notes_markdown`); each note the
    rewrite changes is reported (``RG721``, warning) at its line of the page on disk."""
    from . import safe
    at = ownership.notes_at(existing)
    out = {}
    for name, body in kept.items():
        made = safe.notes_markdown(body)
        if made != body:
            old, new = body.split("\n"), made.split("\n")
            first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)) - 1)
            what = safe.notes_problems(body)
            findings.append(Finding(
                path, at.get(name, 1) + max(first, 0), 1, "RG721", Severity.WARNING,
                f"team notes {_slot_label(name)} hold markup the site must not run or read as markup ("
                + ("; ".join(what[:3]) if what else "characters that would add attributes or open code")
                + "): the note's markup will be escaped, shown as the text it is (links with other "
                "schemes than http, https and mailto as text); `rulegen build` rewrites the note so; "
                "write plain Markdown"))
        out[name] = made
    return out


def _page_check(sealed: str, empty: str, kept: dict[str, str], catch_all: str, path: str,
                findings: list[Finding]) -> str:
    """``sealed`` (the page with its notes), or, when the whole page renders something
    :func:`rulegen.render.safe.html_problems` refuses that the page without notes does not
    (a note changing how the page around it reads), the page with its notes as plain text."""
    from . import safe
    if not any(v.strip() for v in kept.values()):
        return sealed
    if not safe.html_problems(safe.to_html(sealed)) or safe.html_problems(safe.to_html(empty)):
        return sealed
    plain = {k: safe.inert(v) if v.strip() else v for k, v in kept.items()}
    findings.append(Finding(path, 1, 1, "RG721", Severity.WARNING,
                            "team notes change how the page around them reads ("
                            + "; ".join(safe.html_problems(safe.to_html(sealed))[:3])
                            + "): every note of the page will be escaped, shown as plain text; write "
                            "plain Markdown"))
    return ownership.fill_notes(empty, plain, catch_all)[0]


def _knob_hint(msg: str, values_key: str, rule_names: set, group_names: set, slo_names: set = frozenset()) -> str:
    """An RG730 message of :func:`values.unknown_knobs` about a key under
    ``<values_key>.disabled``, ``.customRules``, ``.groups`` or ``.slos`` naming no rule,
    group or SLO, with "did you mean" the closest name of the chart added; other messages as
    they are."""
    from ..hints import closest
    for part, known in (("disabled", rule_names), ("customRules", rule_names), ("groups", group_names),
                        ("slos", slo_names)):
        prefix = f"{values_key}.{part}."
        if msg.startswith(prefix) and " names no " in msg and "(renamed or removed?)" in msg:
            near = closest(msg[len(prefix):msg.index(" names no ")], known)
            if near:
                return msg.replace("(renamed or removed?)", f"(renamed or removed? did you mean {near}?)", 1)
    return msg


def plan(specs: list[Spec], root: Path, fmt: str = "helm",
         link_ids: bool = False, severities: tuple[str, ...] | None = None,
         config=None) -> tuple[list[Output], list[Finding]]:
    """Every output file for ``specs``, sorted by path, plus findings about outputs that could
    not be made (``RG701``: a shared file is not valid YAML/JSON).

    ``fmt`` is ``helm`` (charts) or ``rules`` (plain Prometheus rule files under ``rules-out/``).
    ``link_ids``: also read each generated runbook page's ids and links for the link check
    that follows (``check``), with the rest of the per-spec work. ``severities``: the
    project's allowed severities (``conventions.severities``), which the values schema
    accepts in ``customRules.<Alert>.severity``; None reads them from ``.rulegen.yaml``.
    ``config``: the project's :class:`rulegen.config.Config` when the caller has loaded it
    (None: read from ``.rulegen.yaml``).

    Raises:
        RulegenError: ``mkdocs.yml`` cannot be read.
    """
    # imported here, not at module level: validation imports rulegen.render.helm and
    # rulegen.render.promtool_tests for a helper each, and should not pay for ruamel and Jinja
    from ..config import load_config
    from . import helm, promtool_tests, runbook, site, values
    site_url = site.site_url(root)
    cfg = load_config(root) if config is None else config
    if severities is None:
        severities = cfg.severities
    selector_labels = cfg.rule_selector_labels
    query_links = runbook.QueryLinks(cfg.prometheus_url, cfg.grafana_url)
    outs: list[Output] = []
    findings: list[Finding] = []
    # Shared chart files by path. Several specs may render into one chart (each its own
    # template): each merges into the text the previous one planned, not into the disk's,
    # or the last spec's merge would drop the others' keys and build/check would never settle.
    shared: dict[str, Output] = {}

    def shared_text(path: str) -> str | None:
        return shared[path].content if path in shared else _read(root, path, exact=True)

    def per_spec(spec: Spec):
        """What each spec renders on its own, independent of the shared files planned before
        it: its rule file, promtool tests, sealed runbook page (with its findings) and, when
        no other spec renders into its chart, its values files (the bulk of the work, so it
        runs on two cores for a large project; see rulegen.parallel)."""
        src = spec.file
        if fmt == "rules":
            from . import plain
            rules = ownership.seal(plain.render_rules_file(spec, site_url, _headers("yaml", src)))
        else:
            rules = [(path, _sealed(text)) for path, text in
                     helm.render_chart(spec, root, site_url, _headers("yaml", src))]
        tests = promtool_tests.render_test_file(spec, site_url, _headers("yaml", src))
        page = runbook.render_page(spec, specs, _headers("markdown", src),
                                   helm.uses_fullname(spec, root), helm.name_suffix(spec), query_links)
        pp = f"{RUNBOOK_DIR}/{spec.app}.md"
        page_findings: list[Finding] = []
        page = _page(page, _read(root, pp), pp, page_findings)
        # the chart's values files, when no other spec renders into the chart: merged into the
        # disk's text as the loop below would, but here, on two cores
        chart_files = _values_files(spec, _read) if fmt != "rules" and alone[spec.chart.path] else None
        ids = _ahead()(page) if link_ids else None
        # each alert's runbook_url, from the values.yaml just made (the chart is this spec's alone)
        urls = _urls_ahead()(spec, chart_files[0][1], site_url) \
            if link_ids and chart_files and chart_files[0][1] is not None else None
        return rules, tests, (page, page_findings, ids, urls), chart_files

    def _values_files(spec: Spec, text_of) -> list[tuple[str, str | None, Finding | None]]:
        """(path, new text or None, finding or None) of the spec's values.yaml and
        values.schema.json, each merged into ``text_of(root, path, exact=True)``."""
        vpath = f"{spec.chart.path}/values.yaml"
        out = []
        try:
            out.append((vpath, values.render_values(spec, text_of(root, vpath, exact=True), site_url,
                                                      selector_labels), None))
        except Exception as e:  # ruamel errors: report, do not crash
            mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
            line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
            out.append((vpath, None, Finding(vpath, line, col, "RG701", Severity.ERROR,
                                             f"cannot update values.yaml: {str(e).splitlines()[0]}; "
                                             "fix the YAML by hand")))
        spath = f"{spec.chart.path}/values.schema.json"
        try:
            out.append((spath, values.render_values_schema(spec, text_of(root, spath, exact=True),
                                                           in_chart[spec.chart.path], severities), None))
        except ValueError as e:
            out.append((spath, None, Finding(spath, 1, 1, "RG701", Severity.ERROR,
                                             f"cannot update values.schema.json: {e}; fix the JSON by hand")))
        return out

    ordered = sorted(specs, key=lambda s: s.app)
    charts: dict[str, int] = {}
    for spec in ordered:
        charts[spec.chart.path] = charts.get(spec.chart.path, 0) + 1
    alone = {path: n == 1 for path, n in charts.items()}
    in_chart: dict[str, list[Spec]] = {}
    for spec in ordered:
        in_chart.setdefault(spec.chart.path, []).append(spec)
    planned_chart_files: set[str] = set()
    for spec, (rules, tfile, (page, page_findings, ids, urls), chart_files) in zip(ordered, split_map(per_spec, ordered)):
        src = spec.file
        if fmt == "rules":
            outs.append(Output(f"rules-out/{spec.app}.rules.yaml", rules, True, src))
        else:
            for path, text in rules:  # the rules file, the template and its helpers
                if path not in planned_chart_files:  # helpers: once per chart
                    planned_chart_files.add(path)
                    outs.append(Output(path, text, True, src))
            if chart_files is None:  # several specs in this chart: each merges into the text planned before it
                chart_files = _values_files(spec, lambda _root, path, exact: shared_text(path))
            for path, text, finding in chart_files:
                if finding is not None:
                    findings.append(finding)
                else:
                    shared[path] = Output(path, text, False, src)
            cpath = f"{spec.chart.path}/Chart.yaml"
            if cpath not in shared and not (root / cpath).is_file():
                shared[cpath] = Output(cpath, site.chart_yaml(spec), False, src)
        if tfile is not None:
            outs.append(Output(test_file_path(spec), ownership.seal(tfile), True, src))
        findings.extend(page_findings)
        if ids is not None:
            _links().known(page, ids)
        if urls is not None:
            _links().known_urls(spec, urls)
        outs.append(Output(f"{RUNBOOK_DIR}/{spec.app}.md", page, True, src))
    for path, specs_here in in_chart.items():  # knobs in values.yaml naming what the chart lacks
        vpath = f"{path}/values.yaml"
        if fmt == "rules" or vpath not in shared:
            continue
        for key in sorted({s.chart.values_key for s in specs_here}):
            mine = [s for s in specs_here if s.chart.values_key == key]
            rule_names = {r.name for s in mine for _, r in s.rules()}
            group_names = {g.name for s in mine for g in s.groups}
            for line, col, msg in values.unknown_knobs(shared[vpath].content, key, rule_names, group_names,
                                                       {g for s in mine for g in s.chart.gates},
                                                       {x.name for s in mine for x in s.slos}):
                msg = _knob_hint(msg, key, rule_names, group_names, {x.name for s in mine for x in s.slos})
                findings.append(Finding(vpath, line, col, "RG730", Severity.ERROR, msg))
            # SLO knobs are keyed by name under the values key: one name in two specs is one knob
            first: dict = {}
            for s in mine:
                for x in s.slos:
                    if x.name in first and first[x.name] is not s:
                        findings.append(s.source.finding(
                            x.path + ("name",), "RG363",
                            f"SLO {x.name} has the name of an SLO of {first[x.name].source.path}, which renders "
                            f"into the same chart ({path}) with the same values key: "
                            f"`{key}.slos.{x.name}` would set both; rename one of them",
                            rule=x.name))
                    first.setdefault(x.name, s)
    outs.extend(shared.values())
    if specs:
        home = f"{RUNBOOK_DIR}/index.md"
        outs.append(Output(home, _page(runbook.render_home(specs, _headers("markdown", "rules/")), _read(root, home),
                                       home, findings, "home"),
                           True))
        for name in ASSETS:  # the site's stylesheet and script (mkdocs.yml: extra_css, extra_javascript)
            outs.append(Output(f"{RUNBOOK_DIR}/{ASSETS_DIR}/{name}", ownership.seal(runbook.render_asset(
                name, [ownership.comment("css", ownership.notice("rules/")), ownership.checksum_line("css")])), True))
        idx = f"{RUNBOOK_DIR}/alerts.md"
        outs.append(Output(idx, _page(runbook.render_alert_index(specs, _headers("markdown", "rules/")),
                                      _read(root, idx), idx, findings), True))
        try:
            mk_text = _read(root, "mkdocs.yml", exact=True)
        except SharedFileError as e:
            raise RulegenError(str(e)) from None
        # The nav is rewritten through ruamel.yaml, which writes "\n": give it LF text and put
        # the file's own line ending back.
        lf_text = None if mk_text is None else mk_text.replace("\r\n", "\n")
        if lf_text is not None:
            missing = site.missing_page_settings(lf_text, root)
            if missing:
                findings.append(Finding("mkdocs.yml", 1, 1, "RG512", Severity.WARNING,
                                        f"mkdocs.yml lacks {', '.join(missing)}: the runbook pages' triage "
                                        "boxes, badges and index filters need them (see rulegen's "
                                        "docs/runbook-site.md, \"Site assets and settings\")"))
        mk = site.render_mkdocs(specs, lf_text, root)
        if mk is not None and mk == lf_text:
            mk = mk_text  # nav current: the file as it is, mixed line endings and all
        elif mk is not None and values.line_ending(mk_text) == "\r\n":
            mk = mk.replace("\r\n", "\n").replace("\n", "\r\n")
        if mk is not None:
            outs.append(Output("mkdocs.yml", mk, False))
    return sorted(outs, key=lambda o: o.path), findings


@functools.lru_cache(maxsize=8)
def _sealed(text: str) -> str:
    """:func:`rulegen.gitops.ownership.seal` of ``text``, cached: the template and its helpers
    are the same text in every chart."""
    return ownership.seal(text)


def _links():
    """rulegen.gitops.links when it is there and can read pages ahead, else None (the check
    then reads them itself; an error importing it is the check's to raise)."""
    try:
        from ..gitops import links
    except Exception:
        return None
    return links if hasattr(links, "page_ids_ahead") and hasattr(links, "known") else None


def _ahead():
    """The page reader for :func:`plan`'s ``link_ids``: links.page_ids_ahead, or no reading."""
    links = _links()
    return links.page_ids_ahead if links is not None else (lambda _text: None)


def _urls_ahead():
    """The runbook URL reader for :func:`plan`'s ``link_ids``: links.runbook_urls_ahead, or
    none (the check then works them out itself)."""
    links = _links()
    return links.runbook_urls_ahead if links is not None and hasattr(links, "runbook_urls_ahead") \
        else (lambda _spec, _text, _url: None)


def test_file_path(spec: Spec) -> str:
    """Where a spec's promtool test file is written: ``<chart>/tests/<app>.test.yaml``, so it
    travels with the chart in review (Helm renders only ``templates/``)."""
    return f"{spec.chart.path}/tests/{spec.app}.test.yaml"


__all__ = ["Output", "plan", "test_file_path", "RulegenError"]
