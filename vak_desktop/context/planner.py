"""The WorkingSetPlanner: which closed turns a request carries whole, as cards, or in a packet.

    budget = horizon − prefix_tokens − tail_tokens − output_reserve − current_turn_reserve
    value(turn) = max(recency, relevance, anaphora)
        recency   = 1 / (1 + age in closed turns)            newest closed turn = 1.0
        relevance = BM25(directive) / best score                best match = 1.0
        anaphora  = 1.0 for the preceding turn when the directive refers back

Turns go Full in descending value while they fit (a turn that does not fit is skipped for a
cheaper one further down), then cards newest → oldest while they fit; the overflow collapses
into one packet over the oldest turns, its boundary moved in batches of PACKET_BATCH_TURNS so it
holds steady across turns. Every cost check is turn-whole: a turn is never split. A stored packet
is used only when its range is exactly the plan's; otherwise those turns come from the ledger.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from rank_bm25 import BM25Okapi

from vak_desktop.context.capacity import estimate_tokens, tokens_per_char, usable_horizon
from vak_desktop.context.cards import card_of
from vak_desktop.context.packets import render_packet
from vak_desktop.context.payloads import CapacityProfile, TurnCard
from vak_desktop.context.turns import StoredPacket, Turn, TurnIndex

PACKET_BATCH_TURNS = 8
MIN_SUMMARY_TOKENS, MAX_SUMMARY_TOKENS = 64, 512  # the summariser's length, scaled to the budget
_WORD = re.compile(r"\w+", re.UNICODE)
# Words by which a directive points back at the previous exchange ("do that again", "the second
# one", "why did it fail?"). Deictic, not topical: they carry no subject of their own.
_ANAPHORA = re.compile(
    r"\b(that|this|these|those|it|its|them|they|again|above|previous|earlier|same|"
    r"the (first|second|third|last|other) one|you (said|wrote|found|mentioned))\b",
    re.IGNORECASE,
)


class Fidelity(StrEnum):
    FULL = "full"
    CARD = "card"
    PACKET = "packet"
    BEHIND_RESET = "behind_reset"


@dataclass(frozen=True)
class Budget:
    horizon: int
    prefix_tokens: int
    tail_tokens: int
    output_reserve: int
    current_turn_reserve: int

    @property
    def available(self) -> int:
        spent = self.prefix_tokens + self.tail_tokens + self.output_reserve
        return max(0, self.horizon - spent - self.current_turn_reserve)


@dataclass(frozen=True)
class PlannedTurn:
    turn_id: str
    index: int
    fidelity: Fidelity
    tokens: int  # what this turn costs at its fidelity (0 inside the packet)
    value: float


@dataclass(frozen=True)
class Plan:
    """The planner's decision for one request."""

    budget: Budget
    turns: tuple[PlannedTurn, ...]  # every turn before the current one, in order
    packet_range: tuple[str, str] | None  # (first, last) turn id the packet covers
    packet: StoredPacket | None  # the stored packet for exactly that range, if one exists
    packet_tokens: int
    packet_detailed: bool  # the packet lists every covered turn (else it names the range)
    summary_tokens: int  # the length to ask the summariser for, when the packet needs one
    history_tokens: int  # Full + cards + packet

    def fidelity_of(self, turn_id: str) -> Fidelity | None:
        return next((t.fidelity for t in self.turns if t.turn_id == turn_id), None)

    def to_json(self) -> dict[str, Any]:
        budget = self.budget
        return {
            "budget": {
                "horizon": budget.horizon,
                "prefix_tokens": budget.prefix_tokens,
                "tail_tokens": budget.tail_tokens,
                "output_reserve": budget.output_reserve,
                "current_turn_reserve": budget.current_turn_reserve,
                "available": budget.available,
            },
            "turns": [
                {
                    "turn_id": t.turn_id,
                    "index": t.index,
                    "fidelity": t.fidelity.value,
                    "tokens": t.tokens,
                    "value": round(t.value, 4),
                }
                for t in self.turns
            ],
            "packet_range": list(self.packet_range) if self.packet_range else None,
            "packet": self.packet.entry_id if self.packet else None,
            "packet_tokens": self.packet_tokens,
            "packet_detailed": self.packet_detailed,
            "history_tokens": self.history_tokens,
        }


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def index_text(card: TurnCard) -> str:
    """What a turn is found by: asked, card titles and digests, narration, tools and arguments."""
    parts = [card.asked, card.answered.narration]
    parts += [f"{p.title} {p.digest}" for p in card.answered.presentations]
    parts += [f"{t.tool} {t.args_digest}" for t in card.did]
    return " ".join(parts)


