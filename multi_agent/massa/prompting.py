"""The coordinator's and the agents' prompts: a fixed system prompt per role, the situation as the user message.

`prompts/coordinator.md` and `prompts/asset_agent.md` are the system prompts; they name no
stock and no date, so an engine can reuse their keys and values across decisions. The user
message carries the date and what the role may read, in percent, and last the answer
instructions (small models follow the instruction they read last best):

- the coordinator: the agents' names, the `PublicContext` (market and portfolio aggregates);
- an agent: its stock's name, its `AssetView` and its own signal, and each action's weight change.
"""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from core.prompt_files import package_prompts, prompts_digest, read_template
from multi_agent.massa.answers import NOTCHES, SIGNALS
from multi_agent.massa.observations import AssetView, PublicContext

PROMPTS = package_prompts("multi_agent.massa")
COORDINATOR, AGENT = "coordinator", "asset_agent"


def template(role: str) -> str:
    """The text of `prompts/<role>.md`."""
    return read_template(PROMPTS, role)


def templates_digest() -> str:
    """SHA-256 over every template file's name and text: what the prompts depend on."""
    return prompts_digest(PROMPTS)


def pct(fraction: float) -> str:
    """A fraction as signed percent with two decimals: 0.0123 -> "+1.23 %"."""
    return f"{100.0 * fraction:+.2f} %"


def coordinator_prompt(public: PublicContext) -> str:
    """The coordinator's user message: the date, the agents, the market and the portfolio's aggregates."""
    signals = ", ".join(SIGNALS)
    return "\n".join([
        f"Date: {public.date} (data after this date does not exist).",
        f"Traders (one per stock): {', '.join(public.agents)}.",
        f"Market (equal-weight index of the {len(public.agents)} stocks):",
        f"- index return today: {pct(public.index_ret)}",
        f"- index return over 5 days: {pct(public.index_ret5)}",
        f"- realised volatility (daily, 20 days): {100.0 * public.realised_vol:.2f} %",
        f"- breadth (stocks above their 20-day mean): {100.0 * public.breadth:.0f} %",
        f"- dispersion (spread of today's stock returns): {100.0 * public.dispersion:.2f} %",
        "Portfolio:",
        f"- invested: {100.0 * public.gross:.1f} % of equity",
        f"- drawdown from its peak: {100.0 * public.drawdown:.2f} %",
        f"- return today: {pct(public.port_ret)}",
        f"Answer with one JSON object and nothing else: each trader's name as a key, its signal "
        f"({signals}) as the value.",
    ])


def agent_prompt(view: AssetView, signal: str, step: float, order: tuple[str, ...]) -> str:
    """An agent's user message: its stock, its window, its sleeve, its signal and the actions' changes,
    the actions listed in `order`."""
    notch = step / view.agents
    actions = ", ".join(f"{a} ({pct(NOTCHES[a] * notch)} of equity)" for a in order)
    return "\n".join([
        f"Stock: {view.name}. Date: {view.date} (data after this date does not exist).",
        f"Daily returns, last {len(view.returns)} days (oldest first): {', '.join(pct(r) for r in view.returns)}.",
        f"Return over {view.trend_bars} days: {pct(view.trend)}.",
        f"Your sleeve: {100.0 * view.weight:.1f} % of equity (an equal-weight sleeve is {100.0 / view.agents:.1f} %).",
        f"Your sleeve's profit today: {pct(view.pnl)} of equity; its recent average: {pct(view.pnl_ema)}.",
        f"The coordinator's risk signal for you: {signal}.",
        f"Actions: {actions}.",
        'Answer with one JSON object and nothing else: {"action": one of ' + ", ".join(order) + "}.",
    ])


def messages(role: str, prompt: str) -> list[BaseMessage]:
    """A role's conversation: its template as the system prompt, `prompt` as the user message."""
    return [SystemMessage(template(role)), HumanMessage(prompt)]
