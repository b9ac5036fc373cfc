"""An alert's ``runbook_url`` as the chart renders it with its default values, and whether it
and the alert's ``related`` links land (the precedence is in :mod:`rulegen.outputs.links`).

Codes:

* ``RG710`` an alert's ``runbook_url`` opens a page the site does not have (page deleted or
  renamed, app renamed, ``runbookUrl``/``customRules`` pointing at another path).
  Bad: a ``runbook_url`` annotation ``https://runbooks.example.com/llama/#llamaswapdown`` (no page
  ``llama``); good: no ``runbook_url`` in the spec, so rulegen links the app's own page.
* ``RG711`` the page exists but has no element with the URL's fragment as id (the alert was
  renamed, its heading id changed): the message names the alert and the missing anchor.
  Bad: a hand-written ``runbook_url`` ending in ``#llamaswapdwn``; good: none, so rulegen generates
  ``#llamaswapdown``.
* ``RG712`` the generated ``runbook_url`` is not under the site's ``site_url``
  (``mkdocs.yml``) because ``runbookUrl`` in ``values.yaml`` differs from it, so it does not
  open this site; or a ``runbook_url`` written by hand (spec annotation, ``customRules``,
  ``additionalRuleAnnotations``) outside the site is not an absolute ``http(s)`` URL. A
  hand-written absolute URL elsewhere (an imported upstream rule's
  ``https://runbooks.prometheus-operator.dev/...``) is an external link: its form is checked,
  not our anchors. When the chart's ``values.yaml`` decides the URL (its ``runbookUrl``, or a
  ``runbook_url`` in ``customRules`` or ``additionalRuleAnnotations``), this finding (and
  ``RG710``/``RG711`` of such a URL) is at each alert's line of the spec, naming the values key
  and its line, and once more at that line of the values file, naming the alerts. Bad:
  ``runbookUrl: https://wiki.example.com/`` in ``values.yaml`` with ``site_url:
  https://runbooks.example.com/``; good: the same URL in both.
* ``RG713`` a ``related`` entry names an alert that no spec defines (with "did you mean" the
  closest alert name, the alert itself left out). Bad: ``related: [{alert: LlamaSwapGone}]`` when no spec defines it; good: the name of an alert a
  spec defines.
* ``RG714`` a ``related`` entry's link (page and anchor of the related alert) does not resolve.
  Bad: a related alert whose app page is missing from the site; good: ``rulegen build`` of every
  spec, so each app has its page.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from urllib.parse import unquote, urlsplit

import yaml

from ..findings import Finding, error
from ..fs import read as fs_read
from ..fs import yamlbound
from ..hints import closest
from ..parallel import split_map
from ..render import site as site_mod
from ..render.slug import anchor, page_url
from .built import html_path
from .pages import url_to_page

#: yaml.safe_load's loader, with libyaml's parser when PyYAML has it (same constructor and resolver)
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _values_text(planned: dict, root: Path, spec) -> str:
    """The text of the spec's chart ``values.yaml``: planned (``planned``: path -> content),
    else on disk, else empty."""
    vpath = f"{spec.chart.path}/values.yaml"
    text = planned.get(vpath)
    if text is None:
        f = root / vpath
        text = fs_read.read_text(f, vpath) if f.is_file() else ""
    return text


def _values(text: str) -> dict:
    """A values.yaml text as the chart's default values ({} when not a YAML mapping)."""
    try:
        data = yamlbound.load(text, _SAFE_LOADER, "values.yaml") or {}
    except (yaml.YAMLError, fs_read.InputRefused):  # too large: RG701 reports it (rulegen.render)
        return {}
    return data if isinstance(data, dict) else {}


