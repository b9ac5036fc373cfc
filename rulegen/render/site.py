"""The runbook site's settings (``mkdocs.yml``) and its generated ``nav``.

``mkdocs.yml`` belongs to people: rulegen reads ``site_url`` (the default base of every
``runbook_url``), ``docs_dir``, ``site_dir`` and ``use_directory_urls``, and rewrites only the
``nav`` key, through ruamel.yaml's round-trip mode so everything else, comments included,
stays as written; when the nav already is what rulegen would write, the file is left as it is
(byte for byte). It is read as mkdocs reads it: with PyYAML (libyaml), YAML 1.1 scalars
(``use_directory_urls: no`` is false). ``nav`` is:

1. ``Home`` (``index.md``) and ``Alert index`` (``alerts.md``), both generated;
2. ``Apps``: one entry per app page, titled by the spec's ``title``, sorted by app;
3. ``Guides``: hand-written pages under ``<docs_dir>/guides/*.md`` (sorted by file name,
   titled by their first ``# `` heading, else the file name), present only when there is one.
   rulegen never writes, checks for drift or deletes these pages: they do not carry the
   generated-file notice.
"""

from __future__ import annotations

import functools
import io
import os
import re
from dataclasses import dataclass
from pathlib import Path

from typing import TYPE_CHECKING

import yaml

from ..findings import RulegenError
from ..fs import read as fs_read
from ..fs import yamlbound
from ..spec import Spec
from .slug import DEFAULT_SITE_URL, page_path

if TYPE_CHECKING:
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedSeq

#: Where rulegen writes the pages (relative to the project root); mkdocs.yml's docs_dir must agree.
DOCS_DIR = "runbooks"
#: Folder of hand-written pages under the docs folder, listed in the nav's "Guides" section.
GUIDES_DIR = "guides"

_H1 = re.compile(r"^#\s+(.+?)\s*(\{[^}]*\})?\s*#*\s*$", re.M)


def _yaml() -> YAML:
    """ruamel.yaml's round trip, for an mkdocs.yml whose nav rulegen rewrites (imported here:
    a build or check that leaves the file as it is does not load ruamel.yaml)."""
    from ruamel.yaml import YAML
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.indent(mapping=2, sequence=4, offset=2)
    y.width = 4096
    # mkdocs.yml may hold !!python/name and !ENV tags; keep them as they are
    return y


@dataclass(frozen=True)
class SiteSettings:
    """What rulegen needs to know about the mkdocs site.

    Attributes:
        site_url: base URL with a trailing ``/`` (mkdocs ``site_url``; default
            :data:`DEFAULT_SITE_URL`).
        docs_dir: Markdown folder, relative to the project root (mkdocs default ``docs``;
            :data:`DOCS_DIR` when there is no mkdocs.yml).
        site_dir: built HTML folder, relative to the project root (mkdocs default ``site``).
        use_directory_urls: mkdocs' setting (default True): ``x.md`` is served at ``x/``, else
            at ``x.html``.
        link_validation: mkdocs' ``validation`` of links on pages, as ``(setting, level)``
            pairs for ``not_found``, ``absolute_links``, ``unrecognized_links`` and ``anchors``;
            a level is ``warn`` (fails ``mkdocs build --strict``), ``info``, ``ignore`` or, for
            ``absolute_links``, ``relative_to_docs``. See :func:`link_level`.
    """

    site_url: str = DEFAULT_SITE_URL
    docs_dir: str = DOCS_DIR
    site_dir: str = "site"
    use_directory_urls: bool = True
    link_validation: tuple = ()

    def link_level(self, what: str) -> str:
        """mkdocs' level for link problem ``what`` (``not_found``, ``absolute_links``,
        ``unrecognized_links``, ``anchors``) on this site: the ``validation`` setting of
        mkdocs.yml (``validation: {links: {...}}`` over the flat ``validation: {...}``), else
        mkdocs 1.6's default (``warn`` for ``not_found``, ``info`` for the others)."""
        return dict(self.link_validation).get(what, LINK_DEFAULTS.get(what, "warn"))


#: mkdocs 1.6's default levels of its link validation (its "validation" settings).
LINK_DEFAULTS = {"not_found": "warn", "absolute_links": "info", "unrecognized_links": "info", "anchors": "info"}


def _link_validation(doc) -> tuple:
    v = doc.get("validation") if isinstance(doc, dict) else None
    if not isinstance(v, dict):
        return ()
    out = {}
    for src in (v, v.get("links") if isinstance(v.get("links"), dict) else {}):
        for key in LINK_DEFAULTS:
            if isinstance(src.get(key), str):
                out[key] = src[key].strip().lower()
    return tuple(sorted(out.items()))


