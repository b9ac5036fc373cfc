"""``rulegen validate``: check specs, print the findings; exit 1 on any error."""

from __future__ import annotations

from pathlib import Path

from . import EXIT_FAIL, EXIT_OK, print_findings

NAME = "validate"
EXAMPLE = ("rulegen validate                     # every spec under rules/\n"
           "rulegen validate rules/shop.yaml -o github")


def add_parser(sub, common) -> None:
    s = sub.add_parser("validate", parents=[common], help="check specs; exit 1 on any error")
    s.add_argument("paths", nargs="*", help="spec files or folders (default: rules/)")
    s.add_argument("-o", "--output", choices=("text", "json", "github"), default="text")
    s.set_defaults(func=run)


def run(args) -> int:
    from ..pipeline import load_project
    loaded = load_project(Path(args.root), args.paths or None)
    print_findings(loaded.findings, args.output)
    if args.output == "text" and not loaded.findings:
        print(f"{len(loaded.specs)} spec(s), {sum(1 for s in loaded.specs for _ in s.rules())} rule(s): no findings")
    return EXIT_OK if loaded.ok else EXIT_FAIL
