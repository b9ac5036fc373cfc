"""The documentation of every finding code, read from the docstrings of the modules that emit
them: ``rulegen checks`` prints it as plain text, and the check reference of the tool
documentation site (``docs/checks.md``) is the same text as Markdown, so neither can drift from
the code.

Where a code is documented (the one place to edit when adding a code): a bullet in the
docstring of the module that reports it: a validation check module of
``rulegen.validate.checks.REGISTRY``, a module of :data:`EXTRA_SOURCES`, or one of the modules a
family of several is assembled from (:data:`PARTS`)::

    * ``RG404`` (warning) what is wrong and why, in sentences. Bad: ``record: x_rate5m``;
      good: ``record: job:x:rate5m``.

A bullet starts with ``* ``RGnnn`` `` at the start of a line and runs until the next bullet or a
blank line; ``(warning)`` or ``(error)`` right after the code is its default severity; its
``Bad:`` and ``good:`` examples (either capitalisation) end it. Other paragraphs of the
docstring are the family's introduction. The docstrings are written in reStructuredText (they
are also Python documentation): ``code`` spans become Markdown backquotes, roles such as
``:func:`name``` become the name, and a paragraph ending in ``::`` introduces a literal block.
"""

from __future__ import annotations

import importlib
import re
import textwrap
from dataclasses import dataclass, field

#: Modules whose docstrings document codes, in the order ``rulegen checks`` prints them
#: (validation families first, in the order they run).
EXTRA_SOURCES = ("rulegen.outputs:OUTPUTS", "rulegen.fs.read", "rulegen.outputs.links", "rulegen.gitops.sync",
                 "rulegen.importer", "rulegen.baseline", "rulegen.gitops.policy", "rulegen.live.series")

#: Families whose codes several modules report, each documenting its own: the family's source
#: (an entry of :data:`EXTRA_SOURCES`, which gives the title, the introduction and a ``Codes:``
#: line) -> the modules whose codes (the bullets after the ``Codes:`` line of their docstring)
#: stand at that line, in this order. The family sorts by the first module's smallest code.
PARTS = {
    "rulegen.outputs:OUTPUTS": ("rulegen.render", "rulegen.outputs.knobs", "rulegen.render.notes",
                                "rulegen.fs.write"),
    "rulegen.outputs.links": ("rulegen.outputs.pages", "rulegen.outputs.runbook_urls",
                              "rulegen.outputs.page_links", "rulegen.outputs.settings", "rulegen.outputs.built"),
}

_BULLET = re.compile(r"^\* ``(RG\d{3})``(?: \((error|warning)\))?[ ]?(.*)$")
_BAD = re.compile(r"(?:^|(?<=[\s.;(]))Bad:\s*")
_GOOD = re.compile(r"[;.,]?\s*\b[Gg]ood:\s*")
_ROLE = re.compile(r":(?:func|mod|class|data|meth|attr|exc|obj):`~?\.?([^`]+)`")
_LITERAL = re.compile(r"``(.+?)``", re.S)


@dataclass
class Code:
    """One finding code: ``code`` (``RG404``), ``severity`` (``error`` or ``warning``, the
    default), ``text`` (what it finds, as Markdown), ``bad`` and ``good`` (examples as
    Markdown, ``""`` when the docstring gives none) and the ``family`` it belongs to."""

    code: str
    severity: str
    text: str
    bad: str
    good: str
    family: str


@dataclass
class Family:
    """The codes of one source module: ``name`` (the check family's ID or module name),
    ``title`` (the docstring's first sentence) and ``items``, in docstring order: paragraphs
    (Markdown str; literal blocks fenced) and :class:`Code` entries."""

    name: str
    title: str
    items: list = field(default_factory=list)
    #: the code the family sorts by on the reference page (default: its smallest code)
    order: str = ""

    @property
    def codes(self) -> list[Code]:
        return [i for i in self.items if isinstance(i, Code)]


def rst_to_md(text: str) -> str:
    """Inline reStructuredText of a docstring as Markdown: ````x```` -> ```x```,
    ``:func:`~a.b``` -> ```b``` (``~`` keeps the last part, as Sphinx shows it), other roles
    -> the name in backquotes. A literal holding a backquote is fenced with two."""
    def literal(m: re.Match) -> str:
        body = " ".join(m.group(1).split("\n"))
        body = re.sub(r"\s+", " ", body) if "\n" in m.group(1) else body
        return f"`` {body} ``" if "`" in body else f"`{body}`"

    def role(m: re.Match) -> str:
        whole = m.group(0)
        name = m.group(1)
        return f"`{name.rsplit('.', 1)[-1] if '`~' in whole else name}`"

    text = _ROLE.sub(role, text)
    return _LITERAL.sub(literal, text)


