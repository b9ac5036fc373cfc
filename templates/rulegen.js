/* The runbook site's script (rulegen): no external resources, nothing sent anywhere.
 *
 * 1. Commands: a code block whose first line is a preamble such as
 *      NAMESPACE='ai' DEPLOYMENT='llama-swap'  # alert labels: namespace deployment
 *    gets its values from the page URL's query string (?namespace=ai&deployment=x), which an
 *    Alertmanager template can append to the runbook_url. The copy button copies the result.
 * 2. Dashboard links with data-rg-labels="label=var-name ..." get var-name=<value> likewise,
 *    and readable template text outside code (‹namespace›) shows the value.
 * 3. The alert index (.rg-index, a list of alerts by app): filters by app, severity and team.
 * 4. Silence links to Alertmanager's form (a[data-rg-silence="label ..."]): the labels named
 *    get their value from the query string inside the link's filter ({alertname="X",name="v"}).
 * 7. Search: a query that is (a fragment of) an alert name ("NoMetrics", "probefailed") puts
 *    those alerts first among mkdocs-material's results (RG_ALERTS, written at the end of this
 *    file by rulegen build): exact name first, then names starting with it, then the rest.
 * 6. Tables of three or more columns get the class rg-cards and each cell its column's name
 *    (data-label), so the stylesheet shows them as one card per row on a phone.
 * 5. Burn-rate alerts (.rg-pair[data-rg-pair="long=1h short=5m"]): with ?long=...&short=... the
 *    pair that fired is marked and the others are hidden.
 * 8. PromQL links: code marked rg-promql (a code span or block: one query) or rg-promql-lines (a
 *    block of one query per line) gets "Open in Prometheus · Grafana" links to the text it shows,
 *    at the base URLs rulegen build writes at the top of this file (RG_PROMETHEUS_URL,
 *    RG_GRAFANA_URL, from .rulegen.yaml; "": no link). The script reads no PromQL: the page
 *    shows an alert's compared query apart from its threshold, and the link opens what is shown.
 */
