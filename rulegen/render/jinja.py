"""The Jinja2 environment for rulegen's templates (``templates/*.j2``).

Helm and Prometheus both use ``{{ }}``, so rulegen's templates use other delimiters:
``[[ value ]]``, ``[% block %]`` and ``[# comment #]``. Templates only loop and place
text; escaping and quoting are decided in Python (:mod:`rulegen.render.yamltext`).
"""

from __future__ import annotations

import functools
from pathlib import Path


_DICT_ATTRS = frozenset(dir(dict))


def templates_dir() -> Path:
    """Folder of rulegen's Jinja2 templates: the ``rulegen.templates`` package, which is the
    repository's ``templates/`` folder (mapped in pyproject.toml)."""
    import importlib.resources
    return Path(str(importlib.resources.files("rulegen.templates")))


@functools.cache
def environment():
    """The shared :class:`jinja2.Environment` (made once, so each template is compiled once);
    templates are loaded from the ``rulegen.templates`` package, their compiled code kept
    between runs by :func:`rulegen.codecache.jinja_bytecode_cache`. Jinja2 is imported here,
    on first use, so commands that render nothing do not pay for it."""
    import jinja2

    class Environment(jinja2.Environment):
        """``x.name`` on a plain dict reads the key first. Jinja tries ``getattr`` first, and the
        AttributeError each rule field lookup raised was a fifth of the PrometheusRule render.
        A key that is also a dict attribute (``items``, ``values``...) keeps Jinja's order."""

        def getattr(self, obj, attribute):
            if type(obj) is dict and attribute not in _DICT_ATTRS:
                try:
                    return obj[attribute]
                except (KeyError, TypeError):
                    pass
            return super().getattr(obj, attribute)

    settings = dict(
        variable_start_string="[[",
        variable_end_string="]]",
        block_start_string="[%",
        block_end_string="%]",
        comment_start_string="[#",
        comment_end_string="#]",
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    from ..codecache import jinja_bytecode_cache
    # compiled templates are kept like Python's bytecode (rulegen.codecache), keyed by these settings
    # (this module's text too: a change to the environment made here is a new cache folder)
    cache = jinja_bytecode_cache(repr(sorted(settings.items())) + "|StrictUndefined|"
                                 + Path(__file__).read_text(encoding="utf-8"))
    return Environment(loader=jinja2.FileSystemLoader(str(templates_dir())), undefined=jinja2.StrictUndefined,
                       bytecode_cache=cache, **settings)


def render(name: str, **context) -> str:
    """Render template ``name`` with ``context``."""
    return environment().get_template(name).render(**context)
