"""Registry of check families, in the order they run. To add a family, add a module here
and one line to :data:`REGISTRY`; its docstring is its documentation (``rulegen checks``)."""

from . import (conventions, duplicates, durations, names, promql, runbook, schema, templates, tests,
               xrefs, yamltraps)

REGISTRY = [schema, yamltraps, promql, durations, templates, names, duplicates, xrefs, conventions, tests,
            runbook]
