"""The runbook site: nav generated from the specs, guides kept, `mkdocs build --strict` passes."""

from __future__ import annotations

import pytest
import yaml

from rulegen.cli import main
from rulegen.pipeline import load_project
from rulegen.render import site

from helpers.samples import add_templated_alert
from helpers.site import mkdocs_build

GUIDE = "# Argo CD sync guide\n\nHand-written. See [LlamaSwapDown](../llama-swap.md#llamaswapdown).\n"


def nav(text: str) -> list:
    return yaml.safe_load(text)["nav"]


def test_nav_lists_every_app_sorted(project):
    assert main(["-C", str(project), "build"]) == 0
    assert nav((project / "mkdocs.yml").read_text()) == [
        {"Home": "index.md"},
        {"Alert index": "alerts.md"},
        {"Apps": [{"inferencecache": "inferencecache.md"}, {"llama-swap": "llama-swap.md"},
                  {"Noctaya": "noctaya.md"}]},
    ]  # no Guides: the bundled site has no hand-written page (rulegen's own docs are in docs/)


def test_nav_lists_guides_and_keeps_the_rest_of_mkdocs_yml(project):
    (project / "runbooks/guides").mkdir(parents=True, exist_ok=True)
    (project / "runbooks/guides/argocd.md").write_text(GUIDE)
    (project / "runbooks/guides/a-first.md").write_text("no heading here\n")
    specs = load_project(project).specs
    existing = (project / "mkdocs.yml").read_text()
    out = site.render_mkdocs(specs, existing, project)
    assert nav(out)[3] == {"Guides": [{"a-first": "guides/a-first.md"},
                                      {"Argo CD sync guide": "guides/argocd.md"}]}
    assert out.startswith("# The on-call runbook site.")  # comments kept
    assert "  anchors: warn\n" in out
    # without a root (plan does not pass one yet) the Guides section already in mkdocs.yml stays
    (project / "mkdocs.yml").write_text(out)
    again = site.render_mkdocs(specs, out, None)
    assert nav(again)[3] == nav(out)[3]


def test_mkdocs_yml_whose_nav_is_up_to_date_is_kept_byte_for_byte(project):
    # nav already what rulegen writes, but laid out by hand (flow style, quotes, a comment):
    # the file is left as it is, not re-dumped by ruamel.yaml
    (project / "runbooks/guides").mkdir(parents=True, exist_ok=True)
    (project / "runbooks/guides/failover.md").write_text("# Region failover\n")
    (project / "runbooks/guides/paging.md").write_text("# Paging policy\n")
    specs = load_project(project).specs
    apps = ", ".join(f'{{"{s.title}": {s.app}.md}}' for s in sorted(specs, key=lambda s: s.app))
    text = ("site_name:   Runbooks   # spaced by hand\n"
            "markdown_extensions:\n  - pymdownx.emoji:\n"
            "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n"
            f"nav: [{{Home: 'index.md'}}, {{Alert index: alerts.md}}, {{Apps: [{apps}]}},\n"
            "      {Guides: [{Region failover: guides/failover.md},\n"
            "                {Paging policy: guides/paging.md}]}]\n")
    assert site.render_mkdocs(specs, text, project) == text
    # one app missing from the nav: the nav is rewritten, the rest kept
    out = site.render_mkdocs(specs[:1], text, project)
    assert out != text and nav(out.replace("!!python/name:material.extensions.emoji.twemoji", "x"))[2] == {
        "Apps": [{specs[0].title: f"{specs[0].app}.md"}]}
    assert "# spaced by hand" in out


@pytest.mark.parametrize("line", ["  name: material\n", "site_name: "])
def test_mkdocs_yml_ruamel_cannot_read_is_a_clean_error_when_the_nav_must_change(project, capsys, line):
    # a duplicate key (nested, or at the top level): PyYAML (mkdocs) takes the last one,
    # ruamel.yaml's round trip refuses
    mk = project / "mkdocs.yml"
    assert main(["-C", str(project), "build"]) == 0
    text = mk.read_text()
    assert line in text
    if line.startswith("site_name"):
        mk.write_text("site_name: First\n" + text)
    else:
        mk.write_text(text.replace(line, line + line, 1))
    capsys.readouterr()
    assert main(["-C", str(project), "check"]) == 0  # nav current: the file is left as it is
    (project / "rules/noctaya.yaml").unlink()  # the nav must lose an app now
    assert main(["-C", str(project), "build"]) == 2
    err = capsys.readouterr().err
    assert "mkdocs.yml: not valid YAML for rewriting its nav" in err and "Traceback" not in err


