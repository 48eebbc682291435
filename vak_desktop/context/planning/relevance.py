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

import bisect
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


class Corpus:
    """BM25 documents held for scoring, growing by appending: the holders of each term (in
    first-seen order, the library's float order), each term's postings, the lengths. A running
    session appends the card of each turn that closes instead of re-reading every card per
    request; a query reads only its own terms' postings. Mutable on purpose: the card index that
    appends owns it, and `size` tells a holder of an older view that it moved on."""

    def __init__(self, documents: Sequence[Terms] = ()) -> None:
        self.lengths: list[int] = []
        self.total = 0  # the sum of `lengths`, exact (ints)
        self.holders: dict[str, int] = {}  # documents holding each term, first seen first
        self.postings: dict[str, list[tuple[int, int]]] = {}  # term -> (position, count)
        self._floor: tuple[int, float] | None = None  # (size, ε-floor) of the last query
        for document in documents:
            self.append(document)

    @property
    def size(self) -> int:
        return len(self.lengths)

    def append(self, document: Terms, length: int | None = None) -> None:
        """Add `document`; `length` is its length for BM25 when not its terms' count (a
        passage's kind terms are not words of it)."""
        terms, counts = document
        position = len(self.lengths)
        self.lengths.append(sum(counts) if length is None else length)
        self.total += self.lengths[-1]
        holders, postings = self.holders, self.postings
        for term, count in zip(terms, counts, strict=True):
            holders[term] = holders.get(term, 0) + 1
            postings.setdefault(term, []).append((position, count))

    def count(self, term: str, position: int) -> int:
        """How often the document at `position` holds `term` (0: not at all), found by
        bisecting the term's postings (they are in position order): reading a few documents'
        counts of a common term costs a few steps each, not a re-read of those documents."""
        postings = self.postings.get(term, ())
        at = bisect.bisect_left(postings, (position,))
        if at < len(postings) and postings[at][0] == position:
            return postings[at][1]
        return 0

    def _okapi_floor(self) -> float:
        """ε × the mean Okapi idf over every term, summed in first-seen order as the library."""
        size = self.size
        if self._floor is None or self._floor[0] != size:
            idf_sum = 0.0
            for holders in self.holders.values():
                idf_sum += math.log(size - holders + 0.5) - math.log(holders + 0.5)
            self._floor = (size, EPSILON * (idf_sum / len(self.holders)))
        return self._floor[1]

    def scores(self, query: Sequence[str], *, always_positive: bool = False) -> dict[int, float]:
        """Okapi BM25 for `query` of each document holding one of its terms, by position (every
        other document scores 0.0). `always_positive` takes Lucene's idf, log(1 + (N − n + 0.5)
        / (n + 0.5)), for search: with Okapi's, a word held by exactly half of a small corpus
        weighs nothing and is never found."""
        size, lengths = self.size, self.lengths
        average_length = self.total / size if size else 0.0
        scores: dict[int, float] = {}
        for term in query:
            holders = self.holders.get(term)
            if not holders:
                continue
            if always_positive:
                weight = math.log(1 + (size - holders + 0.5) / (holders + 0.5))
            else:
                weight = math.log(size - holders + 0.5) - math.log(holders + 0.5)
                if weight < 0:
                    weight = self._okapi_floor()
            if not weight:
                continue
            for position, count in self.postings[term]:
                norm = K1 * (1 - B + B * lengths[position] / average_length)
                scores[position] = scores.get(position, 0.0) + weight * (
                    count * (K1 + 1) / (count + norm)
                )
        return scores


def bm25_scores(
    query: Sequence[str], documents: Sequence[Terms], *, always_positive: bool = False
) -> list[float]:
    """Okapi BM25 of each document (its distinct terms and their counts) for `query`."""
    scores = [0.0] * len(documents)
    for position, score in Corpus(documents).scores(query, always_positive=always_positive).items():
        scores[position] = score
    return scores


def relevance(
    directive: str,
    cards: Sequence[TurnCard],
    reading_terms: Sequence[str] = (),
    corpus: Corpus | None = None,
) -> list[float]:
    """BM25 of each card against the directive and its reading's terms (spec §4: "BM25(directive
    + reading terms)"), scaled so the best match is 1.0. `corpus` holds the cards' documents
    already (the card index's), else they are read from the cards."""
    query = [*words(directive), *reading_terms]
    if not query or not cards:
        return [0.0] * len(cards)
    if corpus is None or corpus.size != len(cards):
        corpus = Corpus([card_terms(c) for c in cards])
    scores = corpus.scores(query)
    best = max(scores.values(), default=0.0)
    if len(scores) < len(cards):
        best = max(best, 0.0)  # the documents holding no query term score 0.0
    relevant = [0.0] * len(cards)
    if best > 0:
        for position, score in scores.items():
            scaled = score / best
            relevant[position] = scaled if scaled > 0.0 else 0.0  # max(0.0, …) without a call
    return relevant
