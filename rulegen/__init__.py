"""rulegen: Prometheus alerting as code.

The package is a picture of the pipeline (load -> validate -> render -> check the outputs ->
test, plus gitops and import), read from the top floor down. ``cli`` only dispatches to
``commands``, one module per command (its options, printing and exit codes: the only code that
prints). Below them the libraries return data: ``pipeline`` loads and plans a project;
``importer`` turns rule files and charts into specs; ``gitops`` writes, checks drift, reads a
Git ref, diffs, compares policy and checks what an Argo CD sync would reject; ``run`` runs the
promtool tests, mutation testing and derived tests; ``outputs`` checks what render made (values
knobs, site settings, links); ``render`` makes one kind of output per module; ``validate`` holds
one module per check family; ``spec`` loads a spec into the model (``spec.slo`` expands SLOs).
The ground floor, used by all of them: ``promql`` (PromQL and promtool semantics: syntax,
matchers, series notation, label flow, Go-template lexing), ``tools`` (finding and running
helm, promtool and every other program, with a reduced environment), ``fs`` (the one atomic
writer, the one bounded reader, containment), ``findings`` and ``config``.
``docs/development.md`` ("Layout") says the same with every module named.
"""

__version__ = "0.1.0"


#: ``yaml.reader.Reader.NON_PRINTABLE``'s pattern text (PyYAML 5 and 6), from the YAML 1.1
#: spec's printable characters: tab, line feed, carriage return, U+0020-U+007E, U+0085,
#: U+00A0-U+D7FF, U+E000-U+FFFD, U+10000-U+10FFFF.
YAML_NON_PRINTABLE = "[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010ffff]"
#: The code points outside that set, as a class of its own.
NON_PRINTABLE_SET = "[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uD800-\uDFFF\uFFFE\uFFFF]"


def _seed_yaml_reader_pattern() -> None:
    """Spare every command that reads YAML the costliest line of ``import yaml``.

    PyYAML's ``yaml.reader`` compiles, as it is imported, the pattern of characters YAML does
    not allow (:data:`YAML_NON_PRINTABLE`), a negated class whose ranges Python's ``re``
    builds into a table code point by code point: 50 M instructions, about 4% of a
    ``validate``, for a pattern only PyYAML's pure-Python reader uses (rulegen reads YAML
    through libyaml). The same set written as its complement (:data:`NON_PRINTABLE_SET`:
    the C0 and C1 controls YAML excludes, the surrogates, U+FFFE and U+FFFF) compiles ten
    times faster; it is put in ``re``'s cache under PyYAML's pattern text, where
    ``re.compile`` finds it. ``tests/core/test_yaml_pattern.py`` checks the two match the same
    code points. Should ``re`` keep its cache elsewhere, nothing is seeded and PyYAML compiles
    its own pattern as before."""
    import re
    cache = getattr(re, "_cache", None)
    if isinstance(cache, dict):
        cache.setdefault((str, YAML_NON_PRINTABLE, 0), re.compile(NON_PRINTABLE_SET))


_seed_yaml_reader_pattern()
