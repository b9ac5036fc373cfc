"""Runbook pages: shape, anchors, literal Prometheus templates, team notes that survive builds."""

from __future__ import annotations

import re

import pytest
from markdown.extensions.toc import slugify

from rulegen.cli import main
from rulegen.outputs.anchors import page_ids
from rulegen.render.slug import anchor

from helpers import flat, links, marked_queries
from helpers.samples import add_templated_alert


def build(project, *extra) -> int:
    return main(["-C", str(project), "build", *extra])


@pytest.mark.parametrize("name, expected", [
    ("LlamaSwapDown", "llamaswapdown"),
    ("KubePod CrashLooping!", "kubepod-crashlooping"),
    ("Foo_Bar:Baz", "foo_barbaz"),
    ("Ärger über Ölpreise", "arger-uber-olpreise"),
    ("InferenceCacheAwaitingFirstKVEvent", "inferencecacheawaitingfirstkvevent"),
])
def test_anchor_is_the_toc_slug(name, expected):
    assert anchor(name) == expected == slugify(name, "-")


def test_anchor_fast_path_is_the_toc_slug():
    # anchor() slugs printable-ASCII names without importing Markdown: the same as slugify on
    # every name of one or two printable ASCII characters, on three-character names of the
    # characters slugify treats differently, and on random longer names (fixed seed)
    import itertools
    import random
    ascii_chars = [chr(c) for c in range(0x20, 0x7f)]
    names = ["".join(p) for n in (1, 2) for p in itertools.product(ascii_chars, repeat=n)]
    names += ["".join(p) for p in itertools.product(["A", "z", "0", "_", "-", " ", ":", "("], repeat=3)]
    rng = random.Random(25)
    names += ["".join(rng.choice(ascii_chars) for _ in range(rng.randint(3, 40))) for _ in range(20000)]
    names += ["Tab\there", "Ärger", "x\x1cy", "\u00a0a"]  # not printable ASCII: slugify itself
    for name in names:
        if slugify(name, "-"):  # (names that slug to nothing get a hash, tested below)
            assert anchor(name) == slugify(name, "-"), repr(name)
        else:
            assert re.fullmatch(r"alert-[0-9a-f]{8}", anchor(name)), repr(name)


def test_anchor_fast_path_on_the_corpus_alert_names(shared_dir):
    # every alert name of the awesome-prometheus-alerts corpus: anchor() equals the toc slug
    names = set()
    for f in (shared_dir / "corpus" / "awesome-prometheus-alerts" / "rules").rglob("*.yml"):
        names.update(re.findall(r"^\s*-?\s*alert:\s*(.+?)\s*$", f.read_text(encoding="utf-8"), re.M))
    assert len(names) > 900
    for name in names:
        assert anchor(name) == slugify(name, "-"), name


def test_anchor_of_a_name_without_ascii_is_stable_and_distinct():
    assert anchor("!!!") == anchor("!!!")
    assert re.fullmatch(r"alert-[0-9a-f]{8}", anchor("!!!"))
    assert anchor("日本") != anchor("!!!")


