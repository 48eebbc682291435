"""Relevance: BM25 over the terms a card stored when it was written, bit-for-bit the library's.

`relevance.bm25_scores` replaced `rank_bm25.BM25Okapi` on the request path (it rebuilt the
corpus on every request); the library stays as the oracle here.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from vak_desktop.context.payloads import (
    Answer,
    AssistantStep,
    Directive,
    EvidenceBody,
    Payload,
    ToolCall,
    ToolResult,
    TraceLine,
    TurnCard,
)
from vak_desktop.context.planning.relevance import (
    bm25_scores,
    index_terms,
    index_text,
    relevance,
    words,
)
from vak_desktop.context.planning.turn_cards import build_turn_card
from vak_desktop.context.planning.turns import Turn

VOCAB = ["copper", "price", "noida", "weather", "the", "a", "rust", "parser", "last", "week"]
documents = st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=12), min_size=1)
queries = st.lists(st.sampled_from([*VOCAB, "unseen"]), min_size=1, max_size=6)


@dataclass(frozen=True)
class Stub:
    """An entry as the engine reads it."""

    id: str
    payload: Payload


def as_terms(document: list[str]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    counts: dict[str, int] = {}
    for word in document:
        counts[word] = counts.get(word, 0) + 1
    return tuple(counts), tuple(counts.values())


@settings(max_examples=200, deadline=None)
@given(corpus=documents, query=queries)
def test_scores_are_the_librarys_bit_for_bit(corpus: list[list[str]], query: list[str]) -> None:
    expected = [float(s) for s in BM25Okapi(corpus).get_scores(query)]
    assert bm25_scores(query, [as_terms(d) for d in corpus]) == expected


@settings(max_examples=100, deadline=None)
@given(asked=st.lists(st.lists(st.sampled_from(VOCAB), max_size=8), min_size=1), query=queries)
def test_stored_terms_rank_as_the_index_text_does(asked: list[list[str]], query: list[str]) -> None:
    written = [TurnCard(turn_id=str(i), asked=" ".join(a)) for i, a in enumerate(asked)]
    stored = [
        TurnCard(card.turn_id, card.asked, terms=t, term_counts=c)
        for card in written
        for t, c in [index_terms(card)]
    ]
    directive = " ".join(query)
    corpus = [words(index_text(c)) or ["∅"] for c in written]
    scores = BM25Okapi(corpus).get_scores(words(directive))
    best = max(scores)
    expected = [max(0.0, float(s) / best) if best > 0 else 0.0 for s in scores]
    assert relevance(directive, written) == expected
    assert relevance(directive, stored) == expected


def test_a_card_stores_its_index_terms_and_its_results_digests() -> None:
    directive = Directive(text="What is the copper price in Noida?")
    call = ToolCall("c1", "search", {"query": "copper price noida"})
    entries = [
        Stub("s1", AssistantStep(tool_calls=(call,))),
        Stub("e1", EvidenceBody("c1", "search", "exit code: 0\nok", 15)),
        Stub("r1", ToolResult("c1", "search", "exit code: 0\nok", "e1", 15)),
        Stub("a1", AssistantStep(text="It is 9,000 a tonne.")),
    ]
    card = build_turn_card(Turn("d1", 0, directive, tuple(entries)), "completed", 0.25)
    assert dict(zip(card.terms, card.term_counts, strict=True)) == {
        "what": 1,
        "is": 2,
        "the": 1,
        "copper": 2,
        "price": 2,
        "in": 1,
        "noida": 2,
        "it": 1,
        "9": 1,
        "000": 1,
        "a": 1,
        "tonne": 1,
        "search": 1,
        "query": 1,
    }
    assert card.did == (
        TraceLine(
            "search",
            '{"query":"copper price noida"}',
            "e1",
            "command_output",
            "exit code: 0\noutput: 1 line\nok\n[evidence:e1 — 15 chars; call recall to expand]",
        ),
    )
    assert card.answered == Answer((), "It is 9,000 a tonne.")


def test_a_run_of_cjk_characters_is_indexed_by_its_bigrams() -> None:
    assert words("现在铜价是多少") == ["现在", "在铜", "铜价", "价是", "是多", "多少"]
    assert words("recallツール and Kupfer") == ["recall", "ツー", "ール", "and", "kupfer"]
    assert set(words("铜价")) <= set(words("现在铜价是多少"))  # a shared term across requests


def test_the_reading_terms_find_a_turn_in_another_language() -> None:
    """A German current-price request shares no word with an English turn that read as live
    data and a metric card; the reading's terms (spec §4) find it anyway."""
    from vak_desktop.context.planning.reading import read_directive
    from vak_desktop.runtime.lexicons import lexicons

    lex = lexicons()

    def card(turn_id: str, asked: str) -> TurnCard:
        written = TurnCard(turn_id, asked, reading=read_directive(asked, lex).to_json())
        terms, counts = index_terms(written)
        return TurnCard(turn_id, asked, reading=written.reading, terms=terms, term_counts=counts)

    cards = [
        card("1", "What is the current price of copper?"),
        card("2", "Refactor the parser module"),
        card("3", "Summarise this paragraph for me"),
    ]
    directive = "Wie hoch ist der Kupferpreis gerade?"
    assert relevance(directive, cards) == [0.0, 0.0, 0.0]  # no word in common
    reading = read_directive(directive, lex)
    assert reading.terms == ("domain:live", "card:metric")
    assert relevance(directive, cards, reading.terms) == [1.0, 0.0, 0.0]