def test_mkdocs_settings_are_read_as_mkdocs_reads_them(tmp_path):
    # YAML 1.1, as PyYAML (mkdocs) reads it: `no` is false, so pages are at x.html
    (tmp_path / "mkdocs.yml").write_text("site_url: https://rb.example.org/team\n"
                                         "use_directory_urls: no\ndocs_dir: runbooks/\n")
    got = site.settings(tmp_path)
    assert got == site.SiteSettings(site_url="https://rb.example.org/team/", docs_dir="runbooks",
                                    site_dir="site", use_directory_urls=False)



def test_mkdocs_env_tag_is_resolved_as_mkdocs_resolves_it(tmp_path, monkeypatch):
    # regression: `site_url: !ENV [...]` was read as the text of the list (bogus RG712 links)
    mk = tmp_path / "mkdocs.yml"
    monkeypatch.delenv("RG_SITE", raising=False)
    monkeypatch.delenv("RG_SITE2", raising=False)
    mk.write_text("site_url: !ENV [RG_SITE, RG_SITE2, 'https://default.example/rb']\n"
                  "docs_dir: runbooks\nuse_directory_urls: !ENV RG_DIRS\n")
    got = site.settings(tmp_path)
    # RG_DIRS unset and no default: null, so mkdocs' default (true), not false
    assert (got.site_url, got.docs_dir, got.use_directory_urls) == ("https://default.example/rb/", "runbooks", True)
    monkeypatch.setenv("RG_SITE2", "https://second.example/")
    monkeypatch.setenv("RG_DIRS", "false")  # typed as a plain YAML scalar: the boolean false
    got = site.settings(tmp_path)
    assert (got.site_url, got.use_directory_urls) == ("https://second.example/", False)
    monkeypatch.setenv("RG_SITE", "https://first.example")
    assert site.settings(tmp_path).site_url == "https://first.example/"
    # a name alone, not set: null, so the default site URL
    mk.write_text("site_url: !ENV RG_UNSET_NAME\n")
    assert site.settings(tmp_path).site_url == site.DEFAULT_SITE_URL
    # where libyaml's node walk used to give up (a top-level merge key, a non-string key),
    # the file is still read as mkdocs reads it
    mk.write_text("extra: {dirs: &dirs {site_dir: built}}\n<<: *dirs\n1: one\n"
                  "site_url: !ENV [RG_UNSET_NAME, 'https://merged.example/']\n"
                  "markdown_extensions:\n  - pymdownx.emoji:\n"
                  "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n"
                  "use_directory_urls:\n")
    got = site.settings(tmp_path)
    assert (got.site_url, got.site_dir, got.use_directory_urls) == ("https://merged.example/", "built", True)


def test_nav_titles_mkdocs_would_read_as_other_types_are_quoted(project):
    specs = load_project(project).specs
    specs[0].title = "yes"
    specs[1].title = "123"
    out = site.render_mkdocs(specs, (project / "mkdocs.yml").read_text(), project)
    titles = [next(iter(e)) for e in nav(out)[2]["Apps"]]  # read as mkdocs reads it (PyYAML)
    assert "yes" in titles and "123" in titles
    assert "- 'yes': " in out


def test_build_never_touches_guides(project):
    (project / "runbooks/guides").mkdir(parents=True, exist_ok=True)
    guide = project / "runbooks/guides/argocd.md"
    guide.write_text(GUIDE)
    # a deleted spec's page is stale and removed; the guide, without the notice, is not
    (project / "rules/noctaya.yaml").unlink()
    assert main(["-C", str(project), "build"]) == 0
    assert not (project / "runbooks/noctaya.md").exists()
    assert guide.read_text() == GUIDE


def test_mkdocs_strict_build_passes(project, tmp_path):
    (project / ".rulegen.yaml").write_text("checks:\n  disable: [RG401, RG402]\n")
    add_templated_alert(project)
    (project / "runbooks/guides").mkdir(parents=True, exist_ok=True)
    (project / "runbooks/guides/argocd.md").write_text(GUIDE)
    assert main(["-C", str(project), "build"]) == 0
    out = tmp_path / "built"
    r = mkdocs_build(project, out)
    assert r.returncode == 0, r.stderr
    for page in ("index.html", "alerts/index.html", "llama-swap/index.html", "noctaya/index.html",
                 "inferencecache/index.html", "guides/argocd/index.html", "search/search_index.json"):
        assert (out / page).is_file(), page
    html = (out / "llama-swap/index.html").read_text()
    assert 'id="llamaswapdown"' in html
    assert 'id="llamaswap-pod_restarts-x"' in html
    # Prometheus templates reach the reader literally (HTML-escaped only)
    assert "Pod {{ $labels.pod }} restarts &lt;often&gt; | {{ $value }}" in html


