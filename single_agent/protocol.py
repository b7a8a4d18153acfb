"""A protocol: what the single agent is shown and allowed (the `single_agent/protocol` config group).

The prompt templates (files under `single_agent/prompts/`), the tools offered and how each is
offered (its description, the arguments shown in its schema, the values used for the
arguments the model leaves out, whether parameter schemas are shown in full or short), the limits of an episode (tool calls, turns), the call budget the prompt states, the grammar's
bound on one `<think>` block, the length of a tool result the model reads and its rendering, and the action
executed when the model gives no valid answer.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from core.errors import ConfigError, one_line
from market.decision import Action
from configs import compose_option
from tools import REQUIRED_TOOLS, TOOLS

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"


class OfferedTool(BaseModel):
    """How a protocol offers one tool.

    `description` replaces the tool's own (None keeps it); `arguments` are the arguments shown
    in the schema (None: all); `defaults` are used for arguments the model leaves out, shown
    or not.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str | None = None
    arguments: list[str] | None = None
    defaults: dict[str, Any] = Field(default_factory=dict)


def _check_offer(name: str, offer: OfferedTool) -> None:
    """Raise ValueError when `offer` names arguments the tool lacks, hides a required one, or has a bad default."""
    fields = TOOLS[name].args_model.model_fields
    unknown = sorted((set(offer.arguments or ()) | set(offer.defaults)) - set(fields))
    if unknown:
        raise ValueError(f"{name}: unknown argument(s) {', '.join(unknown)}; it has {', '.join(fields)}")
    shown = set(fields if offer.arguments is None else offer.arguments)
    hidden_required = [a for a, info in fields.items() if info.is_required() and a not in shown]
    if hidden_required:
        raise ValueError(f"{name}: required argument(s) {', '.join(hidden_required)} must be shown")
    for argument, value in offer.defaults.items():
        info = fields[argument]
        try:
            TypeAdapter(Annotated[(info.annotation, *info.metadata)]).validate_python(value)
        except ValidationError as error:
            raise ValueError(f"{name}: default {argument}={value!r}: {one_line(error)}") from None


class Protocol(BaseModel):
    """One protocol of the single agent (docs/single_agent.md); tools in the order offered."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    system_template: str
    user_template: str
    tools: dict[str, OfferedTool] = Field(min_length=1)
    short_schemas: bool = Field(description="show parameter schemas without descriptions, bounds or defaults")
    max_tool_calls: int = Field(ge=1, description="tool calls allowed in one episode")
    max_turns: int = Field(ge=1, description="assistant turns allowed in one episode, the answer's included")
    advised_tool_calls: int | None = Field(None, ge=1, description="the call budget the prompt states, when it is "
                                                                   "below the hard limit max_tool_calls (None: that limit)")
    think_max_tokens: int = Field(ge=8, description="grammar bound on the text of one <think> block, in tokens")
    max_result_chars: int | None = Field(ge=40, description="a tool result longer than this is cut (None: never)")
    fallback_action: Action = Field(description="executed when the episode ends without a valid answer")
    terse_results: bool = Field(False, description="tool results in the terse rendering (tools.render): the same "
                                                   "facts in fewer characters, for small models")
    enforce_required_tools: bool = Field(False, description="constrained decoding allows the answer only once every "
                                                            "required tool has been called, or no call is left")

    @model_validator(mode="after")
    def _consistent(self) -> "Protocol":
        unknown = sorted(set(self.tools) - set(TOOLS))
        if unknown:
            raise ValueError(f"unknown tool(s) {', '.join(unknown)}; tools are {', '.join(TOOLS)}")
        missing = [name for name in REQUIRED_TOOLS if name not in self.tools]
        if missing:
            raise ValueError(f"the required tool(s) {', '.join(missing)} must be offered")
        for name, offer in self.tools.items():
            _check_offer(name, offer)
        for template in (self.system_template, self.user_template):
            if not (PROMPT_DIR / template).is_file():
                raise ValueError(f"no prompt template {template} in {PROMPT_DIR.name}/")
        return self

    @property
    def required_tools(self) -> tuple[str, ...]:
        """The tools the agent must call before answering (`tools.REQUIRED_TOOLS`)."""
        return REQUIRED_TOOLS

    def digest(self) -> str:
        """First 16 hex digits of SHA-256 over the settings and the text of both template files."""
        texts = [(PROMPT_DIR / t).read_text() for t in (self.system_template, self.user_template)]
        unset = {"advised_tool_calls"} if self.advised_tool_calls is None else set()  # digests from before the fields
        unset |= set() if self.terse_results else {"terse_results"}
        payload = "\n".join([self.model_dump_json(exclude=unset), *texts])
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


PROTOCOL_GROUP = "single_agent/protocol"
"""The Hydra config group of protocols; a framework composes one (`/single_agent/protocol@protocol: compact`)."""


def load_protocol(config: Protocol | Mapping[str, Any] | str) -> Protocol:
    """The protocol of a composed config of the `single_agent/protocol` group, or of that group's option
    `config` when it is a name (outside a Hydra app: scripts, tests); ConfigError when invalid."""
    if isinstance(config, Protocol):
        return config
    values = compose_option(PROTOCOL_GROUP, config) if isinstance(config, str) else config
    try:
        return Protocol.model_validate(dict(values))
    except ValidationError as error:
        raise ConfigError(f"protocol {values.get('name', '')}: {one_line(error)}") from None
