"""Reading a chat-completions request as OpenAI does: validate every field, refuse what cannot be honoured.

`read_request(raw_body, served_model)` returns a `ChatJob` or raises `APIError`: 400 for a body
that is not a JSON object, a field of the wrong type or range (naming the field), an unknown
field ("Unrecognized request argument supplied", as OpenAI says) or a parameter this server
cannot honour (`top_logprobs` > 0, penalties, `logit_bias`, `parallel_tool_calls=false`); 404
for a model it does not serve. Null stands for "not given" in every optional field, as in
OpenAI's API.

Readings that are not one-to-one: `top_p=0` keeps only the most likely token, so it is greedy
decoding (temperature 0). `tool_choice="none"` is honoured by not showing the tools to the
model and returning its text as content; `"required"` or a named function forces a call (see
`constraints`). Content given as a list of text parts is joined with newlines. The `developer`
role is read as `system`. `max_tokens` and `max_completion_tokens` are the same limit (the
latter is OpenAI's current name); null leaves the completion all the context that the prompt
leaves (see `limits`). With `n` > 1 and a `seed`, choice i samples with seed + i; seeds are in
[0, 2**32) (`sampling.DISTINCT_SEEDS`: the seeds the engine tells apart, so distinct seeds give
distinct samples), seed + n - 1 included. A tool's `parameters` must be a valid JSON schema of an
object whatever `tool_choice` says (jsonschema's check against the schema's own metaschema). Beyond
OpenAI's fields, vLLM's `structured_outputs: {"grammar": ...}` takes a grammar in llguidance's
Lark dialect as is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jsonschema import SchemaError
from jsonschema.validators import validator_for
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from llm_backends.sampling import DISTINCT_SEEDS
from llm_backends.serve.errors import APIError, bad_request, unsupported
from llm_backends.types import Conversation, SamplingParams, ToolSchema

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
TOOL_CHOICES = frozenset({"auto", "none", "required"})
MAX_STOP_STRINGS = 4
MAX_CHOICES = 128
"""OpenAI's limit on `n`."""
STREAM_OPTIONS = frozenset({"include_usage"})


def text_content(content: Any, where: str, role: str) -> str | None:
    """Message content as one string: a string as is, text parts joined by newlines; None only for assistant turns."""
    if content is None:
        if role != "assistant":
            raise ValueError(f"{where}: required for role {role!r}")
        return None
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ValueError(f"{where}: content must be a string or a list of text parts, got {type(content).__name__}")
    texts = []
    for p, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind != "text" or not isinstance(part.get("text"), str):
            raise ValueError(
                f"{where}[{p}]: only {{'type': 'text', 'text': ...}} parts are supported, got {kind or part!r}"
            )
        texts.append(part["text"])
    return "\n".join(texts)


