""""Did you mean" where a newcomer misspells a name: a severity (RG501), an app or a rule
given to ``rulegen test --app/--alert`` or ``rulegen derive-tests --alert``. Each test holds
the corrected text, and the case where nothing is close (no guess)."""

from __future__ import annotations

from rulegen.cli import main
from rulegen.hints import closest, did_you_mean, unknown_apps, unknown_names
from rulegen.validate import validate_texts

SPEC = """\
app: demo
groups:
  - name: demo
    rules:
      - alert: DemoDown
        expr: up == 0
        for: 5m
        severity: {severity}
        summary: Demo is down.
        description: up is 0.
"""


def _rg501(severity: str) -> list[str]:
    res = validate_texts({"rules/demo.yaml": SPEC.format(severity=severity)})
    return [f"{f.line}:{f.col} {f.message}" for f in res.findings if f.code == "RG501"]


def test_rg501_suggests_the_allowed_severity_a_typo_meant():
    assert _rg501("critcal") == ["8:19 severity 'critcal' is not one of critical, warning, info "
                                 "(conventions.severities in .rulegen.yaml); did you mean critical?"]
    assert _rg501("Warning") == ["8:19 severity 'Warning' is not one of critical, warning, info "
                                 "(conventions.severities in .rulegen.yaml); did you mean warning?"]
    assert _rg501("page") == ["8:19 severity 'page' is not one of critical, warning, info "
                              "(conventions.severities in .rulegen.yaml); use one of them"]


def test_hint_helpers():
    assert closest("llma-swap", ["noctaya", "llama-swap"]) == "llama-swap"
    assert closest("zzz", ["noctaya", "llama-swap"]) is None
    assert did_you_mean("LlamaSwapDwn", {"LlamaSwapDown", "LlamaSwapNoMetrics"}) == " (did you mean LlamaSwapDown?)"
    assert did_you_mean("Nope", {"LlamaSwapDown"}) == ""
    assert unknown_names({"Nope", "LlamaSwapDwn"}, {"LlamaSwapDown"}, "alert") == \
        "no alert named LlamaSwapDwn (did you mean LlamaSwapDown?), Nope"
    apps = [f"app-{i:02}" for i in range(14)]
    assert unknown_apps({"zzz"}, apps) == ("no spec for app(s) zzz; the project's apps: " + ", ".join(apps[:12])
                                           + " and 2 more")
    assert unknown_apps({"shop"}, []) == "no spec for app(s) shop; the project has no spec yet (`rulegen new APP`)"


def test_rulegen_test_unknown_app_and_alert_say_did_you_mean(project, capsys):
    assert main(["-C", str(project), "test", "--app", "llma-swap", "--app", "zzz"]) == 2
    # zzz has no close match: the project's apps are listed, so a newcomer sees what to type
    assert capsys.readouterr().err == ("rulegen: no spec for app(s) llma-swap (did you mean llama-swap?), zzz; "
                                       "the project's apps: inferencecache, llama-swap, noctaya\n")
    assert main(["-C", str(project), "test", "--app", "llma-swap"]) == 2
    assert capsys.readouterr().err == "rulegen: no spec for app(s) llma-swap (did you mean llama-swap?)\n"
    assert main(["-C", str(project), "test", "--alert", "LlamaSwapDwn"]) == 2
    assert capsys.readouterr().err == \
        "rulegen: no alert or recording rule named LlamaSwapDwn (did you mean LlamaSwapDown?)\n"


def test_derive_tests_unknown_alert_is_a_usage_error_with_did_you_mean(project, capsys):
    """Before, an unknown --alert derived nothing and printed "0 rule(s) given derived tests"."""
    before = {p.name: p.read_bytes() for p in (project / "rules").glob("*.yaml")}
    assert main(["-C", str(project), "derive-tests", "--alert", "LlamaSwapDwn"]) == 2
    out = capsys.readouterr()
    assert (out.out, out.err) == (
        "", "rulegen: no alert or recording rule named LlamaSwapDwn (did you mean LlamaSwapDown?)\n")
    assert {p.name: p.read_bytes() for p in (project / "rules").glob("*.yaml")} == before
