"""Project configuration: ``.rulegen.yaml`` at the project root (optional).

Shape::

    checks:
      disable: [RG502]          # codes switched off
      severity: {RG403: warning} # change a code's severity (error | warning)
    conventions:
      severities: [critical, warning, info]   # [] allows any severity (RG501 off)
      require_summary: true
      require_description: true
      require_runbook_for: [critical]         # [] switches RG504 off
      require_triage:                         # RG510; default {} (nothing required)
        critical: [impact, owner, do_not]     # triage fields each critical alert must have
    duplicate_alert_across_apps: error   # or warning (RG412)
    prometheus_scopes:         # which apps each Prometheus loads (one per cluster or provider)
      capa: ["*-capa"]         # scope name -> app names, or patterns with * and ?
      capz: [shop-capz, cart-capz]
    runbooks:
      prometheus_url: https://prometheus.example.com   # the site's script links every PromQL text there
      grafana_url: https://grafana.example.com         # ... and to Grafana Explore (runbooks/assets/rulegen.js)
      alertmanager_url: https://alertmanager.example.com  # silence links open its silence form
      allow_html: false   # true: raw HTML in spec Markdown is cleaned to an allow-list (nh3), not escaped
    policy_changes: fail   # or warn: what `rulegen check --base REF` does about a PR that weakens the checks
    owners:                  # who owns an alert when its spec does not say (rulegen.spec.owners)
      label: team            # every alert carries its owner's team as this label (off when absent)
      require_for: [critical]  # RG515: alerts of these severities must have an owner; default []
      apps:                  # per app: team (required), chat, paging, escalation (Markdown)
        shop: {team: payments, chat: "#payments", paging: payments-oncall, escalation: "..."}
      labels:                # per label value: every team=search alert belongs to search
        team:
          search: {chat: "#search"}   # team defaults to the value
    prometheus:            # a live Prometheus for the series checks and backtests (docs/live.md)
      url: https://prometheus.example.com   # http(s), no credentials in it; also the default of runbooks.prometheus_url
      bearer_token_file: ci/prometheus-token  # inside the project (CI passes one elsewhere with --prometheus-bearer-token-file)
      headers: {X-Scope-OrgID: team-a}       # sent with every request (not secrets: the file is in Git)
      ca_file: ci/prometheus-ca.pem          # PEM CA bundle for https, inside the project
      timeout: 30s                           # per request (a Prometheus duration)
      lookback: 7d                           # how far back the series checks look
    charts:
      # labels a new chart's PrometheusRule gets (values.yaml <valuesKey>.labels), so a
      # kube-prometheus-stack install's default ruleSelector picks its rules; {} sets none
      # (`check` then warns, RG734); `rulegen new --release NAME` overrides the value
      rule_selector_labels: {release: kube-prometheus-stack}
      # extra values files `check` renders each chart with (besides its own values.yaml),
      # e.g. per environment or cluster; paths from the project root, inside the project
      values_files:
        charts/shop: [deploy/prod/shop-values.yaml, deploy/staging/shop-values.yaml]
    alertmanager:
      # the project's Alertmanager configuration (path inside the project): every alert's
      # label set is routed through it with Alertmanager's own code (docs/routing.md)
      config: deploy/alertmanager.yml
      paging_severities: [critical]   # these must reach a receiver that notifies (RG953)
      null_receivers: [blackhole]     # receivers that page nobody (besides those with no
                                      # notifier at all, which count as null anyway)

Everything has a default, so a project without the file behaves as documented in
``docs/configuration.md``.

``prometheus_scopes`` says which apps share a Prometheus, for rule repositories that render one
chart per cluster or provider (the same PrometheusRule and alert names, other values). Each key
names a scope (a Prometheus server: a cluster, a provider), its value lists the apps that
Prometheus loads (app names, or patterns where ``*`` matches any run of characters and ``?``
one). An app that no pattern names is loaded by every Prometheus (an app common to all
clusters). Two apps share a Prometheus when either is in no scope or they have a scope in
common; only such apps are compared by the duplicate checks across apps: an alert name
used by two apps (RG412) and a PrometheusRule name and namespace rendered twice (RG415). A
rule twice in one spec (RG411) is always compared, since a spec is one PrometheusRule and is
loaded whole. The default, ``{}``, is one Prometheus that loads every app. ``rulegen
import`` writes it when the sources show the layout (``--variant NAME``: one scope per
variant; sibling folders per provider holding the same rules: one scope per folder).

``policy_changes`` (see :mod:`rulegen.gitops.policy`) is read from the *base* ref's file by
``rulegen check --base REF``, never from the pull request's own: ``fail`` (the default, also
when the key is absent) makes a grown baseline or a switched-off or weakened check an error
(RG820-RG823), ``warn`` reports them as warnings. Those codes cannot be switched off or
re-graded under ``checks:``; ``policy_changes: warn`` is the one switch, and it only counts
once it is on the base branch.

``prometheus`` (see :mod:`rulegen.live`) names the Prometheus the live checks read. A pull
request can change this file, so its paths (``bearer_token_file``, ``ca_file``) must stay
inside the project (the containment rules of :mod:`rulegen.fs.containment`), and secrets given
on the command line are sent only to a URL given on the command line too (see
:func:`rulegen.live.connect.resolve`). ``runbooks.prometheus_url`` defaults to ``prometheus.url``
(set it to give readers a public address instead).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .baseurl import base_url_ok
from .findings import Finding, RulegenError, Severity
from .fs import read as fs_read
from .fs.containment import lexical_problem, refuse_link_out
from .fs import yamlbound
from .fs.containment import LOCKED_CODES
from .spec.owners import ENTRY_KEYS, OwnerDefaults

CONFIG_FILE = ".rulegen.yaml"
#: The values of ``policy_changes``.
POLICY_MODES = ("fail", "warn")
#: Codes of :mod:`rulegen.gitops.policy`: ``checks.disable``/``checks.severity`` may not name
#: them (a pull request could otherwise switch off the check of its own policy changes).
POLICY_CHANGE_CODES = frozenset({"RG820", "RG821", "RG822", "RG823"})

#: The label kube-prometheus-stack's Prometheus selects PrometheusRules by with its default
#: values (``ruleSelector`` matching the Helm release, whose usual name this is).
DEFAULT_RULE_SELECTOR_LABELS = {"release": "kube-prometheus-stack"}

_LABEL_NAME = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                         r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")

#: Defaults of the ``prometheus:`` section, in seconds.
DEFAULT_PROMETHEUS_TIMEOUT = 30.0
DEFAULT_LOOKBACK = 7 * 86400.0


@dataclass(frozen=True)
class PrometheusSettings:
    """The ``prometheus:`` section of ``.rulegen.yaml`` as written (checked, not yet resolved
    against the command line: :func:`rulegen.live.connect.resolve` does that).

    Attributes:
        url: http(s) base URL without trailing ``/`` (no user info, query or fragment), or None.
        bearer_token_file: project-relative POSIX path of a file holding the token, or None.
        headers: ``((name, value), ...)`` sent with every request, in the file's order.
        ca_file: project-relative path of a PEM CA bundle for https, or None (system CAs).
        timeout: seconds one request may take (default 30).
        lookback: seconds the series checks look back (default 7 days).
    """

    url: str | None = None
    bearer_token_file: str | None = None
    headers: tuple = ()
    ca_file: str | None = None
    timeout: float = DEFAULT_PROMETHEUS_TIMEOUT
    lookback: float = DEFAULT_LOOKBACK


@dataclass
class Config:
    """Validated project configuration (see the module docstring for the file shape)."""

    disabled: frozenset = frozenset()
    severity_overrides: dict = field(default_factory=dict)
    severities: tuple = ("critical", "warning", "info")
    require_summary: bool = True
    require_description: bool = True
    require_runbook_for: tuple = ("critical",)
    duplicate_alert_across_apps: str = "error"
    #: severity -> triage fields (:data:`rulegen.spec.triage.TRIAGE_FIELDS`) its alerts must have
    require_triage: dict = field(default_factory=dict)
    #: base URLs (http/https, no trailing slash) the runbook pages open PromQL in; None: no link
    prometheus_url: str | None = None
    grafana_url: str | None = None
    #: raw HTML in runbook text: cleaned to an allow-list by nh3 (True) or escaped (False)
    allow_html: bool = False
    #: ``fail`` or ``warn``: how ``rulegen check --base`` reports a PR that weakens the checks,
    #: when this is the base ref's config (see :mod:`rulegen.gitops.policy`)
    policy_changes: str = "fail"
    #: labels (name -> value) a new chart's PrometheusRule starts with (``charts.rule_selector_labels``)
    rule_selector_labels: dict = field(default_factory=lambda: dict(DEFAULT_RULE_SELECTOR_LABELS))
    rule_selector_labels_set: bool = field(default=False, compare=False)  #: set in .rulegen.yaml, not the default
    #: chart folder (``charts/shop``) -> extra values files (project-relative POSIX paths)
    #: ``check`` renders the chart with, one render per file (``charts.values_files``)
    values_files: dict = field(default_factory=dict)
    #: ``owners``: the project's default owners (:class:`rulegen.spec.owners.OwnerDefaults`)
    owners: OwnerDefaults = field(default_factory=OwnerDefaults)
    #: ``runbooks.alertmanager_url``: base URL of the Alertmanager UI the silence links open; None: no link
    alertmanager_url: str | None = None
    #: the ``prometheus:`` section (a live Prometheus; ``url`` None: none configured)
    prometheus: "PrometheusSettings" = field(default_factory=lambda: PrometheusSettings())
    #: scope name -> app names or ``*``/``?`` patterns: the apps that Prometheus loads
    #: (``prometheus_scopes``; {}: one Prometheus loads every app)
    prometheus_scopes: dict = field(default_factory=dict)

    def scopes_of(self, app: str) -> frozenset | None:
        """The names of the ``prometheus_scopes`` whose apps or patterns name ``app``, or None
        when none does (every Prometheus loads the app)."""
        found = frozenset(name for name, pats in self.prometheus_scopes.items()
                          if any(fnmatch.fnmatchcase(app, p) for p in pats))
        return found or None

    def share_prometheus(self, a: str, b: str) -> bool:
        """True when apps ``a`` and ``b`` can be loaded by one Prometheus: either is in no
        scope (:meth:`scopes_of`), or they have a scope in common."""
        sa, sb = self.scopes_of(a), self.scopes_of(b)
        return sa is None or sb is None or bool(sa & sb)
    #: ``alertmanager.config``: project-relative path of the alertmanager.yml alerts are routed
    #: through (:mod:`rulegen.routing`); None: routing is not checked
    alertmanager_config: str | None = None
    #: ``alertmanager.paging_severities``: severities that must reach a notifying receiver
    paging_severities: tuple = ("critical",)
    #: ``alertmanager.null_receivers``: receivers that notify nobody, besides empty ones
    null_receivers: tuple = ()

    def apply(self, findings: list[Finding]) -> list[Finding]:
        """Drop disabled codes and apply severity overrides; result sorted by file, line, col."""
        out = []
        for f in findings:
            if f.code in self.disabled:
                continue
            sev = self.severity_overrides.get(f.code)
            if sev is not None and sev != f.severity:
                f = Finding(f.file, f.line, f.col, f.code, sev, f.message, f.rule)
            out.append(f)
        return sorted(set(out), key=lambda f: (f.file, f.line, f.col, f.code, f.message))


def load_config(root: Path) -> Config:
    """Read ``.rulegen.yaml`` under ``root``; defaults when absent.

    Raises:
        RulegenError: the file exists but is not valid (says which key and why).
    """
    p = root / CONFIG_FILE
    if not p.exists():  # a dangling link reads nothing (a write through one is RG747)
        return Config()
    refuse_link_out(root, CONFIG_FILE)
    try:
        raw = yamlbound.safe_load(fs_read.read_text(p, CONFIG_FILE), CONFIG_FILE) or {}
    except IsADirectoryError:
        return Config()
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise RulegenError(f"{CONFIG_FILE}: not valid YAML: {e}") from None
    return parse_config(raw)


_CODE = re.compile(r"RG[0-9]{3}")


def parse_config(raw) -> Config:
    """Build a :class:`Config` from the loaded YAML of ``.rulegen.yaml``.

    Raises:
        RulegenError: unknown keys, wrong types, or codes not of the form ``RG123``.
    """
    if not isinstance(raw, dict):
        raise RulegenError(f"{CONFIG_FILE}: must be a mapping")
    _known(raw, ("checks", "conventions", "duplicate_alert_across_apps", "prometheus_scopes", "runbooks",
                 "policy_changes", "charts", "alertmanager", "prometheus", "owners"), "")
    am = _mapping(raw.get("alertmanager"), "alertmanager")
    _known(am, ("config", "paging_severities", "null_receivers"), "alertmanager.")
    charts = _mapping(raw.get("charts"), "charts")
    _known(charts, ("rule_selector_labels", "values_files"), "charts.")
    pages = _mapping(raw.get("runbooks"), "runbooks")
    _known(pages, ("prometheus_url", "grafana_url", "allow_html", "alertmanager_url"), "runbooks.")
    checks = _mapping(raw.get("checks"), "checks")
    conv = _mapping(raw.get("conventions"), "conventions")
    _known(checks, ("disable", "severity"), "checks.")
    _known(conv, ("severities", "require_summary", "require_description", "require_runbook_for",
                  "require_triage"), "conventions.")
    disabled = _strings(checks.get("disable"), "checks.disable", ())
    for c in disabled:
        _code(c, "checks.disable")
        _unlocked(c, "checks.disable")
    sev = {}
    for code, s in _mapping(checks.get("severity"), "checks.severity").items():
        _code(str(code), "checks.severity")
        _unlocked(str(code), "checks.severity")
        try:
            sev[str(code)] = Severity(s)
        except ValueError:
            raise RulegenError(f"{CONFIG_FILE}: checks.severity.{code}: use error or warning") from None
    dup = raw.get("duplicate_alert_across_apps", "error")
    if dup not in ("error", "warning"):
        raise RulegenError(f"{CONFIG_FILE}: duplicate_alert_across_apps: use error or warning")
    policy = raw.get("policy_changes", Config.policy_changes)
    if policy not in POLICY_MODES:
        raise RulegenError(f"{CONFIG_FILE}: policy_changes: use fail or warn (what `rulegen check --base` "
                           "does when a pull request grows the baseline or weakens a check)")
    live = prometheus_settings(raw.get("prometheus"))
    return Config(
        disabled=frozenset(disabled),
        severity_overrides=sev,
        severities=_strings(conv.get("severities"), "conventions.severities", Config.severities),
        require_summary=_bool(conv, "require_summary"),
        require_description=_bool(conv, "require_description"),
        require_runbook_for=_strings(conv.get("require_runbook_for"), "conventions.require_runbook_for",
                                     Config.require_runbook_for),
        duplicate_alert_across_apps=dup,
        require_triage=_triage(conv.get("require_triage")),
        prometheus_url=_base_url(pages.get("prometheus_url"), "runbooks.prometheus_url") or live.url,
        grafana_url=_base_url(pages.get("grafana_url"), "runbooks.grafana_url"),
        allow_html=_allow_html(pages.get("allow_html", False)),
        policy_changes=policy,
        rule_selector_labels=_selector_labels(charts.get("rule_selector_labels", DEFAULT_RULE_SELECTOR_LABELS)),
        rule_selector_labels_set="rule_selector_labels" in charts,
        values_files=_values_files(charts.get("values_files")),
        owners=_owners(raw.get("owners")),
        alertmanager_url=_base_url(pages.get("alertmanager_url"), "runbooks.alertmanager_url"),
        prometheus=live,
        prometheus_scopes=_scopes(raw.get("prometheus_scopes")),
        alertmanager_config=_project_path(am.get("config"), "alertmanager.config", "deploy/alertmanager.yml"),
        paging_severities=_strings(am.get("paging_severities"), "alertmanager.paging_severities",
                                   Config.paging_severities),
        null_receivers=_strings(am.get("null_receivers"), "alertmanager.null_receivers", ()),
    )


#: Header names rulegen sets itself (``prometheus.headers`` may not name them).
_OWN_HEADERS = frozenset({"authorization", "host", "content-type", "content-length", "accept-encoding",
                          "connection", "transfer-encoding"})
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def prometheus_settings(v, where: str = f"{CONFIG_FILE}: prometheus") -> PrometheusSettings:
    """The ``prometheus:`` section (None: not configured) as :class:`PrometheusSettings`.

    Raises:
        RulegenError: unknown keys, a URL that is not plain http(s), a path leading outside
            the project, a header that is not a valid HTTP field, a malformed duration.
    """
    d = _mapping(v, "prometheus")
    _known(d, ("url", "bearer_token_file", "headers", "ca_file", "timeout", "lookback"), "prometheus.")
    url = live_url(d.get("url"), f"{where}.url")
    paths = {}
    for key in ("bearer_token_file", "ca_file"):
        p = d.get(key)
        if p is not None:
            problem = lexical_problem(p) if isinstance(p, str) else ("RG743", "is not a string")
            if problem is not None:
                raise RulegenError(f"{where}.{key}: {problem[0]} {p!r} {problem[1]}: a pull request can change "
                                   f"{CONFIG_FILE}, so this path must be inside the project, relative to its root; "
                                   "give a file elsewhere (a CI secret) with the command-line option instead")
        paths[key] = p
    headers = tuple(header(str(k), val, f"{where}.headers") for k, val in _mapping(d.get("headers"), "prometheus.headers").items())
    return PrometheusSettings(url=url, bearer_token_file=paths["bearer_token_file"], headers=headers,
                              ca_file=paths["ca_file"],
                              timeout=seconds(d.get("timeout"), f"{where}.timeout", DEFAULT_PROMETHEUS_TIMEOUT),
                              lookback=seconds(d.get("lookback"), f"{where}.lookback", DEFAULT_LOOKBACK))


def live_url(v, where: str) -> str | None:
    """A Prometheus base URL: ``http://`` or ``https://``, a host, an optional path; no user
    info (credentials go in a token file), query or fragment; only :data:`rulegen.baseurl.BASE_URL`'s characters
    (the runbook links default to it). Without trailing ``/``; None when ``v`` is None.

    Raises:
        RulegenError: anything else (``file:``, ``ftp:``, spaces, ``user:pass@``...).
    """
    if v is None:
        return None
    if not base_url_ok(v):  # the runbook links' rule: they default to it
        shown = v if isinstance(v, str) and "@" not in v else "the value given"
        raise RulegenError(f"{where}: {shown!r} is not an http:// or https:// URL of a host (or [IPv6]), a port and "
                           "a path of -._~:+/%XX, letters and digits, without user info, query or fragment, e.g. "
                           "https://prometheus.example.com (put credentials in a token file)")
    return v.rstrip("/")


def header(name: str, value, where: str) -> tuple[str, str]:
    """One extra HTTP header ``(name, value)``, checked: a token name, a value without line
    breaks or control characters, not a header rulegen sets itself (``Authorization``: use a
    token file).

    Raises:
        RulegenError: says which header and why (never quoting its value).
    """
    if not _HEADER_NAME.fullmatch(name):
        raise RulegenError(f"{where}: {name!r} is not an HTTP header name")
    if name.lower() in _OWN_HEADERS:
        raise RulegenError(f"{where}: {name} is set by rulegen itself"
                           + (" (give a bearer token with a token file)" if name.lower() == "authorization" else ""))
    if not isinstance(value, str) or any(ord(c) < 32 and c != "\t" or ord(c) == 127 for c in value):
        raise RulegenError(f"{where}: the value of {name} must be a string on one line, without control characters")
    return name, value


def seconds(v, where: str, default: float) -> float:
    """A positive Prometheus duration (``30s``, ``7d``) in seconds; ``default`` when None.

    Raises:
        RulegenError: not a duration, or zero.
    """
    if v is None:
        return default
    from .spec.durations import DurationError, parse_ms
    try:
        ms = parse_ms(v) if isinstance(v, str) else None
    except DurationError as e:
        raise RulegenError(f"{where}: {e}") from None
    if not ms:
        raise RulegenError(f"{where}: give a positive Prometheus duration such as 30s or 7d")
    return ms / 1000.0


def selector_label(name: str, value, where: str = f"{CONFIG_FILE}: charts.rule_selector_labels") -> None:
    """Check one rule-selector label (a Kubernetes label: ``name`` with an optional DNS prefix,
    ``value`` a string of at most 63 characters of ``[A-Za-z0-9-_.]``).

    Raises:
        RulegenError: says which part is not a Kubernetes label."""
    if not isinstance(name, str) or not _LABEL_NAME.fullmatch(name) or len(name.rpartition("/")[2]) > 63:
        raise RulegenError(f"{where}: {name!r} is not a Kubernetes "
                           "label name (e.g. release, or app.kubernetes.io/part-of)")
    if not isinstance(value, str) or not _LABEL_VALUE.fullmatch(value):
        raise RulegenError(f"{where}.{name}: {value!r} is not a "
                           "Kubernetes label value (a string of at most 63 letters, digits, '-', '_' "
                           "or '.', e.g. kube-prometheus-stack)")


def _selector_labels(v) -> dict:
    """``charts.rule_selector_labels``: a mapping of Kubernetes labels (``{}``: none)."""
    out = {}
    for name, value in _mapping(v, "charts.rule_selector_labels").items():
        selector_label(name, value)
        out[name] = value
    return out


def _values_files(v) -> dict:
    """``charts.values_files``: chart folder -> list of project-relative values file paths.
    Paths are plain relative POSIX paths (:func:`rulegen.fs.containment.lexical_problem`: no
    ``..``, no hidden folder such as ``.git``); a symlink leading out, or into ``.git``, is
    refused where the file is read."""
    out = {}
    for chart, files in _mapping(v, "charts.values_files").items():
        name = f"charts.values_files.{chart}"
        paths = _strings(files, name, ())
        for p in (str(chart).rstrip("/"), *paths):
            problem = lexical_problem(p)  # the rule of every path a spec or the config sets
            if problem is not None:
                raise RulegenError(f"{CONFIG_FILE}: {name}: {p!r} must be a path inside the project, "
                                   f"relative to its root (e.g. deploy/prod/shop-values.yaml): {problem[0]} it "
                                   f"{problem[1]}")
        out[str(chart).rstrip("/")] = paths
    return out


_SCOPE_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_APP_PATTERN = re.compile(r"[a-z0-9*?]([-a-z0-9*?]{0,62})")


def _scopes(v) -> dict:
    """``prometheus_scopes``: scope name (letters, digits, ``-``, ``_``, ``.``; at most 63) ->
    tuple of app names or patterns (lower-case letters, digits, ``-``, ``*``, ``?``)."""
    out = {}
    for name, apps in _mapping(v, "prometheus_scopes").items():
        if not isinstance(name, str) or not _SCOPE_NAME.fullmatch(name):
            raise RulegenError(f"{CONFIG_FILE}: prometheus_scopes: {name!r} is not a scope name (letters, digits, "
                               "'-', '_' or '.', at most 63, e.g. capa or eu-west-1)")
        pats = _strings(apps, f"prometheus_scopes.{name}", ())
        bad = [p for p in pats if not _APP_PATTERN.fullmatch(p)]
        if bad or not pats:
            raise RulegenError(f"{CONFIG_FILE}: prometheus_scopes.{name}: list the apps this Prometheus loads, "
                               "as app names or patterns with * and ? (e.g. [shop-capa, \"*-capa\"])"
                               + (f"; not an app name or pattern: {', '.join(map(repr, bad))}" if bad else ""))
        out[name] = pats
    return out


def _project_path(v, name: str, example: str) -> str | None:
    """A plain project-relative POSIX path (:func:`rulegen.fs.containment.lexical_problem`),
    or None when unset; a symlink leading out is refused where the file is read."""
    if v is None:
        return None
    if not isinstance(v, str) or not v:
        raise RulegenError(f"{CONFIG_FILE}: {name} must be a path inside the project (e.g. {example})")
    problem = lexical_problem(v)
    if problem is not None:
        raise RulegenError(f"{CONFIG_FILE}: {name}: {v!r} must be a path inside the project, relative to "
                           f"its root (e.g. {example}): {problem[0]} it {problem[1]}")
    return v


def _base_url(v, name: str) -> str | None:
    """An http(s) base URL (:func:`base_url_ok`) without its trailing ``/``, or None when unset;
    RulegenError for anything else (``javascript:``, user info, a query, a quote, non-ASCII)."""
    if v is not None and not base_url_ok(v):
        raise RulegenError(f"{CONFIG_FILE}: {name} must be an http:// or https:// URL of a host (or [IPv6]), a port "
                           "and a path of -._~:+/%XX, letters and digits, e.g. https://prometheus.example.com")
    return v.rstrip("/") if v is not None else None


def _triage(v) -> dict:
    """``conventions.require_triage``: severity -> list of triage field names."""
    from .spec.triage import TRIAGE_FIELDS
    out = {}
    for sev, fields in _mapping(v, "conventions.require_triage").items():
        names = _strings(fields, f"conventions.require_triage.{sev}", ())
        bad = [f for f in names if f not in TRIAGE_FIELDS]
        if bad:
            raise RulegenError(f"{CONFIG_FILE}: conventions.require_triage.{sev}: unknown field(s) "
                               f"{', '.join(bad)}; known: {', '.join(TRIAGE_FIELDS)}")
        out[str(sev)] = tuple(names)
    return out


#: Labels an owner label may not be: Prometheus sets ``alertname``, rulegen ``severity`` and
#: ``component`` from the spec.
_RESERVED_LABELS = ("alertname", "severity", "component")


def _owners(v) -> OwnerDefaults:
    """``owners``: the default owners (see :mod:`rulegen.spec.owners`).

    Raises:
        RulegenError: unknown keys, an entry without ``team`` (``apps``), a value that is not a
            non-empty string, a label name Prometheus would not accept."""
    d = _mapping(v, "owners")
    _known(d, ("label", "require_for", "apps", "labels"), "owners.")
    label = d.get("label")
    if label is not None and (not isinstance(label, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", label)
                              or label in _RESERVED_LABELS or label.startswith("__")):
        raise RulegenError(f"{CONFIG_FILE}: owners.label must be a Prometheus label name other than "
                           f"{', '.join(_RESERVED_LABELS)} (e.g. team), not {label!r}")
    apps = {str(app): _owner_entry(e, f"owners.apps.{app}", None)
            for app, e in _mapping(d.get("apps"), "owners.apps").items()}
    labels: dict = {}
    for name, by_value in _mapping(d.get("labels"), "owners.labels").items():
        where = f"owners.labels.{name}"
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(name)):
            raise RulegenError(f"{CONFIG_FILE}: {where}: {name!r} is not a Prometheus label name")
        labels[str(name)] = {str(val): _owner_entry(e, f"{where}.{val}", str(val))
                             for val, e in _mapping(by_value, where).items()}
    return OwnerDefaults(label=label, require_for=_strings(d.get("require_for"), "owners.require_for", ()),
                         apps=apps, labels=labels)


def _owner_entry(v, where: str, team: str | None) -> dict:
    """One entry of ``owners.apps``/``owners.labels``: ``team`` (default ``team``), ``chat``,
    ``paging``, ``escalation``, each a non-empty string."""
    e = _mapping(v, where)
    _known(e, ENTRY_KEYS, where + ".")
    for k, x in e.items():
        if not isinstance(x, str) or not x.strip():
            raise RulegenError(f"{CONFIG_FILE}: {where}.{k} must be a non-empty string")
    if team is None and "team" not in e:
        raise RulegenError(f"{CONFIG_FILE}: {where} needs team: (the team that owns the app's alerts)")
    return {k: e[k] for k in ENTRY_KEYS if k in e}


def _allow_html(v) -> bool:
    """``runbooks.allow_html`` (default false): see :mod:`rulegen.render.safe`."""
    if not isinstance(v, bool):
        raise RulegenError(f"{CONFIG_FILE}: runbooks.allow_html must be true or false")
    return v


def _known(d: dict, keys: tuple, prefix: str) -> None:
    unknown = sorted(str(k) for k in d if k not in keys)
    if unknown:
        raise RulegenError(f"{CONFIG_FILE}: unknown key(s) {', '.join(prefix + k for k in unknown)}; "
                           f"known: {', '.join(prefix + k for k in keys)}")


def _mapping(v, name: str) -> dict:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise RulegenError(f"{CONFIG_FILE}: {name} must be a mapping")
    return v


def _strings(v, name: str, default: tuple) -> tuple:
    if v is None:
        return default
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise RulegenError(f"{CONFIG_FILE}: {name} must be a list of strings")
    return tuple(v)


def _bool(d: dict, key: str) -> bool:
    v = d.get(key, True)
    if not isinstance(v, bool):
        raise RulegenError(f"{CONFIG_FILE}: conventions.{key} must be true or false")
    return v


def _unlocked(c: str, name: str) -> None:
    """Refuse to switch off or re-grade a containment code (:data:`rulegen.fs.containment.LOCKED_CODES`:
    they keep rulegen from reading or writing outside the project) or a policy-change code
    (:data:`POLICY_CHANGE_CODES`)."""
    if c in POLICY_CHANGE_CODES:
        raise RulegenError(f"{CONFIG_FILE}: {name}: {c} reports a pull request that weakens the checks and "
                           "cannot be switched off or re-graded; `policy_changes: warn` on the base branch "
                           "makes `rulegen check --base` report such changes without failing")
    if c in LOCKED_CODES:
        raise RulegenError(f"{CONFIG_FILE}: {name}: {c} keeps rulegen inside the project (paths, links, "
                           "HTML) and cannot be switched off or re-graded")


def _code(c: str, name: str) -> None:
    if not _CODE.fullmatch(c):
        raise RulegenError(f"{CONFIG_FILE}: {name}: {c!r} is not a check code such as RG502 "
                           "(see `rulegen checks`)")
