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
