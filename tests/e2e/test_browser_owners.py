"""Issue 28 in a real browser (Debian's headless chromium, tests/helpers/cdp.py): each bundled
alert's runbook_url shows its owner and a silence on the first screen at 1280x800 and 390x844;
a burn-rate page names the pair that fired (from the alert's ``long``/``short`` labels in the
URL); the silence command and the Alertmanager form link fill from the URL's query string;
on a phone, triage commands wrap clear of the copy button and wide tables read as cards.

Locally the tests skip when chromium is missing; in CI they fail instead.
"""

from __future__ import annotations

import subprocess
from urllib.parse import unquote

import pytest

from test_browser import SHOTS, SIZES, _bundled_urls, browser, site  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser

#: The triage box of the alert the URL's fragment names, measured in the page.
_BOX = """(() => {
  const id = decodeURIComponent(location.hash.slice(1));
  const h = document.getElementById(id);
  let box = h.nextElementSibling;
  while (box && !box.classList.contains("rg-triage")) box = box.nextElementSibling;
  const s = box.querySelector("details.rg-silence > summary");
  const owner = Array.from(box.querySelectorAll("p")).find(p => p.textContent.startsWith("Owner:"));
  return {height: innerHeight, width: innerWidth, text: box.innerText,
          owner: owner ? owner.textContent : "", ownerBottom: owner ? owner.getBoundingClientRect().bottom : null,
          silence: s ? s.textContent : "", silenceBottom: s ? s.getBoundingClientRect().bottom : null,
          boxBottom: box.getBoundingClientRect().bottom};
})()"""