def test_mkdocs_strict_build_fails_on_a_broken_anchor(project, tmp_path):
    assert main(["-C", str(project), "build"]) == 0
    (project / "runbooks/guides").mkdir(parents=True, exist_ok=True)
    (project / "runbooks/guides/argocd.md").write_text("# Guide\n\n[x](../llama-swap.md#no-such-alert)\n")
    r = mkdocs_build(project, tmp_path / "built")
    assert r.returncode == 1
    assert "no-such-alert" in r.stdout + r.stderr


def test_mkdocs_strict_build_of_the_bundled_project(project, tmp_path):
    """The project as committed builds strictly."""
    assert main(["-C", str(project), "build"]) == 0
    r = mkdocs_build(project, tmp_path / "built")
    assert r.returncode == 0, r.stderr


def test_mkdocs_inherit_is_merged_as_mkdocs_merges_it(tmp_path):
    # regression: settings in an INHERIT parent were ignored (false RG717, wrong runbookUrl)
    (tmp_path / "config").mkdir()
    (tmp_path / "config/base.yml").write_text("INHERIT: root.yml\nsite_url: https://base.example/rb\n"
                                              "docs_dir: runbooks\n")
    (tmp_path / "config/root.yml").write_text("use_directory_urls: false\nsite_dir: out\n")
    (tmp_path / "mkdocs.yml").write_text("INHERIT: config/base.yml\nsite_dir: built\n")
    got = site.settings(tmp_path)
    assert got == site.SiteSettings(site_url="https://base.example/rb/", docs_dir="runbooks",
                                    site_dir="built", use_directory_urls=False)
    (tmp_path / "mkdocs.yml").write_text("INHERIT: config/base.yml\nsite_url: !!python/str https://x.example/\n")
    assert site.settings(tmp_path).site_url == "https://x.example/"
    (tmp_path / "mkdocs.yml").write_text("INHERIT: config/missing.yml\n")
    with pytest.raises(site.RulegenError, match="cannot read its INHERIT file"):
        site.settings(tmp_path)
    (tmp_path / "config/root.yml").write_text("INHERIT: base.yml\n")  # a loop
    (tmp_path / "mkdocs.yml").write_text("INHERIT: config/base.yml\n")
    with pytest.raises(site.RulegenError, match="more than 10 files deep"):
        site.settings(tmp_path)


def test_a_nav_mkdocs_gets_from_inherit_or_a_merge_key_is_current(project, capsys):
    # regression: only the file's own nav key was compared, so an inherited nav was drift and
    # build copied the whole nav into the child file
    assert main(["-C", str(project), "build"]) == 0
    mk = project / "mkdocs.yml"
    (project / "base.yml").write_text(mk.read_text())
    mk.write_text("INHERIT: base.yml\nsite_name: Child\n")
    capsys.readouterr()
    assert main(["-C", str(project), "check"]) == 0
    assert main(["-C", str(project), "build"]) == 0
    assert mk.read_text() == "INHERIT: base.yml\nsite_name: Child\n"
    # through a YAML merge key
    nav = yaml.safe_load((project / "base.yml").read_text())["nav"]
    (project / "base.yml").unlink()
    mk.write_text("x-common: &common\n  nav: " + yaml.safe_dump(nav, default_flow_style=True, width=10_000)
                  + "site_name: M\nsite_url: https://runbooks.example.com/\ndocs_dir: runbooks\n"
                  "theme: {name: material}\n<<: *common\n")
    text = mk.read_text()
    assert main(["-C", str(project), "check"]) == 0
    assert mk.read_text() == text


def test_inherit_path_is_tidied_as_text_like_mkdocs(tmp_path):
    # mkdocs normalizes INHERIT paths as text: cfg/../base.yml is ./base.yml even when cfg is
    # a symlink to a folder elsewhere
    (tmp_path / "elsewhere" / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere" / "base.yml").write_text("site_url: https://wrong.example/\n")
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "cfg").symlink_to(tmp_path / "elsewhere" / "sub")
    (tmp_path / "p" / "base.yml").write_text("site_url: https://right.example/\n")
    (tmp_path / "p" / "mkdocs.yml").write_text("INHERIT: cfg/../base.yml\n")
    assert site.settings(tmp_path / "p").site_url == "https://right.example/"


def test_mkdocs_yml_with_mixed_line_endings_and_a_current_nav_is_left_alone(project, capsys):
    assert main(["-C", str(project), "build"]) == 0
    mk = project / "mkdocs.yml"
    lines = mk.read_bytes().split(b"\n")
    mixed = b"\r\n".join(lines[:5]) + b"\r\n" + b"\n".join(lines[5:])  # CRLF first, then LF
    mk.write_bytes(mixed)
    capsys.readouterr()
    assert main(["-C", str(project), "check"]) == 0
    assert main(["-C", str(project), "build"]) == 0
    assert mk.read_bytes() == mixed