def _get(d, *keys):
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def default_runbook_url(spec, group, rule, site_url: str, values: dict | None = None) -> str:
    """The ``runbook_url`` that the chart renders for alert ``rule`` of ``group`` with default
    ``values`` (the chart's parsed ``values.yaml``; None or {} = no values): see the module
    docstring for the precedence. ``site_url`` is mkdocs' (trailing ``/`` optional)."""
    static = static_runbook_url(spec, group, rule, values)
    if static is not None:
        return static
    if not spec.chart.runbook_url:
        return ""   # chart.runbook_url: false, no generated link
    cfg = _knobs(spec, values)
    base = cfg.get("runbookUrl") or site_url
    return f"{str(base).rstrip('/')}/{page_url(spec.app)}#{anchor(rule.name)}"


def _knobs(spec, values: dict | None) -> dict:
    cfg = (values or {}).get(spec.chart.values_key) or {}
    return cfg if isinstance(cfg, dict) else {}


def static_runbook_url(spec, group, rule, values: dict | None = None) -> str | None:
    """The ``runbook_url`` annotation that the spec or the chart's default ``values`` set for
    alert ``rule`` (``customRules``, group and global ``additionalRuleAnnotations``, the
    spec's own annotation, in that order), or None when the chart generates it."""
    found = _static(spec, group, rule, values)
    return found[0] if found is not None else None


def _static(spec, group, rule, values: dict | None) -> tuple[str, bool] | None:
    """:func:`static_runbook_url` and whether the spec's own annotation set it."""
    cfg = _knobs(spec, values)
    for src in (_get(cfg, "customRules", rule.name, "annotations"),
                _get(cfg, "groups", group.name, "additionalRuleAnnotations"),
                cfg.get("additionalRuleAnnotations"),
                rule.annotations):
        if isinstance(src, dict) and src.get("runbook_url"):
            return str(src["runbook_url"]), src is rule.annotations
    return None


def _url_pos(spec, group, rule, values: dict | None) -> tuple[int, int]:
    """(line, col) in ``spec.file`` of the reference a ``runbook_url`` finding reports: the
    spec's own ``annotations.runbook_url`` when that is the URL the chart renders, else the
    alert itself (whose name makes the generated URL's page and anchor; a URL set in the
    chart's values is named in the message)."""
    found = _static(spec, group, rule, values)
    if found is not None and found[1]:
        return spec.source.pos(rule.path + ("annotations", "runbook_url"))
    return spec.source.pos(rule.path)


