"""Conventions (RG501-RG504) at exact positions, each switchable through the config."""

from __future__ import annotations

import pytest

from rulegen.config import Config
from rulegen.validate import validate_texts


def spec(severity="severity: critical", summary="summary: Down.", description="description: Down.",
         runbook="runbook: {causes: [it broke]}", labels=""):
    body = "\n".join("        " + x for x in (severity, summary, description, runbook) if x)
    return f"""\
app: demo
{labels}groups:
  - name: demo
    rules:
      - alert: DemoDown
        expr: up == 0
{body}
"""


def run(text, config=None):
    res = validate_texts({"a.yaml": text}, config)
    return [(f.code, f.line, f.col) for f in res.findings], res


def test_conventions_met():
    assert run(spec())[0] == []


def test_severity_not_allowed_points_at_severity():
    found, res = run(spec(severity="severity: page"))
    assert found == [("RG501", 7, 19)]
    assert "critical, warning, info" in res.findings[0].message


def test_severity_missing_points_at_alert():
    found, _ = run(spec(severity=""))
    assert found == [("RG501", 5, 16)]


def test_severity_from_app_labels_counts():
    assert run(spec(severity="", labels="labels: {severity: critical}\n"))[0] == []


def test_severity_set_is_configurable_and_can_be_switched_off():
    assert run(spec(severity="severity: page", runbook=""), Config(severities=("page", "ticket")))[0] == []
    assert run(spec(severity="severity: anything"), Config(severities=()))[0] == []


def test_summary_and_description_required():
    found, _ = run(spec(summary="", description='description: "  "'))
    assert found == [("RG502", 5, 16), ("RG503", 5, 16)]
    assert run(spec(summary="", description=""), Config(require_summary=False, require_description=False))[0] == []


@pytest.mark.parametrize("runbook", ["", "runbook: {explanation: only words}", "runbook: {causes: []}"])
def test_critical_without_runbook_content(runbook):
    found, _ = run(spec(runbook=runbook))
    assert found == [("RG504", 5, 16)]


def test_runbook_requirement_follows_config():
    assert run(spec(severity="severity: warning", runbook=""))[0] == []
    found, _ = run(spec(severity="severity: warning", runbook=""), Config(require_runbook_for=("warning",)))
    assert found == [("RG504", 5, 16)]
    assert run(spec(runbook=""), Config(require_runbook_for=()))[0] == []


def test_disable_and_regrade_codes():
    assert run(spec(summary=""), Config(disabled=frozenset({"RG502"})))[0] == []
    from rulegen.findings import Severity
    _, res = run(spec(summary=""), Config(severity_overrides={"RG502": Severity.WARNING}))
    assert [(f.code, f.severity) for f in res.findings] == [("RG502", Severity.WARNING)]
    assert res.ok


def test_critical_alert_with_its_own_runbook_url_has_a_runbook():
    """Regression: imported alerts that link to an existing runbook are not flagged."""
    text = spec(runbook="annotations: {runbook_url: 'https://wiki.example/demo-down'}")
    assert run(text)[0] == []
    assert run(spec(runbook="annotations: {runbook_url: ''}"))[0] == [("RG504", 5, 16)]


# -- RG505: diagnosis commands that change something ---------------------------------------

@pytest.mark.parametrize("command, flagged", [
    ("kubectl -n ai get pods", None),
    ("kubectl -n ai delete pod x", "kubectl -n ai delete pod x"),
    ("kubectl --context prod -n ai rollout restart deploy/x", "kubectl --context prod -n ai rollout restart deploy/x"),
    ("kubectl rollout status deploy/x", None),
    ("kubectl exec x -- cat /etc/hosts", None),
    ("oc -n ai scale deploy/x --replicas=0", "oc -n ai scale deploy/x --replicas=0"),
    ("helm -n ai history x", None),
    ("helm rollback x 3", "helm rollback x 3"),
    ("curl -s http://x:9090/api/v1/targets", None),
    ("curl -X POST http://x:9090/-/reload", "curl -X POST http://x:9090/-/reload"),
    ("curl --request=delete http://x/y", "curl --request=delete http://x/y"),
    ("kubectl get pods | grep x && kubectl delete pod y", "kubectl delete pod y"),
    ("# kubectl delete pod x\nkubectl logs x", None),
    ("sudo systemctl restart kubelet", "sudo systemctl restart kubelet"),
    ("kubectl -n ai logs x --previous; rm -rf /tmp/x", "rm -rf /tmp/x"),
    ("echo 'unbalanced", None),
    # read-only, though a write verb or method appears
    ("kubectl apply view-last-applied deploy/x", None),
    ("kubectl label pod x --list", None),
    ("kubectl apply --dry-run=server -f -", None),
    ("helm upgrade x ./chart --dry-run", None),
    ("curl -s -X POST http://prom:9090/api/v1/query --data-urlencode 'query=up'", None),
    ("echo 'if stuck; rm /tmp/lock'", None),
    ("kubectl get pods # if pending; kubectl delete pod x", None),
    ("cat <<EOF\nrm -rf /tmp/x\nEOF", None),
    # writes behind continuations, wrappers, shell structure, flags with values
    ("kubectl -n ai \\\ndelete pod x", "kubectl -n ai delete pod x"),
    ("kubectl get pods -o name | xargs kubectl delete", "xargs kubectl delete"),
    ("timeout 10 kubectl delete pod x", "timeout 10 kubectl delete pod x"),
    ("KUBECONFIG=/k kubectl delete pod x", "KUBECONFIG=/k kubectl delete pod x"),
    ("for p in a b; do kubectl delete pod $p; done", "do kubectl delete pod $p"),
    ("kubectl --request-timeout 5s delete pod x", "kubectl --request-timeout 5s delete pod x"),
    ("curl -sX POST http://x/-/reload", "curl -sX POST http://x/-/reload"),
    ("curl -d '' http://x/-/reload", "curl -d  http://x/-/reload"),
    ("kubectl exec x -- rm -rf /cache", "kubectl exec x -- rm -rf /cache"),
    ("kubectl -n ai exec x -- ls /cache", None),
    ("kubectl exec -- " * 1000 + "rm x", ("kubectl exec -- " * 1000 + "rm x")),  # was a RecursionError
    ("oc adm drain n1", "oc adm drain n1"),
    ("systemctl daemon-reload", "systemctl daemon-reload"),
    ("kubectl get nodes & kubectl cordon n1", "kubectl cordon n1"),
])
def test_mutating_diagnosis_commands(command, flagged):
    from rulegen.validate.checks.conventions import mutating
    assert mutating(command) == flagged


def test_mutating_diagnosis_command_is_a_warning_at_the_block():
    text = spec(runbook="runbook:\n          diagnosis:\n            - commands: kubectl -n ai get pods\n"
                        "            - commands: |\n                kubectl -n ai logs x\n"
                        "                kubectl -n ai delete pod x")
    found, res = run(text)
    assert found == [("RG505", 15, 17)]  # the command itself, inside the block
    f = res.findings[0]
    assert not f.is_error and "`kubectl -n ai delete pod x` changes something" in f.message
    assert "runbook.resolution" in f.message
