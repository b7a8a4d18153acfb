/* TradeDuel viewer: what every page shares. Data files are scripts that call TD.put(name, data)
   (pages opened from disk may not fetch() local files); TD.load(name) adds such a script and
   resolves with its data. Every text of the run is put on the page with textContent (el() and
   text nodes), never as HTML. */
"use strict";

const TD = (() => {
  const store = {};
  const FOLD_CHARS = 600, FOLD_LINES = 12;

  function put(name, data) { store[name] = data; }

  function get(name) {
    if (!(name in store)) throw new Error("data file not loaded: " + name);
    return store[name];
  }

  /* Run the script at `src` (a relative address); resolves once it ran. */
  function loadScript(src) {
    return new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = src;
      script.onload = resolve;
      script.onerror = () => reject(new Error("no such file: " + src));
      document.head.appendChild(script);
    });
  }

  /* The data of the data file `name`, loaded once. */
  function load(name) {
    if (name in store) return Promise.resolve(store[name]);
    return loadScript(name).then(() => {
      if (!(name in store)) throw new Error(name + " holds no data");
      return store[name];
    });
  }

  /* el("div", {class: "x", href: ...}, child, "text", ...): an element; strings become text nodes. */
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  const meta = () => get("data/run.js");
  const frameworkIndex = (name) => meta().frameworks.findIndex((f) => f.name === name);
  const tickerIndex = (name) => meta().tickers.findIndex((t) => t.name === name);

  /* One decision's record: the data file of its chunk (metrics/viewer/site.py: chunk_path)
     holds it under its date. */
  function loadDecision(framework, ticker, date, seed) {
    const f = frameworkIndex(framework), t = tickerIndex(ticker);
    const bar = t < 0 ? -1 : meta().tickers[t].dates.indexOf(date);
    if (f < 0 || bar < 0) return Promise.reject(new Error(`no ${framework} ${ticker} ${date}`));
    const chunk = Math.floor(bar / meta().frameworks[f].chunk);
    return load(`data/decisions/${f}/${t}/s${seed}_${chunk}.js`).then((records) => {
      if (!(date in records)) throw new Error(`no ${framework} ${ticker} ${date} seed ${seed}`);
      return records[date];
    });
  }

  function query() { return Object.fromEntries(new URLSearchParams(location.search)); }

  function decisionHref(framework, ticker, date, seed) {
    return "decision.html?" + new URLSearchParams({framework, ticker, date, seed});
  }

  /* The framework a decision of `framework` is compared with by default: the first other
     framework that made LLM calls, else the first other one. */
  function partnerOf(framework) {
    const others = meta().frameworks.filter((f) => f.name !== framework);
    const llm = others.filter((f) => f.llm);
    return (llm[0] || others[0] || {name: framework}).name;
  }

  function compareHref(ticker, date, a, b, seed) {
    return "compare.html?" + new URLSearchParams({ticker, date, a, b: b || partnerOf(a), seed});
  }

  const pct = (x, digits = 2) => (x === null || x === undefined || Number.isNaN(x) ? "–" : (100 * x).toFixed(digits) + " %");
  const num = (x, digits = 0) => (x === null || x === undefined || Number.isNaN(x) ? "–" : Number(x).toLocaleString("en-US", {maximumFractionDigits: digits, minimumFractionDigits: digits}));
  const secs = (x) => (x === null || x === undefined ? "–" : x < 1 ? (1000 * x).toFixed(1) + " ms" : x.toFixed(2) + " s");
  const json = (value) => JSON.stringify(value, null, 1);

  /* An action (BUY / SELL / HOLD) or a debate rating (Buy, Hold, Sell; Overweight and
     Underweight are "other") as a coloured badge. */
  function actionBadge(text) {
    const upper = String(text).toUpperCase();
    const kind = ["BUY", "SELL", "HOLD"].includes(upper) ? upper.toLowerCase() : "other";
    return el("span", {class: `badge action ${kind}`, text});
  }

  function hitBadge(hit) {
    if (hit === null || hit === undefined) return el("span", {class: "badge muted", text: "no label"});
    return el("span", {class: hit ? "badge right" : "badge wrong", text: hit ? "right" : "wrong"});
  }

  /* A long text folds behind its first line; a short one is shown whole. */
  function folded(text, cls) {
    const lines = text.split("\n");
    const pre = el("pre", {class: cls || "text"}, text);
    if (text.length <= FOLD_CHARS && lines.length <= FOLD_LINES) return pre;
    return el("details", {class: "fold"},
      el("summary", {}, `${lines[0].slice(0, 120)} … (${num(text.length)} characters, ${lines.length} lines)`), pre);
  }

  function llmLine(call) {
    if (!call) return null;
    const reused = call.reused_prompt_tokens ? ` (${num(call.reused_prompt_tokens)} reused)` : "";
    return el("div", {class: "llm"},
      el("span", {class: "tag"}, "LLM"),
      ` ${call.model || ""} · ${num(call.prompt_tokens)} prompt${reused} + ${num(call.completion_tokens)} completion tokens · ${secs(call.latency_s)}`,
      call.cached ? " · cached" : "");
  }

  function callLine(record, name) {
    const args = record ? JSON.stringify(record.arguments) : "";
    return el("div", {class: "call"},
      el("span", {class: "tag tool"}, "tool call"), " ",
      el("code", {}, `${record ? record.name : name}(${args})`),
      record ? ` · ${num(record.result_chars)} chars · ${secs(record.latency_s)}` : "",
      record && record.lookahead ? el("span", {class: "badge wrong"}, "look-ahead (clamped)") : null,
      record && record.error ? el("span", {class: "badge wrong"}, "error: " + record.error) : null);
  }

  function failureList(lines) {
    if (!lines || !lines.length) return null;
    return el("ul", {class: "failures"}, lines.map((line) => el("li", {}, line)));
  }

  function segmentsView(segments) {
    return el("pre", {class: "raw"}, segments.map(([kind, text]) => el("span", {class: "seg seg-" + kind}, text)));
  }

  function keyValues(object) {
    return el("table", {class: "kv"}, Object.entries(object).map(([key, value]) =>
      el("tr", {}, el("th", {}, key), el("td", {}, typeof value === "object" ? json(value) : String(value)))));
  }

  const BLOCKS = {
    prompt(block) {
      return el("section", {class: "block prompt"},
        el("h3", {}, "Prompt"),
        block.messages.map((m) => el("div", {class: "message"}, el("div", {class: "role"}, m.role), folded(String(m.content || "")))));
    },
    turn(block) {
      const parsed = [llmLine(block.llm)];
      for (const call of block.calls) {
        parsed.push(callLine(call.record, call.name));
        parsed.push(el("div", {class: "result"}, el("div", {class: "role"}, "tool result"), folded(call.result, "text result-text")));
      }
      if (block.answer !== null) parsed.push(el("div", {class: "answer"}, el("span", {class: "tag"}, "answer"), " ", actionBadge(block.answer)));
      parsed.push(failureList(block.failures));
      return el("section", {class: "block turn"},
        el("h3", {}, `Turn ${block.n}`, el("span", {class: "muted"},
          block.calls.length ? " · " + block.calls.map((c) => c.name).join(", ") : block.answer !== null ? " · answer" : "")),
        el("div", {class: "two"},
          el("div", {class: "col"}, el("div", {class: "col-title"}, "model text (raw)"), segmentsView(block.segments)),
          el("div", {class: "col"}, el("div", {class: "col-title"}, "parsed and run"), parsed)));
    },
    node(block) {
      const parsed = block.llm.map(llmLine);
      for (const record of block.calls) parsed.push(callLine(record));
      if (block.offered.length && !block.calls.length) {
        parsed.push(el("div", {class: "call muted"}, el("span", {class: "tag tool"}, "tools"),
          ` none called; offered ${block.offered.join(", ")}`));
      }
      if (block.parsed) {
        parsed.push(el("div", {class: "answer"}, el("span", {class: "tag"}, block.parsed.output), " ",
          block.parsed.value ? actionBadge(block.parsed.value) : el("span", {class: "badge wrong"}, "not parsed"),
          block.parsed.how ? ` read as ${block.parsed.how}` : ""));
        if (block.parsed.raw !== null && block.parsed.raw !== undefined) {
          parsed.push(el("div", {class: "role"}, "raw answer"), folded(block.parsed.raw, "text raw-answer"));
        }
      }
      parsed.push(failureList(block.failures));
      const title = block.role.replace(/_/g, " ");
      return el("section", {class: "block node"},
        el("h3", {}, title),
        el("div", {class: "two"},
          el("div", {class: "col"}, el("div", {class: "col-title"}, block.parsed ? "what the next roles read" : "model text"), folded(block.text)),
          el("div", {class: "col"}, el("div", {class: "col-title"}, "calls and parsing"), parsed)));
    },
    message(block) {
      return el("section", {class: "block message"},
        el("h3", {}, block.name ? `${block.role} · ${block.name}` : block.role), folded(block.text));
    },
    outcome(block, record) {
      const parts = [
        el("div", {class: "answer"}, el("span", {class: "tag"}, "executed"), " ", actionBadge(record.summary.action_text),
          block.fallback ? el("span", {class: "badge wrong"}, "fallback: not the model's answer") : null,
          block.end_reason ? ` · ended by ${block.end_reason}` : ""),
        block.error ? el("pre", {class: "text error"}, block.error) : null,
      ];
      if (block.reward) parts.push(el("div", {class: "role"}, "reward components (recorded)"), keyValues(block.reward));
      if (Object.keys(block.extra).length) parts.push(el("div", {class: "role"}, "trace extra"), keyValues(block.extra));
      if (block.llm_calls.length) parts.push(el("div", {class: "role"}, "LLM calls"), block.llm_calls.map(llmLine));
      if (block.tool_calls.length) parts.push(el("div", {class: "role"}, "tool calls"), block.tool_calls.map((r) => callLine(r)));
      if (block.failures.length) parts.push(el("div", {class: "role"}, "parse failures"), failureList(block.failures));
      if (Object.keys(block.other).length) parts.push(el("div", {class: "role"}, "other trace fields"), keyValues(block.other));
      return el("section", {class: "block outcome"}, el("h3", {}, "Outcome"), parts);
    },
  };

  /* The trace in reading order; the debate's nodes under their stage headings. */
  function renderReading(record) {
    const reading = record.reading;
    if (!record.summary.journaled) return el("p", {class: "note"}, "This decision is not in the journal: no trace.");
    if (reading.shape === "none") return el("p", {class: "note"}, "No trace: this framework made no LLM or tool calls (a rule).");
    let stage = null;
    const out = [];
    for (const block of reading.blocks) {
      if (block.type === "node" && block.stage && block.stage !== stage) {
        stage = block.stage;
        out.push(el("h2", {class: "stage"}, stage));
      }
      out.push(BLOCKS[block.type](block, record));
    }
    return el("div", {class: `reading shape-${reading.shape}`}, out);
  }

  function fact(label, ...value) {
    return el("div", {class: "fact"}, el("div", {class: "fact-label"}, label), el("div", {class: "fact-value"}, ...value));
  }

  /* What the day holds whichever framework decided: the label's score and the forward returns. */
  function dayFacts(s) {
    return [fact("label score r_t", pct(s.score)), fact("next bar return", pct(s.forward["1"])),
            fact("5-bar return", pct(s.forward["5"]))].map((node) => { node.classList.add("day-fact"); return node; });
  }

  /* The decision's summary: action, label and outcome, forward returns, fill, cost. */
  function renderSummary(record) {
    const s = record.summary;
    const extraFields = Object.entries(record.decision).filter(([k, v]) => !["action"].includes(k) && v !== null);
    return el("div", {class: "summary"},
      fact("action", actionBadge(s.action_text)),
      fact("regime label", s.label || "none", " ", hitBadge(s.hit)),
      dayFacts(s),
      fact("fill (next bar)", s.fill ? `${s.fill.side} ${num(s.fill.shares)} @ ${num(s.fill.price, 2)}` : "none"),
      fact("shares after", s.shares_after === null ? "–" : num(s.shares_after)),
      fact("equity at close", num(s.equity, 0)),
      fact("LLM calls", num(s.llm_calls)),
      fact("tokens", `${num(s.prompt_tokens)} + ${num(s.completion_tokens)}`),
      fact("wall per decision", secs(s.wall_s)),
      extraFields.length ? fact("decision fields", keyValues(Object.fromEntries(extraFields))) : null);
  }

  return {put, get, load, loadScript, el, meta, query, loadDecision, decisionHref, compareHref, partnerOf,
          pct, num, secs, actionBadge, hitBadge, fact, dayFacts, renderReading, renderSummary};
})();