def _paragraphs(doc: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", textwrap.dedent(doc).strip("\n")) if p.strip()]


def _split_bullets(par: str) -> list[str]:
    """A paragraph's lines grouped into bullets (a bullet's continuation lines are indented)."""
    items: list[list[str]] = []
    for line in par.splitlines():
        if line.startswith("* ") or not items:
            items.append([line])
        else:
            items[-1].append(line.strip())
    return [" ".join(i) for i in items]


def _parse_code(item: str, family: str) -> Code | None:
    m = _BULLET.match(item)
    if not m:
        return None
    code, severity, rest = m.group(1), m.group(2) or "error", m.group(3).strip()
    bad = good = ""
    b = _BAD.search(rest)
    if b:
        rest, examples = rest[:b.start()].rstrip(), rest[b.end():]
        g = _GOOD.search(examples)
        if g:
            bad, good = examples[:g.start()], examples[g.end():]
        else:
            bad = examples
    else:
        g = re.search(r"(?:^|(?<=[\s.;(]))Good:\s*", rest)
        if g:
            rest, good = rest[:g.start()].rstrip(), rest[g.end():]
    clean = lambda s: rst_to_md(s.strip().rstrip(".;").strip())  # noqa: E731
    return Code(code=code, severity=severity, text=rst_to_md(rest.rstrip(";")).rstrip(" ;,") or "",
                bad=clean(bad), good=clean(good), family=family)


def _closes_at_end(text: str) -> bool:
    """True when ``text`` ends with the ``)`` closing a parenthesis opened just before it."""
    depth = 1
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            return i == len(text) - 1
    return False


def parse(name: str, doc: str) -> Family:
    """One :class:`Family` from a module docstring (see the module docstring for the form)."""
    pars = _paragraphs(doc)
    first = " ".join(pars[0].split()) if pars else name
    m = re.match(r"(.+?\.)(\s|$)", first)
    title = (m.group(1) if m else first).rstrip(".")
    rest_first = first[len(m.group(1)):].strip() if m else ""
    if rest_first:
        pars[0] = rest_first
    else:
        pars = pars[1:]
    # a short heading: "YAML traps: label and ..." and "Spec schema (JSON Schema ...)" keep the
    # words before the colon or parenthesis; the rest opens the introduction
    short = re.match(r"(.+?)(?:: | \()(.+)$", title)
    if short and "`" not in short.group(1):
        rest = short.group(2)[:-1] if short.group(0)[len(short.group(1)):].startswith(" (") \
            and _closes_at_end(short.group(2)) else short.group(2)
        title = short.group(1)
        pars.insert(0, rest[:1].upper() + rest[1:] + ".")
    fam = Family(name=name, title=rst_to_md(title))
    literal_next = False
    for par in pars:
        if literal_next and par.startswith((" ", "\t")):
            fam.items.append("```yaml\n" + textwrap.dedent(par) + "\n```")
            literal_next = False
            continue
        literal_next = False
        if par.lstrip().startswith("* "):
            for item in _split_bullets(textwrap.dedent(par)):
                code = _parse_code(item, name)
                if code:
                    fam.items.append(code)
                else:
                    fam.items.append(rst_to_md("- " + item[2:]))
            continue
        text = " ".join(par.split())
        if text == "Codes:":
            continue
        if text.endswith("::"):
            text, literal_next = text[:-1], True
        fam.items.append(rst_to_md(text))
    return fam


def _module_doc(source: str) -> tuple[str, str]:
    """``(family name, docstring)`` of ``"package.module"`` or ``"package.module:ATTRIBUTE"``;
    for a family of :data:`PARTS`, the docstring with its parts' codes at its ``Codes:`` line."""
    mod_name, _, attr = source.partition(":")
    mod = importlib.import_module(mod_name)
    name, doc = (attr.lower(), getattr(mod, attr)) if attr else (mod_name.rsplit(".", 1)[-1], mod.__doc__ or "")
    if source in PARTS:
        head, sep, tail = textwrap.dedent(doc).partition("\nCodes:\n")
        if not sep:
            raise ValueError(f"{source}: a family of several modules needs a `Codes:` line")
        codes = [_codes_of(importlib.import_module(m).__doc__ or "") for m in PARTS[source]]
        doc = head + "\n\nCodes:\n\n" + "\n".join(codes) + "\n" + tail
    return name, doc


def _codes_of(doc: str) -> str:
    """The code bullets of docstring ``doc``: the bullet paragraphs right after its
    ``Codes:`` line."""
    pars = _paragraphs(doc)
    if "Codes:" not in pars:
        return ""
    out = []
    for par in pars[pars.index("Codes:") + 1:]:
        if not par.startswith("* "):
            break
        out.append(par)
    return "\n".join(out)


def families() -> list[Family]:
    """Every documented family: the validation check modules in the order they run, then
    :data:`EXTRA_SOURCES`. Families without codes (helper modules) are left out."""
    from .validate.checks import REGISTRY
    out = [parse(getattr(m, "ID", m.__name__), m.__doc__ or "") for m in REGISTRY]
    for source in EXTRA_SOURCES:
        fam = parse(*_module_doc(source))
        if source in PARTS:
            first = parse("", importlib.import_module(PARTS[source][0]).__doc__ or "").codes
            fam.order = min(c.code for c in first) if first else ""
        out.append(fam)
    return [f for f in out if f.codes]


def codes() -> dict[str, Code]:
    """Every documented code, ``{"RG404": Code}``, in code order."""
    found = {c.code: c for f in families() for c in f.codes}
    return dict(sorted(found.items()))


# -- plain text (``rulegen checks``) -----------------------------------------------------------

def md_to_text(text: str) -> str:
    """Markdown of a code's documentation as terminal text: double-backquoted spans lose
    their padding; single backquotes are kept (they mark code, as in compiler messages)."""
    return re.sub(r"`` (.+?) ``", r"`\1`", text)


def _wrap(text: str, indent: str, width: int = 100) -> str:
    return textwrap.fill(md_to_text(text), width=width, initial_indent=indent,
                         subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def code_text(c: Code) -> str:
    """One code as plain text: ``RG404 (error)``, its description and its examples."""
    lines = [f"{c.code} ({c.severity})", _wrap(c.text, "  ")]
    if c.bad:
        lines.append(_wrap("Bad:  " + c.bad, "  "))
    if c.good:
        lines.append(_wrap("Good: " + c.good, "  "))
    return "\n".join(lines)


def render_text(only: str | None = None) -> str:
    """``rulegen checks`` output: every family with its introduction and codes, or only the
    code ``only`` (raises KeyError when no such code is documented)."""
    if only:
        return code_text(codes()[only.upper()]) + "\n"
    out = []
    for fam in families():
        out.append(f"== {fam.name}: {md_to_text(fam.title)}\n")
        for item in fam.items:
            if isinstance(item, Code):
                out.append(code_text(item) + "\n")
            elif item.startswith("```"):
                out.append(textwrap.indent(item.split("\n", 1)[1].rsplit("\n```", 1)[0], "    ") + "\n")
            else:
                out.append(_wrap(item, "") + "\n")
    return "\n".join(out)


# -- Markdown (the check reference page, docs/checks.md) ---------------------------------------

#: The check reference page of the tool documentation site (``mkdocs.docs.yml``), from the repo root.
REFERENCE_PAGE = "docs/checks.md"

_MD_SPECIAL = re.compile(r"([<>*_\[\]])")


def _md_escape(text: str) -> str:
    """Escape Markdown/HTML specials outside code spans, so `<app>` in prose is shown."""
    parts = re.split(r"(``.+?``|`[^`]+`)", text)
    return "".join(p if i % 2 else _MD_SPECIAL.sub(r"\\\1", p) for i, p in enumerate(parts))


def _fill(text: str, indent: str = "") -> str:
    """A Markdown paragraph wrapped at 100 columns (continuation lines indented by ``indent``),
    so a changed docstring changes few lines of the page."""
    return textwrap.fill(text, width=100, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)


def render_markdown() -> str:
    """The site's check reference page: every family, and per code a heading with an anchor
    (``#rg404``), the description and the bad and good examples."""
    out = ["<!-- Made by `rulegen checks --format markdown` from the docstrings that document",
           "     each code; tests/validate/test_checks_doc.py fails when it is stale. -->", "",
           "# Check reference", "",
           _fill("Every finding code rulegen reports, with what it means and an example of the "
                 "bad and the good spec. `rulegen checks CODE` prints one of them in a terminal; "
                 "`.rulegen.yaml` can switch a code off or change its severity."), ""]
    for fam in sorted(families(), key=lambda f: f.order or min(c.code for c in f.codes)):
        out += [f"## {_md_escape(fam.title)} {{ #{fam.name.replace('_', '-')} }}", ""]
        for c in fam.items:
            if not isinstance(c, Code):
                out += [c if c.startswith("```") else _fill(_md_escape(c)), ""]
                continue
            out += [f"### {c.code} {{ #{c.code.lower()} }}", ""]
            out += [_fill(f"*{c.severity}* · {_md_escape(c.text)}"), ""]
            if c.bad:
                out += [_fill(f"- **Bad:** {_md_escape(c.bad)}", "  ")]
            if c.good:
                out += [_fill(f"- **Good:** {_md_escape(c.good)}", "  ")]
            if c.bad or c.good:
                out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
