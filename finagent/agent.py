"""`FinAgentPipeline`: FinAgent's five steps for a batch of decisions, each step one engine call.

Per decision on day t (ticker, seed), in FinAgent's order:
1. latest market intelligence: today's news (`market_text.todays_news`) → per item an insight,
   a horizon and a sentiment, a summary, one query per horizon (`LatestIntelligence`);
2. diversified retrieval: the three queries against the episode's resolved intelligence
   (`retrieval.diversified`, top-k each, de-duplicated), summarised (`PastIntelligence`);
3. low-level reflection: the 1/7/14-bar moves and the chart text against the intelligence,
   with past low-level reflections retrieved by the same queries (`LowLevelReflection`);
4. high-level reflection: the last resolved decisions judged right or wrong by the move after
   them (BUY right when it rose, SELL when it fell, HOLD when it moved less than `hold_band`),
   with past lessons retrieved (`HighLevelReflection`);
5. the decision: everything above, the rule tools' signals and track records, the trader
   persona and the portfolio (`TradeDecision`).

All decisions of a batch advance together: each step is one `engine.generate` over the
decisions that need it. A step is skipped, with a fixed text in its place, when it has nothing
to read (no news today, nothing retrieved, no decision judged yet) or is switched off (the
ablations). An answer that does not parse is a recorded parse failure: a missing reading makes
the later steps read "(no answer)", a missing decision executes `fallback_action` with
`Trace.fallback` set; an engine error on the decision sets `Trace.error`. What the decision
wrote to memory goes into `Trace.extra["memory"]` (`finagent.memory`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel

from finagent.market_text import chart_text, percent, portfolio_text, price_moves_text, todays_news
from finagent.memory import EpisodeMemory, Kind, MemoryEntry, Resolved
from finagent.outputs import (STEPS, HighLevelReflection, LatestIntelligence, LowLevelReflection, TradeDecision,
                              answer_schema, answer_tokens, parse_answer)
from finagent.prompting import render, system_prompt
from finagent.retrieval import Retriever, diversified
from finagent.rule_tools import rule_signals
from finagent.settings import FinAgentSettings
from llm_backends.engine import ChatEngine
from llm_backends.grammar import json_schema_grammar
from llm_backends.types import SamplingParams
from market.decision import Action, Decision, DecisionContext, LLMCallRecord, Trace

NO_ANSWER = "(no answer)"


@dataclass
class Step:
    """One decision's way through the steps: what it read, what it answered, what it writes."""

    context: DecisionContext
    news: list[str]
    trace: Trace = field(default_factory=Trace)
    answers: dict[str, BaseModel | None] = field(default_factory=dict)
    status: dict[str, str] = field(default_factory=dict)
    """Step name -> "valid", "invalid" or "skipped"."""
    texts: dict[str, str] = field(default_factory=dict)
    """What later steps read of each step."""
    retrieved: dict[str, list[str]] = field(default_factory=dict)
    """Memory kind -> dates of the entries retrieved."""

    @property
    def queries(self) -> list[str]:
        latest = self.answers.get("latest_intelligence")
        return latest.queries() if latest is not None else [f"{self.context.ticker} {' '.join(self.news)}"]


def resolved_lines(shown: list[Resolved], bars: int) -> str:
    return "\n".join(f"- {r.entry.date}: {r.entry.text} (price then {percent(r.move)} in {bars} day(s))" for r in shown)


