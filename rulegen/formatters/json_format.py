"""JSON for machines: ``{"findings": [{file, line, col, code, severity, rule, message}],
"errors": N, "warnings": N}``, keys sorted, stable across runs."""

from __future__ import annotations

import json


def render(findings) -> str:
    errors = sum(f.is_error for f in findings)
    doc = {"errors": errors, "warnings": len(findings) - errors,
           "findings": [f.to_dict() for f in findings]}
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)
