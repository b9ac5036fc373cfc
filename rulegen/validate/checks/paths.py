"""Paths stay inside the project (see :mod:`rulegen.fs.containment`).

A spec names where its chart lives (``chart.path``, ``chart.template``); ``build`` writes
``Chart.yaml``, ``values.yaml``, ``values.schema.json``, ``templates/``, ``rules/`` and
``tests/`` there
and ``test`` runs ``helm`` on it. These checks keep every such path inside the project root,
so ``build``, ``check`` and ``test`` never read or write anything outside it, and keep the
programs rulegen runs out of the project (:mod:`rulegen.tools.find`). They cannot be switched
off or downgraded in ``.rulegen.yaml``.

Codes:

* ``RG740`` a path is absolute. Bad: ``chart: {path: /srv/charts/shop}``; good:
  ``chart: {path: charts/shop}`` (relative to the project root).
* ``RG741`` a path has a ``..`` segment. Bad: ``chart: {path: ../../outside}``; good: a folder
  under the project, ``chart: {path: charts/outside}``.
* ``RG742`` a path leads outside the project through a symlink (git stores symlinks, so a pull
  request can add one); the message names the link and its target. This covers every spec
  file and every file and folder inside a chart folder too (``files/``, ``templates/``,
  ``rules/``, any other; reported at the link, line 0), which the spec loader, Helm and
  promtool read: a template can print any chart file (``.Files.Get``), so a link there would
  put what it points at (``/proc/self/environ``, a credentials file) into the output or the
  log; nothing is read through it. The same holds for every file under the site's folder
  ``runbooks/`` (rulegen reads each page, mkdocs publishes what a link there points at).
  A link that stays inside the project is refused too when
  it leads into git's own folder ``.git`` (``.git/config`` can hold the CI job's token, e.g.
  ``http.extraheader``), directly or through a linked folder, or to a folder above itself (a
  loop Helm and ``test``'s copy would follow without end). Bad: ``charts/shop`` a symlink to ``/etc``,
  ``charts/shop/files/cfg`` a symlink to ``../../../.git/config``, ``charts/shop/files/all`` to ``../..``,
  ``charts/shop/files/env`` a symlink to ``/proc/self/environ``; good: ``charts/shop`` a
  real folder (or a link to another folder of the project) holding regular files.
* ``RG743`` a path is not a plain relative path: empty, ``./`` or ``//`` (one trailing ``/``
  on ``chart.path`` is fine), a backslash, characters other than letters, digits, ``.``,
  ``_``, ``-``, or a segment starting with ``-`` or ``.``. Bad: ``chart: {path: ./charts/shop}``, ``charts/.git``,
  ``charts/my chart``; good: ``chart: {path: charts/shop}``. The spec file's own name is held
  to the same rule (it is written into every generated file's notice): bad
  ``rules/my spec.yaml``, ``rules/x--><img src=x>.yaml``; good ``rules/my-spec.yaml``.
* ``RG744`` a folder or file rulegen writes for the whole site or its scratch work
  (``runbooks/``, a runbook page, ``mkdocs.yml``, ``rules-out/``, the sum files'
  ``.rulegen-sums/``, ``.rulegen/``) is a symlink leading outside the project; reported at that path (line 0). Bad: ``runbooks`` a
  symlink to ``/var/www``; good: ``runbooks/`` a folder of the project.
* ``RG760`` a spec file or a file inside a chart folder is a special file (a FIFO, socket or
  device, or a symlink to one): a FIFO makes its reader wait forever, a device is no chart
  data. Reported at the file (line 0); nothing is read. Every other input rulegen reads
  (``values.yaml``, the baseline, ``.rulegen.yaml``, files given to ``import``) is refused with
  the same code by the one reader, :mod:`rulegen.fs.read`. Bad: ``charts/shop/values.yaml`` made
  with ``mkfifo``; good: a regular file.
* ``RG770`` an app chart's ``charts/rulegen-library`` is not exactly the symlink rulegen makes
  there: a relative link to the project's chart library (``../../rulegen-library`` for
  ``charts/<app>``), or the library folder ``charts/rulegen-library`` is itself a symlink.
  Helm loads everything under a chart's ``charts/`` as a subchart, so a link there to another
  place of the project, a folder or a file would put other templates into the chart; it is
  the only symlink rulegen accepts at that name (every other symlink is judged by RG742).
  ``check`` also reports a missing link (the chart's template then finds no
  ``rulegen.v3.prometheusrule``). A file holding the link's text is a checkout with git's
  ``core.symlinks`` false (Windows without symlink rights): turn it on and check the file out
  again. Reported at the path (line 0). Bad: ``charts/shop/charts/rulegen-library`` a symlink
  to ``../../other``, or a copied folder; good: a symlink to ``../../rulegen-library``, made
  by ``rulegen build``.
* ``RG771`` a spec's ``chart.path`` is the chart library's folder ``charts/rulegen-library``
  (or inside it), which ``rulegen build`` writes for every chart. Bad: ``app: rulegen-library``
  without ``chart.path``; good: ``chart: {path: charts/rulegen-library-app}``.
* ``RG773`` the chart library's folder ``charts/rulegen-library`` holds a file rulegen does not
  write there (only ``Chart.yaml`` and ``templates/_rulegen.tpl``). Every app chart links the
  library, and Helm loads all of its templates: an extra ``templates/_a.tpl`` redefining a
  ``rulegen.v3.*`` template would change every team's PrometheusRule from one pull request.
  Reported at the file (line 0); cannot be switched off or downgraded in ``.rulegen.yaml``
  (one pull request could otherwise switch it off and add the file). Bad:
  ``charts/rulegen-library/templates/_a.tpl``; good: a team's own templates in its app chart's
  ``templates/``.
* ``RG776`` an entry under an app chart's ``charts/`` folder other than rulegen's
  ``charts/rulegen-library`` link (RG770's), which the chart's ``Chart.yaml`` does not declare
  among its ``dependencies``. Helm renders every chart under ``charts/`` into the release,
  declared or not, so a pull request that changes no spec could deploy another team's alerts
  a second time (duplicate pages) or any Kubernetes object no spec declares. Helm's rules
  decide what is declared (:mod:`rulegen.render.subcharts`): a folder or ``.tgz`` archive is
  declared when a ``dependencies`` item has the ``name`` in the subchart's own ``Chart.yaml``
  (not the folder or file name); a symlink into another app's chart, or to the chart library
  under another name, is reported even when declared, as is the first symlink into another
  app's chart inside a declared folder (``templates`` linked to another chart's); a file, or a folder without
  ``Chart.yaml``, fails the render. Entries Helm skips (names starting with ``_`` or ``.``,
  ``*.prov`` provenance files, empty folders) and links already reported as RG742 are left
  out. Reported at the entry (line 0). Bad: ``charts/shop/charts/zz`` a symlink to
  ``../../llama-swap``, or a folder ``charts/shop/charts/extra/`` with its own ``Chart.yaml``
  and a PrometheusRule template that ``dependencies`` does not name; good: only the
  ``rulegen-library`` link, or ``charts/shop/charts/redis-18.0.0.tgz`` with ``- name: redis``
  under ``dependencies:`` in ``charts/shop/Chart.yaml``.
* ``RG777`` the sum files' folder ``.rulegen-sums`` is a symlink (to anywhere: one to a folder
  outside the project is also RG744). ``rulegen build`` writes the sum files there, and
  through a link to another folder of the project (a chart's ``templates/``, which Helm renders
  whole) it wrote them into that folder. Reported at the path (line 0). Bad: ``.rulegen-sums``
  a symlink to ``charts/shop/templates``; good: ``.rulegen-sums/`` a folder, written by
  ``rulegen build``.
* ``RG761`` the project holds a ``.tools`` folder with a file git tracks, or an executable named
  ``helm`` or ``promtool`` under it (older rulegen ran tools from ``<project>/.tools/bin``,
  and a pull request can commit one there): rulegen never runs a program from the project it
  checks. Reported at the file (line 0); the commands that run tools refuse to start. Bad:
  a committed ``.tools/bin/helm``; good: no ``.tools`` folder; tools in
  ``~/.cache/rulegen/tools/bin`` (``scripts/install-tools.sh``) or ``$RULEGEN_TOOLS_DIR/bin``.
* ``RG762`` (error) a command needs ``helm`` or ``promtool`` and the first one found
  (``$RULEGEN_TOOLS_DIR/bin``, the per-user cache, ``PATH``) lies inside the project being
  checked, which a pull request can write; the command stops before running it. Bad:
  ``RULEGEN_TOOLS_DIR=$PWD/tools`` or ``PATH=$PWD/bin:$PATH`` in CI; good:
  ``RULEGEN_TOOLS_DIR=$HOME/.cache/rulegen/tools``, outside the checkout.
"""

