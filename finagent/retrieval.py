"""Diversified retrieval from an episode's memory: one query per horizon, top-k each, de-duplicated.

FinAgent asks its memory once per query it wrote (short-, medium- and long-term) and merges the
answers, so that one horizon cannot crowd out the others. `diversified` does that over any
`Retriever`: for each query in turn its `top_k` entries, skipping entries an earlier query
already returned; the merged list keeps that order.

Two retrievers:
- `BM25Retriever` (default): Okapi BM25 from the `bm25s` package over the entries' text,
  English stop words removed; score(q, d) = Σ_{w ∈ q} idf(w) · tf(w, d) (k1 + 1) /
  (tf(w, d) + k1 (1 − b + b |d| / avgdl)), k1 = 1.5, b = 0.75 (bm25s' defaults, Lucene's idf).
  Only entries sharing a word with the query score above 0, and only those are returned; ties
  keep the memory's order (oldest first), so retrieval is deterministic.
- `EmbeddingRetriever`: cosine similarity of embeddings from an OpenAI-compatible
  `/v1/embeddings` endpoint (`base_url`, `model`; a key from the environment variable named by
  `api_key_env`), each text embedded once per process.

The index is built afresh from the entries a decision may see (`finagent.memory`), so what is
retrievable at day t never depends on entries that resolve later.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Protocol

import bm25s
import httpx
import numpy as np

from core.errors import ConfigError

logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets its own logger to DEBUG on import: a line per index built


class Retriever(Protocol):
    """Ranks documents for a query: indices into `documents`, best first, at most `k`."""

    def rank(self, query: str, documents: Sequence[str], k: int) -> list[int]: ...


class BM25Retriever:
    """Okapi BM25 over the documents of one call (see the module docstring)."""

    def rank(self, query: str, documents: Sequence[str], k: int) -> list[int]:
        corpus = bm25s.tokenize(list(documents), stopwords="en", show_progress=False, return_ids=False)
        if k < 1 or not any(corpus):
            return []
        index = bm25s.BM25()
        index.index(bm25s.tokenize(list(documents), stopwords="en", show_progress=False), show_progress=False)
        words = [w for w in bm25s.tokenize([query], stopwords="en", show_progress=False, return_ids=False)[0]
                 if w in index.vocab_dict]
        if not words:
            return []
        scores = index.get_scores(words)
        ranked = sorted((i for i in range(len(documents)) if scores[i] > 0), key=lambda i: (-scores[i], i))
        return ranked[:k]


class EmbeddingRetriever:
    """Cosine similarity of embeddings from an OpenAI-compatible `/v1/embeddings` endpoint."""

    def __init__(self, base_url: str, model: str, api_key_env: str | None = None, timeout_s: float = 60.0):
        self.base_url, self.model = base_url.rstrip("/"), model
        key = os.environ.get(api_key_env, "") if api_key_env else ""
        if api_key_env and not key:
            raise ConfigError(f"retrieval.api_key_env: the environment variable {api_key_env} is not set")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(headers=headers, timeout=timeout_s)
        self._cache: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Unit-norm embeddings of `texts`; texts not seen before go to the endpoint in one request."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            url = f"{self.base_url}/embeddings"
            response = self._client.post(url, json={"model": self.model, "input": missing})
            if response.status_code != 200:
                raise RuntimeError(f"{url}: HTTP {response.status_code}: {response.text[:200]}")
            rows = sorted(response.json()["data"], key=lambda row: row["index"])
            for text, row in zip(missing, rows, strict=True):
                vector = np.asarray(row["embedding"], dtype=np.float64)
                self._cache[text] = vector / (np.linalg.norm(vector) or 1.0)
        return [self._cache[t] for t in texts]

    def rank(self, query: str, documents: Sequence[str], k: int) -> list[int]:
        if k < 1 or not documents:
            return []
        first, *rest = self.embed([query, *documents])
        scores = np.array([float(first @ d) for d in rest])
        return sorted(range(len(documents)), key=lambda i: (-scores[i], i))[:k]


def diversified(retriever: Retriever, queries: Sequence[str], documents: Sequence[str], top_k: int) -> list[int]:
    """Each query's `top_k` documents not returned for an earlier query, in query order (indices)."""
    chosen: list[int] = []
    for query in queries:
        fresh = [i for i in retriever.rank(query, documents, len(documents)) if i not in chosen]
        chosen += fresh[:top_k]
    return chosen