def relevance(directive: str, cards: Sequence[TurnCard]) -> list[float]:
    """BM25 of each card against the directive, scaled so the best match is 1.0."""
    query = words(directive)
    if not query or not cards:
        return [0.0] * len(cards)
    corpus = [words(index_text(c)) or ["∅"] for c in cards]
    scores = BM25Okapi(corpus).get_scores(query)
    best = max(scores)
    return [max(0.0, float(s) / best) if best > 0 else 0.0 for s in scores]


def refers_back(directive: str) -> bool:
    return _ANAPHORA.search(directive) is not None


def plan_working_set(
    index: TurnIndex,
    profile: CapacityProfile,
    *,
    directive: str,
    history: Sequence[Turn],
    prefix_tokens: int,
    tail_tokens: int,
    current_turn_reserve: int,
) -> Plan:
    """Plan which of `history` (the turns before the current one) the request carries, how."""
    ratio = tokens_per_char(profile)
    budget = Budget(
        horizon=usable_horizon(profile),
        prefix_tokens=prefix_tokens,
        tail_tokens=tail_tokens,
        output_reserve=profile.output_reserve,
        current_turn_reserve=current_turn_reserve,
    )
    live = [t for t in history if not t.behind_reset]
    cards = [card_of(t, ratio) for t in live]
    rel = relevance(directive, cards)
    back = refers_back(directive)
    values = []
    for position in range(len(live)):
        age = len(live) - 1 - position
        anaphora = 1.0 if back and age == 0 else 0.0
        values.append(max(1.0 / (1 + age), rel[position], anaphora))

    def fill(available: int, packet_end: int) -> tuple[dict[int, Fidelity], int]:
        """Fidelity per position in `live` given the budget; positions < packet_end are in
        the packet unless chosen Full. Returns the fidelities and the tokens spent."""
        chosen: dict[int, Fidelity] = {}
        remaining = available
        for position in sorted(range(len(live)), key=lambda p: (-values[p], -p)):
            cost = cards[position].tokens_full
            if cost <= remaining:
                chosen[position] = Fidelity.FULL
                remaining -= cost
        for position in range(len(live) - 1, packet_end - 1, -1):
            if position in chosen:
                continue
            if cards[position].tokens_card > remaining:
                break
            chosen[position] = Fidelity.CARD
            remaining -= cards[position].tokens_card
        for position in range(len(live)):
            chosen.setdefault(position, Fidelity.PACKET)
        return chosen, available - remaining

    summary_tokens = max(MIN_SUMMARY_TOKENS, min(MAX_SUMMARY_TOKENS, budget.available // 4))
    packet_end, stored, packet_cost, detailed = 0, None, 0, True
    while True:
        chosen, spent = fill(max(0, budget.available - packet_cost), packet_end)
        overflow = [p for p in range(packet_end, len(live)) if chosen[p] is Fidelity.PACKET]
        if not overflow:
            break
        # the packet covers the oldest turns up to a batch boundary past the last overflow turn
        needed = max(overflow) + 1
        packet_end = min(len(live), math.ceil(needed / PACKET_BATCH_TURNS) * PACKET_BATCH_TURNS)
        covered, covered_cards = live[:packet_end], cards[:packet_end]
        stored = index.packet_for(covered[0].turn_id, covered[-1].turn_id)
        packet = stored.packet if stored else None
        pending = 0 if stored else summary_tokens
        for detailed in (True, False):
            text = render_packet(packet, covered, covered_cards, detailed=detailed)
            packet_cost = estimate_tokens(len(text), ratio) + pending
            if packet_cost <= budget.available:
                break

    planned = [
        PlannedTurn(t.turn_id, t.index, Fidelity.BEHIND_RESET, 0, 0.0)
        for t in history
        if t.behind_reset
    ]
    for position, turn in enumerate(live):
        fidelity = chosen[position]
        card = cards[position]
        cost = {Fidelity.FULL: card.tokens_full, Fidelity.CARD: card.tokens_card}.get(fidelity, 0)
        planned.append(PlannedTurn(turn.turn_id, turn.index, fidelity, cost, values[position]))
    planned.sort(key=lambda t: t.index)
    packet_range = (live[0].turn_id, live[packet_end - 1].turn_id) if packet_end else None
    return Plan(
        budget=budget,
        turns=tuple(planned),
        packet_range=packet_range,
        packet=stored,
        packet_tokens=packet_cost,
        packet_detailed=detailed,
        summary_tokens=summary_tokens,
        history_tokens=spent + packet_cost,
    )
