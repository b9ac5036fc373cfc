"""Messages a new user meets in the first hour: each names what went wrong and how to fix it
(issue 17). Each test holds the corrected text."""

from __future__ import annotations

import textwrap

from rulegen.cli import main
from rulegen.spec.durations import parse_ms
from rulegen.validate import validate_texts

ALERT = """\
app: demo
groups:
  - name: demo
    rules:
      - alert: DemoDown
        expr: up == 0
        for: {for_}
        severity: warning
        summary: {summary}
        description: {description}
        runbook:
          resolution:
            - {step}
        tests:
          - name: fires
            interval: 1m
            input_series:
              - series: up{{job="a"}}
                values: "0x10"
            alert_rule_test:
              - eval_time: 5m
                exp_alerts:
                  - exp_labels: {{job: a}}
"""


def spec(for_="5m", summary="Demo is down.", description="up is 0.", step="Restart it."):
    return ALERT.format(for_=for_, summary=summary, description=description, step=step)


def findings(text):
    return [(f.code, f.line, f.col, f.message) for f in validate_texts({"a.yaml": text}).findings]


def test_a_list_item_that_yaml_reads_as_a_mapping_names_the_colon_and_says_quote_it():
    got = findings(spec(step="If Redis is `LOADING`, wait: it answers"))
    assert got == [("RG202", 13, 15, "`resolution` must be a string, not a mapping: the `: ` after "
                    "`wait` makes YAML read a mapping; quote it: "
                    "\"If Redis is `LOADING`, wait: it answers\"")]


def test_a_value_starting_with_a_bracket_names_the_bracket():
    got = findings(spec(step="[a, b]"))
    assert got == [("RG202", 13, 15, "`resolution` must be a string, not a list: the `[` at its "
                    "start makes YAML read a list; quote it: \"[a, b]\"")]
    got = findings(spec(step="{restart: now}"))
    assert got[0][3] == ("`resolution` must be a string, not a mapping: the `{` at its start makes "
                         "YAML read a mapping; quote it: \"{restart: now}\"")
    got = findings(spec(step="[staging] restart it"))
    assert got == [("RG101", 13, 25, "YAML syntax error: did not find expected '-' indicator; the "
                    "`[` at the start of the value makes YAML read a list; quote it: "
                    "- \"[staging] restart it\"")]


def test_yaml_syntax_traps_name_the_character_and_say_quote_it():
    got = findings(spec(summary="Disk: full"))
    assert got == [("RG101", 9, 22, "YAML syntax error: mapping values are not allowed in this "
                    "context; the `: ` after `Disk` makes YAML read a mapping inside the value; "
                    "quote it: summary: \"Disk: full\"")]
    got = findings(spec(step="`LOADING` means wait"))
    assert got == [("RG101", 13, 15, "YAML syntax error: found character that cannot start any "
                    "token; YAML reserves a backquote (`` ` ``) at the start of a plain value; "
                    "quote it: - \"`LOADING` means wait\"")]


def test_a_variable_without_its_dollar_suggests_the_variable_and_is_reported_once():
    got = findings(spec(summary='"{{ labels.pod }} is down"'))
    assert got == [("RG308", 9, 22, "annotation template calls unknown function labels; did you "
                    "mean the variable $labels? write {{ $labels.pod }} (Prometheus' variables "
                    "start with $)")]  # and no RG601 for the same typo


def test_durations_accept_zero_as_prometheus_does():
    for zero in ("0", '"0"', "0s"):
        assert findings(spec(for_=zero)) == [], zero
    assert parse_ms(0) == parse_ms("0") == 0
    got = findings(spec(for_="90"))
    assert got == [("RG302", 7, 14, "`for`: 90 is a number, not a Prometheus duration; add a unit: "
                    "1m30s if seconds were meant")]
    got = findings(spec(for_="true"))
    assert got == [("RG202", 7, 14, "`for` must be a Prometheus duration, not a boolean; write one such as `for: 5m`")]


def test_a_zero_for_builds_like_0s(tmp_path, capsys):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "demo.yaml").write_text(spec(for_="0"))
    assert main(["-C", str(tmp_path), "build", "--format", "rules"]) == 0, capsys.readouterr().err
    rendered = (tmp_path / "rules-out" / "demo.rules.yaml").read_text()
    assert '- alert: "DemoDown"\n        expr: "up == 0"\n        labels:' in rendered  # no `for`


def test_a_misspelt_required_key_is_one_finding():
    got = findings(spec().replace("expr: up == 0", "exp: up == 0"))
    assert got == [("RG201", 6, 9, "unknown key `exp`; did you mean `expr`?")]  # no RG203 `expr`


def test_annotations_with_value_need_no_expectation():
    """Issue 14: a test compares only the annotations it states, as Prometheus renders them."""
    assert findings(spec(summary='"{{ $value | humanize }} down"', description='"now {{ $value }}"')) == []


def test_rg601_reports_every_label_at_once():
    text = spec().replace("        for: 5m\n", "        for: 5m\n        labels: {a: '{{ $labels.job | toUpper }}', "
                          "b: '{{ $labels.job | title }}'}\n", 1)
    got = findings(text)
    assert got == [("RG601", 24, 21, "label `a` uses `{{$labels.job | toUpper}}` and label `b` uses "
                    "`{{$labels.job | title}}`, which rulegen cannot expand; write "
                    "`exp_labels: {a: ..., b: ...}` in the test")]