def test_llama_swap_page_has_every_seed_fact(project):
    assert build(project) == 0
    text = (project / "runbooks/llama-swap.md").read_text()
    page = flat(text)  # the page's paragraphs are wrapped at 120 characters
    # where the rule lives and when it renders
    assert ("**Where the rule lives:** `charts/llama-swap/rules/llama-swap.rules.yaml` in the chart "
            "`charts/llama-swap` renders the PrometheusRule `llama-swap` in namespace `ai`, group `llama-swap`.") in page
    assert "only when `enabled` and `monitoring.enabled` are true in `charts/llama-swap/values.yaml`" in page
    # per alert: severity badge, component and group, fires-when sentence with the expr and the for (each
    # on a line of its own), PromQL as code, each once
    assert "## LlamaSwapDown { #llamaswapdown }" in page
    assert '<span class="rg-sev rg-sev-critical">critical</span> llama-swap has no available replica.' in page
    assert "**Component:** llama-swap · **Group:** llama-swap" in page
    # a query compared with a number: the query (marked for the site's links) and the
    # comparison apart (issue 29), once
    assert ("Fires when `kube_deployment_status_replicas_available{namespace=\"ai\", deployment=\"llama-swap\"}`"
            "{ .rg-promql }\nis `== 0`\ncontinuously for **5m**") in text
    assert text.count("is `== 0`") == 1
    # a short expr is quoted in the sentence only (issue 29: no second copy in a PromQL block)
    assert text.count("absent(up{job=\"llama-swap\", namespace=\"ai\"} == 1)") == 1
    assert "Fires when `absent(up{job=\"llama-swap\", namespace=\"ai\"} == 1)`{ .rg-promql }\nholds" in text
    # facts table, causes, read-only commands, resolution, related link
    assert "| Node pin | `k8s-worker-home-2` (B60) |" in page
    assert "### Likely causes { #llamaswapdown-likely-causes }" in page
    assert "```bash\nkubectl -n ai get pods -l app.kubernetes.io/name=llama-swap -o wide\n" in text
    assert "### Resolution { #llamaswapdown-resolution }" in page
    assert "- [LlamaSwapNoMetrics](#llamaswapnometrics): usually fires alongside" in page
    ids, heading_ids, _ = page_ids(text)
    assert {"llamaswapdown", "llamaswapnometrics", "context"} <= ids
    assert len(heading_ids) == len(set(heading_ids))


def test_new_packs_have_their_tables(project):
    assert build(project) == 0
    noctaya = (project / "runbooks/noctaya.md").read_text()
    assert "| Condition | Meaning |" in noctaya
    assert "| `AutoscalingReady` | The KEDA External Push resources are configured |" in noctaya
    # a table with rows over 120 characters is a list, one item per row, each cell under its
    # column's name (issue 29)
    assert "| Reason | Classification | Action |" not in noctaya
    assert ("- `SchedulingDelayed` · Classification: Recoverable delay · Action: Check accelerator capacity, "
            "device plugins, selectors") in flat(noctaya)
    assert "## Timeout versus backend cause { #timeout-versus-backend-cause }" in noctaya
    assert "kind: CustomResourceStateMetrics" in noctaya
    ic = (project / "runbooks/inferencecache.md").read_text()
    assert "- `ProbeT2Failed` · Stage: tier-2 · Meaning: The tier-2 put/get cycle failed." in flat(ic)
    assert "First response: Not actionable today." in flat(ic)
    assert "| 9 | CachePolicy coverage | `CP` |" in ic
    assert "## InferenceCacheAwaitingFirstKVEvent { #inferencecacheawaitingfirstkvevent }" in ic


def test_prometheus_templates_are_shown_literally(project):
    # Prometheus accepts any alert name; the naming convention (RG401) is a project choice.
    (project / ".rulegen.yaml").write_text("checks:\n  disable: [RG401, RG402]\n")
    add_templated_alert(project)
    assert build(project) == 0
    page = (project / "runbooks/llama-swap.md").read_text()
    a = anchor("LlamaSwap Pod_Restarts {x}")
    assert a == "llamaswap-pod_restarts-x"
    assert f"## LlamaSwap Pod\\_Restarts \\{{x\\}} {{ #{a} }}" in page
    import markdown
    html = markdown.markdown(page, extensions=["attr_list", "md_in_html", "toc", "tables", "fenced_code"])
    text = re.sub(r"<[^>]+>", "", html)
    import html as h
    text = h.unescape(text)
    assert "Pod {{ $labels.pod }} restarts <often> | {{ $value }}" in text
    assert "{{ $labels.namespace }}/{{ $labels.pod }} restarted more than 3 times." in text
    assert f'id="{a}"' in html


