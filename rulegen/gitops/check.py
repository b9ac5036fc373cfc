"""``rulegen check``: the drift check CI runs on every pull request.

It does what ``build`` does, in memory (:func:`rulegen.pipeline.load_project` then
:func:`rulegen.pipeline.plan_project`), compares the plan with the working tree
(:func:`rulegen.gitops.write.compare`) and writes nothing. It reports, in this order:

1. validation findings (any error fails the check; drift is then not computed, because a plan
   made from the specs that did load would call every file of the broken spec stale);
2. runbook link findings from :func:`rulegen.gitops.links.check_links`, when that module is
   installed;
3. a unified diff (``--- a/<path>`` / ``+++ b/<path>``, as ``git diff`` prints it: ``a`` is
   the disk, ``b`` what ``build`` would write) for every file that differs;
4. generated files edited by hand, stale generated files (made from a spec that no longer
   produces them) and temp files left by an interrupted build;
5. one summary line.

With ``--base REF`` it also compares the baseline and the check configuration with those at
Git ``REF`` (:mod:`rulegen.gitops.policy`): each change that weakens what is checked (an entry
added to ``.rulegen-baseline.yaml``, a code switched off or lowered to a warning, a convention
relaxed) is a finding, RG820-RG823, reported with the validation findings. They are errors
when ``REF``'s own ``.rulegen.yaml`` says ``policy_changes: fail`` or does not say (the
default), or with ``--fail-on-policy-changes``; warnings when ``REF`` says ``warn``. The pull
request's own ``.rulegen.yaml`` has no say in it.

Exit codes: 0 nothing to do, 1 findings with errors or any drift, 2 usage or internal fault.
"""

from __future__ import annotations

import difflib
import importlib.util
from pathlib import Path

LINKS_MODULE = "rulegen.gitops.links"


def unified_diff(path: str, old: str | None, new: str | None) -> str:
    """A ``git diff``-style unified diff of one file (3 lines of context).

    ``old``/``new`` is None for a missing file, shown as ``/dev/null``. Returns ``""`` when the
    texts are equal. A text that does not end with a newline gets git's
    ``\\ No newline at end of file`` marker, so the diff stays line-based.
    """
    if old == new:
        return ""
    a = "/dev/null" if old is None else f"a/{path}"
    b = "/dev/null" if new is None else f"b/{path}"
    lines = difflib.unified_diff(_lines(old), _lines(new), a, b)
    return "".join(lines)


def _lines(text: str | None) -> list[str]:
    if not text:
        return []
    out = text.splitlines(keepends=True)
    if not out[-1].endswith("\n"):
        out[-1] += "\n\\ No newline at end of file\n"
    return out


def _link_findings(outputs, specs, root: Path) -> list:
    """Findings of the runbook link check, or [] when ``rulegen.gitops.links`` is not there.

    Only the module's absence is tolerated: once it exists, an error importing or running it is
    a fault of the check and propagates (exit 2), never a silent pass.
    """
    if importlib.util.find_spec(LINKS_MODULE) is None:
        return []
    from . import links
    return list(links.check_links(outputs, specs, root))


