"""BM25 retrieval and the diversified merge: deterministic, only matching entries, de-duplicated."""

from __future__ import annotations

from finagent.retrieval import BM25Retriever, diversified

DOCS = ["ALFA wins major payments contract", "BRVO announces buyback", "ALFA raises guidance on battery sales",
        "Regulator fines ALFA over payments outage", "the a of"]


def test_bm25_ranks_entries_sharing_words_with_the_query_and_nothing_else():
    ranked = BM25Retriever().rank("payments contract", DOCS, 5)
    assert ranked[0] == 0 and set(ranked) == {0, 3}
    assert BM25Retriever().rank("zebra", DOCS, 5) == []
    assert BM25Retriever().rank("payments", [], 5) == [] == BM25Retriever().rank("payments", ["the a"], 5)


def test_ties_keep_the_memory_order():
    same = ["ALFA news", "ALFA news", "ALFA news"]
    assert BM25Retriever().rank("ALFA", same, 3) == [0, 1, 2]


def test_diversified_retrieval_takes_top_k_new_entries_per_query_in_query_order():
    chosen = diversified(BM25Retriever(), ["payments", "payments outage", "battery"], DOCS, top_k=1)
    assert chosen == [0, 3, 2]
    assert len(set(diversified(BM25Retriever(), ["ALFA"] * 3, DOCS, top_k=2))) == 3