def test_notes_survive_rebuilds_end_to_end(project):
    assert build(project) == 0
    page = project / "runbooks/llama-swap.md"
    text = page.read_text()
    note = "Team note: ask #ai-platform before touching the node pin. {{ $labels.pod }}\n"
    text = text.replace("<!-- notes:LlamaSwapDown -->\n", "<!-- notes:LlamaSwapDown -->\n" + note, 1)
    text = text.replace("<!-- notes:page -->\n", "<!-- notes:page -->\nPage-wide note.\n", 1)
    page.write_text(text)
    # a spec change regenerates the page; the notes stay in their slots
    spec = project / "rules/llama-swap.yaml"
    spec.write_text(spec.read_text().replace("llama-swap has no available replica.",
                                             "llama-swap has no available replica (changed)."))
    assert build(project) == 0
    after = page.read_text()
    assert "llama-swap has no available replica \\(changed\\)." in after
    # notes are made safe as spec Markdown is (issue 23): braces escaped, so attr_list cannot
    # read them; the page shows the same text
    kept = note.replace("{", "\\{").replace("}", "\\}")
    assert "<!-- notes:LlamaSwapDown -->\n" + kept + "<!-- /notes -->" in after
    from rulegen.render.safe import to_html
    assert to_html(kept) == to_html(note) == "<p>" + note.strip() + "</p>"
    assert "<!-- notes:page -->\nPage-wide note.\n<!-- /notes -->" in after
    # and a no-op rebuild keeps them too and writes nothing
    assert build(project) == 0
    assert page.read_text() == after


def test_editing_outside_a_notes_slot_is_refused(project, capsys):
    assert build(project) == 0
    page = project / "runbooks/llama-swap.md"
    page.write_text(page.read_text().replace("## Context", "## Context (edited)"))
    assert build(project) == 1
    assert "runbooks/llama-swap.md: differs from what rulegen wrote, so it may have been edited by hand" in capsys.readouterr().err


# --- an alert's own runbook_url to a team runbook (issue 26 item 5, issue 28 item 5) -----------

def _add_alert_with_runbook_url(project, url: str, name: str = "LlamaSwapWiki") -> None:
    spec = project / "rules/llama-swap.yaml"
    spec.write_text(spec.read_text() + f'''
  - name: wiki
    rules:
      - alert: {name}
        expr: up{{job="llama-swap"}} == 0
        severity: warning
        summary: Down.
        description: Down.
        annotations:
          runbook_url: {url!r}
''')


def test_external_team_runbook_is_shown_on_the_page(project):
    _add_alert_with_runbook_url(project, "https://wiki.example.org/ops/llama_swap(down)")
    assert build(project) == 0
    page = (project / "runbooks/llama-swap.md").read_text()
    section = page[page.index("## LlamaSwapWiki"):]
    assert ("**Team runbook:** [https://wiki.example.org/ops/llama\\_swap\\(down\\)]"
            "(https://wiki.example.org/ops/llama_swap%28down%29) (the alert's own `runbook_url`; this page is "
            "rulegen's runbook)") in flat(section)
    # alerts without their own runbook_url show none
    down = page[page.index("## LlamaSwapDown"):page.index("## LlamaSwapNoMetrics")]
    assert "Team runbook" not in down


@pytest.mark.parametrize("url", [
    "javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "https://wiki.example.org/x\" onmouseover=\"alert(1)",
    "https://wiki.example.org/a b",
    "//wiki.example.org/no-scheme",
    "https:///no-host",
    "https://wiki.example.org/{{ $labels.job }}",
])
def test_unsafe_or_unusable_runbook_url_is_not_linked(url):
    from rulegen.render.runbook import team_runbook
    assert team_runbook(url, "https://runbooks.example.com/") == ""


def test_runbook_url_into_this_site_is_not_a_team_runbook():
    from rulegen.render.runbook import team_runbook
    site = "https://runbooks.example.com/"
    assert team_runbook("https://runbooks.example.com/llama-swap/#llamaswapdown", site) == ""
    assert team_runbook("https://runbooks.example.com.evil.org/x", site).startswith("[https://runbooks")
    assert team_runbook("https://wiki.example.org/<b>x</b>", site) == \
        "[https://wiki.example.org/&lt;b&gt;x&lt;/b&gt;](https://wiki.example.org/%3Cb%3Ex%3C/b%3E)"


