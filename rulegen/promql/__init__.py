"""The ground floor: PromQL, promtool and Go-template semantics, each written once.

Every other part of rulegen (validation, SLOs, test derivation, mutation, import) reads these
modules and none of them reads back: they import only the standard library, promql-parser and
:mod:`rulegen.findings`.

* :mod:`.syntax`: parsing PromQL text (cached, with a nesting guard) and walking its nodes;
* :mod:`.matchers`: does a label matcher (``=``, ``!=``, ``=~``, ``!~``) accept a value, with
  Prometheus' fully anchored, dot-matches-newline RE2 regexes (and Go's ``Regexp.Expand``);
* :mod:`.series`: promtool's ``input_series`` notation (``1+2x10``, ``_``, ``stale``): reading,
  expanding and writing values, and series texts such as ``up{job="api"}``;
* :mod:`.labelflow`: which labels an expression's series can carry;
* :mod:`.feeds`: which test input series an expression (through recording rules) can select;
* :mod:`.compared`: the query an alert's expr compares with a number (``A`` of ``A > 0.05``);
* :mod:`.gotmpl`: the Go ``text/template`` action lexer (``{{ ... }}``, trim markers, strings,
  raw strings, comments) that alert templates and Helm templates share.
"""