def _parse(text: str):
    yamlbound.check_text(text, "mkdocs.yml")
    try:
        return _yaml().load(text)
    except Exception as e:
        raise RulegenError(f"mkdocs.yml: not valid YAML: {str(e).splitlines()[0]}") from None


_STR_TAG = "tag:yaml.org,2002:str"


def _mkdocs_loader():
    """A PyYAML (libyaml) safe loader that reads mkdocs.yml as mkdocs does for the settings
    rulegen needs: YAML 1.1 scalars, ``!ENV`` resolved (:func:`_env`), and other tags
    (``!!python/name:...``, ``!relative``), which only matter to mkdocs' plugins, read as null."""
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):
        pass

    Loader.add_constructor("!ENV", lambda loader, node: _env(node, loader))
    # mkdocs reads with PyYAML's full loader, where !!python/str is a string
    Loader.add_constructor("tag:yaml.org,2002:python/str", lambda loader, node: loader.construct_scalar(node))
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    return Loader


_MKDOCS_LOADER = _mkdocs_loader()


#: How many INHERIT levels are followed (mkdocs follows them without a limit; a loop would
#: never end there).
MAX_INHERIT = 10


def _as_mkdocs_reads(text: str, folder: Path) -> dict | None:
    """mkdocs.yml ``text`` as mkdocs reads it (see :func:`_mkdocs_loader`), with the
    ``INHERIT`` parent file (relative to ``folder``) merged under it as mkdocs merges it:
    ``{}`` when it is not a mapping, None when PyYAML cannot read it.

    Raises:
        RulegenError: an ``INHERIT`` file is missing, unreadable, or inherits in a loop.
    """
    try:
        doc = yamlbound.load(text, _MKDOCS_LOADER, "mkdocs.yml")
    except (yaml.YAMLError, ValueError, RecursionError):
        return None
    return _inherited(doc, folder, 0) if isinstance(doc, dict) else {}


def _fast_settings(text: str, folder: Path | None = None) -> SiteSettings | None:
    """:class:`SiteSettings` read as mkdocs reads them (:func:`_as_mkdocs_reads`), or None when
    PyYAML cannot read the file (ruamel.yaml then reads it, or reports it).

    Raises:
        RulegenError: an ``INHERIT`` file is missing, unreadable, or inherits in a loop.
    """
    doc = _as_mkdocs_reads(text, folder or Path("."))
    return None if doc is None else _settings_from(doc)