(function () {
  "use strict";
  var MARK = "# alert labels:";

  function quote(value) {
    return "'" + value.replace(/'/g, "'\\''") + "'";
  }

  /* A value from the URL loses every control character before it is shown or copied: C0
     (newline, carriage return, tab, ESC: "\x1b[201~" ends bracketed paste, and what follows
     would run as typed), DEL, C1 (U+0080-U+009F, "\x9b" is a one-byte CSI), the line and
     paragraph separators, and the bidirectional and zero-width format characters that make a
     pasted line read differently from what runs. */
  var CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]/g;

  function clean(value) {
    return String(value).replace(CONTROL, "");
  }

  function params() {
    var out = {};
    new URLSearchParams(window.location.search).forEach(function (v, k) { out[k] = clean(v); });
    return out;
  }

  function firstLine(code) {
    var text = code.textContent;
    var end = text.indexOf("\n");
    return end < 0 ? text : text.slice(0, end);
  }

  /* replace the first line of a code element's text, keeping the rest of its markup */
  function setFirstLine(code, line) {
    var walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    var nodes = [];
    while (walker.nextNode()) { nodes.push(walker.currentNode); }
    for (var i = 0; i < nodes.length; i++) {
      var t = nodes[i].nodeValue;
      var nl = t.indexOf("\n");
      if (nl < 0) { nodes[i].nodeValue = ""; continue; }
      nodes[i].nodeValue = t.slice(nl);
      break;
    }
    code.insertBefore(document.createTextNode(line), code.firstChild);
  }

  function fillCommands(values) {
    var codes = document.querySelectorAll("pre > code");
    Array.prototype.forEach.call(codes, function (code) {
      var line = firstLine(code);
      var at = line.indexOf(MARK);
      if (at < 0) { return; }
      var labels = line.slice(at + MARK.length).trim().split(/\s+/);
      var sets = line.slice(0, at).trim().match(/[A-Za-z_][A-Za-z0-9_]*='(?:[^']|'\\'')*'/g) || [];
      if (sets.length !== labels.length) { return; }
      var changed = false;
      var words = sets.map(function (s, i) {
        var name = s.slice(0, s.indexOf("="));
        if (Object.prototype.hasOwnProperty.call(values, labels[i])) {
          changed = true;
          return name + "=" + quote(clean(values[labels[i]]));
        }
        return s;
      });
      if (changed) { setFirstLine(code, words.join(" ") + "  " + MARK + " " + labels.join(" ")); }
    });
  }

  function fillDashboards(values) {
    var links = document.querySelectorAll("a[data-rg-labels]");
    Array.prototype.forEach.call(links, function (a) {
      var url;
      try { url = new URL(a.getAttribute("href"), window.location.href); } catch (e) { return; }
      a.getAttribute("data-rg-labels").split(/\s+/).forEach(function (pair) {
        var eq = pair.indexOf("=");
        var label = pair.slice(0, eq), variable = pair.slice(eq + 1);
        if (Object.prototype.hasOwnProperty.call(values, label)) {
          url.searchParams.set(variable, values[label]);
        }
      });
      a.setAttribute("href", url.toString());
    });
  }

  /* a value inside a matcher's double quotes (Alertmanager's matcher syntax) */
  function matcherValue(value) {
    return value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"");
  }

  function fillSilences(values) {
    var links = document.querySelectorAll("a[data-rg-silence]");
    Array.prototype.forEach.call(links, function (a) {
      /* a long address is written over lines (the page's width); a browser drops the newlines */
      var href = a.getAttribute("href").replace(/[\t\n\r]/g, "");
      var at = href.indexOf("?filter=");
      if (at < 0) { return; }
      var filter;
      try { filter = decodeURIComponent(href.slice(at + 8)); } catch (e) { return; }
      a.getAttribute("data-rg-silence").split(/\s+/).forEach(function (label) {
        if (!label || !Object.prototype.hasOwnProperty.call(values, label)) { return; }
        var re = new RegExp("(^|[{,])" + label.replace(/[^A-Za-z0-9_]/g, "") + '="\u2039[^"\u203a]*\u203a"');
        filter = filter.replace(re, function (all, lead) {
          return lead + label + '="' + matcherValue(values[label]) + '"';
        });
      });
      a.setAttribute("href", href.slice(0, at + 8) + encodeURIComponent(filter));
    });
  }

  /* a base URL of the query links (rulegen.baseurl.BASE_URL): http(s), a host name or [IPv6]
     address, maybe a port, maybe a path of unreserved characters, "/", ":", "+" and %XX escapes
     (no user info, query, fragment, quote, space, backslash or markup character), its trailing
     slashes dropped; "" for anything else (no link) */
  var BASE_URL = new RegExp("^https?://(?:[A-Za-z0-9_-]+(?:\\.[A-Za-z0-9_-]+)*|\\[[0-9A-Fa-f:.]+\\])(?::[0-9]{1,5})?" +
                            "(?:/(?:[A-Za-z0-9._~:+/-]|%[0-9A-Fa-f]{2})*)?$");

  function baseUrl(value) {
    if (typeof value !== "string" || !BASE_URL.test(value)) { return ""; }
    return value.replace(/\/+$/, "");
  }

  /* [label, URL] of each link of a PromQL query: Prometheus' expression browser, table view
     (the form of an alert's generatorURL), and Grafana Explore on its default data source,
     the last hour (Grafana's Explore URL: schemaVersion=1 and panes, JSON) */
  function queryUrls(query, prometheus, grafana) {
    var out = [];
    var p = baseUrl(prometheus), g = baseUrl(grafana);
    if (p) { out.push(["Prometheus", p + "/graph?g0.expr=" + encodeURIComponent(query) + "&g0.tab=1"]); }
    if (g) {
      var panes = { a: { queries: [{ refId: "A", expr: query }], range: { from: "now-1h", to: "now" } } };
      out.push(["Grafana", g + "/explore?schemaVersion=1&panes=" + encodeURIComponent(JSON.stringify(panes))]);
    }
    return out;
  }

  /* "Open in Prometheus · Grafana" for one query, made of elements and text (no markup) */
  function openLinks(lead, urls) {
    var span = document.createElement("span");
    span.className = "rg-open-links";
    span.appendChild(document.createTextNode(lead + " "));
    urls.forEach(function (pair, i) {
      if (i) { span.appendChild(document.createTextNode(" \u00b7 ")); }
      var a = document.createElement("a");
      a.className = "rg-open";
      a.setAttribute("href", pair[1]);
      a.textContent = pair[0];
      span.appendChild(a);
    });
    return span;
  }

  function after(el, node) {
    el.parentNode.insertBefore(node, el.nextSibling);
  }

  /* the links of each marked query, after its block or paragraph (at the end of a list item or
     table cell); once per element, so a second run (instant navigation) adds none */
  function linkQueries() {
    var prometheus = typeof RG_PROMETHEUS_URL === "string" ? RG_PROMETHEUS_URL : "";
    var grafana = typeof RG_GRAFANA_URL === "string" ? RG_GRAFANA_URL : "";
    if (!queryUrls("", prometheus, grafana).length) { return; }
    var marked = document.querySelectorAll(".md-content .rg-promql, .md-content .rg-promql-lines");
    Array.prototype.forEach.call(marked, function (el) {
      if (el.hasAttribute("data-rg-linked")) { return; }
      el.setAttribute("data-rg-linked", "");
      var code = el.tagName === "CODE" ? el : el.querySelector("pre > code");
      if (!code) { return; }
      var text = code.textContent;
      var queries = (el.classList.contains("rg-promql-lines") ? text.split("\n") : [text])
        .map(function (q) { return q.trim(); }).filter(function (q) { return q; });
      var spans = queries.map(function (q, i) {
        var lead = queries.length > 1 ? "Open query " + (i + 1) + " in" : "Open in";
        return openLinks(lead, queryUrls(q, prometheus, grafana));
      });
      if (!spans.length) { return; }
      var block = el.tagName === "CODE" ? el.closest("p, li, td, th") : null;
      if (block && block.tagName !== "P") {
        block.appendChild(document.createTextNode(" \u00b7 "));
        block.appendChild(spans[0]);
        return;
      }
      var p = document.createElement("p");
      spans.forEach(function (s, i) {
        if (i) { p.appendChild(document.createElement("br")); }
        p.appendChild(s);
      });
      after(block || el, p);
    });
  }

  /* the burn-rate pair that fired, from the alert's long/short labels in the query string */
  function markPairs(values) {
    if (!values.long || !values.short) { return; }
    var pairs = document.querySelectorAll("[data-rg-pair]");
    Array.prototype.forEach.call(pairs, function (el) {
      var want = "long=" + values.long + " short=" + values.short;
      var fired = el.getAttribute("data-rg-pair") === want;
      el.classList.add(fired ? "rg-fired" : "rg-not-fired");
    });
  }

  /* tables of 3+ columns: each cell knows its column, so a phone shows a card per row */
  function cardTables() {
    var tables = document.querySelectorAll(".md-content .md-typeset table:not([class])");
    Array.prototype.forEach.call(tables, function (table) {
      if (table.closest(".rg-index")) { return; }
      var heads = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) {
        return th.textContent.trim();
      });
      if (heads.length < 3) { return; }
      table.classList.add("rg-cards");
      Array.prototype.forEach.call(table.querySelectorAll("tbody tr"), function (tr) {
        Array.prototype.forEach.call(tr.querySelectorAll("td"), function (td, i) {
          td.setAttribute("data-label", heads[i] || "");
        });
      });
    });
  }

  /* search: the alerts whose name holds the query, exact name first */
  function alertMatches(query) {
    var q = String(query).replace(/[^A-Za-z0-9]/g, "").toLowerCase();
    if (q.length < 3 || typeof RG_ALERTS === "undefined") { return []; }
    var found = RG_ALERTS.filter(function (a) { return a[0].toLowerCase().indexOf(q) >= 0; });
    function rank(a) {
      var n = a[0].toLowerCase();
      return n === q ? 0 : n.indexOf(q) === 0 ? 1 : 2;
    }
    found.sort(function (a, b) { return rank(a) - rank(b) || a[0].length - b[0].length || (a[0] < b[0] ? -1 : 1); });
    return found.slice(0, 5);
  }

  function siteBase() {
    var config = document.getElementById("__config");
    try { return new URL(JSON.parse(config.textContent).base + "/", window.location.href); } catch (e) {
      return new URL("./", window.location.href);
    }
  }

  function searchShortcut() {
    var input = document.querySelector(".md-search__input");
    var list = document.querySelector(".md-search-result__list");
    if (!input || !list || list.getAttribute("data-rg-search")) { return; }
    list.setAttribute("data-rg-search", "1");
    var busy = false;
    function place() {
      if (busy) { return; }
      busy = true;
      Array.prototype.forEach.call(list.querySelectorAll(".rg-search-alert"), function (li) { li.remove(); });
      var base = siteBase();
      alertMatches(input.value).reverse().forEach(function (a) {
        var li = document.createElement("li");
        li.className = "md-search-result__item rg-search-alert";
        var link = document.createElement("a");
        link.className = "md-search-result__link";
        link.setAttribute("href", new URL(a[1], base).toString());
        var article = document.createElement("article");
        article.className = "md-search-result__article";
        var h = document.createElement("h1");
        h.textContent = a[0];
        var p = document.createElement("p");
        p.textContent = "alert";
        article.appendChild(h);
        article.appendChild(p);
        link.appendChild(article);
        li.appendChild(link);
        list.insertBefore(li, list.firstChild);
      });
      busy = false;
    }
    function ours(nodes) {
      return Array.prototype.every.call(nodes, function (n) {
        return n.classList && n.classList.contains("rg-search-alert");
      });
    }
    /* mkdocs-material rewrites the list for every query: put the alerts back on top, but not
       in answer to our own change (that would never end) */
    new MutationObserver(function (changes) {
      if (busy || changes.every(function (c) { return ours(c.addedNodes) && ours(c.removedNodes); })) { return; }
      place();
    }).observe(list, { childList: true });
    input.addEventListener("input", place);
  }

  /* readable template text (‹namespace›/‹name›) outside code shows the URL's values */
  function fillText(values) {
    var root = document.querySelector(".md-content");
    if (!root || !Object.keys(values).length) { return; }
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    var nodes = [];
    while (walker.nextNode()) {
      var n = walker.currentNode;
      if (n.nodeValue.indexOf("\u2039") >= 0 && !n.parentElement.closest("pre, code")) { nodes.push(n); }
    }
    nodes.forEach(function (n) {
      n.nodeValue = n.nodeValue.replace(/\u2039([A-Za-z_][A-Za-z0-9_]*)\u203a/g, function (all, label) {
        return Object.prototype.hasOwnProperty.call(values, label) ? values[label] : all;
      });
    });
  }

  /* the index: one list item per alert, its severity badge and team in spans of their own */
  function indexFilters() {
    var index = document.querySelector(".rg-index");
    var box = document.getElementById("rg-filters");
    if (!index || !box) { return; }
    var rows = [];
    Array.prototype.forEach.call(index.querySelectorAll(".rg-app > ul > li"), function (li) {
      var section = li.closest(".rg-app");
      var sev = li.querySelector(".rg-sev"), team = li.querySelector(".rg-team");
      rows.push({ el: li, section: section, app: section.getAttribute("data-app") || "",
                  severity: sev ? sev.textContent.trim() : "", team: team ? team.textContent.trim() : "" });
    });
    var filters = [["app", "App"], ["severity", "Severity"], ["team", "Team"]];
    var selects = {};
    filters.forEach(function (f) {
      var seen = {};
      rows.forEach(function (r) { if (r[f[0]]) { seen[r[f[0]]] = true; } });
      var label = document.createElement("label");
      label.textContent = f[1];
      var select = document.createElement("select");
      select.setAttribute("aria-label", f[1]);
      var all = document.createElement("option");
      all.value = ""; all.textContent = "all";
      select.appendChild(all);
      Object.keys(seen).sort().forEach(function (v) {
        var o = document.createElement("option");
        o.value = v; o.textContent = v;
        select.appendChild(o);
      });
      select.addEventListener("change", apply);
      label.appendChild(select);
      box.appendChild(label);
      selects[f[0]] = select;
    });
    function apply() {
      var shown = new Map();
      rows.forEach(function (r) {
        var ok = filters.every(function (f) {
          var want = selects[f[0]].value;
          return !want || r[f[0]] === want;
        });
        r.el.style.display = ok ? "" : "none";
        if (r.section) { shown.set(r.section, (shown.get(r.section) || 0) + (ok ? 1 : 0)); }
      });
      shown.forEach(function (n, section) { section.style.display = n ? "" : "none"; });
    }
  }

  function run() {
    var values = params();
    fillCommands(values);
    fillDashboards(values);
    fillText(values);
    fillSilences(values);
    markPairs(values);
    linkQueries();
    cardTables();
    searchShortcut();
    indexFilters();
  }

  /* for tests (node): the functions that make a filled command line */
  if (typeof module !== "undefined" && module.exports) {
    module.exports = { clean: clean, quote: quote, matcherValue: matcherValue, alertMatches: alertMatches,
                       baseUrl: baseUrl, queryUrls: queryUrls };
    return;
  }

  if (window.document$ && window.document$.subscribe) {
    window.document$.subscribe(run);  /* mkdocs-material: also after instant navigation */
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", run);
  } else {
    run();
  }
})();
