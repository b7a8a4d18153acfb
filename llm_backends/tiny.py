"""A tiny random Qwen2 model with a locally trained tokenizer, built in about a second for tests.

The tokenizer is a byte-level BPE trained with the `tokenizers` library on a small embedded
corpus (no hub access); it has the ChatML special tokens and `<tool_call>`/`</tool_call>` as
single tokens, like Qwen2.5, and carries the Qwen2.5 chat template, so prompts with tools
render exactly as for a real Qwen2.5 model and tool calls go through the same parser. The
weights are random but deterministic (seeded); their text is varied gibberish that now and
then contains a stray `<tool_call>` token, so callers meet parse failures as well. Built models are cached on disk under
`<cache_root>/models/tiny-<hash of the settings>`.

`vocabulary` selects the tokenizer's training text: `embedded` (the default, the small corpus
below: at 512 tokens almost only bytes, ~1.4 characters per token) or `market` (a subword
vocabulary of e.g. 2,048 tokens trained at build time on the protocol's own text and the
synthetic market's tool results, `single_agent.tokenizer_corpus`, with every protocol tag a
single added token). The market corpus's SHA-256, the vocabulary size and `MARKET_FORMAT_VERSION`
are part of the cache key, so a change in any prompt, schema or rendering builds a new model.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

from core.errors import ConfigError
from llm_backends.budget import use_torch_threads
from llm_backends.chat_template import qwen25_template
from llm_backends.engine import ChatEngine
from llm_backends.paths import build_folder, cache_root
from llm_backends.transformers_engine import transformers_engine

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TOOL_TOKENS = ["<tool_call>", "</tool_call>"]
PROTOCOL_TOKENS = ["<think>", "</think>", "<answer>", "</answer>", "<tool_response>", "</tool_response>"]
"""Added tokens of the `market` vocabulary besides `TOOL_TOKENS` (the single agent's tags, `single_agent.tags`)."""
VOCABULARIES = ("embedded", "market")
FORMAT_VERSION = 1
MARKET_FORMAT_VERSION = 1
"""Version of how the `market` vocabulary is trained from its corpus (bump when that changes)."""

CORPUS = """\
You are a trading analyst. Call tools to read prices, indicators, news and fundamentals, then
answer BUY, SELL or HOLD. The market closed higher today; volume rose and momentum improved.
Revenue grew while margins narrowed; the company raised guidance for the next quarter.
<tool_call>
{"name": "get_market_data", "arguments": {"ticker": "NVDA", "start_date": "2024-01-02", "end_date": "2024-03-28"}}
</tool_call>
<tool_response>
{"date": "2024-03-28", "open": 902.5, "high": 913.0, "low": 891.2, "close": 903.6, "volume": 43521000}
</tool_response>
<think>The trend is up and RSI is below 70, so momentum is intact.</think> <answer>BUY</answer>
# Tools
You may call one or more functions to assist with the user query.
You are provided with function signatures within <tools></tools> XML tags:
{"type": "function", "function": {"name": "get_stock_indicators", "description": "Technical
indicators such as SMA, EMA, RSI, MACD and Bollinger bands", "parameters": {"type": "object",
"properties": {"ticker": {"type": "string"}, "indicator": {"type": "string"}}, "required": ["ticker"]}}}
For each function call, return a json object with function name and arguments within XML tags.
system user assistant tool 0123456789 The quick brown fox jumps over the lazy dog.
"""


@dataclass(frozen=True)
class TinySpec:
    """Everything that determines the tiny model; its hash names the cache folder."""

    vocab_size: int = 512
    hidden_size: int = 64
    intermediate_size: int = 128
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    max_position_embeddings: int = 4096
    initializer_range: float = 0.2
    """Std of the random weights: 0.2 gives varied, prompt-dependent text (0.02 repeats one token)."""
    seed: int = 0
    vocabulary: str = "embedded"
    """The tokenizer's training text: `embedded` or `market` (see the module docstring)."""

    def __post_init__(self) -> None:
        if self.vocabulary not in VOCABULARIES:
            raise ConfigError(f"tiny model: vocabulary {self.vocabulary!r} is not one of {', '.join(VOCABULARIES)}")

    def digest(self) -> str:
        """First 12 hex digits of SHA-256 over the settings, corpus, template and format version
        (for `embedded`, exactly as before the vocabulary setting existed)."""
        if self.vocabulary == "embedded":
            settings = {k: v for k, v in asdict(self).items() if k != "vocabulary"}
            payload = json.dumps([settings, CORPUS, qwen25_template(), FORMAT_VERSION], sort_keys=True)
        else:
            from single_agent.tokenizer_corpus import corpus_digest

            payload = json.dumps([asdict(self), corpus_digest(corpus_texts(self.vocabulary)), qwen25_template(),
                                  FORMAT_VERSION, MARKET_FORMAT_VERSION], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:12]


def corpus_texts(vocabulary: str) -> tuple[str, ...]:
    """The texts the tokenizer of `vocabulary` is trained on."""
    if vocabulary == "embedded":
        return (CORPUS,)
    from single_agent.tokenizer_corpus import market_corpus  # the protocol and market sit above this package

    return market_corpus()


def train_tokenizer(vocab_size: int, vocabulary: str = "embedded") -> PreTrainedTokenizerFast:
    """Byte-level BPE on the texts of `vocabulary`, with ChatML and tool-call tokens (and for
    `market` every protocol tag) as single tokens, and the Qwen2.5 template. For `market` the
    text is split only at line ends before the byte-level BPE (GPT-2's split at spaces and
    punctuation is off), so a token may span words, JSON punctuation and table cells: the
    protocol's fixed lines become a few tokens each. The added tokens are cut out of the
    training text first, so no merges are spent on their spelling."""
    added = TOOL_TOKENS if vocabulary == "embedded" else TOOL_TOKENS + PROTOCOL_TOKENS
    texts = corpus_texts(vocabulary)
    if vocabulary != "embedded":
        texts = tuple(_without(text, added + SPECIAL_TOKENS) for text in texts)
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    if vocabulary != "embedded":  # merges may cross spaces and punctuation, not lines: schema and table lines fuse
        backend.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split("\n", "merged_with_previous"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(list(texts), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token=None
    )
    tokenizer.add_tokens(added)
    tokenizer.chat_template = qwen25_template()
    return tokenizer


def _without(text: str, tokens: list[str]) -> str:
    """`text` with every occurrence of `tokens` replaced by a newline."""
    for token in tokens:
        text = text.replace(token, "\n")
    return text


def build_tiny(spec: TinySpec, dest: Path) -> None:
    """Train the tokenizer, initialise the seeded random model and save both into folder `dest`."""
    tokenizer = train_tokenizer(spec.vocab_size, spec.vocabulary)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_hidden_layers,
        num_attention_heads=spec.num_attention_heads,
        num_key_value_heads=spec.num_key_value_heads,
        max_position_embeddings=spec.max_position_embeddings,
        initializer_range=spec.initializer_range,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(spec.seed)
    model = Qwen2ForCausalLM(config)
    model.save_pretrained(dest)
    tokenizer.save_pretrained(dest)


def ensure_tiny(spec: TinySpec) -> Path:
    """The cached folder of the tiny model for `spec`, building it first if needed."""
    dest = cache_root() / "models" / f"tiny-{spec.digest()}"
    if not (dest / "model.safetensors").exists():
        build_folder(dest, lambda folder: build_tiny(spec, folder))
    return dest


def tiny_engine(
    vocab_size: int = 512,
    hidden_size: int = 64,
    intermediate_size: int = 128,
    num_hidden_layers: int = 2,
    num_attention_heads: int = 4,
    num_key_value_heads: int = 2,
    initializer_range: float = 0.2,
    seed: int = 0,
    vocabulary: str = "embedded",
    device: str = "cpu",
    memory_mb: float = 683,
    torch_threads: int | None = 1,
    max_batch_size: int = 256,
    max_batch_tokens: int | None = None,
    kv_cache_mb: float | None = None,
    cache: bool = False,
    cache_path: str | None = None,
    batch_wait_ms: float = 0.0,
) -> ChatEngine:
    """Hydra factory: the tiny random Qwen2 engine (built and cached on first use); the budget
    arguments are `transformers_engine`'s."""
    use_torch_threads(torch_threads)
    spec = TinySpec(
        vocab_size=vocab_size, hidden_size=hidden_size, intermediate_size=intermediate_size,
        num_hidden_layers=num_hidden_layers, num_attention_heads=num_attention_heads,
        num_key_value_heads=num_key_value_heads, initializer_range=initializer_range, seed=seed,
        vocabulary=vocabulary,
    )
    return transformers_engine(
        str(ensure_tiny(spec)), f"tiny-qwen2-{spec.digest()}", device=device, dtype="float32", memory_mb=memory_mb,
        torch_threads=torch_threads, max_batch_size=max_batch_size, max_batch_tokens=max_batch_tokens,
        kv_cache_mb=kv_cache_mb, cache=cache, cache_path=cache_path, batch_wait_ms=batch_wait_ms,
    )