from __future__ import annotations

from ...fs.containment import describe, escaping_link, lexical_problem, tree_problems
from ...findings import Finding, Severity
from ...render import library
from ...render.sums import SUM_DIR
from ...tools.find import project_tools

ID = "paths"

#: The spec's chart-relative paths build writes or test and render read.
_CHART_FILES = ("Chart.yaml", "values.yaml", "values.schema.json", "templates", "templates/_helpers.tpl",
                "templates/_rulegen.tpl", "rules", "tests", "charts", "charts/rulegen-library")


def _chart_paths(spec) -> list[str]:
    c = spec.chart
    return [c.path] + [f"{c.path}/{f}" for f in _CHART_FILES] + [
        f"{c.path}/templates/{c.template}", f"{c.path}/rules/{spec.app}.rules.yaml",
        f"{c.path}/rules/{spec.app}.meta.yaml",
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
    if library.is_library(spec.chart.path):
        yield lf.finding(where, "RG771", f"chart folder {spec.chart.path} is the chart library rulegen writes "
                         f"for every chart ({library.LIBRARY_DIR}); give the app another chart.path, such as "
                         f"charts/{spec.app}-app")
        return
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
              "rules-out", ".rulegen-sums", ".rulegen", ".rulegen/test")


def check_project(specs, ctx):
    """Yield RG744 for each symlink that takes a site-wide path (:data:`SITE_PATHS`, each
    app's ``runbooks/<app>.md``, ``rules-out/<app>.rules.yaml`` and ``.rulegen/test/<app>``)
    outside ``ctx.root``, one finding per link; RG742 and RG760 for each file of each spec's
    chart folder (and of the chart library) that leads outside or is special
    (:func:`rulegen.fs.containment.tree_problems`); RG770 for a chart's link to the chart
    library that is not the one rulegen makes; RG776 for anything else under a chart's
    ``charts/`` that Helm would render and the chart does not declare (an entry already
    reported as RG742 or RG760 is not reported again); RG777 when the sum files' folder is a
    symlink; RG761 when the project carries tools."""
    reported = set()
    for f in _trees(specs, ctx):
        reported.add(f.file)
        yield f
    yield from _links(specs, ctx)
    yield from _subcharts(specs, ctx, reported)
    if (ctx.root / SUM_DIR).is_symlink():
        import os
        yield Finding(SUM_DIR, 0, 0, "RG777", Severity.ERROR,
                      f"{SUM_DIR} is a symlink (to {os.readlink(ctx.root / SUM_DIR)}); rulegen writes the sum files "
                      "of the generated files there, and would write them into the folder it leads to: make "
                      f"{SUM_DIR} a folder of the project (remove the link; `rulegen build` writes it)")
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


