"""``rulegen new APP``: a starter spec that validates, builds and tests green as written.

The spec (``templates/starter.yaml.j2``) holds one recording rule (the 5xx ratio of
``http_requests_total`` over 5 minutes, named ``job:http_requests_errors:ratio_rate5m`` in the
``level:metric:operations`` form of the Prometheus docs), one alert on it (``> 0.05`` for
``10m``), the runbook blocks of a page (context, facts, explanation, causes, read-only
diagnosis, PromQL, resolution) and promtool tests on both sides of the threshold (``0.05``
does not fire, ``0.051`` does) and of ``for`` (not at 9m, at 10m; a dip restarts the wait),
so that a changed comparison, threshold, duration, range window or ``job`` matcher fails a
test (``rulegen test --min-mutation-score 100`` passes on a fresh project; the two mutants
that drop a ``job`` matcher from one side of the ratio are declared equivalent, with why).

In a new project (no ``.rulegen.yaml``, no other spec under ``rules/``) it also writes
``.rulegen.yaml`` with ``policy_changes: fail`` (:func:`write_project_config`), so the project
says from the start that ``rulegen check --base`` fails a pull request that grows the
baseline or weakens a check (:mod:`rulegen.gitops.policy`); and, where they are missing, the
runbook site's ``mkdocs.yml`` (``templates/starter-mkdocs.yml``: the settings the pages need,
:data:`rulegen.render.site.PAGE_SETTINGS`; ``rulegen build`` adds the nav) and a
``.gitignore`` keeping rulegen's work files (``.rulegen/``, all but the schema copy specs
name) and the built site out of commits (:func:`write_site_files`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .findings import RulegenError
from .fs import read as fs_read
from .fs.write import atomic_write
from .render import jinja
from .spec import PROJECT_SCHEMA, SCHEMA_PATH, schema_ref

#: An app name rulegen accepts: a DNS label of at most 53 characters (the spec schema's ``app``).
APP_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,51}[a-z0-9])?$")


#: The comment above ``policy_changes`` in a ``.rulegen.yaml`` that ``new`` or ``import`` creates.
POLICY_COMMENT = ("`rulegen check --base <the pull request's base branch>` fails when a pull request adds\n"
                  "entries to .rulegen-baseline.yaml or switches a check off or weakens it here (RG820-RG823);\n"
                  "the value on the base branch counts, not the pull request's. warn: report them only.")

#: The ``.rulegen.yaml`` of a new project.
PROJECT_CONFIG = ("# rulegen project configuration (every key: docs/configuration.md in rulegen's documentation).\n"
                  + "".join(f"# {line}\n" for line in POLICY_COMMENT.splitlines())
                  + "policy_changes: fail\n")


def is_new_project(root: Path) -> bool:
    """True when the project at ``root`` has no ``.rulegen.yaml`` (not even a dangling link)
    and no spec under ``rules/``."""
    import os

    from .config import CONFIG_FILE
    folder = root / "rules"
    return not os.path.lexists(root / CONFIG_FILE) and \
        not (folder.is_dir() and any(folder.glob("*.y*ml")))


def write_project_config(root: Path) -> Path:
    """Write :data:`PROJECT_CONFIG` as ``root/.rulegen.yaml`` (atomically) and return its path."""
    from .config import CONFIG_FILE
    path = root / CONFIG_FILE
    atomic_write(path, PROJECT_CONFIG, root=root)
    return path


#: The ``.gitignore`` of a new project: rulegen's work files (``test``, ``backtest`` and mutation
#: testing write under ``.rulegen/``) and the built site, but not the schema copy the specs name.
GITIGNORE = ("# rulegen's work files (tests, mutation runs), but not the spec schema the specs name\n"
             ".rulegen/*\n!.rulegen/schema.json\n# the built runbook site (mkdocs build)\nsite/\n")


def write_site_files(root: Path) -> list[Path]:
    """Write ``mkdocs.yml`` (the starter site settings) and ``.gitignore`` (:data:`GITIGNORE`)
    under ``root``, each only where no such file (or link) exists; return the paths written."""
    import os

    from .render.jinja import templates_dir
    out = []
    for name, text in (("mkdocs.yml", lambda: (templates_dir() / "starter-mkdocs.yml").read_text(encoding="utf-8")),
                       (".gitignore", lambda: GITIGNORE)):
        if not os.path.lexists(root / name):
            out.append(atomic_write(root / name, text(), root=root))
    return out


def alert_name(app: str) -> str:
    """The starter alert's name: the app in CamelCase plus ``HighErrorRate``
    (``ci-build`` -> ``CiBuildHighErrorRate``), so two starters never share an alert name."""
    camel = "".join(p[:1].upper() + p[1:] for p in app.split("-"))
    if camel[:1].isdigit():
        camel = "App" + camel
    return camel + "HighErrorRate"


def spec_text(app: str, title: str | None, schema_ref: str) -> str:
    """The starter spec for ``app`` (a DNS label), with ``title`` as its display title when
    given; ``schema_ref`` is the ``$schema`` path written on its first line."""
    return jinja.render("starter.yaml.j2", app=app, alert=alert_name(app), title=title,
                        title_yaml=json.dumps(title, ensure_ascii=False) if title else "",
                        schema_path=schema_ref)


def write_starter(root: Path, app: str, title: str | None = None) -> Path:
    """Write ``rules/<app>.yaml`` under ``root`` and return its path.

    Raises:
        RulegenError: ``app`` is not a DNS label (the message suggests one, with the name as
            ``--title``), the spec file exists already, or another spec under ``rules/`` has
            ``app: <app>``.
    """
    if not APP_NAME.fullmatch(app):  # match: `$` also before a final line feed
        slug = re.sub(r"[^a-z0-9]+", "-", app.lower()).strip("-")[:53].strip("-") or "my-app"
        raise RulegenError(f"{app!r} is not an app name (a DNS label: lowercase letters, digits "
                           f"and '-', at most 53 characters); run `rulegen new {slug} "
                           f"--title {json.dumps(app)}` to show it as {app!r}")
    folder = root / "rules"
    path = folder / f"{app}.yaml"
    if path.exists():
        raise RulegenError(f"{path.relative_to(root)} exists already; edit it, or choose another app name")
    for other in sorted(folder.glob("*.y*ml")) if folder.is_dir() else []:
        try:
            named = re.search(r"^app:[ \t]*[\"']?([a-z0-9-]+)[\"']?[ \t]*(?:#.*)?$",
                              fs_read.read_text(other, other.relative_to(root).as_posix()), re.M)
        except (OSError, UnicodeDecodeError, fs_read.InputRefused):
            continue
        if named and named.group(1) == app:
            raise RulegenError(f"{other.relative_to(root)} already defines app {app}; edit it, or "
                               "choose another app name")
    text = spec_text(app, title, schema_ref(folder, root))
    return atomic_write(path, text, root=root)


def write_schema_copy(root: Path) -> Path | None:
    """Write the spec schema to ``.rulegen/schema.json`` under ``root`` (as ``rulegen import``
    does), where a spec's ``$schema`` line points when rulegen is installed outside the project
    (a path into site-packages would differ on every machine); None when the packaged schema
    lies inside the project (rulegen's own repository) or the copy is current."""
    if SCHEMA_PATH.resolve().is_relative_to(root.resolve()):
        return None
    schema = SCHEMA_PATH.read_text(encoding="utf-8")
    target = root / PROJECT_SCHEMA
    if target.is_file() and fs_read.read_text(target, PROJECT_SCHEMA) == schema:
        return None
    return atomic_write(target, schema, root=root)