class FinAgentPipeline:
    """FinAgent over one engine and one memory (module docstring)."""

    def __init__(self, settings: FinAgentSettings, engine: ChatEngine, retriever: Retriever):
        self.settings = settings
        self.engine = engine
        self.retriever = retriever
        self.memory = EpisodeMemory(settings.resolve_bars)

    # --- the engine -------------------------------------------------------------------------

    def grammar(self, step: str, items: int = 0) -> str | None:
        """The grammar of a step's answer (None when decoding is free)."""
        if not self.settings.constrained:
            return None
        return json_schema_grammar(answer_schema(STEPS[step], self.settings.answer_chars, items))

    def _ask(self, step: str, work: list[tuple[Step, str]], items: Callable[[Step], int] = lambda s: 0) -> None:
        """Ask `step` of every (decision, prompt) pair in one call; parse and record the answers."""
        if not work:
            return
        model, chars = STEPS[step], self.settings.answer_chars
        conversations = [[{"role": "system", "content": system_prompt(self.settings.persona)},
                          {"role": "user", "content": prompt}] for s, prompt in work]
        params = [SamplingParams(temperature=self.settings.temperature, seed=s.context.seed,
                                 max_new_tokens=answer_tokens(model, chars, items(s)), grammar=self.grammar(step, items(s)))
                  for s, _ in work]
        for (s, prompt), result in zip(work, self.engine.generate(conversations, params=params)):
            s.trace.llm_calls.append(LLMCallRecord(**result.usage_record(step)))
            s.trace.messages += [{"role": "user", "name": step, "content": prompt},
                                 {"role": "assistant", "name": step, "content": result.text}]
            if result.error is not None:
                parsed_answer, failure = None, f"{step}: engine error: {result.error}"
                if step == "decision":
                    s.trace.error = failure
            else:
                expected = items(s) if step == "latest_intelligence" else None
                parsed_answer, failure = parse_answer(result.text, model, step, expected)
            s.answers[step] = parsed_answer
            s.status[step] = "valid" if parsed_answer is not None else "invalid"
            if failure:
                s.trace.parse_failures.append(failure)

    def _skip(self, s: Step, step: str, text: str) -> None:
        s.status[step], s.texts[step] = "skipped", text

    def _retrieve(self, s: Step, kind: Kind) -> list[Resolved]:
        """The episode's resolved entries of `kind` that the decision's queries retrieve."""
        c = s.context
        shown = self.memory.resolved(c.view, c.ticker, c.seed, kind)
        chosen = [shown[i] for i in diversified(self.retriever, s.queries, [r.entry.text for r in shown], self.settings.top_k)]
        s.retrieved[kind] = [r.entry.date for r in chosen]
        return chosen

    # --- the five steps ---------------------------------------------------------------------

    def decide(self, contexts: list[DecisionContext]) -> list[Decision]:
        steps = [Step(c, todays_news(c.view, c.ticker, self.settings.news_items)) for c in contexts]
        self._latest_intelligence(steps)
        self._past_intelligence(steps)
        if self.settings.low_level_reflection:
            self._low_level_reflection(steps)
        if self.settings.high_level_reflection:
            self._high_level_reflection(steps)
        self._decision(steps)
        return [self._finish(s) for s in steps]

    def _latest_intelligence(self, steps: list[Step]) -> None:
        work = []
        for s in steps:
            if s.news:
                news = "\n".join(f"{i}. {item}" for i, item in enumerate(s.news, 1))
                work.append((s, render("latest_intelligence", date=f"{s.context.date:%Y-%m-%d}",
                                       ticker=s.context.ticker, news=news)))
            else:
                self._skip(s, "latest_intelligence", "No news today.")
        self._ask("latest_intelligence", work, items=lambda s: len(s.news))
        for s, _ in work:
            answer = s.answers["latest_intelligence"]
            s.texts["latest_intelligence"] = answer.summary if answer is not None else "; ".join(s.news)

    def _past_intelligence(self, steps: list[Step]) -> None:
        work = []
        for s in steps:
            past = self._retrieve(s, "intelligence")
            if past:
                work.append((s, render("past_intelligence", date=f"{s.context.date:%Y-%m-%d}", ticker=s.context.ticker,
                                       past=resolved_lines(past, self.settings.resolve_bars))))
            else:
                self._skip(s, "past_intelligence", "None retrieved yet.")
        self._ask("past_intelligence", work)
        for s, _ in work:
            answer = s.answers["past_intelligence"]
            s.texts["past_intelligence"] = answer.summary if answer is not None else NO_ANSWER

    def _low_level_reflection(self, steps: list[Step]) -> None:
        work = []
        for s in steps:
            c = s.context
            earlier = resolved_lines(self._retrieve(s, "low_level"), self.settings.resolve_bars) or "None yet."
            work.append((s, render("low_level_reflection", date=f"{c.date:%Y-%m-%d}", ticker=c.ticker,
                                   moves=price_moves_text(c.view, c.ticker), chart=chart_text(c.view, c.ticker, self.settings.chart_bars),
                                   latest=s.texts["latest_intelligence"], past=s.texts["past_intelligence"],
                                   reflections=earlier)))
        self._ask("low_level_reflection", work)
        for s, _ in work:
            answer: LowLevelReflection | None = s.answers["low_level_reflection"]
            s.texts["low_level_reflection"] = NO_ANSWER if answer is None else (
                f"Short term: {answer.short_term_reasoning} Medium term: {answer.medium_term_reasoning} "
                f"Long term: {answer.long_term_reasoning}")

    def judged(self, s: Step) -> str:
        """The last `past_decisions` resolved decisions, each judged right or wrong by the move after it."""
        c = s.context
        lines = []
        for r in self.memory.resolved(c.view, c.ticker, c.seed, "decision")[-self.settings.past_decisions:]:
            action = r.entry.action
            right = r.move > 0 if action == "BUY" else r.move < 0 if action == "SELL" else abs(r.move) < self.settings.hold_band
            lines.append(f"- {r.entry.date}: {action}; the price then moved {percent(r.move)} in "
                         f"{self.settings.resolve_bars} day(s): {'right' if right else 'wrong'}.")
        return "\n".join(lines)

    def _high_level_reflection(self, steps: list[Step]) -> None:
        work = []
        for s in steps:
            decisions = self.judged(s)
            if not decisions:
                self._skip(s, "high_level_reflection", "No past decision judged yet.")
                continue
            lessons = resolved_lines(self._retrieve(s, "high_level"), self.settings.resolve_bars) or "None yet."
            work.append((s, render("high_level_reflection", date=f"{s.context.date:%Y-%m-%d}", ticker=s.context.ticker,
                                   decisions=decisions, lessons=lessons)))
        self._ask("high_level_reflection", work)
        for s, _ in work:
            answer: HighLevelReflection | None = s.answers["high_level_reflection"]
            s.texts["high_level_reflection"] = NO_ANSWER if answer is None else f"{answer.improvement} {answer.summary}"

    def _decision(self, steps: list[Step]) -> None:
        work = []
        for s in steps:
            c = s.context
            sections = []
            if self.settings.low_level_reflection:
                sections.append(f"Your reflection on recent price moves: {s.texts['low_level_reflection']}")
            if self.settings.high_level_reflection:
                sections.append(f"Your lesson from past decisions: {s.texts['high_level_reflection']}")
            if self.settings.tools:
                sections.append("Rule strategies (today's signal, and how following each did recently):\n"
                                + rule_signals(c.view, c.ticker, self.settings.record_bars))
            work.append((s, render("decision", date=f"{c.date:%Y-%m-%d}", ticker=c.ticker,
                                   latest=s.texts["latest_intelligence"], past=s.texts["past_intelligence"],
                                   sections="\n".join(sections), portfolio=portfolio_text(c.portfolio))))
        self._ask("decision", work)

    # --- the record -------------------------------------------------------------------------

    def entries(self, s: Step, action: Action) -> list[MemoryEntry]:
        """What the decision writes to memory (`finagent.memory`)."""
        date = f"{s.context.date:%Y-%m-%d}"
        latest: LatestIntelligence | None = s.answers.get("latest_intelligence")
        written = []
        for i, headline in enumerate(s.news):
            reading = latest.items[i] if latest is not None else None
            text = headline if reading is None else f"{headline}. {reading.insight} ({reading.horizon}-term, {reading.sentiment})"
            written.append(MemoryEntry(kind="intelligence", date=date, text=text))
        if s.answers.get("low_level_reflection") is not None:
            written.append(MemoryEntry(kind="low_level", date=date, text=s.texts["low_level_reflection"]))
        if s.answers.get("high_level_reflection") is not None:
            written.append(MemoryEntry(kind="high_level", date=date, text=s.texts["high_level_reflection"]))
        written.append(MemoryEntry(kind="decision", date=date, text=f"{action.value}", action=action.value))
        return written

    def _finish(self, s: Step) -> Decision:
        decision: TradeDecision | None = s.answers.get("decision")
        action = Action(decision.action) if decision is not None else self.settings.fallback_action
        s.trace.fallback = decision is None
        written = self.entries(s, action)
        self.memory.add(s.context.ticker, s.context.seed, written)
        s.trace.extra = {"answers": s.status, "retrieved": s.retrieved,
                         "analysis": decision.analysis if decision else None,
                         "reasoning": decision.reasoning if decision else None,
                         "memory": [e.model_dump(mode="json", exclude_none=True) for e in written]}
        return Decision(action=action, trace=s.trace)

    def recall(self, context: DecisionContext, decision: Decision) -> None:
        """Take back what a journaled decision wrote to memory (`FinAgent.recall`)."""
        self.memory.add(context.ticker, context.seed, decision.trace.extra.get("memory", []))
