"""`rulegen --help`, each command's help, `rulegen checks [CODE]` and the site's check reference
(docs/checks.md): plain text, no reStructuredText, no sentence cut off, an example
per command, a bad and a good example per code, and the page current with the docstrings."""

from __future__ import annotations

import re

import pytest

from rulegen import checkdocs
from rulegen.cli import EXAMPLES, main, parser

from helpers import REPO

RST = re.compile(r"``|:(?:func|mod|class|data|meth|attr|exc|obj):`|^\.\. |::$", re.M)


def _help(argv, capsys) -> str:
    with pytest.raises(SystemExit) as e:
        parser().parse_args(argv)
    assert e.value.code == 0
    return capsys.readouterr().out


def test_top_help_says_in_one_line_what_rulegen_does(capsys):
    out = _help(["--help"], capsys)
    description = out.split("\n\n")[1]
    assert " ".join(description.split()) == (
        "Prometheus alerting as code: validate YAML specs, then write Helm-gated "
        "PrometheusRules, runbook pages and promtool tests from them.")
    assert "This module" not in out and not RST.search(out)


def test_every_command_help_has_an_example_and_no_markup(capsys):
    commands = list(parser()._subparsers._group_actions[0].choices)
    assert set(commands) <= set(EXAMPLES), "add an EXAMPLE to every command module (rulegen/commands/)"
    for name in commands:
        out = _help([name, "--help"], capsys)
        example = out.split("example:\n", 1)[1]
        assert example.strip().startswith(f"rulegen {name}"), (name, example)
        assert not RST.search(out), name
        description = out.split("\n\n")[1]
        assert description[0].isupper() and description.rstrip().endswith("."), (name, description)


def test_checks_prints_plain_text(capsys):
    assert main(["checks"]) == 0
    out = capsys.readouterr().out
    assert not RST.search(out), RST.search(out)
    assert len(re.findall(r"^RG\d{3} \((?:error|warning)\)$", out, re.M)) == len(checkdocs.codes())
    # the conventions family's configuration example stays a literal block, indented
    assert "\n    conventions:\n      severities: [critical, warning, info]" in out


def test_checks_with_a_code_prints_that_check_only(capsys):
    assert main(["checks", "rg404"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "RG404 (warning)"
    assert re.findall(r"^RG\d{3}", out, re.M) == ["RG404"]
    assert "  Bad:  `record: http_requests_rate5m`" in out
    assert "  Good: `record: job:http_requests:rate5m`" in out


def test_checks_with_an_unknown_code_suggests_near_ones(capsys):
    assert main(["checks", "RG40"]) == 2
    err = capsys.readouterr().err
    assert "no check RG40; did you mean RG4" in err


def test_every_code_has_a_whole_description_and_a_bad_and_a_good_example():
    codes = checkdocs.codes()
    assert len(codes) >= 60
    for code, c in codes.items():
        assert c.bad and c.good, f"{code}: end its docstring bullet with 'Bad: ...; good: ...'"
        assert c.text.endswith((".", ")")), f"{code}: description cut off: {c.text[-40:]!r}"
        for part in (c.text, c.bad, c.good):
            assert not RST.search(part), (code, part)


def test_rst_is_turned_into_markdown():
    assert checkdocs.rst_to_md("see :func:`~rulegen.render.helm.rule_identity` and "
                               ":mod:`rulegen.config`") == "see `rule_identity` and `rulegen.config`"
    assert checkdocs.rst_to_md("``{{`{{`}}``") == "`` {{`{{`}} ``"
    fam = checkdocs.parse("x", "Title here. More.\n\nCodes:\n\n* ``RG999`` (warning) a thing\n"
                               "  wrapped. Bad: ``a``; good: ``b``.\n")
    assert fam.title == "Title here" and fam.items[0] == "More."
    (c,) = fam.codes
    assert (c.code, c.severity, c.text, c.bad, c.good) == ("RG999", "warning", "a thing wrapped.",
                                                           "`a`", "`b`")


def test_reference_page_is_current():
    page = REPO / checkdocs.REFERENCE_PAGE
    assert page.read_text(encoding="utf-8") == checkdocs.render_markdown(), (
        "docs/checks.md is stale: run "
        "`.venv/bin/rulegen checks --format markdown > docs/checks.md`")


def test_reference_page_has_an_anchor_and_examples_per_code():
    text = checkdocs.render_markdown()
    for code in checkdocs.codes():
        block = text.split(f"### {code} {{ #{code.lower()} }}\n", 1)[1].split("\n### ", 1)[0]
        assert "- **Bad:** " in block and "- **Good:** " in block, code
    prose = re.sub(r"^```.*?^```|``.+?``|`[^`]+`", "", text.split("-->", 1)[1], flags=re.M | re.S)
    assert re.findall(r"(?<!\\)[<>]", prose) == []  # HTML-like prose (<app>) is escaped
