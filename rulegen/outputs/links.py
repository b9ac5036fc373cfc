"""Link integrity of the runbook site: every ``runbook_url`` and every runbook link lands.

rulegen owns both ends of an alert's link: the ``runbook_url`` annotation that the Helm
template renders and the page section it should open. :func:`check_links` proves they agree,
without a network and without helm, from what ``build`` would write
(:func:`rulegen.render.plan`) plus the hand-written pages on disk, or from a built site folder.

What is checked, and the finding codes (all errors; ``file:line`` points at the spec entry
for alert links and at the page line for page links):

Codes:

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

# The codes are documented by the modules that report them (pages, runbook_urls, page_links,
# settings, built); `rulegen checks` puts them at the "Codes:" line above (rulegen.checkdocs.PARTS).

from __future__ import annotations

from pathlib import Path

from ..findings import Finding
from ..render import site as site_mod
from . import built, page_links, pages, runbook_urls, settings

__all__ = ["check_links"]


def check_links(outputs, specs, root, site_dir=None) -> list[Finding]:
    """Link findings (``RG709``-``RG719``, see the module docstring) for a project.

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
    root = Path(root)
    conf = site_mod.settings(root)
    findings: list[Finding] = settings.docs_dir(root, conf)
    unreadable: list = []
    site_pages = pages._pages(outputs, root, conf, unreadable)
    findings += pages.unreadable_findings(unreadable)
    findings += pages.same_destination_findings(root, conf, outputs, site_pages)
    sdir = Path(site_dir) if site_dir is not None else None
    if sdir is not None and not sdir.is_dir():
        findings += built.missing_site(sdir)
        return sorted(findings)
    pages.parse_all(site_pages)  # every page's ids and links, on two cores for a large site
    ctx = built.LinkContext(conf, site_pages, sdir)
    findings += runbook_urls.check(outputs, specs, root, ctx)
    findings += page_links.check(outputs, root, ctx)
    return sorted(findings)
