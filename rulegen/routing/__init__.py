"""Who an alert notifies: routing proven with Alertmanager's own code, and inhibitions.

* :mod:`.labelsets` the label set each alert can carry (rule labels, the chart's knob
  defaults, the labels its expr pins), from the label flow of :mod:`rulegen.promql.labelflow`;
* :mod:`.project` the project's Alertmanager configuration (``alertmanager.config`` of
  ``.rulegen.yaml``) and every alert routed through it by ``rulegen-amroute``
  (:mod:`rulegen.tools.amroute`: Alertmanager's ``config`` and ``dispatch`` packages);
* :mod:`.inhibit` the inhibit rules the specs' ``inhibited_by:`` declare (cause -> symptoms).

The checks are :mod:`rulegen.validate.checks.routing`; the pages show the result
(:mod:`rulegen.render.routing_md`), ``rulegen diff`` compares it between two refs.
"""
