"""``rulegen checks [CODE]``: print the documentation of every check, or of one code."""

from __future__ import annotations

import sys

from . import EXIT_OK, EXIT_USAGE, err

NAME = "checks"
EXAMPLE = ("rulegen checks RG404                 # one code, with a bad and a good example\n"
           "rulegen checks --format markdown > docs/checks.md")


def add_parser(sub, common) -> None:
    s = sub.add_parser("checks", parents=[common], help="print the documentation of every check, or of one code")
    s.add_argument("code", nargs="?", help="one code, e.g. RG404 (default: all)")
    s.add_argument("--format", choices=("text", "markdown"), default="text",
                   help="markdown: the check reference page, docs/checks.md")
    s.set_defaults(func=run)


def run(args) -> int:
    import difflib

    from .. import checkdocs
    if args.code:
        known = checkdocs.codes()
        code = args.code.upper()
        if code not in known:
            # codes that begin with what was typed first (RG40 -> RG401...), then look-alikes
            near = [c for c in known if c.startswith(code)][:3] or \
                difflib.get_close_matches(code, known, n=3, cutoff=0.6)
            err(f"no check {args.code}" + (f"; did you mean {', '.join(near)}?" if near else "")
                 + " (`rulegen checks` lists every code)")
            return EXIT_USAGE
        if args.format == "markdown":
            err("--format markdown prints the whole reference; drop the code")
            return EXIT_USAGE
    sys.stdout.write(checkdocs.render_markdown() if args.format == "markdown"
                     else checkdocs.render_text(args.code))
    return EXIT_OK