class ChatCompletionRequest(BaseModel):
    """The fields of a chat-completions body this server knows; anything else is refused."""

    model_config = ConfigDict(extra="forbid", strict=True)

    model: str
    messages: list[dict[str, Any]] = Field(min_length=1)
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    stop: Any = None
    """A string, a list of up to MAX_STOP_STRINGS strings, or null; validated into a tuple of strings."""
    seed: int | None = Field(None, ge=0, lt=DISTINCT_SEEDS)
    n: int | None = Field(None, ge=1, le=MAX_CHOICES)
    stream: bool | None = None
    stream_options: dict[str, Any] | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = Field(None, ge=0, le=20)
    response_format: dict[str, Any] | None = None
    frequency_penalty: float | None = Field(None, ge=-2, le=2)
    presence_penalty: float | None = Field(None, ge=-2, le=2)
    logit_bias: dict[str, float] | None = None
    user: str | None = None
    """An end-user identifier (OpenAI uses it for abuse monitoring); it changes no answer."""
    structured_outputs: dict[str, Any] | None = None
    """vLLM's extension: `{"grammar": <llguidance Lark text>}` constrains decoding to that grammar."""

    @field_validator("messages")
    @classmethod
    def _plain_messages(cls, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        plain = []
        for m, message in enumerate(messages):
            role = message.get("role")
            if role not in ROLES:
                raise ValueError(f"messages[{m}].role: must be one of {sorted(ROLES)}, got {role!r}")
            content = text_content(message.get("content"), f"messages[{m}].content", role)
            plain.append({**message, "role": "system" if role == "developer" else role, "content": content})
        return plain

    @field_validator("tools")
    @classmethod
    def _function_tools(cls, tools: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        for t, tool in enumerate(tools or []):
            function = tool.get("function")
            if tool.get("type") != "function" or not isinstance(function, dict):
                raise ValueError(f"tools[{t}]: must be {{'type': 'function', 'function': {{...}}}}")
            if not isinstance(function.get("name"), str) or not function["name"]:
                raise ValueError(f"tools[{t}].function.name: must be a non-empty string")
            if function.get("parameters") is not None:
                check_parameters(function["parameters"], f"tools[{t}].function.parameters")
        return tools

    @field_validator("stop")
    @classmethod
    def _stop_strings(cls, stop: Any) -> tuple[str, ...]:
        if stop is None:
            return ()
        if isinstance(stop, str):
            return (stop,)
        if isinstance(stop, list) and len(stop) <= MAX_STOP_STRINGS and all(isinstance(s, str) for s in stop):
            return tuple(stop)
        raise ValueError(f"stop: must be a string, a list of up to {MAX_STOP_STRINGS} strings, or null; got {stop!r}")


def check_parameters(schema: Any, where: str) -> None:
    """ValueError unless `schema` is a JSON schema (valid under its metaschema) describing an object."""
    if not isinstance(schema, dict):
        raise ValueError(f"{where}: must be a JSON schema object, got {type(schema).__name__}")
    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as err:
        inside = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        raise ValueError(f"{where}{inside}: not a valid JSON schema: {err.message}") from None
    if schema.get("type", "object") != "object":
        raise ValueError(f"{where}.type: the arguments of a call are an object, got type {schema['type']!r}")


@dataclass(frozen=True)
class ChatJob:
    """What one accepted request asks of the engine."""

    conversation: Conversation
    tools: list[ToolSchema] | None
    """The tools shown to the model (none when `tool_choice` is "none")."""
    temperature: float
    top_p: float
    stop: tuple[str, ...]
    seed: int | None
    max_tokens: int | None
    """The completion limit asked for; None: all the context leaves."""
    max_tokens_param: str
    """The field that asked for it, named in errors."""
    n: int = 1
    stream: bool = False
    include_usage: bool = False
    """With `stream`: a last chunk carries the usage (`stream_options.include_usage`)."""
    logprobs: bool = False
    answer_schema: dict[str, Any] | None = None
    """The JSON schema the answer must satisfy (`response_format`); None for free text."""
    forced_tools: list[ToolSchema] | None = None
    """The tools one of which must be called (`tool_choice` "required" or a named function); None: the model decides."""
    grammar: str | None = None
    """A grammar given as is (`structured_outputs.grammar`)."""

    def params(self, max_new_tokens: int, grammar: str | None) -> list[SamplingParams]:
        """The sampling parameters of each choice: choice i samples with seed + i (unseeded: fresh randomness)."""
        return [
            SamplingParams(
                temperature=self.temperature, top_p=self.top_p, max_new_tokens=max_new_tokens, stop=self.stop,
                seed=None if self.seed is None else self.seed + i, grammar=grammar,
            )
            for i in range(self.n)
        ]


def field_path(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as a field path: ('messages', 0, 'content') -> 'messages[0].content'."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def validation_error(err: ValidationError) -> APIError:
    """One 400 listing every problem pydantic found, naming the first field at fault."""
    problems = err.errors(include_url=False)
    first = problems[0]
    if first["type"] == "json_invalid":
        return bad_request(None, f"the body is not valid JSON: {first['ctx']['error']}")
    if first["type"] == "model_type":
        return bad_request(None, f"the body must be a JSON object, got {type(first['input']).__name__}")
    lines = []
    for problem in problems:
        path = field_path(problem["loc"])
        if problem["type"] == "extra_forbidden":
            lines.append(f"Unrecognized request argument supplied: {path}")
        elif problem["type"] == "value_error":  # our validators name the exact field themselves
            lines.append(problem["msg"].removeprefix("Value error, "))
        else:
            lines.append(f"{path}: {problem['msg']}")
    below_min = first["type"] == "greater_than_equal" and isinstance(first["input"], int)
    code = "integer_below_min_value" if below_min else None
    return bad_request(field_path(first["loc"]), "; ".join(lines), code)


def refuse_unhonourable(request: ChatCompletionRequest) -> None:
    """A 400 for each parameter set to something this server cannot do, instead of ignoring it."""
    if request.stream_options is not None:
        if not request.stream:
            raise bad_request("stream_options", "stream_options: only allowed with stream=true")
        unknown = sorted(set(request.stream_options) - STREAM_OPTIONS)
        if unknown:
            raise unsupported("stream_options", f"only {sorted(STREAM_OPTIONS)} is supported, got {unknown}")
    if request.top_logprobs and not request.logprobs:
        raise bad_request("top_logprobs", "top_logprobs: only allowed with logprobs=true")
    if request.top_logprobs:
        raise unsupported(
            "top_logprobs", "the engine reports the log-probability of the sampled token only; send 0 or leave it out",
        )
    if request.parallel_tool_calls is False:
        raise unsupported("parallel_tool_calls", "the model may answer with several calls; false cannot be enforced")
    for name in ("frequency_penalty", "presence_penalty"):
        if getattr(request, name):
            raise unsupported(name, "penalties are not supported; send 0 or leave it out")
    if request.logit_bias:
        raise unsupported("logit_bias", "not supported; send {} or leave it out")


def answer_schema(response_format: dict[str, Any] | None) -> dict[str, Any] | None:
    """The JSON schema `response_format` asks the answer to satisfy: None for text, an object for json_object."""
    kind = None if response_format is None else response_format.get("type")
    if kind in (None, "text"):
        return None
    if kind == "json_object":
        return {"type": "object"}
    if kind != "json_schema":
        raise bad_request(
            "response_format", f"response_format.type: must be 'text', 'json_object' or 'json_schema', got {kind!r}",
        )
    spec = response_format.get("json_schema") if response_format else None
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not spec["name"]:
        raise bad_request("response_format", "response_format.json_schema.name: required, a non-empty string")
    schema = spec.get("schema")
    if schema is None:
        return {"type": "object"}
    if not isinstance(schema, dict):
        raise bad_request("response_format", "response_format.json_schema.schema: must be a JSON schema (an object)")
    return schema


def forced_tools(tool_choice: str | dict[str, Any] | None, tools: list[ToolSchema] | None) -> list[ToolSchema] | None:
    """The tools one of which `tool_choice` forces the model to call: all for "required", the named one; None for auto/none."""
    if tool_choice is None or tool_choice in ("auto", "none"):
        return None
    if tool_choice == "required":
        if not tools:
            raise bad_request("tool_choice", "tool_choice: 'required' needs tools")
        return tools
    function = tool_choice.get("function") if isinstance(tool_choice, dict) else None
    if not isinstance(tool_choice, dict) or tool_choice.get("type") != "function" or not isinstance(function, dict) \
            or not isinstance(function.get("name"), str):
        raise bad_request(
            "tool_choice",
            f"tool_choice: must be one of {sorted(TOOL_CHOICES)} or {{'type': 'function', 'function': {{'name': ...}}}}, "
            f"got {tool_choice!r}",
        )
    named = [tool for tool in tools or [] if tool["function"]["name"] == function["name"]]
    if not named:
        raise bad_request("tool_choice", f"tool_choice: names {function['name']!r}, which is not among the tools")
    return named


def given_grammar(structured_outputs: dict[str, Any] | None) -> str | None:
    """The grammar of vLLM's `structured_outputs` extension (only its `grammar` form is supported)."""
    if structured_outputs is None:
        return None
    unknown = sorted(set(structured_outputs) - {"grammar"})
    if unknown:
        raise unsupported("structured_outputs", f"only 'grammar' (llguidance's Lark dialect) is supported, got {unknown}")
    grammar = structured_outputs.get("grammar")
    if not isinstance(grammar, str) or not grammar.strip():
        raise bad_request("structured_outputs", "structured_outputs.grammar: must be a non-empty string")
    return grammar


def completion_limit(request: ChatCompletionRequest) -> tuple[int | None, str]:
    """The completion limit asked for and the field that asked (both fields must agree when both are given)."""
    both = request.max_tokens is not None and request.max_completion_tokens is not None
    if both and request.max_tokens != request.max_completion_tokens:
        raise bad_request(
            "max_tokens",
            f"max_tokens ({request.max_tokens}) and max_completion_tokens ({request.max_completion_tokens}) disagree; "
            "send one",
        )
    if request.max_completion_tokens is not None:
        return request.max_completion_tokens, "max_completion_tokens"
    return request.max_tokens, "max_tokens"


def read_request(raw: bytes, served_model: str) -> ChatJob:
    """The job a chat-completions body asks for, or the APIError that refuses it."""
    if not raw.strip():
        raise bad_request(None, "the body is empty; send a JSON object")
    try:
        request = ChatCompletionRequest.model_validate_json(raw)
    except ValidationError as err:
        raise validation_error(err) from None
    if request.model != served_model:
        raise APIError(
            404, f"The model `{request.model}` does not exist; this server has `{served_model}`",
            param="model", code="model_not_found",
        )
    refuse_unhonourable(request)
    if request.seed is not None and request.seed + (request.n or 1) > DISTINCT_SEEDS:
        raise bad_request("seed", f"seed: choice i samples with seed + i, so with n={request.n} the seed may be at most "
                          f"{DISTINCT_SEEDS - request.n}, got {request.seed}")
    max_tokens, param = completion_limit(request)
    tools = None if request.tool_choice == "none" else request.tools
    forced = forced_tools(request.tool_choice, request.tools)
    schema = answer_schema(request.response_format)
    grammar = given_grammar(request.structured_outputs)
    if grammar is not None and (forced or schema is not None):
        raise bad_request(
            "structured_outputs", "structured_outputs.grammar: cannot be combined with response_format or a forced tool_choice",
        )
    greedy = request.top_p == 0
    return ChatJob(
        conversation=request.messages,
        tools=tools,
        temperature=0.0 if greedy else (1.0 if request.temperature is None else request.temperature),
        top_p=1.0 if greedy or request.top_p is None else request.top_p,
        stop=request.stop,
        seed=request.seed,
        max_tokens=max_tokens,
        max_tokens_param=param,
        n=request.n or 1,
        stream=bool(request.stream),
        include_usage=bool((request.stream_options or {}).get("include_usage")),
        logprobs=bool(request.logprobs),
        answer_schema=schema,
        forced_tools=forced,
        grammar=grammar,
    )
