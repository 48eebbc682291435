"""Relevance: how well each closed turn matches the directive, by BM25 over its card (spec §10).

A turn is found by its card's index text: what was asked, the titles and digests of its cards,
the narration, the tools it ran and their arguments. The text is tokenised once, when the card
is written ("BM25 at write time"), into `TurnCard.terms`/`term_counts`; a request only counts
the directive's words against those stored terms, so discovery is a lookup, not a re-read of
every turn. (A card written before the terms were stored is tokenised on the fly.)

The scoring is Okapi BM25 exactly as `rank_bm25.BM25Okapi` computes it (k1 = 1.5, b = 0.75, a
term in more than half the cards floored to ε = 0.25 × the mean idf), in the same float order,
so the scores are bit-for-bit the library's; it reads only the query's terms per card where the
library rebuilt a frequency table of the whole corpus on every request.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence

from vak_desktop.context.payloads import TurnCard
from vak_desktop.context.planning.lexicon import has_cjk, split_words
from vak_desktop.context.planning.reading import terms_of

K1, B, EPSILON = 1.5, 0.75, 0.25  # rank_bm25's BM25Okapi defaults
_WORD = re.compile(r"\w+", re.UNICODE)
Terms = tuple[tuple[str, ...], tuple[int, ...]]  # distinct terms, first seen first; counts
_EMPTY: Terms = (("∅",), (1,))  # a card with no words still counts as a one-word document


def words(text: str) -> list[str]:
    """Lower-cased words; a run of Chinese or Japanese characters (which has no spaces) as its
    character bigrams, so "铜价是多少" and "现在铜价" share the term "铜价"."""
    out: list[str] = []
    for word in _WORD.findall(text):
        lowered = word.lower()
        if not has_cjk(lowered):
            out.append(lowered)
            continue
        for piece in split_words(lowered):
            if not has_cjk(piece) or len(piece) == 1:
                out.append(piece)
            else:
                out.extend(piece[i : i + 2] for i in range(len(piece) - 1))
    return out


def index_text(card: TurnCard) -> str:
    """What a turn is found by: asked, card titles and digests, narration, tools and arguments."""
    parts = [card.asked, card.answered.narration]
    parts += [f"{p.title} {p.digest}" for p in card.answered.presentations]
    parts += [f"{t.tool} {t.args_digest}" for t in card.did]
    return " ".join(parts)


def index_terms(card: TurnCard) -> Terms:
    """The card's index terms in first-appearance order and how often each occurs: the words
    of its index text, then its reading's terms (`domain:live`, `card:metric`)."""
    counts = Counter([*words(index_text(card)), *terms_of(card.reading)])
    return tuple(counts), tuple(counts.values())


def card_terms(card: TurnCard) -> Terms:
    """The card as a BM25 document: its stored terms, or its index text tokenised now."""
    if card.terms:
        return card.terms, card.term_counts
    terms = index_terms(card)
    return terms if terms[0] else _EMPTY


def bm25_scores(
    query: Sequence[str], documents: Sequence[Terms], *, always_positive: bool = False
) -> list[float]:
    """Okapi BM25 of each document (its distinct terms and their counts) for `query`.

    `always_positive` takes Lucene's idf, log(1 + (N − n + 0.5) / (n + 0.5)), for search: with
    Okapi's, a word held by exactly half of a small corpus weighs nothing and is never found."""
    size = len(documents)
    lengths = [sum(counts) for _, counts in documents]
    # documents holding each term, counted in first-seen order (the library's float order)
    frequency = Counter(itertools.chain.from_iterable(terms for terms, _ in documents))
    average_length = sum(lengths) / size
    idf: dict[str, float] = {}
    idf_sum = 0.0
    negative = []
    for term, holders in frequency.items():
        if always_positive:
            value = math.log(1 + (size - holders + 0.5) / (holders + 0.5))
        else:
            value = math.log(size - holders + 0.5) - math.log(holders + 0.5)
        idf[term] = value
        idf_sum += value
        if value < 0:
            negative.append(term)
    floor = EPSILON * (idf_sum / len(idf))
    for term in negative:
        idf[term] = floor
    wanted = set(query)
    matches = [  # only the documents holding a query term are read term by term
        (position, dict(zip(terms, counts, strict=True)))
        for position, (terms, counts) in enumerate(documents)
        if not wanted.isdisjoint(terms)
    ]
    scores = [0.0] * size
    for term in query:
        weight = idf.get(term) or 0
        if not weight:
            continue
        for position, document in matches:
            count = document.get(term)
            if count:
                norm = K1 * (1 - B + B * lengths[position] / average_length)
                scores[position] += weight * (count * (K1 + 1) / (count + norm))
    return scores


def relevance(
    directive: str, cards: Sequence[TurnCard], reading_terms: Sequence[str] = ()
) -> list[float]:
    """BM25 of each card against the directive and its reading's terms (spec §4: "BM25(directive
    + reading terms)"), scaled so the best match is 1.0."""
    query = [*words(directive), *reading_terms]
    if not query or not cards:
        return [0.0] * len(cards)
    scores = bm25_scores(query, [card_terms(c) for c in cards])
    best = max(scores)
    return [max(0.0, s / best) if best > 0 else 0.0 for s in scores]
