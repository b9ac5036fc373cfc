"""What an import produces, in memory: the specs ready to write and the notes about them."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..findings import Finding


@dataclass
class ImportedSpec:
    """One spec ready to write: ``app``, the ``text`` to write, its ``sources`` (display
    paths), counts of alerts and recording rules, the spec ``data`` (plain Python), and the
    PrometheusRule's static ``metadata.labels``/``annotations`` (``chart_labels``,
    ``chart_annotations``), which are chart settings: ``<values_key>.labels`` in values.yaml."""

    app: str
    text: str
    sources: list[str]
    alerts: int = 0
    records: int = 0
    data: dict = field(default_factory=dict)
    chart_labels: dict = field(default_factory=dict)
    chart_annotations: dict = field(default_factory=dict)
    #: spec path -> (source display, key position, value position), 1-based (line, col)
    #: pairs or None: where each imported node came from (:func:`source_position`).
    origins: dict = field(default_factory=dict)
    #: (source display, line) shown for a finding on a part of the spec no source node made
    #: (``app:``, ``chart:``): the first source's ``groups:``.
    first_source: tuple = ("", 1)


@dataclass
class ImportResult:
    """Outcome of :func:`import_paths`: the specs (not yet written) and every note.
    ``helm``: a Helm template was read statically (so the hint to import what Helm renders
    applies; not for plain files, nor for a chart rendered by helm already)."""

    specs: list[ImportedSpec] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)
    helm: bool = False

    @property
    def ok(self) -> bool:
        return not any(n.is_error for n in self.notes)
