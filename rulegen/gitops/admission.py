"""What the Kubernetes API server and the Prometheus Operator's admission webhook say of a
rendered PrometheusRule, in rulegen's words (the sync check of :mod:`rulegen.gitops.sync`).

``rulegen-helmrender`` judges each render with their own code (the API server's validation
against the CRD's schema, the operator's ``ValidateRule``) and passes most of them; a render it
rejects, or does not judge, is checked here: against the CRD's ``v1`` schema with
``jsonschema`` (``RG736``, :mod:`rulegen.gitops.crd`), and as the webhook parses it, its spec
dumped as a rule file for ``promtool check rules`` and held to the operator's size limit
(``RG737``). These name the group and rule. Where the webhook is stricter than the promtool
rulegen runs (the operator's release is built on an older Prometheus, and its label names
follow the legacy scheme: ``first_over_time``, ``{{ now }}``, a label name ``a.b``), they find
nothing; the helper's own reason is then reported (:func:`unexplained`), since the Argo CD
sync would fail all the same.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import yaml

from ..findings import Finding, Severity
from ..tools import promtool
from .crd import crd_errors

#: ``MaxConfigMapDataSize`` of the operator's ``pkg/operator``: half of a Secret's 1 MiB.
MAX_RULE_BYTES = 1024 * 1024 // 2


def findings(rendered: list, schema: dict, root: Path, rejected: list | None = None) -> list[Finding]:
    """``RG736``/``RG737`` for the PrometheusRules of ``rendered`` ((chart, values file shown,
    object), as :func:`rulegen.gitops.sync._render_all` makes them), checked against the CRD's
    ``schema`` (:func:`rulegen.gitops.crd.crd_errors`), the webhook's size limit
    (:data:`MAX_RULE_BYTES`) and ``promtool check rules`` (Prometheus' rule parser, the one the
    webhook runs); then, for each render ``rulegen-helmrender`` rejected (``rejected``: (chart,
    values file shown, the helper's reasons)) and these checks found nothing in, one finding
    quoting the helper (:func:`unexplained`)."""
    findings: list[Finding] = []
    checked = []
    for chart, shown, pr in rendered:
        name = ((pr.get("metadata") or {}).get("name")) if isinstance(pr.get("metadata"), dict) else None
        what = f"PrometheusRule {name or '(no name)'} of {chart} (rendered with {shown})"
        errors = crd_errors(pr, schema)
        # one finding per rule (a finding is known by file, position, code and rule)
        by_rule: dict[str, list[str]] = {}
        for path, msg in errors:
            rule = _rule_at(pr, path)
            by_rule.setdefault(_rule_name(pr, path), []).append(
                f"{'.'.join(map(str, path)) or '(the object)'}{' (' + rule + ')' if rule else ''}: {msg}")
        for rule_name, msgs in by_rule.items():
            findings.append(Finding(shown, 0, 0, "RG736", Severity.ERROR,
                                    f"{what}: {'; '.join(msgs)}; the Prometheus Operator's CRD schema "
                                    "rejects it, so the Argo CD sync would fail", rule_name))
        if errors:
            continue
        body = _rule_file(pr.get("spec") or {})
        if len(body.encode("utf-8")) > MAX_RULE_BYTES:
            findings.append(Finding(shown, 0, 0, "RG737", Severity.ERROR,
                                    f"{what}: its rules are {len(body.encode('utf-8'))} bytes as a rule file, "
                                    f"above the {MAX_RULE_BYTES} the Prometheus Operator's admission webhook "
                                    "accepts; split the chart's rules"))
            continue
        checked.append((what, shown, pr, body))
    if checked:
        findings += _webhook(checked, root)
    return findings + unexplained(rejected or [], findings)


def _webhook(checked: list, root: Path) -> list[Finding]:
    """RG737 for each rule of ``checked`` ((what, values file shown, object, rule file body))
    that ``promtool check rules`` (Prometheus' rule parser, as the webhook runs it) rejects."""
    findings: list[Finding] = []
    with tempfile.TemporaryDirectory(prefix="rulegen-sync-") as tmp:
        files = []
        for i, (_w, _s, _pr, body) in enumerate(checked):
            f = Path(tmp) / f"rules-{i}.yaml"
            f.write_text(body, encoding="utf-8")
            files.append(f)
        code, output = promtool.check_rules(files, root)
        if code == 0:
            return []
        # promtool prints "Checking FILE" then "  FAILED:" and the errors of that file
        for i, (what, shown, pr, _b) in enumerate(checked):
            by_rule: dict[str, list[str]] = {}
            for err in _promtool_errors(output, str(files[i])):
                m = re.search(r'group "([^"]*)", rule (\d+), "([^"]*)"', err)
                by_rule.setdefault(m.group(3) if m else "", []).append(err.strip())
            for rule_name, errs in by_rule.items():
                findings.append(Finding(shown, 0, 0, "RG737", Severity.ERROR,
                                        f"{what}{' (rule ' + json.dumps(rule_name) + ')' if rule_name else ''}: "
                                        f"{'; '.join(errs)}; the Prometheus Operator's admission webhook "
                                        "(Prometheus' rule parser) rejects it, so the Argo CD sync would fail",
                                        rule_name))
    return findings


def _rule_at(obj: dict, path: tuple) -> str:
    """``group "g", rule "Name"`` (or less) for a path into a PrometheusRule."""
    if len(path) < 3 or path[:2] != ("spec", "groups"):
        return ""
    try:
        group = obj["spec"]["groups"][path[2]]
        where = f'group "{group.get("name")}"'
        if len(path) >= 5 and path[3] == "rules":
            rule = group["rules"][path[4]]
            name = rule.get("alert") or rule.get("record") if isinstance(rule, dict) else None
            where += f", rule {json.dumps(name) if name else '#' + str(path[4] + 1)}"
        return where
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""


def _rule_file(spec) -> str:
    """The PrometheusRule's ``spec`` as a rule file (YAML) for promtool and the size limit.
    libyaml's emitter (five times faster) folds long strings elsewhere than PyYAML's, which
    promtool reads alike (its messages drop the positions); the size figure is PyYAML's, so
    a body near the limit is made by PyYAML."""
    dumper = getattr(yaml, "CSafeDumper", None)
    if dumper is not None:
        try:
            body = yaml.dump(spec, Dumper=dumper, sort_keys=False, allow_unicode=True)
            if len(body.encode("utf-8")) < MAX_RULE_BYTES // 2:
                return body
        except yaml.YAMLError:
            pass
    return yaml.safe_dump(spec, sort_keys=False, allow_unicode=True)


def _rule_name(pr: dict, path: tuple) -> str:
    try:
        rule = pr["spec"]["groups"][path[2]]["rules"][path[4]]
        return str(rule.get("alert") or rule.get("record") or "")
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""


def _promtool_errors(output: str, file: str) -> list[str]:
    """The errors ``promtool check rules`` printed for ``file`` (its error lines start with the
    file's path, then positions inside that temporary file, which are dropped)."""
    out = []
    for line in output.splitlines():
        if line.startswith(file + ":"):
            rest = line[len(file) + 1:].strip()
            out.append(re.sub(r"^(\d+:\d+:\s*)+", "", rest))
    return out



def unexplained(rejected: list, found: list[Finding]) -> list[Finding]:
    """One finding for each render ``rulegen-helmrender`` rejected (``rejected``: (chart, values
    file shown, the helper's reasons: ``document N: webhook: ...``, ``document N: CRD schema:
    ...``)) in whose PrometheusRules rulegen's own checks ``found`` nothing (no RG736/RG737 of
    that chart and values file): ``RG736`` when every reason is the CRD schema's, else
    ``RG737``, quoting the reasons as the operator's and Kubernetes' code gave them."""
    out = []
    for chart, shown, why in rejected:
        render = f"of {chart} (rendered with {shown})"
        if any(f.code in ("RG736", "RG737") and render in f.message for f in found):
            continue
        schema_only = all(": CRD schema: " in w and ": webhook: " not in w and ": as rendered: " not in w
                          for w in why)
        code, who = ("RG736", "the Prometheus Operator's CRD schema (as the API server validates it)") \
            if schema_only else ("RG737", "the Prometheus Operator's admission webhook")
        out.append(Finding(shown, 0, 0, code, Severity.ERROR,
                           f"{chart} (rendered with {shown}): {who} rejects a PrometheusRule it renders, so the "
                           f"Argo CD sync would fail: {'; '.join(why)[:2000]}"))
    return out
