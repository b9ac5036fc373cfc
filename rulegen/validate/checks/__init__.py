"""Registry of check families, in the order they run. To add a family, add a module here
and one line to :data:`REGISTRY`; its docstring is its documentation (``rulegen checks``)."""

from . import (conventions, duplicates, durations, flow, names, params, promql, runbook, schema, templates,
               tests, xrefs, yamltraps)
from . import yamlcomments
from . import slos
from . import markup, paths

REGISTRY = [schema, yamltraps, promql, durations, templates, flow, names, duplicates, xrefs, conventions,
            tests, params, runbook]
REGISTRY.insert(REGISTRY.index(yamltraps) + 1, yamlcomments)  # issue 17: a separate line, to merge easily
REGISTRY.append(slos)  # issue 16: a separate line, to merge easily
REGISTRY.insert(REGISTRY.index(schema) + 1, paths)  # issue 18: paths stay inside the project
REGISTRY.append(markup)  # issue 18: runbook text is safe on the site
from . import gates
REGISTRY.append(gates)  # ux: a gate naming no key of the chart's values.yaml (RG733)
from . import routing
REGISTRY.append(routing)  # issue 28: routing through Alertmanager's own code, inhibitions
