/* index.html: per framework x ticker (x seed) the price with every decision and fill marked,
   the regime label of each day, the shares held and the equity curve; below, the decisions
   table, filtered and sorted. Marks "table-ready" and "viewer-ready" (chart drawn) for
   performance measurements. */
"use strict";

(() => {
  const {el} = TD;
  const meta = TD.meta();
  const data = TD.get("data/index.js");
  const D = data.decisions;
  const count = D.date.length;
  const fwName = (i) => meta.frameworks[i].name;
  const tkName = (i) => meta.tickers[i].name;
  const COLORS = {BUY: "#1a7f37", SELL: "#cf222e", HOLD: "#8c959f"};
  const SYMBOLS = {BUY: "triangle-up", SELL: "triangle-down", HOLD: "circle"};
  const PAGE_ROWS = 50;

  /* ---- chart ---- */
  const chartInputs = {fw: document.getElementById("chart-framework"), tk: document.getElementById("chart-ticker"),
                       seed: document.getElementById("chart-seed")};
  /* An episode of framework `fw` on ticker `tk`: the seed asked for, else its first (a
     deterministic framework runs the first seed only); -1 when it did not trade the ticker. */
  function episodeOf(fw, tk, seed) {
    const exact = meta.episodes.findIndex((e) => e.fw === fw && e.tk === tk && e.seed === seed);
    return exact >= 0 ? exact : meta.episodes.findIndex((e) => e.fw === fw && e.tk === tk);
  }

  function decisionsOf(fw, tk, seed) {
    const rows = [];
    for (let i = 0; i < count; i++) if (D.fw[i] === fw && D.tk[i] === tk && D.seed[i] === seed) rows.push(i);
    return rows;
  }

  function drawChart() {
    const fw = Number(chartInputs.fw.value), tk = Number(chartInputs.tk.value), wanted = Number(chartInputs.seed.value);
    const at = episodeOf(fw, tk, wanted);
    const note = document.getElementById("chart-note");
    if (at < 0) { note.textContent = `${fwName(fw)} did not trade ${tkName(tk)}.`; return; }
    const seed = meta.episodes[at].seed;
    note.textContent = seed !== wanted ? `${fwName(fw)} ran seed ${seed} only.` : "";
    const episode = data.episodes[at], bars = data.bars[tk], dates = meta.tickers[tk].dates;
    const x = episode.bar.map((b) => dates[b]);
    const traces = [{x, y: episode.bar.map((b) => bars.close[b]), type: "scatter", mode: "lines", name: `${tkName(tk)} close`,
                     line: {color: "#24292f", width: 1.5}, hovertemplate: "%{x}<br>close %{y:.2f}<extra></extra>"}];
    const rows = decisionsOf(fw, tk, seed);
    for (const action of ["BUY", "SELL", "HOLD"]) {
      const mine = rows.filter((i) => D.action[i] === action);
      traces.push({x: mine.map((i) => D.date[i]), y: mine.map((i) => bars.close[dates.indexOf(D.date[i])]),
                   customdata: mine, type: "scatter", mode: "markers", name: action,
                   marker: {color: COLORS[action], symbol: SYMBOLS[action], size: action === "HOLD" ? 7 : 11,
                            line: {width: 1, color: "#fff"}},
                   text: mine.map((i) => `${action} · label ${D.label[i] || "none"}${D.hit[i] === null ? "" : D.hit[i] ? " · right" : " · wrong"}`
                                         + (D.fallback[i] ? " · fallback" : "") + (D.tokens[i] ? ` · ${D.tokens[i]} tokens` : "")),
                   hovertemplate: "%{x}<br>%{text}<extra></extra>"});
    }
    const other = rows.filter((i) => !(D.action[i] in COLORS));
    if (other.length) {
      traces.push({x: other.map((i) => D.date[i]), y: other.map((i) => bars.close[dates.indexOf(D.date[i])]), customdata: other,
                   type: "scatter", mode: "markers", name: "other", marker: {color: "#8250df", symbol: "diamond", size: 9},
                   text: other.map((i) => D.action[i]), hovertemplate: "%{x}<br>%{text}<extra></extra>"});
    }
    traces.push({x: episode.fills.map((f) => dates[f[0]]), y: episode.fills.map((f) => f[3]), type: "scatter", mode: "markers",
                 name: "fill", marker: {symbol: "x-thin", size: 10, line: {width: 2, color: episode.fills.map((f) => COLORS[f[1]] || "#8250df")}},
                 text: episode.fills.map((f) => `${f[1]} ${f[2]} @ ${f[3].toFixed(2)}`), hovertemplate: "%{x}<br>fill %{text}<extra></extra>"});
    const LABEL_COLORS = {bullish: "#1a7f37", bearish: "#cf222e", sideways: "#8c959f"};
    traces.push({x, y: x.map(() => 0), type: "scatter", mode: "markers", yaxis: "y4", name: "regime label", showlegend: false,
                 marker: {symbol: "square", size: 9, color: episode.bar.map((b) => LABEL_COLORS[bars.label[b]] || "#eaeef2")},
                 text: episode.bar.map((b) => bars.label[b] || "no label"), hovertemplate: "%{x}<br>label %{text}<extra></extra>"});
    traces.push({x, y: episode.shares, type: "scatter", mode: "lines", line: {shape: "hv", color: "#0969da", width: 1},
                 fill: "tozeroy", fillcolor: "rgba(9,105,218,0.15)", name: "shares held", yaxis: "y2",
                 hovertemplate: "%{x}<br>%{y} shares<extra></extra>"});
    let legend = true;
    for (const other of meta.frameworks) {
      const j = other.index === fw ? -1 : episodeOf(other.index, tk, seed);
      if (j < 0) continue;
      const series = data.episodes[j];
      traces.push({x: series.bar.map((b) => dates[b]), y: series.equity, type: "scatter", mode: "lines", yaxis: "y3",
                   name: "other frameworks' equity", showlegend: legend, legendgroup: "others",
                   line: {width: 1, color: "#afb8c1"}, hovertemplate: `${other.name}<br>%{x}<br>%{y:,.0f}<extra></extra>`});
      legend = false;
    }
    traces.push({x, y: episode.equity, type: "scatter", mode: "lines", yaxis: "y3", name: `${fwName(fw)} equity`,
                 line: {width: 2.5, color: "#0969da"}, hovertemplate: "%{x}<br>equity %{y:,.0f}<extra></extra>"});
    const layout = {
      height: 580, margin: {l: 64, r: 8, t: 28, b: 40}, hovermode: "closest", showlegend: true,
      legend: {orientation: "v", x: 1.01, y: 1, xanchor: "left"},
      title: {text: `${fwName(fw)} · ${tkName(tk)} · seed ${seed}`, x: 0.5, font: {size: 14}},
      xaxis: {type: "category", anchor: "y3", nticks: 12, showgrid: false},
      yaxis: {domain: [0.5, 1], title: {text: "price"}},
      yaxis4: {domain: [0.44, 0.47], showticklabels: false, showgrid: false, zeroline: false, fixedrange: true,
               title: {text: "label", font: {size: 11}}},
      yaxis2: {domain: [0.31, 0.41], title: {text: "shares"}, rangemode: "tozero"},
      yaxis3: {domain: [0, 0.28], title: {text: "equity"}},
    };
    const chart = document.getElementById("chart");
    Plotly.react(chart, traces, layout, {displaylogo: false, responsive: true});
    if (!chart.dataset.wired) {
      chart.dataset.wired = "1";
      chart.on("plotly_click", (event) => {
        const point = event.points.find((p) => typeof p.customdata === "number");
        if (point) location.href = hrefOf(point.customdata);
      });
    }
  }

  /* ---- table ---- */
  const hrefOf = (i) => TD.decisionHref(fwName(D.fw[i]), tkName(D.tk[i]), D.date[i], D.seed[i]);
  const flagsOf = (i) => [D.fallback[i] && "fallback", D.error[i] && "error", D.failures[i] && `parse ×${D.failures[i]}`,
                          D.lookahead[i] && `look-ahead ×${D.lookahead[i]}`].filter(Boolean);
  const COLUMNS = [
    {key: "date", title: "date", cell: (i) => el("a", {href: hrefOf(i), class: "decision-link"}, D.date[i])},
    {key: "fw", title: "framework", sort: (i) => fwName(D.fw[i]), cell: (i) => fwName(D.fw[i])},
    {key: "tk", title: "ticker", sort: (i) => tkName(D.tk[i]), cell: (i) => tkName(D.tk[i])},
    {key: "seed", title: "seed", cell: (i) => String(D.seed[i])},
    {key: "action", title: "action", cell: (i) => TD.actionBadge(D.action[i])},
    {key: "label", title: "label", cell: (i) => D.label[i] || "–"},
    {key: "hit", title: "outcome", sort: (i) => (D.hit[i] === null ? -1 : Number(D.hit[i])), cell: (i) => TD.hitBadge(D.hit[i])},
    {key: "fill", title: "fill", cell: (i) => D.fill[i] || ""},
    {key: "flags", title: "flags", sort: (i) => flagsOf(i).length, cell: (i) => flagsOf(i).map((f) => el("span", {class: "badge wrong"}, f))},
    {key: "tools", title: "tool calls", numeric: true, cell: (i) => String(D.tools[i])},
    {key: "llm", title: "LLM calls", numeric: true, cell: (i) => String(D.llm[i])},
    {key: "tokens", title: "tokens", numeric: true, cell: (i) => TD.num(D.tokens[i])},
    {key: "latency", title: "LLM latency", numeric: true, cell: (i) => (D.llm[i] ? TD.secs(D.latency[i]) : "–")},
    {key: "wall", title: "wall / decision", numeric: true, cell: (i) => TD.secs(D.wall[i])},
    {key: "compare", title: "", sortable: false,
     cell: (i) => el("a", {href: TD.compareHref(tkName(D.tk[i]), D.date[i], fwName(D.fw[i]), null, D.seed[i]), class: "compare-link"}, "side by side")},
  ];
  const state = {sort: "date", direction: 1, page: 0, rows: []};
  const filters = Object.fromEntries([...document.querySelectorAll("[data-filter]")].map((input) => [input.dataset.filter, input]));
  const llmFramework = meta.frameworks.map((f) => f.llm);

  function matches(i) {
    const f = (name) => (filters[name].type === "checkbox" ? filters[name].checked : filters[name].value);
    if (f("fw") !== "" && D.fw[i] !== Number(f("fw"))) return false;
    if (f("tk") !== "" && D.tk[i] !== Number(f("tk"))) return false;
    if (f("seed") !== "" && D.seed[i] !== Number(f("seed"))) return false;
    if (f("from") && D.date[i].slice(0, 10) < f("from")) return false;
    if (f("to") && D.date[i].slice(0, 10) > f("to")) return false;
    const action = f("action");
    if (action && (action === "other" ? D.action[i] in COLORS : D.action[i] !== action)) return false;
    const label = f("label");
    if (label && (label === "none" ? D.label[i] !== null : D.label[i] !== label)) return false;
    const hit = f("hit");
    if (hit && (hit === "none" ? D.hit[i] !== null : D.hit[i] !== (hit === "right"))) return false;
    if (f("llm") && !llmFramework[D.fw[i]]) return false;
    if (f("fallback") && !(D.fallback[i] || D.error[i])) return false;
    if (f("failures") && !D.failures[i]) return false;
    if (f("lookahead") && !D.lookahead[i]) return false;
    return true;
  }

  function sortKey(column) {
    if (column.sort) return column.sort;
    const values = D[column.key];
    return (i) => values[i];
  }

  function applyFilters() {
    const rows = [];
    for (let i = 0; i < count; i++) if (matches(i)) rows.push(i);
    const column = COLUMNS.find((c) => c.key === state.sort);
    const key = sortKey(column), direction = state.direction;
    rows.sort((p, q) => {
      const a = key(p), b = key(q);
      if (a === b) return p - q;
      if (a === null) return 1;
      if (b === null) return -1;
      return (a < b ? -1 : 1) * direction;
    });
    state.rows = rows;
    state.page = 0;
    renderTable();
  }

  function renderHead() {
    const head = document.querySelector("#decisions thead");
    head.replaceChildren(el("tr", {}, COLUMNS.map((column) => {
      const sorted = state.sort === column.key ? (state.direction > 0 ? " ▲" : " ▼") : "";
      const th = el("th", {class: column.numeric ? "num" : null, "data-key": column.key}, column.title + sorted);
      if (column.sortable !== false) {
        th.classList.add("sortable");
        th.addEventListener("click", () => {
          state.direction = state.sort === column.key ? -state.direction : (column.numeric ? -1 : 1);
          state.sort = column.key;
          renderHead();
          applyFilters();
        });
      }
      return th;
    })));
  }

  function renderTable() {
    const pages = Math.max(1, Math.ceil(state.rows.length / PAGE_ROWS));
    state.page = Math.min(state.page, pages - 1);
    const shown = state.rows.slice(state.page * PAGE_ROWS, (state.page + 1) * PAGE_ROWS);
    document.querySelector("#decisions tbody").replaceChildren(...shown.map((i) =>
      el("tr", {"data-row": i}, COLUMNS.map((c) => el("td", {class: c.numeric ? "num" : null}, c.cell(i))))));
    const first = state.rows.length ? state.page * PAGE_ROWS + 1 : 0;
    document.getElementById("page-info").textContent =
      `${first}–${state.page * PAGE_ROWS + shown.length} of ${state.rows.length} decisions (${count} in the run) · page ${state.page + 1} of ${pages}`;
  }

  for (const input of Object.values(filters)) input.addEventListener("change", applyFilters);
  document.getElementById("prev-page").addEventListener("click", () => { state.page = Math.max(0, state.page - 1); renderTable(); });
  document.getElementById("next-page").addEventListener("click", () => { state.page += 1; renderTable(); });
  for (const input of Object.values(chartInputs)) input.addEventListener("change", drawChart);

  // the chart shows ?framework=&ticker=&seed= when given, else the first LLM framework
  const q = TD.query();
  const chosen = meta.frameworks.find((f) => f.name === q.framework) || meta.frameworks.find((f) => f.llm);
  if (chosen) chartInputs.fw.value = String(chosen.index);
  const ticker = meta.tickers.find((t) => t.name === q.ticker);
  if (ticker) chartInputs.tk.value = String(ticker.index);
  if (q.seed !== undefined && meta.seeds.includes(Number(q.seed))) chartInputs.seed.value = q.seed;
  renderHead();
  applyFilters();
  performance.mark("table-ready");
  // the table first, then plotly's 4.8 MB script and the chart
  TD.loadScript("assets/plotly.min.js").then(() => {
    drawChart();
    performance.mark("viewer-ready");
  });
})();