def test_advice_says_how_to_fix():
    text = spec().replace("        expr: up == 0\n", "")
    assert ("RG203", 5, 9, "`expr` is required here; add `expr:`") in findings(text)
    got = findings(spec().replace("app: demo", "app: CI Build"))
    assert got == [("RG204", 1, 6, "`app`: 'CI Build' is not a DNS label (lowercase letters, digits "
                    "and `-`, at most 53 characters); write `app: ci-build` and put the name to "
                    "show in `title: CI Build`")]
    rec = textwrap.dedent("""\
        app: demo
        groups:
          - name: demo
            rules:
              - record: {name}
                expr: sum(up)
        """)
    assert findings(rec.format(name="job-up")) == [(
        "RG403", 5, 17, "recording rule name 'job-up' is not a valid metric name "
        "([a-zA-Z_:][a-zA-Z0-9_:]*); Prometheus will not load it, so use only letters, digits, "
        "`_` and `:`")]
    assert findings(rec.format(name="job_up"))[0][3].endswith("separated by colons (e.g. job:http_requests:rate5m)")
    assert findings("- app: x\n")[0][3].endswith("start it with `app: <name>` at the left margin")
    assert findings(spec(for_="300y"))[0][3].endswith("; use a shorter duration")


def test_test_app_is_not_blocked_by_another_apps_error(project, helm_bin, promtool_bin, capsys):
    (project / "rules" / "broken.yaml").write_text(spec().replace("expr: up == 0", "expr: up ==")
                                                   .replace("app: demo", "app: broken"))
    assert main(["-C", str(project), "test", "--app", "llama-swap"]) == 0
    err = capsys.readouterr().err
    assert "rules/broken.yaml:6:" in err  # the other app's error is still shown
    assert ("rulegen: the errors above are in other specs (rules/broken.yaml); testing llama-swap "
            "anyway (`rulegen build` still needs them fixed)") in err
    assert main(["-C", str(project), "test", "--app", "broken"]) == 1
    assert "validation failed; no test ran" in capsys.readouterr().err
    assert main(["-C", str(project), "test"]) == 1
    assert ("validation failed; no test ran (fix the errors above, or test one app with --app)"
            in capsys.readouterr().err)


def test_an_error_in_the_tested_apps_own_chart_stops_its_test_and_is_not_called_another_specs(
        project, helm_bin, promtool_bin, capsys):
    """A chart file of the app under test linked out of the project is that app's error: the
    test stops at validation, and the note about other specs' errors is not printed."""
    (project / "charts" / "llama-swap" / "files").mkdir(exist_ok=True)
    (project / "charts" / "llama-swap" / "files" / "x").symlink_to("/etc/passwd")
    assert main(["-C", str(project), "test", "--app", "llama-swap"]) == 1
    err = capsys.readouterr().err
    assert "charts/llama-swap/files/x:0:0: error RG742" in err
    assert "in other specs" not in err and "validation failed; no test ran" in err


#: Words that start the fix in a message ("...; quote it", "...; add `expr:`", "did you mean").
FIX = ("quote it", "correct the expression", "add ", "use ", "write ", "rename", "remove", "did you mean", "move ", "give ",
       "change ", "merge", "shorten", "sample more", "extend ", "declare ", "compare with",
       "start it", "close ", "downgrade", "prefix it", "tell them apart", "put ")

BAD = [  # (what, text substituted into ALERT through spec(...))
    dict(for_="1.5m"), dict(for_="true"), dict(for_="300y"), dict(summary='"{{ $label.x }}"'),
    dict(summary='"{{ $value | humanise }}"'), dict(summary='"{{ labels.x }}"'),
    dict(summary="Disk: full"), dict(step="a: b"), dict(step="[a, b]"),
    dict(summary='"{{ $value }} down"'), dict(description='""'), dict(summary="off"),
]


def test_every_finding_says_how_to_fix_it():
    texts = [spec(**b) for b in BAD] + [
        spec().replace("expr: up == 0", "expr: sum(rate(x[5m])"),
        spec().replace("expr: up == 0", "expr: max_over_time(x > 0[5m])"),
        spec().replace("expr: up == 0", "expr: rate(x[5m])"),
        spec().replace("alert: DemoDown", "alert: demo_down"),
        spec().replace("severity: warning", "severity: page"),
        spec().replace("severity: warning", "severty: warning"),
        spec().replace("values: \"0x10\"", "values: \"0,1\""),
        spec().replace("interval: 1m", "interval: 10m"),
        spec().replace("        runbook:\n", "        runbook:\n          related: [{alert: Nope}]\n"),
        spec().replace("app: demo", "app: Demo App"),
        spec().replace("      - alert: DemoDown\n", "      - alert: DemoDown\n        labels: {__x: y}\n"),
        "- app: x\n", "",
    ]
    seen = set()
    for text in texts:
        for code, _line, _col, message in findings(text):
            seen.add(code)
            assert any(w in message for w in FIX), (code, message)
    assert len(seen) >= 18, sorted(seen)
