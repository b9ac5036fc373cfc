"""Site settings: what ``mkdocs.yml`` must say for the runbook pages to be served and shown.

Codes:

* ``RG512`` (warning; ``build``, ``check``) ``mkdocs.yml`` does not list what the runbook
  pages need: ``md_in_html`` in ``markdown_extensions`` (the triage box, the index and the
  collapsed rule details are Markdown inside HTML), ``assets/rulegen.css`` in ``extra_css``
  and ``assets/rulegen.js`` in ``extra_javascript`` (badges, index filters, commands filled
  from the URL). Without them the pages show raw ``**Impact:**`` text. Bad: a ``mkdocs.yml``
  without ``md_in_html``; good: ``markdown_extensions: [md_in_html]`` with the two assets listed.
* ``RG717`` ``mkdocs.yml``'s ``docs_dir`` is not the folder rulegen writes pages to
  (``runbooks``), so the built site would not contain them.
  Bad: ``docs_dir: docs``; good: ``docs_dir: runbooks``.
"""

from __future__ import annotations

from pathlib import Path

from ..findings import Finding, RulegenError, Severity, error
from ..fs import read as fs_read
from ..render import site as site_mod


def page_settings(specs, root: Path) -> list[Finding]:
    """``RG512`` when the project at ``root`` has specs and a ``mkdocs.yml`` that lacks one
    of :data:`rulegen.render.site.PAGE_SETTINGS` (read as mkdocs reads it, ``INHERIT``
    included); [] otherwise, and when the file cannot be read (:func:`rulegen.render.plan`
    reports that)."""
    if not specs:
        return []
    p = Path(root) / "mkdocs.yml"
    try:
        if not fs_read.is_regular(p):
            return []
        text = fs_read.read_text(p, "mkdocs.yml", exact=True).replace("\r\n", "\n")
    except (OSError, UnicodeDecodeError, RulegenError):
        return []
    missing = site_mod.missing_page_settings(text, root)
    if not missing:
        return []
    return [Finding("mkdocs.yml", 1, 1, "RG512", Severity.WARNING,
                    f"mkdocs.yml lacks {', '.join(missing)}: the runbook pages' triage "
                    "boxes, badges and index filters need them (see rulegen's "
                    "docs/runbook-site.md, \"Site assets and settings\")")]


def docs_dir(root: Path, settings: site_mod.SiteSettings) -> list[Finding]:
    """``RG717`` when the project's ``mkdocs.yml`` (``settings``, read from it) serves another
    folder than the one rulegen writes the runbook pages to."""
    if (Path(root) / "mkdocs.yml").is_file() and settings.docs_dir != site_mod.DOCS_DIR:
        return [error("mkdocs.yml", 1, 1, "RG717",
                      f"docs_dir is {settings.docs_dir!r} but rulegen writes the runbook pages to "
                      f"{site_mod.DOCS_DIR}/: every runbook_url would 404; set docs_dir: {site_mod.DOCS_DIR}")]
    return []