# --- prometheus_scopes on the pages (issue 26 item 3) ---------------------------------------------

def _scoped_specs():
    from rulegen.validate import validate_texts
    alert = ("      - alert: {name}\n        expr: up == 0\n        severity: warning\n        summary: s\n"
             "        description: d\n{related}")
    related = "        runbook:\n          related: [{alert: NodeDown}]\n"
    texts = {}
    for app, name, rel in (("aaa-capa", "NodeDown", ""), ("bbb-capz", "NodeSlow", related),
                           ("ccc-capz", "NodeDown", "")):
        texts[f"rules/{app}.yaml"] = (f"app: {app}\ngroups:\n  - name: g\n    rules:\n"
                                      + alert.format(name=name, related=rel))
    res = validate_texts(texts)
    return {s.app: s for s in res.specs}


def test_related_alert_resolves_within_the_scope_and_the_page_names_it():
    from rulegen.config import Config
    from rulegen.render.runbook import page_context
    specs = _scoped_specs()
    config = Config(prometheus_scopes={"capa": ("*-capa",), "capz": ("*-capz",)})
    ctx = page_context(specs["bbb-capz"], list(specs.values()), config=config)
    [slow] = ctx["alerts"]
    assert slow["related"][0]["link"] == "[NodeDown](ccc-capz.md#nodedown)"   # its Prometheus' NodeDown
    assert ctx["scope"].startswith("**Loaded by:** the Prometheus of scope `capz`")
    # no scopes: the first app defining it, and the page says nothing about scopes
    plain = page_context(specs["bbb-capz"], list(specs.values()))
    assert (plain["alerts"][0]["related"][0]["link"], plain["scope"]) == ("[NodeDown](aaa-capa.md#nodedown)", "")
    common = page_context(specs["bbb-capz"], list(specs.values()), config=Config(prometheus_scopes={"capa": ("*-capa",)}))
    assert common["scope"].startswith("**Loaded by:** every Prometheus")


#: Alerts of each kind the "Fires when" sentence tells apart (rulegen.promql.compared): a threshold on
#: one line and over lines (a param's default), `absent`, a query on both sides, `bool`, and a
#: second rule of a name (its own section entry, render.runbook._merge_variant).
_COMPARED_SPEC = {"app": "redis", "groups": [{"name": "redis", "rules": [
    {"alert": "RedisDown", "expr": "redis_up == 0", "for": "1m", "severity": "critical"},
    {"alert": "RedisMemoryHigh", "expr": "redis_memory_used_bytes\n  / redis_memory_max_bytes  # share in use\n"
                                         "  > [[threshold]]\n",
     "params": {"threshold": {"default": 0.9, "description": "Fraction of maxmemory in use."}},
     "for": "5m", "severity": "warning"},
    {"alert": "RedisMemoryHigh", "expr": "(0.97 < redis_memory_used_bytes / redis_memory_max_bytes)",
     "for": "15m", "severity": "critical"},
    {"alert": "RedisGone", "expr": 'absent(redis_up{job="redis"})', "severity": "warning"},
    {"alert": "RedisClientsFull", "expr": "redis_connected_clients >= redis_config_maxclients",
     "severity": "warning"},
    {"alert": "RedisFlag", "expr": "redis_up > bool 0", "severity": "info"},
    {"alert": "RedisEvicting", "expr": "sum by (instance) (\n  rate(redis_evicted_keys_total[5m])\n)\n  > 100\n",
     "for": "10m", "severity": "warning"},
]}]}


def _compared_page(*edits) -> str:
    """The page of :data:`_COMPARED_SPEC`, each edit (alert name, old text, new text) made in
    the exprs of the alerts of that name (``for: <old>``: in their ``for``)."""
    import copy
    from helpers.helm import make_spec
    from rulegen.render.runbook import render_page
    data = copy.deepcopy(_COMPARED_SPEC)
    for name, old, new in edits:
        for rule in data["groups"][0]["rules"]:
            field = "for" if old.startswith("for: ") else "expr"
            if rule["alert"] == name:
                rule[field] = rule[field].replace(old.removeprefix("for: "), new.removeprefix("for: "))
    spec = make_spec(data)
    return render_page(spec, [spec], ["<!-- header -->"])