@pytest.mark.parametrize("width, height", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_owner_and_silence_on_the_first_screen(site, browser, width, height):  # noqa: F811
    _, project, base = site
    browser.viewport(width, height)
    urls = _bundled_urls(project)
    assert len(urls) == 15
    problems = []
    for name, _, path in urls:
        browser.open(base + path, settle=0.3)
        g = browser.js(_BOX)
        browser.screenshot(SHOTS / f"owner-silence-{name}-{width}x{height}.png")
        if "not recorded" in g["owner"] or "oncall" not in g["owner"]:
            problems.append(f"{name}: owner line {g['owner']!r}")
        if g["ownerBottom"] is None or g["ownerBottom"] > g["height"]:
            problems.append(f"{name}: owner at {g['ownerBottom']}px of {g['height']}px")
        if g["silence"] != "Silence it: amtool or Alertmanager":
            problems.append(f"{name}: silence summary {g['silence']!r}")
        if g["silenceBottom"] is None or g["silenceBottom"] > g["height"]:
            problems.append(f"{name}: silence at {g['silenceBottom']}px of {g['height']}px")
    assert problems == []


@pytest.mark.parametrize("width, height", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_burn_rate_alert_names_the_pair_that_fired(site, browser, width, height):  # noqa: F811
    """The page alert of noctaya's SLO has two window pairs: with the alert's labels in the URL
    (?long=6h&short=30m) the triage box shows the 6x pair as fired and hides 14.4x; without
    them it lists both and claims neither."""
    _, _, base = site
    browser.viewport(width, height)
    pairs = """Array.from(document.querySelector("#noctayagatewayactivationfastburn ~ .rg-triage").querySelectorAll(".rg-pair"))
               .filter(e => e.closest("li").offsetParent !== null)
               .map(e => [e.getAttribute("data-rg-pair"), e.className, e.getBoundingClientRect().bottom])"""
    browser.open(base + "noctaya/?long=6h&short=30m#noctayagatewayactivationfastburn", settle=0.3)
    browser.screenshot(SHOTS / f"burn-pair-6h-{width}x{height}.png")
    shown = browser.js(pairs)
    assert [(k, c) for k, c, _ in shown] == [("long=6h short=30m", "rg-pair rg-fired")]
    assert shown[0][2] <= height  # on the first screen
    box = browser.js("""document.querySelector("#noctayagatewayactivationfastburn ~ .rg-triage").innerText""")
    assert "6x over 6h and 30m" in box and "fired" in box and "14.4x" not in box
    browser.open(base + "noctaya/?long=1h&short=5m#noctayagatewayactivationfastburn", settle=0.3)
    assert [(k, c) for k, c, _ in browser.js(pairs)] == [("long=1h short=5m", "rg-pair rg-fired")]
    browser.open(base + "noctaya/#noctayagatewayactivationfastburn", settle=0.3)
    assert [(k, c) for k, c, _ in browser.js(pairs)] == [("long=1h short=5m", "rg-pair"),
                                                         ("long=6h short=30m", "rg-pair")]


def test_silence_fills_from_the_query_string(site, browser):  # noqa: F811
    """?namespace=...&name=...&reason=... fills the silence command's preamble and the
    Alertmanager form's filter; a hostile value stays one quoted word / one matcher value."""
    _, _, base = site
    browser.viewport(390, 844)
    browser.open(base + "noctaya/?namespace=ml&name=qwen3-8b&reason=ImagePull#noctayallmservicedegraded",
                 settle=0.3)
    browser.js("""document.querySelector("#noctayallmservicedegraded ~ .rg-triage details.rg-silence").open = true""")
    browser.screenshot(SHOTS / "silence-filled-390x844.png")
    code = browser.js("""document.querySelector("#noctayallmservicedegraded ~ .rg-triage details.rg-silence pre code")
                         .textContent""")
    assert code.split("\n")[0] == "NAME='qwen3-8b' NAMESPACE='ml' REASON='ImagePull'  # alert labels: name namespace reason"
    # the command goes on over lines ending in " \\" (issue 29: no line over 120 characters)
    command = code.split("\n", 1)[1].replace(" \\\n  ", " ")
    assert command.startswith("amtool silence add --alertmanager.url='https://alertmanager.example.com' "
                              'alertname=NoctayaLLMServiceDegraded name="$NAME" namespace="$NAMESPACE" '
                              'reason="$REASON" --duration=1h')
    href = browser.js("""document.querySelector("#noctayallmservicedegraded ~ .rg-triage a.rg-silence-link").href""")
    assert href.startswith("https://alertmanager.example.com/#/silences/new?filter=")
    assert unquote(href.split("?filter=", 1)[1]) == (
        '{alertname="NoctayaLLMServiceDegraded",name="qwen3-8b",namespace="ml",reason="ImagePull"}')
    browser.open(base + 'noctaya/?name=a%22%2Cx%3D%22y%27%3Bid#noctayallmservicedegraded', settle=0.3)
    code = browser.js("""document.querySelector("#noctayallmservicedegraded ~ .rg-triage details.rg-silence pre code")
                         .textContent""")
    assert subprocess.run(["bash", "-n", "-c", "--", code]).returncode == 0
    assert code.startswith("NAME='a\",x=\"y'\\'';id' ")
    href = browser.js("""document.querySelector("#noctayallmservicedegraded ~ .rg-triage a.rg-silence-link").href""")
    assert unquote(href.split("?filter=", 1)[1]) == (
        '{alertname="NoctayaLLMServiceDegraded",name="a\\",x=\\"y\';id",namespace="‹namespace›",reason="‹reason›"}')


def test_phone_commands_wrap_and_tables_read_as_cards(site, browser):  # noqa: F811
    _, _, base = site
    browser.viewport(390, 844)
    browser.open(base + "inferencecache/#inferencecachebackendprobefailed", settle=0.3)
    g = browser.js("""(() => {
      const box = document.querySelector("#inferencecachebackendprobefailed ~ .rg-triage");
      const pre = box.querySelector(":scope > :not(details) pre"), code = pre.querySelector("code");
      // mkdocs-material's copy button: .md-clipboard (9.x), .md-code__button (newer)
      const btn = pre.querySelector(".md-clipboard, .md-code__button");
      const range = document.createRange(); range.selectNodeContents(code);
      const text = Array.from(range.getClientRects());
      const b = btn ? btn.getBoundingClientRect() : null;
      const overlap = b ? text.filter(r => r.right > b.left && r.left < b.right && r.bottom > b.top && r.top < b.bottom).length : 0;
      const tables = Array.from(document.querySelectorAll("table.rg-cards")).map(t => {
        const w = t.closest(".md-typeset__scrollwrap") || t;
        return [w.scrollWidth, w.clientWidth, getComputedStyle(t).display];
      });
      return {scroll: code.scrollWidth, client: code.clientWidth, button: !!btn, overlap: overlap, tables: tables,
              page: document.documentElement.scrollWidth, width: innerWidth};
    })()""")
    browser.screenshot(SHOTS / "phone-cards-390x844.png")
    assert g["button"], g
    assert g["scroll"] <= g["client"], g  # wraps: nothing to scroll sideways
    assert g["overlap"] == 0, g  # no line of text under the copy button
    assert g["tables"] and all(d == "block" and sw <= cw for sw, cw, d in g["tables"]), g["tables"]
    assert g["page"] <= g["width"]
    browser.open(base + "noctaya/#slo-gateway-activation", settle=0.3)
    cards = browser.js("""Array.from(document.querySelectorAll("table.rg-cards"))
                          .find(t => t.querySelector("th").textContent.trim() === "Burn rate")
                          .querySelectorAll("td[data-label]")""" + """.length > 0 ? Array.from(
                          Array.from(document.querySelectorAll("table.rg-cards"))
                          .find(t => t.querySelector("th").textContent.trim() === "Burn rate")
                          .querySelectorAll("td[data-label]")).slice(0, 3)
                          .map(td => getComputedStyle(td, "::before").content) : []""")
    assert cards == ['"Burn rate: "', '"Long window: "', '"Short window: "']
