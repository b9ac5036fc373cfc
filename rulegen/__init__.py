"""rulegen: Prometheus alerting as code."""

__version__ = "0.1.0"