def _inherited(doc: dict, folder: Path, depth: int) -> dict:
    """``doc`` with its ``INHERIT`` parent's keys under its own (mkdocs' configuration
    inheritance: the parent file, relative to ``folder``, is read first and the child's keys
    win; the settings rulegen reads are top-level scalars, so no deeper merge is needed)."""
    parent_name = doc.pop("INHERIT", None)
    if parent_name is None:
        return doc
    if depth >= MAX_INHERIT:
        raise RulegenError(f"mkdocs.yml: INHERIT goes more than {MAX_INHERIT} files deep (a loop?)")
    # as mkdocs finds it: the path tidied as text (os.path.normpath), '..' not through symlinks
    path = Path(os.path.normpath(os.path.join(folder, str(parent_name))))
    try:
        parent = yamlbound.load(fs_read.read_text(path), _MKDOCS_LOADER, str(path))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError) as e:
        raise RulegenError(f"mkdocs.yml: cannot read its INHERIT file {path}: "
                           f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    if not isinstance(parent, dict):
        parent = {}
    return {**_inherited(parent, path.parent, depth + 1), **doc}


def _env(node, loader):
    """The value of an ``!ENV`` node as mkdocs gives it (its docs, "Environment variables"):
    ``!ENV NAME`` or ``!ENV [NAME, OTHER, default]``: the first of the names set in the
    environment, its text typed as a plain YAML scalar; else the last item of a list of two
    or more (typed as written); else null. Raises ValueError for any other shape."""
    if isinstance(node, yaml.ScalarNode):
        names, default = [node.value], None
    elif isinstance(node, yaml.SequenceNode) and node.value \
            and all(isinstance(c, yaml.ScalarNode) for c in node.value):
        items = node.value
        default = loader.construct_object(items[-1]) if len(items) > 1 else None
        names = [c.value for c in (items[:-1] if len(items) > 1 else items)]
    else:
        raise ValueError("!ENV takes a name or a list of names and a default")
    for name in names:
        if name in os.environ:
            value = os.environ[name]
            tag = loader.resolve(yaml.ScalarNode, value, (True, False))
            return loader.construct_object(yaml.ScalarNode(tag, value))
    return default


def _settings_from(doc) -> SiteSettings:
    """:class:`SiteSettings` from mkdocs.yml's top-level mapping. A setting that is null (left
    empty, or an ``!ENV`` whose variables are unset and that has no default) takes mkdocs'
    default, as in mkdocs."""
    url = doc.get("site_url")
    dirs = doc.get("use_directory_urls")
    return SiteSettings(
        site_url=(str(url).rstrip("/") + "/") if url else DEFAULT_SITE_URL,
        docs_dir=str(doc.get("docs_dir") or "docs").strip("/"),
        site_dir=str(doc.get("site_dir") or "site").strip("/"),
        use_directory_urls=True if dirs is None else bool(dirs),
        link_validation=_link_validation(doc),
    )


@functools.lru_cache(maxsize=8)
def _settings_of(text: str, folder: Path | None = None) -> SiteSettings:
    """Settings of an mkdocs.yml text in ``folder``: parsed once per text, though a build and
    a check ask for them more than once (plan, link check); an invalid text raises each time."""
    fast = _fast_settings(text, folder)
    if fast is not None:
        return fast
    doc = _parse(text)
    if not isinstance(doc, dict):
        return SiteSettings()
    return _settings_from(doc)


def settings(root) -> SiteSettings:
    """The :class:`SiteSettings` of ``root/mkdocs.yml`` (defaults when it does not exist).

    Raises:
        RulegenError: mkdocs.yml exists but is not UTF-8 or not valid YAML, or its INHERIT
            file cannot be read.
    """
    p = Path(root) / "mkdocs.yml"
    if not p.is_file():
        if p.exists() or p.is_symlink():
            raise RulegenError("mkdocs.yml exists but is not a regular file; remove or rename it")
        return SiteSettings()
    try:
        text = fs_read.read_text(p, "mkdocs.yml")
    except UnicodeDecodeError:
        raise RulegenError("mkdocs.yml is not UTF-8 text; save it as UTF-8") from None
    if "!ENV" in text or "INHERIT" in text:  # depends on the environment or another file too
        return _settings_of.__wrapped__(text, p.parent)
    return _settings_of(text, p.parent)


def site_url(root) -> str:
    """``site_url`` of ``root/mkdocs.yml`` (with a trailing ``/``), or the default.

    Raises:
        RulegenError: mkdocs.yml exists but is not valid YAML.
    """
    return settings(root).site_url


#: What the runbook pages need from mkdocs.yml: (setting, the value it must list).
PAGE_SETTINGS = (("markdown_extensions", "md_in_html"), ("extra_css", "assets/rulegen.css"),
                 ("extra_javascript", "assets/rulegen.js"))


def missing_page_settings(text: str, root) -> list[str]:
    """The entries of :data:`PAGE_SETTINGS` that mkdocs.yml ``text`` (read as mkdocs reads it,
    ``INHERIT`` included) does not list, as ``"<setting>: <value>"``; [] when it cannot be
    read (reading errors are reported elsewhere)."""
    try:
        doc = _as_mkdocs_reads(text, Path(root))
    except RulegenError:
        return []
    if not isinstance(doc, dict):
        return []
    out = []
    for key, want in PAGE_SETTINGS:
        items = doc.get(key)
        names = set()
        for item in items if isinstance(items, list) else []:
            if isinstance(item, str):
                names.add(item)
            elif isinstance(item, dict):  # {md_in_html: {...}} or {path: assets/x.js, defer: true}
                names.update(str(k) for k in item)
                if "path" in item:
                    names.add(str(item["path"]))
        if want not in names:
            out.append(f"{key}: {want}")
    return out


def guide_pages(root) -> list[tuple[str, str]]:
    """Hand-written guide pages: ``(title, path relative to the docs folder)`` for every
    ``runbooks/guides/*.md`` under ``root``, sorted by path. The title is the page's first
    level-1 heading (attr_list ``{ ... }`` removed), else the file name without ``.md``."""
    gdir = Path(root) / DOCS_DIR / GUIDES_DIR
    out = []
    if gdir.is_dir():
        for p in sorted(gdir.glob("*.md")):
            try:
                text = fs_read.read_text(p)
            except (OSError, UnicodeDecodeError):
                text = ""
            m = _H1.search(text)
            title = m.group(1).strip() if m else p.stem
            out.append((title, f"{GUIDES_DIR}/{p.name}"))
    return out


def _existing_guides(doc) -> CommentedSeq | None:
    nav = doc.get("nav")
    if isinstance(nav, list):
        for item in nav:
            if isinstance(item, dict) and "Guides" in item:
                return item["Guides"]
    return None


def _str(text: str):
    """``text`` for ruamel.yaml to write: quoted when mkdocs (PyYAML, YAML 1.1) would read it
    unquoted as anything but this string (``yes``, ``on``, ``123``, ``null``...), which
    ruamel.yaml, writing YAML 1.2, leaves plain."""
    from ruamel.yaml.scalarstring import SingleQuotedScalarString
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))
    return text if tag == _STR_TAG else SingleQuotedScalarString(text)


