/* decision.html?framework=F&ticker=T&date=D&seed=S: one decision's summary and whole trace
   (marks "viewer-ready" once drawn). */
"use strict";

(() => {
  const {el} = TD;
  const root = document.getElementById("decision");
  const q = TD.query();
  const seed = q.seed || String(TD.meta().seeds[0]);

  function header(record) {
    const s = record.summary;
    const nav = (date, text) => (date ? el("a", {href: TD.decisionHref(s.framework, s.ticker, date, s.seed)}, text)
                                      : el("span", {class: "muted"}, text));
    const others = TD.meta().frameworks.filter((f) => f.name !== s.framework);
    const partner = TD.partnerOf(s.framework);
    const select = el("select", {id: "compare-with"},
      others.map((f) => el("option", {value: f.name, selected: f.name === partner}, f.name)));
    const link = el("a", {id: "compare-link", href: TD.compareHref(s.ticker, s.date, s.framework, partner, s.seed)}, "side by side with");
    select.addEventListener("change", () => { link.href = TD.compareHref(s.ticker, s.date, s.framework, select.value, s.seed); });
    return el("div", {class: "page-head"},
      el("h1", {}, `${s.framework} · ${s.ticker} · ${s.date}`, el("span", {class: "muted"}, ` · seed ${s.seed}`)),
      el("div", {class: "nav"}, nav(record.prev, "◀ previous day"), " ", nav(record.next, "next day ▶"), " · ",
         link, " ", select, s.journal_key ? el("span", {class: "muted"}, ` · journal key ${s.journal_key}`) : null));
  }

  TD.loadDecision(q.framework, q.ticker, q.date, seed)
    .then((record) => {
      document.title = `${record.summary.framework} · ${record.summary.ticker} · ${record.summary.date} · TradeDuel`;
      root.replaceChildren(header(record), el("section", {class: "card"}, TD.renderSummary(record)),
                           el("section", {class: "card"}, TD.renderReading(record)));
      performance.mark("viewer-ready");
    })
    .catch(() => {
      root.replaceChildren(el("p", {class: "note error"},
        `No decision of ${q.framework} on ${q.ticker} at ${q.date} (seed ${seed}) in this run.`));
    });
})();