def _links(specs, ctx):
    """RG770 for each chart whose ``charts/rulegen-library`` is not the link rulegen makes, and
    for the library folder when it is a symlink."""
    charts = sorted({s.chart.path.rstrip("/") for s in specs if lexical_problem(s.chart.path.rstrip("/")) is None
                     and not library.is_library(s.chart.path)})
    for chart in charts:
        problem = library.link_problem(ctx.root, chart)
        if problem is not None:
            yield Finding(library.link_path(chart), 0, 0, "RG770", Severity.ERROR, problem)
    if charts and library.link_state(ctx.root, library.LIBRARY_DIR)[0] == "link":
        yield Finding(library.LIBRARY_DIR, 0, 0, "RG770", Severity.ERROR,
                      f"{library.LIBRARY_DIR} is a symlink; rulegen writes the chart library there as a folder "
                      "(each chart links to it): remove the link, and `rulegen build` writes the folder")
    elif charts:
        yield from _library_extras(ctx.root)


def _subcharts(specs, ctx, reported):
    """RG776 for each entry under a chart's ``charts/`` other than the library link that Helm
    would render into the release without a declaration in the chart's ``Chart.yaml``, and for
    a link into another app's chart (of ``specs`` or ``ctx.reference``) (:func:`rulegen.render.subcharts.entry_problems`); paths in
    ``reported`` (RG742, RG760) are left out."""
    from ...render import subcharts
    apps: dict = {}  # every app chart, the reference specs' too (`rulegen validate rules/x.yaml`)
    for s in list(specs) + list(ctx.reference):
        chart = s.chart.path.rstrip("/")
        if lexical_problem(chart) is None and not library.is_library(chart):
            apps.setdefault(chart, s.app)
    judged = sorted({s.chart.path.rstrip("/") for s in specs} & set(apps))
    for chart in judged:
        others = {c: a for c, a in apps.items() if c != chart}
        for p in subcharts.entry_problems(ctx.root, chart, others, reported):
            yield Finding(p.path, 0, 0, "RG776", Severity.ERROR, p.message)


