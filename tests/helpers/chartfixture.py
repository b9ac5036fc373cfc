"""A minimal Helm chart for import tests: ``Chart.yaml`` named ``name``, a ``values.yaml``,
template files and optional helpers (``templates/_helpers.tpl``)."""

from __future__ import annotations

from pathlib import Path


def mini_chart(parent: Path, values: str, templates: dict, helpers: str | None = None, name: str = "c") -> Path:
    """The chart folder ``parent/name``; ``templates`` maps file name -> text."""
    chart = parent / name
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 1.0.0\n", encoding="utf-8")
    (chart / "values.yaml").write_text(values, encoding="utf-8")
    if helpers is not None:
        (chart / "templates" / "_helpers.tpl").write_text(helpers, encoding="utf-8")
    for fname, text in templates.items():
        (chart / "templates" / fname).write_text(text, encoding="utf-8")
    return chart
