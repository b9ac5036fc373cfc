"""Registry of check families, in the order they run. To add a family, add a module here
and one line to :data:`REGISTRY`; its docstring is its documentation (``rulegen checks``)."""

from . import promql, schema, tests

REGISTRY = [schema, promql, tests]