_RESOLVER = yaml.resolver.Resolver()


def _nav_as_read(text: str, folder: Path) -> list | None:
    """The nav of mkdocs.yml ``text`` as mkdocs reads it (:func:`_as_mkdocs_reads`: merge
    keys, the last of duplicate keys, ``INHERIT`` parents), or None when it cannot be read
    that way or has none."""
    try:
        nav = (_as_mkdocs_reads(text, folder) or {}).get("nav")
    except RulegenError:
        return None
    return nav if isinstance(nav, list) else None


def nav_title(title: str) -> str:
    """A spec's ``title`` as a nav title. mkdocs and mkdocs-material put nav titles into the
    page HTML as they are, and into ``<title>`` through Jinja's ``striptags``, which turns
    entities back into characters, so neither raw nor escaped markup is safe there:
    validation refuses ``<``, ``>`` and ``&`` in a title (RG749) and they are left out here
    too (issue 18)."""
    return re.sub(r"[<>&]", "", title)


def _nav_wanted(specs: list[Spec], guides) -> list:
    """The nav rulegen writes, as mkdocs reads it: single-key mappings of titles to paths
    or to lists of such mappings."""
    nav = [{"Home": "index.md"}, {"Alert index": "alerts.md"},
           {"Apps": [{nav_title(s.title): page_path(s.app)} for s in sorted(specs, key=lambda s: s.app)]}]
    if guides:
        nav.append({"Guides": guides})
    return nav


def render_mkdocs(specs: list[Spec], existing: str | None, root=None) -> str | None:
    """``mkdocs.yml`` with ``nav`` set from the specs (see the module docstring), or None when
    there is no mkdocs.yml; ``existing`` itself when its nav already is that nav. ``root`` (the
    project root) is where guide pages are looked for; without it the ``Guides`` section of
    the existing nav is kept as it is.

    Raises:
        RulegenError: mkdocs.yml is not a mapping, or its nav must be rewritten and ruamel.yaml
            cannot read it (a duplicate key, ...).
    """
    if existing is None:
        return None
    have = _nav_as_read(existing, Path(root) if root is not None else Path("."))
    if have is not None:
        if root is not None:
            guides = [{title: path} for title, path in guide_pages(root)]
        else:
            guides = next((e["Guides"] for e in have if isinstance(e, dict) and "Guides" in e), None)
        if have == _nav_wanted(specs, guides):
            return existing  # nothing to change: the file stays byte for byte
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    y = _yaml()
    yamlbound.check_text(existing, "mkdocs.yml")
    try:  # libyaml (and mkdocs) may accept what ruamel.yaml's round trip refuses, e.g. a duplicate key
        doc = y.load(existing)
    except Exception as e:
        raise RulegenError(f"mkdocs.yml: not valid YAML for rewriting its nav: {str(e).splitlines()[0]}; "
                           "fix it (or write the nav by hand as rulegen would)") from None
    if not isinstance(doc, CommentedMap):
        raise RulegenError("mkdocs.yml: must be a mapping")
    nav = CommentedSeq()
    nav.append(CommentedMap([("Home", "index.md")]))
    nav.append(CommentedMap([("Alert index", "alerts.md")]))
    apps = CommentedSeq()
    for s in sorted(specs, key=lambda s: s.app):
        apps.append(CommentedMap([(_str(nav_title(s.title)), _str(page_path(s.app)))]))
    nav.append(CommentedMap([("Apps", apps)]))
    if root is not None:
        guides = CommentedSeq()
        for title, path in guide_pages(root):
            guides.append(CommentedMap([(_str(title), _str(path))]))
    else:
        guides = _existing_guides(doc)
    if guides:
        nav.append(CommentedMap([("Guides", guides)]))
    doc["nav"] = nav
    out = io.StringIO()
    y.dump(doc, out)
    return out.getvalue()


def chart_yaml(spec: Spec) -> str:
    """A minimal ``Chart.yaml`` for a chart folder that does not exist yet (written once;
    afterwards it is the team's file)."""
    return (
        "apiVersion: v2\n"
        f"name: {spec.app}\n"
        f"description: Alerting rules of {spec.app} (PrometheusRule generated by rulegen).\n"
        "type: application\n"
        "version: 0.1.0\n"
    )