def test_fires_when_shows_the_compared_query_apart_and_marks_what_the_script_links():
    """Issue 29: an alert comparing a query with a number says "Fires when <query> / is > N /
    continuously for ..." with the query as written (a comment kept; the param's default is
    the comparison's), on the sentence's line when short, as a PromQL block after the sentence
    when long; the query is marked for the site's script, which links exactly what the page
    shows. Any other expr is shown and marked whole."""
    page = _compared_page()

    def section(name: str) -> str:
        out = page[page.index(f"## {name} "):]
        return out[:out.index("<!-- /notes -->")]

    redis_down = section("RedisDown")
    assert "Fires when `redis_up`{ .rg-promql }\nis `== 0`\ncontinuously for **1m**.\n" in redis_down
    assert marked_queries(redis_down) == ["redis_up"]
    memory = section("RedisMemoryHigh")  # long (over lines, a comment kept); then its critical rule, short
    written = "redis_memory_used_bytes\n  / redis_memory_max_bytes  # share in use"
    critical = "redis_memory_used_bytes / redis_memory_max_bytes"
    assert ("Fires when the PromQL below\nis `> 0.9`\ncontinuously for **5m**:\n\n"
            f"```promql {{ .rg-promql }}\n{written}\n```\n\n**Knobs**") in memory
    assert ("A second rule with this name, severity **critical**: Fires when\n"
            f"`{critical}`{{ .rg-promql }}\nis `> 0.97`\ncontinuously for **15m**.\n") in memory  # 0.97 < A: A > 0.97
    assert marked_queries(memory) == [written, critical]
    evicting = section("RedisEvicting")
    assert ("Fires when the PromQL below\nis `> 100`\ncontinuously for **10m**:\n\n```promql { .rg-promql }\n"
            "sum by (instance) (\n  rate(redis_evicted_keys_total[5m])\n)\n```") in evicting
    for name, expr in (("RedisGone", 'absent(redis_up{job="redis"})'),
                       ("RedisClientsFull", "redis_connected_clients >= redis_config_maxclients"),
                       ("RedisFlag", "redis_up > bool 0")):
        assert f"Fires when `{expr}`{{ .rg-promql }}\nholds (returns at least one series),\n" in section(name)
        assert marked_queries(section(name)) == [expr], name
    assert max(map(len, page.split("\n"))) <= 120
    assert "http" not in page.replace("https://prom", "")  # no query address on the page


def _changed_lines(*edits) -> list[str]:
    import difflib
    before, after = _compared_page(), _compared_page(*edits)
    return [ln for ln in difflib.unified_diff(before.split("\n"), after.split("\n"), n=0, lineterm="")
            if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


def test_a_threshold_edit_changes_one_line_of_the_page():
    """The threshold is on the page once, on its own line ("is `> 100`"), never in a link's
    address: editing it changes one line of the page, whether the query is in the sentence or
    a PromQL block. Before, the alert's link address changed too, and re-flowed over its lines."""
    assert _changed_lines(("RedisEvicting", "> 100", "> 250")) == ["-is `> 100`", "+is `> 250`"]
    assert _changed_lines(("RedisDown", "== 0", "< 1")) == ["-is `== 0`", "+is `< 1`"]


def test_an_edit_of_a_second_rule_of_a_name_changes_one_line_of_the_page():
    """The second rule of a name (a critical threshold beside a warning one) says its expr
    and its `for` once, as the first rule does: its short expr was quoted in its "Fires when"
    and shown again as a PromQL block, and its `for` was in the lead and in "continuously for"
    (issue 29: two lines for one threshold or `for` edit)."""
    assert _changed_lines(("RedisMemoryHigh", "0.97 <", "0.98 <")) == ["-is `> 0.97`", "+is `> 0.98`"]
    assert _changed_lines(("RedisMemoryHigh", "for: 15m", "for: 20m")) == [
        "-continuously for **15m**.", "+continuously for **20m**."]