def is_absolute_http_url(url: str) -> bool:
    """True when ``url`` is an absolute ``http``/``https`` URL with a host (what a browser
    opens from an Alertmanager notification)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname) and url == url.strip()


def check(outputs, specs, root: Path, ctx) -> list[Finding]:
    """``RG710``-``RG714`` for the alerts of ``specs``: each alert's ``runbook_url`` (as the
    chart renders it with the planned ``values.yaml`` of ``outputs``, else the one on disk)
    and each of its ``related`` links against the site ``ctx``
    (:class:`rulegen.outputs.built.LinkContext`)."""
    where: dict[str, tuple] = {}  # alert -> (spec, rule)
    for spec in specs:
        for _, r in spec.rules():
            if r.is_alert:
                where.setdefault(r.name, (spec, r))
    planned = {o.path: o.content for o in outputs}
    # each chart's values.yaml parsed once (specs sharing a chart share it), on two cores for many
    charts = sorted({spec.chart.path for spec in specs})
    texts = {spec.chart.path: _values_text(planned, root, spec) for spec in specs}
    values_of = dict(zip(charts, split_map(lambda c: _values(texts[c]), charts)))
    findings: list[Finding] = []
    at_values: dict[tuple, list] = {}  # (values file, line, col, code) -> [(alert, finding)]
    for spec in specs:
        for group, rule in spec.rules():
            if rule.is_alert:
                found = _alert(spec, group, rule, values_of[spec.chart.path], ctx)
                source = _values_source(spec, group, rule, values_of[spec.chart.path], texts[spec.chart.path],
                                        ctx.settings.site_url) if found else None
                for f in found:
                    if source is not None:
                        dotted, line, col = source
                        vfile = f"{spec.chart.path}/values.yaml"
                        f = dataclasses.replace(f, message=f"{f.message} ({dotted} in {vfile}:{line} sets this URL)")
                        at_values.setdefault((vfile, line, col, f.code, dotted), []).append((rule.name, f))
                    findings.append(f)
                findings += _related(spec, rule, where, ctx)
    for (vfile, line, col, code, dotted), hits in at_values.items():
        names = list(dict.fromkeys(name for name, _ in hits))
        first, f = hits[0]
        detail = f.message[len(first) + 2:] if f.message.startswith(first + ": ") else f.message
        detail = detail.rsplit(f" ({dotted} in ", 1)[0]
        findings.append(error(vfile, line, col, code, f"{dotted} here sets the runbook_url of {', '.join(names)} "
                                                      f"({code} at each in the spec). {first}: {detail}", ""))
    return findings


def _values_source(spec, group, rule, values: dict, text: str, site_url: str) -> tuple[str, int, int] | None:
    """(dotted key, line, column) of the key of the chart's ``values.yaml`` (``values`` parsed,
    ``text`` as written) that decides alert ``rule``'s ``runbook_url``: a ``runbook_url`` of
    ``customRules``, the group's or the global ``additionalRuleAnnotations``, or its
    ``runbookUrl`` when that is not ``site_url`` (mkdocs'); None when the spec or the site
    decides it (a ``runbookUrl`` equal to the site's base only repeats it)."""
    key, cfg = spec.chart.values_key, _knobs(spec, values)
    found = _static(spec, group, rule, values)
    if found is not None and found[1]:
        return None  # the spec's own annotation
    if found is not None:
        candidates = [("customRules", rule.name, "annotations", "runbook_url"),
                      ("groups", group.name, "additionalRuleAnnotations", "runbook_url"),
                      ("additionalRuleAnnotations", "runbook_url")]
        parts = next((c for c in candidates if _get(cfg, *c) == found[0]), None)
    elif spec.chart.runbook_url and cfg.get("runbookUrl") \
            and str(cfg["runbookUrl"]).rstrip("/") != site_url.rstrip("/"):
        parts = ("runbookUrl",)
    else:
        return None
    if parts is None:
        return None
    pos = _key_pos(text, (key,) + parts)
    return (".".join((key,) + parts), *pos) if pos else None


def _key_pos(text: str, parts: tuple) -> tuple[int, int] | None:
    """(line, column), 1-based, of the mapping key at ``parts`` in YAML ``text``, or None."""
    try:
        node = yaml.compose(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError:
        return None
    key = None
    for p in parts:
        if not isinstance(node, yaml.MappingNode):
            return None
        hit = next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == p), None)
        if hit is None:
            return None
        key, node = hit
    return (key.start_mark.line + 1, key.start_mark.column + 1) if key is not None else None


def _target(ctx, page, frag, fail):
    """Run ``fail(code_kind, detail)`` when page/fragment do not resolve on the site ``ctx``."""
    if page is None or page == "" or page not in ctx.pages:
        return fail("page", "")
    if frag:
        ids = ctx.ids_of(page)
        if ids is None:
            return fail("html", "")
        if frag not in ids:
            return fail("anchor", frag)
    return None


def _alert(spec, group, rule, values: dict, ctx) -> list[Finding]:
    """``RG710``-``RG712`` for the ``runbook_url`` of alert ``rule`` (``values``: its chart's
    default values)."""
    findings: list[Finding] = []
    base, settings = ctx.settings.site_url, ctx.settings
    url = default_runbook_url(spec, group, rule, base, values)
    if not url:
        return findings
    # positions only for a finding: a spec loaded by a forked child remakes them on use
    outside = not url.startswith(base) and url.rstrip("/") != base.rstrip("/")
    if outside and static_runbook_url(spec, group, rule, values) is not None:
        # a runbook_url written by hand (an imported upstream rule's, a wiki page): an
        # external link, whose form is all there is to check here
        if not is_absolute_http_url(url):
            line, col = _url_pos(spec, group, rule, values)
            findings.append(error(spec.file, line, col, "RG712",
                                  f"{rule.name}: runbook_url {url!r} is neither under the runbook site "
                                  f"{base} nor an absolute http(s) URL, so a notification cannot open "
                                  "it; write the full address (https://host/path)", rule.name))
    elif outside:
        line, col = _url_pos(spec, group, rule, values)
        findings.append(error(spec.file, line, col, "RG712",
                              f"{rule.name}: runbook_url {url} is not under the runbook site {base} "
                              "(mkdocs.yml site_url); set runbookUrl in the chart's values.yaml or site_url to the "
                              "same base",
                              rule.name))
    rest = url[len(base):] if url.startswith(base) else ""
    path, _, frag = rest.partition("#")
    path = path.split("?", 1)[0]
    page = url_to_page(path, ctx.pages, settings.use_directory_urls)
    frag = unquote(frag)

    def fail(kind, detail):
        line, col = _url_pos(spec, group, rule, values)
        if kind == "page":
            findings.append(error(spec.file, line, col, "RG710",
                                  f"{rule.name}: runbook_url {url} opens page '{path or '/'}' but the site has "
                                  f"no such page (expected {site_mod.DOCS_DIR}/{spec.app}.md); run rulegen build",
                                  rule.name))
        elif kind == "html":
            findings.append(error(spec.file, line, col, "RG710",
                                  f"{rule.name}: runbook_url {url} opens a page the built site does not have "
                                  f"(no {html_path(page, settings.use_directory_urls)}); rebuild the site",
                                  rule.name))
        else:
            findings.append(error(spec.file, line, col, "RG711",
                                  f"{rule.name}: runbook_url {url} opens {site_mod.DOCS_DIR}/{page} but it has "
                                  f"no anchor #{detail} (missing anchor); the alert's heading must carry "
                                  f"{{ #{anchor(rule.name)} }}: run rulegen build",
                                  rule.name))
    if not outside:
        _target(ctx, page, frag, fail)
    return findings


def _related(spec, rule, where: dict, ctx) -> list[Finding]:
    """``RG713`` and ``RG714`` for the ``related`` entries of alert ``rule`` (``where``: alert
    name -> (spec, rule) of every alert)."""
    findings: list[Finding] = []
    for i, rel in enumerate(rule.runbook.get("related") or []):
        rpath = rule.path + ("runbook", "related", i, "alert")
        name = rel.get("alert", "")
        if name not in where:
            rline, rcol = spec.source.pos(rpath)
            near = closest(str(name), [n for n in where if n != rule.name])
            fix = f"did you mean {near}? Fix the name" if near else "fix the name"
            findings.append(error(spec.file, rline, rcol, "RG713",
                                  f"{rule.name}: related alert {name!r} is not defined by any spec; "
                                  f"{fix} or remove the entry", rule.name))
            continue
        tspec = where[name][0]
        tpage = f"{tspec.app}.md"

        def rfail(kind, detail, name=name, tpage=tpage, rpath=rpath):
            rline, rcol = spec.source.pos(rpath)
            what = (f"page {site_mod.DOCS_DIR}/{tpage} does not exist" if kind == "page" else
                    f"the built site lacks {tpage}'s HTML" if kind == "html" else
                    f"{site_mod.DOCS_DIR}/{tpage} has no anchor #{detail} (missing anchor)")
            findings.append(error(spec.file, rline, rcol, "RG714",
                                  f"{rule.name}: related alert link to {name} does not resolve: {what}",
                                  rule.name))
        _target(ctx, tpage if tpage in ctx.pages else "", anchor(name), rfail)
    return findings
