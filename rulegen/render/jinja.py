"""The Jinja2 environment for rulegen's templates (``templates/*.j2``).

Helm and Prometheus both use ``{{ }}``, so rulegen's templates use other delimiters:
``[[ value ]]``, ``[% block %]`` and ``[# comment #]``. Templates only loop and place
text; escaping and quoting are decided in Python (:mod:`rulegen.render.yamltext`).
"""

from __future__ import annotations

import functools
import importlib.resources
from pathlib import Path

import jinja2


def templates_dir() -> Path:
    """Folder of rulegen's Jinja2 templates: the ``rulegen.templates`` package, which is the
    repository's ``templates/`` folder (mapped in pyproject.toml)."""
    return Path(str(importlib.resources.files("rulegen.templates")))


@functools.cache
def environment() -> jinja2.Environment:
    """The shared environment; templates are loaded from the ``rulegen.templates`` package."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
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
        undefined=jinja2.StrictUndefined,
    )


def render(name: str, **context) -> str:
    """Render template ``name`` with ``context``."""
    return environment().get_template(name).render(**context)
