"""``rulegen derive-tests``: promtool tests written from a rule's ``expr`` and ``for``.

For an alert without tests, the expression is read for a shape rulegen knows how to feed:

* a **threshold on a selector**: ``x{a="b"} > 80``;
* an **aggregation** of one: ``max by (namespace, name) (x{...}) > 0`` (``sum``, ``max``,
  ``min``, ``avg``; ``by`` labels become the expected alert's labels);
* a **rate of a counter**: ``rate(x{...}[5m]) > 0.5`` or ``increase(x{...}[10m]) >= 3``,
  aggregated or not;
* a **ratio of two selectors**: ``a{...} / b{...} > 0.05``, of their rates, or of their
  aggregations by the same labels;
* any of these **scaled** by a number: ``a / b * 100 < 10``;
* two of these joined by **and** (a guard), ``a > 80 and b == 0``, when they read different
  series and match on all their labels;
* **absent**: ``absent(x{...})`` or ``absent(x{...} == 1)``.

From the shape come the tests (promtool's vocabulary, one sample a minute, or the rule
group's interval):

* selectors give series with the labels their matchers require (``=`` the value, ``=~`` a
  value the regular expression matches, ``!=``/``!~`` another value) plus a value for each
  ``by`` label; ratio sides share their labels so they match one-to-one;
* the threshold gives a value on each side, the boundary value itself on the side the
  comparison puts it (``> 80``: 80 does not fire; ``>= 80``: it does);
* ``for`` gives the eval times: the firing test asserts quiet one evaluation interval before
  ``for`` has passed and firing when it has (both sides of the boundary);
* ``absent`` gives a missing series (firing) and a present one (quiet);
* rates give counters growing at the pace that puts the rate (or the increase over the
  window) on the wanted side; the condition holds from the first evaluation with two samples.
  ``rate``'s extrapolation (Prometheus docs, "rate()") makes the first windows read a lower
  pace, which is accounted for when placing the eval times;
* a counter that grows then stops (for a ratio: a numerator that stops, a denominator that
  speeds up) is asserted while the window still holds the change and after, so a halved or
  doubled window fails; a counter that jumps by exactly the threshold tests ``>``/``>=`` at
  the boundary where a steady pace cannot hit it;
* the quiet test also holds, for each label matcher, a series that misses only that matcher
  with a firing value, so a matcher removed from the rule makes it fire;
* mutants no input can tell apart from the rule (``!= 0`` for ``rate(...) > 0``, a matcher
  that another one-to-one matched selector repeats) are written into ``equivalent_mutants``
  with the reason; what the tests cannot pin is printed as a note.

A recording rule of one of these shapes (without the comparison) gets a ``promql_expr_test``
with the value it must compute, once its window is full, and the near-miss series it must
leave out.

Other shapes (``bool``, ``on``/``ignoring``, ``or``/``unless``, functions other than
``rate``/``increase``, ``offset``, subqueries) are reported as "write this one by hand" with
the reason. The tests are inserted into the spec text after the rule's last
line, as a ``tests:`` block emitted by ruamel.yaml; the rest of the file is kept byte for byte
(comments, layout, quoting).
"""


from __future__ import annotations

from .derivation.cases import Derived, derive  # noqa: F401  (the public names callers use)
from .derivation.shape import COMPARISONS, Manual, Shape, Side, analyze, analyze_record  # noqa: F401
from .derivation.writing import insert_tests, tests_yaml  # noqa: F401
