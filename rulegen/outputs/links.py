"""Link integrity of the runbook site: every ``runbook_url`` and every runbook link lands.

rulegen owns both ends of an alert's link: the ``runbook_url`` annotation that the Helm
template renders and the page section it should open. :func:`check_links` proves they agree,
without a network and without helm, from what ``build`` would write
(:func:`rulegen.render.plan`) plus the hand-written pages on disk, or from a built site folder.

What is checked, and the finding codes (all errors; ``file:line`` points at the spec entry
for alert links and at the page line for page links):

* ``RG709`` a Markdown page in the docs folder is not UTF-8 text: ``mkdocs build`` stops on it
  (a UnicodeDecodeError), so one hand-written page stops the whole site's deploy. Bad: a guide
  saved as Latin-1 (``Caf\\xe9``); good: the same page saved as UTF-8.
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
  not our anchors. Bad: ``runbookUrl: https://wiki.example.com/`` in ``values.yaml`` with
  ``site_url: https://runbooks.example.com/``; good: the same URL in both.
* ``RG713`` a ``related`` entry names an alert that no spec defines (with "did you mean" the
  closest alert name, the alert itself left out). Bad: ``related: [{alert: LlamaSwapGone}]`` when no spec defines it; good: the name of an alert a
  spec defines.
* ``RG714`` a ``related`` entry's link (page and anchor of the related alert) does not resolve.
  Bad: a related alert whose app page is missing from the site; good: ``rulegen build`` of every
  spec, so each app has its page.
* ``RG715`` a link on a page (generated, in team notes, or hand-written; ``[x](page.md#id)``,
  ``[x](#id)``, reference-style) fails ``mkdocs build --strict``: it points to a page, file or
  anchor that does not exist, or (as the ``validation:`` levels of ``mkdocs.yml`` make a
  warning) to no file at all (``[x](guides/)``, mkdocs' "unrecognized relative link") or to an
  absolute path (``[x](/llama-swap/)``). The position is the link's target on the page.
  Bad: ``[rollback](guides/deploy.md#rollback)`` with no such page or heading; good: a link to a
  page and heading id that exist.
* ``RG719`` an image on a page (``![alt](src)``, reference-style ``![alt][ref]``) shows a file
  the site's docs folder does not have, so ``mkdocs build --strict`` fails (one team's note
  could stop the whole site's deploy). The position is the source on the page. Links and
  images written as raw HTML (``<img src>``) are not validated, by mkdocs or here. Bad: ``![graph](img/latency.png)`` with no ``runbooks/img/latency.png``;
  good: the file committed next to the page, or an ``https://`` image.
* ``RG716`` two headings of one page share an id, so a link opens the first one only (two
  alert names that slug alike, e.g. ``Foo-Bar`` and ``foo bar``; for alerts of a spec,
  validation reports this first, at the spec line, as ``RG513``).
  Bad: alerts ``Foo-Bar`` and ``foo bar`` on one page; good: ``FooBar`` and ``FooBarSlow``.
* ``RG717`` ``mkdocs.yml``'s ``docs_dir`` is not the folder rulegen writes pages to
  (``runbooks``), so the built site would not contain them.
  Bad: ``docs_dir: docs``; good: ``docs_dir: runbooks``.
* ``RG718`` the built site folder given to check does not exist (a page missing from it is
  ``RG710``).
  Bad: a site folder that ``mkdocs build`` has not made yet; good: run ``mkdocs build --strict``
  first.

How a ``runbook_url`` is derived: exactly as the Helm template renders it with the chart's
default values (the planned ``values.yaml``, else the one on disk): an annotation
``runbook_url`` from ``<values_key>.customRules.<Alert>.annotations``, else from
``groups.<group>.additionalRuleAnnotations``, else from ``additionalRuleAnnotations``, else the
spec's own static annotation, else ``<runbookUrl>/<app>/#<anchor>`` where ``runbookUrl``
defaults to mkdocs' ``site_url`` (see :mod:`rulegen.render.helm`). The ``site_url`` prefix is
then stripped and the rest mapped to a page the way mkdocs serves it (``use_directory_urls``:
``<app>/`` is ``<app>.md`` or ``<app>/index.md``; otherwise ``<app>.html`` is ``<app>.md``).

Anchors of a Markdown page are the element ids that Python-Markdown produces for it with
``attr_list``, ``md_in_html`` and ``toc`` (the site's own extensions), so explicit ``{ #id }`` and automatic
heading slugs are both counted; of a built page, every ``id`` in its HTML. Pages written in the
plain subset of Markdown that rulegen generates are read from their text without rendering
(:func:`page_ids`); any other page is rendered.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

from ..findings import Finding, Severity
from ..render import site as site_mod
from ..render.slug import anchor
from .anchors import _AHEAD, IMAGE
from .built import LinkContext, html_path
from .page_links import _pos_of_target, _target_problem
from .pages import _docs_files, _pages, url_to_page
from .runbook_urls import (_URLS_AHEAD, _values, _values_text, default_runbook_url, is_absolute_http_url,
                           static_runbook_url)

def _err(file, line, col, code, msg, rule=""):
    return Finding(file, line, col, code, Severity.ERROR, msg, rule)



def check_links(outputs, specs, root, site_dir=None) -> list[Finding]:
    """Link findings (``RG710``-``RG718``, see the module docstring) for a project.

    Args:
        outputs: the planned outputs, ``rulegen.render.plan(specs, root)[0]`` (a sequence of
            :class:`rulegen.render.Output`); pages and ``values.yaml`` are taken from here first,
            then from the disk (hand-written pages under the docs folder; generated pages the plan
            no longer produces are ignored as stale). Pass ``[]`` to check the pages on disk as
            they are.
        specs: the validated specs (:class:`rulegen.spec.Spec`), whose alerts must be reachable.
        root: project root (``Path`` or ``str``) holding ``mkdocs.yml``.
        site_dir: optional built site folder (``mkdocs build -d DIR``); when given, page
            anchors of ``runbook_url`` and related links are read from its HTML instead of the
            Markdown.

    Returns:
        Findings sorted by file, line and code; empty when every link lands.

    Raises:
        RulegenError: ``mkdocs.yml`` is not valid YAML.
    """
    try:
        return _check_links(outputs, specs, root, site_dir)
    finally:
        _AHEAD.clear()
        _URLS_AHEAD.clear()


def _check_links(outputs, specs, root, site_dir) -> list[Finding]:
    root = Path(root)
    settings = site_mod.settings(root)
    findings: list[Finding] = []
    if (root / "mkdocs.yml").is_file() and settings.docs_dir != site_mod.DOCS_DIR:
        findings.append(_err("mkdocs.yml", 1, 1, "RG717",
                             f"docs_dir is {settings.docs_dir!r} but rulegen writes the runbook pages to "
                             f"{site_mod.DOCS_DIR}/: every runbook_url would 404; set docs_dir: {site_mod.DOCS_DIR}"))
    unreadable: list = []
    pages = _pages(outputs, root, settings, unreadable)
    for path, at in unreadable:
        findings.append(_err(path, 1, 1, "RG709", f"{path} is not UTF-8 text (byte {at}): `mkdocs build` stops "
                             "on it, so the whole site fails to deploy; save it as UTF-8"))
    sdir = Path(site_dir) if site_dir is not None else None
    if sdir is not None and not sdir.is_dir():
        findings.append(_err(str(sdir), 0, 0, "RG718", f"built site folder {sdir} does not exist; run mkdocs build first"))
        return sorted(findings)
    ctx = LinkContext(settings, pages, sdir)
    base = settings.site_url

    where: dict[str, tuple] = {}  # alert -> (spec, rule)
    for spec in specs:
        for _, r in spec.rules():
            if r.is_alert:
                where.setdefault(r.name, (spec, r))
    values_of: dict[str, dict] = {}

    def target_check(page, frag, fail):
        """Run ``fail(code_kind, detail)`` when page/fragment do not resolve."""
        if page is None or page == "" or page not in pages:
            return fail("page", "")
        if frag:
            ids = ctx.ids_of(page)
            if ids is None:
                return fail("html", "")
            if frag not in ids:
                return fail("anchor", frag)
        return None

    planned = {o.path: o.content for o in outputs}
    for spec in specs:
        vkey = spec.chart.path  # specs sharing a chart share its values.yaml: parse it once
        text = _values_text(planned, root, spec)
        kept = _URLS_AHEAD.get(id(spec))
        ahead = kept[1] if kept is not None and kept[0] is spec else None
        urls = iter(ahead[2]) if ahead is not None and ahead[:2] == (text, base) else None
        if urls is None and vkey not in values_of:
            values_of[vkey] = _values(text)
        for group, rule in spec.rules():
            if not rule.is_alert:
                continue
            # positions only for a finding: a spec loaded by a forked child remakes them on use
            url = next(urls) if urls is not None else default_runbook_url(spec, group, rule, base, values_of[vkey])
            if not url:
                continue
            outside = not url.startswith(base) and url.rstrip("/") != base.rstrip("/")
            if outside and static_runbook_url(spec, group, rule, values_of.get(vkey) or _values(text)) is not None:
                # a runbook_url written by hand (an imported upstream rule's, a wiki page): an
                # external link, whose form is all there is to check here
                if not is_absolute_http_url(url):
                    line, col = spec.source.pos(rule.path)
                    findings.append(_err(spec.file, line, col, "RG712",
                                         f"{rule.name}: runbook_url {url!r} is neither under the runbook site "
                                         f"{base} nor an absolute http(s) URL, so a notification cannot open "
                                         "it; write the full address (https://host/path)", rule.name))
            elif outside:
                line, col = spec.source.pos(rule.path)
                findings.append(_err(spec.file, line, col, "RG712",
                                     f"{rule.name}: runbook_url {url} is not under the runbook site {base} "
                                     "(mkdocs.yml site_url); set runbookUrl in values.yaml or site_url to the same base",
                                     rule.name))
            rest = url[len(base):] if url.startswith(base) else ""
            path, _, frag = rest.partition("#")
            path = path.split("?", 1)[0]
            page = url_to_page(path, pages, settings.use_directory_urls)
            frag = unquote(frag)

            def fail(kind, detail, rule=rule, url=url, page=page, path=path, spec=spec):
                line, col = spec.source.pos(rule.path)
                if kind == "page":
                    findings.append(_err(spec.file, line, col, "RG710",
                                         f"{rule.name}: runbook_url {url} opens page '{path or '/'}' but the site has "
                                         f"no such page (expected {site_mod.DOCS_DIR}/{spec.app}.md); run rulegen build",
                                         rule.name))
                elif kind == "html":
                    findings.append(_err(spec.file, line, col, "RG710",
                                         f"{rule.name}: runbook_url {url} opens a page the built site does not have "
                                         f"(no {html_path(page, settings.use_directory_urls)}); rebuild the site",
                                         rule.name))
                else:
                    findings.append(_err(spec.file, line, col, "RG711",
                                         f"{rule.name}: runbook_url {url} opens {site_mod.DOCS_DIR}/{page} but it has "
                                         f"no anchor #{detail} (missing anchor); the alert's heading must carry "
                                         f"{{ #{anchor(rule.name)} }}: run rulegen build",
                                         rule.name))
            if not outside:
                target_check(page, frag, fail)

            for i, rel in enumerate(rule.runbook.get("related") or []):
                rpath = rule.path + ("runbook", "related", i, "alert")
                name = rel.get("alert", "")
                if name not in where:
                    rline, rcol = spec.source.pos(rpath)
                    from ..hints import closest
                    near = closest(str(name), [n for n in where if n != rule.name])
                    fix = f"did you mean {near}? Fix the name" if near else "fix the name"
                    findings.append(_err(spec.file, rline, rcol, "RG713",
                                         f"{rule.name}: related alert {name!r} is not defined by any spec; "
                                         f"{fix} or remove the entry", rule.name))
                    continue
                tspec = where[name][0]
                tpage = f"{tspec.app}.md"

                def rfail(kind, detail, rule=rule, name=name, tpage=tpage, rpath=rpath, spec=spec):
                    rline, rcol = spec.source.pos(rpath)
                    what = (f"page {site_mod.DOCS_DIR}/{tpage} does not exist" if kind == "page" else
                            f"the built site lacks {tpage}'s HTML" if kind == "html" else
                            f"{site_mod.DOCS_DIR}/{tpage} has no anchor #{detail} (missing anchor)")
                    findings.append(_err(spec.file, rline, rcol, "RG714",
                                         f"{rule.name}: related alert link to {name} does not resolve: {what}",
                                         rule.name))
                target_check(tpage if tpage in pages else "", anchor(name), rfail)

    # Every internal Markdown link and image of every page, and duplicate heading ids.
    files = _docs_files(root, settings, outputs, pages)
    for rel, pg in sorted(pages.items()):
        _ids, heading_ids, hrefs = pg.parsed()
        seen: set[str] = set()
        for hid in heading_ids:
            if hid in seen:
                findings.append(_err(pg.file, pg.line_of(f"#{hid} }}"), 1, "RG716",
                                     f"two headings share the id #{hid}: links open the first one only; "
                                     "rename one of them (alert names must slug differently)"))
            seen.add(hid)
        done: set[str] = set()
        for href in hrefs:
            if href in done:
                continue
            done.add(href)
            image = href.startswith(IMAGE)
            url = href[len(IMAGE):] if image else href
            problem = _target_problem(url, rel, pages, files, settings)
            if problem is None:
                continue
            kind, target, frag = problem
            line, col = _pos_of_target(pg, url)  # only for a finding: it scans the page
            what = f"image {url}" if image else f"link {url}"
            if kind == "absolute":
                msg = (f"{what} is an absolute path: mkdocs leaves it as it is and warns "
                       f"(mkdocs.yml validation: absolute_links: {settings.link_level('absolute_links')}), which "
                       "fails `mkdocs build --strict`, and it breaks when the site is not served at the "
                       "root; write it relative to the page (../guides/x.md, assets/x.png)")
            elif kind == "page":
                msg = (f"{what} points to a page that does not exist" if not image else
                       f"{what} shows a file the site does not have ({site_mod.DOCS_DIR}/{target}): "
                       "`mkdocs build --strict` fails on it; add the file or fix the path")
            elif kind == "file":
                msg = (f"{what} {'shows' if image else 'points to'} a file the site does not have "
                       f"({site_mod.DOCS_DIR}/{target}): "
                       "`mkdocs build --strict` fails on it; add the file or fix the path")
            elif kind == "unrecognized":
                msg = (f"{what} names no file of the site (mkdocs: unrecognized relative link, "
                       f"validation: unrecognized_links: {settings.link_level('unrecognized_links')}), so "
                       "`mkdocs build --strict` fails on it; link the page itself (x.md, x/index.md)")
            else:
                msg = f"{what}: {site_mod.DOCS_DIR}/{target} has no anchor #{frag} (missing anchor)"
            findings.append(_err(pg.file, line, col, "RG719" if image else "RG715", msg))
    return sorted(findings)
