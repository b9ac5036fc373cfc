"""Team notes carried over into a regenerated runbook page, made safe.

A generated page (app page, home page, alert index) keeps the hand-written notes between its
``<!-- notes:... -->`` markers across builds (:func:`rulegen.render.ownership.notes`);
:func:`page` puts the old notes back into the new text.

Codes:

* ``RG720`` (warning) team notes of an alert the page no longer has (renamed or removed) were
  moved to the page's catch-all notes slot; move them under the alert they belong to. Bad:
  notes under ``<!-- notes:OldName -->`` after the alert was renamed; good: the same text
  under ``<!-- notes:NewName -->``.
* ``RG721`` (warning) a runbook page's hand-written team notes (between ``<!-- notes:... -->``
  and ``<!-- /notes -->``) hold markup the site must not run or read as markup: raw HTML
  (``<script>``, ``<img onerror=...>``, ``<iframe>``, ``<style>``, comments), a link or image
  with a scheme other than ``http``, ``https`` or ``mailto`` (``javascript:``, ``data:``,
  ``vbscript:``, also entity-encoded), or an attribute list (``{ onclick=... }``). Notes are
  made safe exactly as spec Markdown is (:func:`rulegen.render.safe.notes_markdown`): the
  markup is escaped and shown as the text it is, so ``build`` rewrites the note and ``check``
  reports the page as differing until it has. Reported at the page line of the first changed
  line; cannot be switched off. Bad: ``<img src=x onerror=alert(1)>`` in a note; good: plain
  Markdown, ``[dashboard](https://grafana.example.com/d/x)``.
"""

from __future__ import annotations

from ..findings import Finding, Severity
from . import ownership
from . import safe


def page(text: str, existing: str | None, path: str, findings: list[Finding],
          catch_all: str = "page") -> str:
    """A generated page ``text`` with the team notes of ``existing`` carried over; notes whose
    alert is gone move to the ``catch_all`` slot and are reported (``RG720``, warning)."""
    sealed = text
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
    if not any(v.strip() for v in kept.values()):
        return sealed
    if not safe.problems(sealed) or safe.problems(empty):
        return sealed
    plain = {k: safe.inert(v) if v.strip() else v for k, v in kept.items()}
    findings.append(Finding(path, 1, 1, "RG721", Severity.WARNING,
                            "team notes change how the page around them reads ("
                            + "; ".join(safe.problems(sealed)[:3])
                            + "): every note of the page will be escaped, shown as plain text; write "
                            "plain Markdown"))
    return ownership.fill_notes(empty, plain, catch_all)[0]
