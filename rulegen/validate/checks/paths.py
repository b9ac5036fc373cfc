"""Paths stay inside the project (see :mod:`rulegen.fs.containment`).

A spec names where its chart lives (``chart.path``, ``chart.template``); ``build`` writes
``Chart.yaml``, ``values.yaml``, ``values.schema.json``, ``templates/``, ``rules/`` and
``tests/`` there
and ``test`` runs ``helm`` on it. These checks keep every such path inside the project root,
so ``build``, ``check`` and ``test`` never read or write anything outside it. They cannot be
switched off or downgraded in ``.rulegen.yaml``.

Codes:

* ``RG740`` a path is absolute. Bad: ``chart: {path: /srv/charts/shop}``; good:
  ``chart: {path: charts/shop}`` (relative to the project root).
* ``RG741`` a path has a ``..`` segment. Bad: ``chart: {path: ../../outside}``; good: a folder
  under the project, ``chart: {path: charts/outside}``.
* ``RG742`` a path leads outside the project through a symlink (git stores symlinks, so a pull
  request can add one); the message names the link and its target. Bad: ``charts/shop`` a
  symlink to ``/etc``; good: ``charts/shop`` a real folder (or a link to another folder of
  the project).
* ``RG743`` a path is not a plain relative path: empty, ``./`` or ``//`` (one trailing ``/``
  on ``chart.path`` is fine), a backslash, characters other than letters, digits, ``.``,
  ``_``, ``-``, or a segment starting with ``-`` or ``.``. Bad: ``chart: {path: ./charts/shop}``, ``charts/.git``,
  ``charts/my chart``; good: ``chart: {path: charts/shop}``. The spec file's own name is held
  to the same rule (it is written into every generated file's notice): bad
  ``rules/my spec.yaml``, ``rules/x--><img src=x>.yaml``; good ``rules/my-spec.yaml``.
* ``RG744`` a folder or file rulegen writes for the whole site or its scratch work
  (``runbooks/``, a runbook page, ``mkdocs.yml``, ``rules-out/``, ``.rulegen/``) is a
  symlink leading outside the project; reported at that path (line 0). Bad: ``runbooks`` a
  symlink to ``/var/www``; good: ``runbooks/`` a folder of the project.
"""

from __future__ import annotations

from ...fs.containment import escaping_link, lexical_problem
from ...findings import Finding, Severity

ID = "paths"

#: The spec's chart-relative paths build writes or test and render read.
_CHART_FILES = ("Chart.yaml", "values.yaml", "values.schema.json", "templates", "templates/_helpers.tpl",
                "templates/_rulegen.tpl", "rules", "tests")


def _chart_paths(spec) -> list[str]:
    c = spec.chart
    return [c.path] + [f"{c.path}/{f}" for f in _CHART_FILES] + [
        f"{c.path}/templates/{c.template}", f"{c.path}/rules/{spec.app}.rules.yaml",
        f"{c.path}/tests/{spec.app}.test.yaml"]


def check_spec(spec, ctx):
    """Yield RG740, RG741, RG743 for the spec file's own name (relative to the project), for
    ``chart.path`` and ``chart.template`` as written, and RG742 for a symlink under
    ``ctx.root`` that takes one of the chart's paths outside."""
    lf = spec.source
    problem = lexical_problem(lf.path)
    if problem is not None:  # the spec's own name goes into every generated file's notice
        yield Finding(lf.path, 1, 1, problem[0], Severity.ERROR,
                      f"spec file name {lf.path!r} {problem[1]}; rename the file (its name is written into "
                      "the notice of every file made from it, pages included)")
        return
    chart = lf.data.get("chart") or {}
    written_ok = True
    for key, what in (("path", "chart.path"), ("template", "chart.template")):
        value = chart.get(key)
        if not isinstance(value, str):
            continue
        # one trailing `/` on chart.path is tolerated: the model drops it
        problem = lexical_problem(value[:-1] if key == "path" and len(value) > 1 and value.endswith("/")
                                  else value)
        if problem is not None:
            written_ok = False
            code, reason = problem
            yield lf.finding(("chart", key), code, f"{what} {value!r} {reason}; rulegen reads and writes only "
                             "inside the project: give a folder relative to the project root, such as "
                             f"charts/{spec.app}")
    if not written_ok:
        return
    where = ("chart", "path") if "path" in chart else ("app",)
    seen: dict = {}
    for rel in _chart_paths(spec):
        link = escaping_link(ctx.root, rel, seen)
        if link is not None:
            yield lf.finding(where, "RG742", f"chart folder {spec.chart.path} leads outside the project: "
                             f"{link[0]} is a symlink to {link[1]}; make it a folder of the project (or point "
                             "chart.path at one); nothing is read or written through it")
            return


#: Site-wide outputs and scratch folders, relative to the project root; plus each app's page.
SITE_PATHS = ("runbooks", "runbooks/index.md", "runbooks/alerts.md", "runbooks/guides", "mkdocs.yml",
              "rules-out", ".rulegen", ".rulegen/test")


def check_project(specs, ctx):
    """Yield RG744 for each symlink that takes a site-wide path (:data:`SITE_PATHS`, each
    app's ``runbooks/<app>.md``, ``rules-out/<app>.rules.yaml`` and ``.rulegen/test/<app>``)
    outside ``ctx.root``; one finding per link."""
    rels = list(SITE_PATHS)
    for spec in specs:
        rels += [f"runbooks/{spec.app}.md", f"rules-out/{spec.app}.rules.yaml", f".rulegen/test/{spec.app}"]
    seen, reported = {}, set()
    for rel in rels:
        link = escaping_link(ctx.root, rel, seen)
        if link is None or link[0] in reported:
            continue
        reported.add(link[0])
        yield Finding(link[0], 0, 0, "RG744", Severity.ERROR,
                      f"{link[0]} is a symlink to {link[1]}, outside the project; rulegen writes "
                      f"{_what(link[0])} there: make {link[0]} a folder or file of the project")


def _what(rel: str) -> str:
    top = rel.split("/")[0]
    return {"runbooks": "the runbook site", "mkdocs.yml": "the site's nav", "rules-out": "plain rule files",
            ".rulegen": "test scratch files"}.get(top, "outputs")