def _library_extras(root):
    """RG773 for each file (or link, or special file) in the chart library's folder that rulegen
    does not write there; the folder is walked without following links."""
    import os
    top = root / library.LIBRARY_DIR
    if not top.is_dir() or top.is_symlink():
        return
    ours = {rel for rel, _ in library.files()}
    for folder, dirs, names in os.walk(top):
        here = os.path.relpath(folder, root).replace(os.sep, "/")
        links = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
        dirs[:] = sorted(d for d in dirs if d not in links)
        for name in sorted(names + links):
            rel = f"{here}/{name}"
            if rel not in ours:
                yield Finding(rel, 0, 0, "RG773", Severity.ERROR,
                              f"{rel} is not a file rulegen writes into the chart library (only "
                              f"{' and '.join(sorted(ours))}); every app chart links the library and Helm "
                              "loads all of its templates, so it would change every team's rules: remove it "
                              "(a team's own templates go into its app chart's templates/)")


def _what(rel: str) -> str:
    top = rel.split("/")[0]
    return {"runbooks": "the runbook site", "mkdocs.yml": "the site's nav", "rules-out": "plain rule files",
            ".rulegen": "test scratch files", ".rulegen-sums": "the sum files of the generated files"}.get(
        top, "outputs")


def _trees(specs, ctx):
    """The RG742, RG760 and RG761 part of :func:`check_project`."""
    tools = project_tools(ctx.root)
    if tools is not None:
        yield Finding(tools[0], 0, 0, "RG761", Severity.ERROR,
                      f"{tools[0]} {tools[1]}: rulegen never runs a program from the project it checks (a pull "
                      "request can commit one); remove .tools/ from the project and keep the tools outside it "
                      "(scripts/install-tools.sh builds them into ~/.cache/rulegen/tools/bin)")
    reported = set()
    # spec files: rulegen.pipeline.load_contained; a chart.path that is not plain is RG740-RG743
    trees = sorted({s.chart.path for s in specs if lexical_problem(s.chart.path) is None})
    # the site's folder too: rulegen reads every page (a guide's title goes into the nav) and
    # mkdocs publishes whatever a link there points at (the folder itself linked out is RG744)
    if trees:  # the chart library every chart holds (through its link)
        trees.append(library.LIBRARY_DIR)
    # and the sum files' folder: rulegen reads every file there (a pull request commits it; a
    # sum file or build journal linked out was printed into the CI log by check's diff)
    for rel in trees + [SITE_PATHS[0], SUM_DIR]:
        readers = {SITE_PATHS[0]: "rulegen and mkdocs", SUM_DIR: "rulegen's build and check"}.get(
            rel, "rulegen, helm and promtool")
        for code, path, detail in tree_problems(ctx.root, rel):
            if path in reported or path in (SITE_PATHS[0], SUM_DIR) or (
                    rel == SITE_PATHS[0] and any(part.startswith(".") for part in path.split("/"))):
                continue  # the folder itself linked out: RG744; mkdocs leaves hidden files out
            reported.add(path)
            yield Finding(path, 0, 0, code, Severity.ERROR,
                          f"{describe(code, path, detail)[6:]}; {readers} read every file here, "
                          f"so this one is refused: make {path} a regular file of the project")
