/* compare.html?ticker=T&date=D&a=F1&b=F2&seed=S: two frameworks' decisions on one ticker and day
   (marks "viewer-ready" once drawn). */
"use strict";

(() => {
  const {el} = TD;
  const root = document.getElementById("compare");
  const meta = TD.meta();
  const q = TD.query();
  const ticker = q.ticker || meta.tickers[0].name;
  const seed = q.seed || String(meta.seeds[0]);
  const first = meta.frameworks.find((f) => f.llm) || meta.frameworks[0];
  const a = q.a || first.name;
  const b = q.b || TD.partnerOf(a);
  const date = q.date || null;

  /* A framework's decision that day: the seed asked for, else the first seed (a deterministic
     framework runs the first seed only). */
  function decisionOf(framework, day) {
    return TD.loadDecision(framework, ticker, day, seed)
      .catch(() => TD.loadDecision(framework, ticker, day, meta.seeds[0]))
      .catch(() => null);
  }

  function frameworkSelect(side, chosen, day) {
    const select = el("select", {class: "side-select", "data-side": side},
      meta.frameworks.map((f) => el("option", {value: f.name, selected: f.name === chosen}, f.name)));
    select.addEventListener("change", () => {
      const pair = side === "a" ? [select.value, b] : [a, select.value];
      location.href = TD.compareHref(ticker, day, pair[0], pair[1], seed);
    });
    return select;
  }

  function column(side, framework, record, day) {
    const body = record
      ? [el("a", {class: "open", href: TD.decisionHref(framework, ticker, day, record.summary.seed)}, "open the decision page"),
         TD.renderSummary(record), TD.renderReading(record)]
      : [el("p", {class: "note error"}, `No decision of ${framework} on ${ticker} at ${day}.`)];
    return el("div", {class: `side side-${side}`}, el("div", {class: "side-head"}, frameworkSelect(side, framework, day)), body);
  }

  function render(day, left, right) {
    const known = left || right;
    const s = known ? known.summary : null;
    const nav = (other, text) => (other ? el("a", {href: TD.compareHref(ticker, other, a, b, seed)}, text) : el("span", {class: "muted"}, text));
    const tickers = el("select", {id: "compare-ticker"}, meta.tickers.map((t) => el("option", {value: t.name, selected: t.name === ticker}, t.name)));
    tickers.addEventListener("change", () => { location.href = TD.compareHref(tickers.value, "", a, b, seed); });
    root.replaceChildren(
      el("div", {class: "page-head"},
        el("h1", {}, `${ticker} · ${day}`, el("span", {class: "muted"}, ` · ${a} vs ${b}`)),
        el("div", {class: "nav"}, nav(known && known.prev, "◀ previous day"), " ", nav(known && known.next, "next day ▶"), " · ticker ", tickers)),
      s ? el("section", {class: "card day", id: "day"},
        el("div", {class: "summary"}, TD.fact("regime label", s.label || "none"), TD.dayFacts(s))) : null,
      el("div", {class: "sides"}, column("a", a, left, day), column("b", b, right, day)));
  }

  /* Without a date: the ticker's first decision day. */
  const day = date || meta.tickers.find((t) => t.name === ticker).first_decision;
  Promise.all([decisionOf(a, day), decisionOf(b, day)]).then(([left, right]) => {
    render(day, left, right);
    performance.mark("viewer-ready");
  });
})();
