"""What each earlier turn costs and is worth to the directive: the planner's fixed inputs.

    value(turn) = max(recency, relevance, anaphora)
        recency   = 1 / (1 + age in closed turns)            newest closed turn = 1.0
        relevance = BM25(directive + reading terms) / best score   best match = 1.0
        anaphora  = 1.0 for the preceding turn when the directive refers back

`candidates` prices every turn at its two fidelities and ranks it once per request; the
planner (`planner.py`) then tries as many budgets as the tail's size needs against the same
`Candidates`. Directive drift (§7) lowers the recency of the subject the user left. A card is
priced as the request shows it: for the tools that request carries (`turn_cards.card_chars`).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import overload

from vak_desktop.context.capacity.profile import estimate_tokens
from vak_desktop.context.payloads import TurnCard
from vak_desktop.context.planning.card_index import CardIndex
from vak_desktop.context.planning.drift import PAUSED_RECENCY, paused_turns
from vak_desktop.context.planning.lexicon import Lexicons
from vak_desktop.context.planning.reading import Reading, reading_for
from vak_desktop.context.planning.relevance import relevance
from vak_desktop.context.planning.turn_cards import (
    absent_tools,
    card_chars,
    card_of,
    card_tokens,
    full_tokens,
)
from vak_desktop.context.planning.turns import Turn


def refers_back(directive: str | Reading, lexicons: Lexicons) -> bool:
    """The directive points at the exchange just before it ("do that again", "noch einmal"):
    deictic words, not topical, so they carry no subject of their own (`conversation.anaphora`
    of the lexicons it is written in)."""
    read = reading_for(directive, lexicons)
    return read.derived(
        "refers_back", lambda: any(lex.anaphora.hit(read.seen) for lex in read.read_in)
    )


def recalls_earlier(directive: str | Reading, lexicons: Lexicons) -> bool:
    """The directive points back at an earlier turn without naming it ("the code I gave you
    earlier", "vorhin", "之前"): its best match of the card index then travels at card fidelity
    or better, whatever else the budget packets (`conversation.recall`)."""
    read = reading_for(directive, lexicons)
    return read.derived(
        "recalls_earlier", lambda: any(lex.recall.hit(read.seen) for lex in read.read_in)
    )


@dataclass(frozen=True)
class Candidates:
    """The turns a request may carry, with what each costs at the bound model's tokens/char and
    what it is worth to the directive: everything the plan needs that the budget does not
    change, so `plan_request` computes it once however many budgets it tries."""

    live: tuple[Turn, ...]  # the turns before the current one, not behind a reset
    cards: tuple[TurnCard, ...]
    full_cost: tuple[int, ...]
    card_cost: tuple[int, ...]
    values: tuple[float, ...]
    by_value: tuple[int, ...]  # positions in `live`, most valuable first (newest first on ties)
    # each turn's line in a detailed packet (by turn id), rendered the first time it is needed
    listing: dict[str, str] = field(default_factory=dict)
    paused: tuple[str, ...] = ()  # turn ids of the subject the directive moved away from
    by_relevance: tuple[int, ...] = ()  # positions matching the directive, best first
    pinned: int | None = None  # the best match of a directive that refers back to it
    # the cheapest full record from each rank of `by_value` on, and each position's rank: once
    # the budget left is below it (and no card is further down) no later turn can be promoted
    cheapest_after: tuple[int, ...] = ()
    rank: tuple[int, ...] = ()
    stop_words: frozenset[str] = frozenset()  # the lexicons' (every language's), for topics
    ids: tuple[str, ...] = ()  # each live turn's id and index, the columns of its PlannedTurn
    indexes: tuple[int, ...] = ()
    # the tool names the request carries (None: any), which its cards are priced and shown for
    present: frozenset[str] | None = None


def candidates(
    history: Sequence[Turn],
    ratio: float,
    directive: str | Reading,
    lexicons: Lexicons,
    reading_terms: Sequence[str] = (),
    *,
    indexed: CardIndex | None = None,
    present: Collection[str] | None = None,
) -> Candidates:
    """Price and value every turn of `history` (the turns before the current one);
    `reading_terms` are the directive's reading's terms (`Reading.terms`, spec §4). `indexed` is
    the card index of exactly `history`'s live turns, when the caller keeps one. `directive`
    is read once (`reading_for`): every cue test below takes that one reading. `present`: the
    tools the request carries (None: any); a card that tells a past call of another tool in
    words is priced as told."""
    tools = frozenset(present) if present is not None else None
    read = reading_for(directive, lexicons)
    directive = read.text
    if indexed is None:
        live = tuple(t for t in history if not t.behind_reset)
        cards = tuple(card_of(t, ratio) for t in live)
        rel = relevance(directive, cards, reading_terms)
        listing: dict[str, str] = {}
    else:
        live, cards, listing = indexed.turns, indexed.cards, indexed.listing
        rel = relevance(directive, cards, reading_terms, indexed.corpus)
    back = refers_back(read, lexicons)
    # directive drift (§7): the turns of the subject the user left are paused — their recency
    # weighs less, so the new subject's turns rank first; nothing is cut
    paused = paused_turns(read, _Asked(cards), back, lexicons)
    size = len(live)
    recency = [1.0 / (1 + age) for age in range(size - 1, -1, -1)]
    for position in paused:
        recency[position] *= PAUSED_RECENCY
    # the larger of the two, compared here: the `max` builtin per turn costs four times as much
    values = [
        matched if matched > recent else recent
        for recent, matched in zip(recency, rel, strict=True)
    ]
    if back and size:  # anaphora: the preceding turn when the directive refers back
        values[-1] = max(values[-1], 1.0)
    # most valuable first, newest first on ties: a stable sort of the newest-first positions
    by_value = sorted(range(size - 1, -1, -1), key=values.__getitem__, reverse=True)
    matching = sorted(
        [p for p in range(size - 1, -1, -1) if rel[p] > 0], key=rel.__getitem__, reverse=True
    )
    if indexed is None:
        full_cost = tuple(map(full_tokens, cards, itertools.repeat(ratio)))
        card_cost = tuple(  # as stored, unless a past call is told in words for these tools
            estimate_tokens(card_chars(card, turn.number, tools), ratio)
            if absent_tools(card, tools)
            else card_tokens(card, ratio)
            for turn, card in zip(live, cards, strict=True)
        )
    else:
        full_cost, card_cost = indexed.costs(ratio, tools)
    ordered = [full_cost[p] for p in by_value]
    return Candidates(
        live=live,
        cards=cards,
        full_cost=full_cost,
        card_cost=card_cost,
        values=tuple(values),
        by_value=tuple(by_value),
        cheapest_after=_cheapest_after(ordered),
        rank=tuple(_inverse(by_value)),
        listing=listing,
        paused=tuple(live[p].turn_id for p in paused),
        by_relevance=tuple(matching),
        pinned=matching[0] if matching and recalls_earlier(read, lexicons) else None,
        stop_words=lexicons.subjectless(),
        ids=tuple(t.turn_id for t in live) if indexed is None else indexed.ids,
        indexes=tuple(t.index for t in live) if indexed is None else indexed.indexes,
        present=tools,
    )


def _cheapest_after(costs: Sequence[int]) -> tuple[int, ...]:
    """The least of `costs` from each position on (a loop: `accumulate` with the `min` builtin
    is a call per turn, five times the cost)."""
    cheapest = []
    low = costs[-1] if costs else 0
    for cost in reversed(costs):
        if cost < low:
            low = cost
        cheapest.append(low)
    cheapest.reverse()
    return tuple(cheapest)


def _inverse(order: Sequence[int]) -> list[int]:
    """Each position's rank in `order` (a permutation of the positions)."""
    rank = [0] * len(order)
    for at, position in enumerate(order):
        rank[position] = at
    return rank


class _Asked(Sequence[str]):
    """What each card asked, read where the drift check looks (the latest few), not copied out
    of every card of the session."""

    def __init__(self, cards: Sequence[TurnCard]) -> None:
        self._cards = cards

    def __len__(self) -> int:
        return len(self._cards)

    @overload
    def __getitem__(self, position: int) -> str: ...

    @overload
    def __getitem__(self, position: slice) -> Sequence[str]: ...

    def __getitem__(self, position: int | slice) -> str | Sequence[str]:
        if isinstance(position, slice):
            return [c.asked for c in self._cards[position]]
        return self._cards[position].asked
