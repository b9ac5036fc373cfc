"""Checking the outputs: pipeline stage 4 of 5 (load -> validate -> render -> check outputs ->
test).

Rendering (:func:`rulegen.render.plan`) returns the files ``build`` would write; this stage
reads them, with the specs they come from and the site on disk, and reports what they get
wrong. One module per check, each emitting and documenting its own codes:

* :mod:`.knobs` keys of a chart's ``values.yaml`` that name nothing the chart has (``RG730``,
  ``RG363``), or give labels to some of an SLO's recording rules only (``RG364``);
* :mod:`.settings` what ``mkdocs.yml`` must say for the pages (``RG512``, ``RG717``);
* :mod:`.links` link integrity of the runbook site (``RG709``-``RG719``), from
  :mod:`.pages` (the site's pages), :mod:`.anchors` (a page's ids and links),
  :mod:`.runbook_urls` (each alert's ``runbook_url`` and related links), :mod:`.page_links`
  (links and images on pages) and :mod:`.built` (a built site folder).

:func:`check_plan` runs with every plan (``build``, ``check``, ``test``); the link check
(:func:`rulegen.outputs.links.check_links`) runs in ``check``, on the outputs in its scope.
"""

from __future__ import annotations

from pathlib import Path

from ..findings import Finding
from . import knobs, settings

#: The check reference's family of the codes reported while making the outputs (``rulegen
#: checks``, :data:`rulegen.checkdocs.PARTS`): its codes are documented by the modules that
#: report them and stand at its ``Codes:`` line.
OUTPUTS = """Making the outputs: shared chart files and team notes (``build``, ``check``, ``test``).

Codes:
"""


def check_plan(outputs, specs, root: Path, fmt: str = "helm") -> list[Finding]:
    """Findings about the planned ``outputs`` of ``specs`` (:func:`rulegen.render.plan`) that
    every command planning them reports: knobs in ``values.yaml`` naming nothing
    (:mod:`.knobs`) and page settings ``mkdocs.yml`` lacks (:mod:`.settings`). Not configured:
    the caller applies the project's ``.rulegen.yaml`` to them."""
    return knobs.check(outputs, specs, fmt) + settings.page_settings(specs, root)
