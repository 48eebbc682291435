"""The WorkingSetPlanner: which closed turns a request carries whole, as cards, or in a packet.

    budget = horizon − prefix_tokens − tail_tokens − output_reserve − current_turn_reserve

Each turn's costs and value (recency, relevance, anaphora) are `candidates.py`'s.

Turns go in as cards newest → oldest while they fit (in half the budget when not every card
does); the overflow collapses into one packet over the oldest turns. The packet's range moves in
whole batches of PACKET_BATCH_TURNS at both ends, so it holds steady across turns and a stored
summary is reused: a newest batch that is not yet whole stays as cards, even past the budget
(`over_budget` says by how much, and the runtime writes an Activity saying why). The slice the
cards and the packet leave promotes turns to Full in descending value (a turn that does not fit
is skipped for a cheaper one further down): §10's "promoted to full record inside a reserved
slice of the budget". That gives §10's small-model shape (~2 turns whole, the rest as cards, no
packet). When the directive refers back to an earlier turn ("the code I gave you earlier"), its
best BM25 match is a card before anything else is placed, so it reaches the model however small
the budget (spec §10: relevance survives a tiny budget). The packet is deterministic: what is
left of the budget shows its best-matching turns as cards, then one line per other turn, else
their range. Every size is priced at the bound model's tokens/char (cards store characters),
card-block wrappers and the reset's handoff included, and every card as the request shows it for
the tools it carries (`Candidates.present`, kept on the plan for the assembler). Every cost check
is turn-whole: a turn is never split, and a turn is in exactly one fidelity. A stored packet is
used only when its range is exactly the plan's; otherwise those turns come from the ledger.

Over 400 lines on purpose: the fill, the batch-aligned packet loop and the packet's shape price
one budget together (each reads the others' choices); split, that shared accounting would cross
module boundaries.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple, overload

from vak_desktop.context.capacity.profile import estimate_tokens, tokens_per_char, usable_horizon
from vak_desktop.context.payloads import Answer, CapacityProfile, Compaction, TurnCard
from vak_desktop.context.planning.candidates import Candidates
from vak_desktop.context.planning.packets import (
    FEATURED_HEADER,
    LISTED_HEADER,
    PARTLY_LISTED_HEADER,
    PacketShape,
    listing_line,
    render_handoff,
    render_packet,
)
from vak_desktop.context.planning.topics import (
    Topic,
    TopicIndex,
    coarser,
    coarsest,
    coarsest_chars,
    topic_index,
    topics_fitting,
)
from vak_desktop.context.planning.turn_cards import CARD_BLOCK_CHARS, card_chars
from vak_desktop.context.planning.turns import StoredPacket, Turn, TurnIndex

PACKET_BATCH_TURNS = 8
PACKET_LINES_SHARE, PACKET_LINES_CAP = 10, 2_048  # a deterministic packet's lines: 1/10 of
# the budget, at most this many tokens (a frontier model's recent turns stay whole)
# past this many covered turns a packet's turns get no line of their own (those would cost a
# render of every covered turn per plan: +10 ms at 10,000 turns), only their stretches' lines
PACKET_LINES_TURNS = 2_000
RUN_CHARS = 14  # what one more run of numbers can add to a stretch's (or the "by number") line
MIN_SUMMARY_TOKENS, MAX_SUMMARY_TOKENS = 64, 512  # the summariser's length, scaled to the budget


class Fidelity(StrEnum):
    FULL = "full"
    CARD = "card"
    PACKET = "packet"
    BEHIND_RESET = "behind_reset"


# the members as plain names: an enum member read off its class costs a lookup per turn
FULL, CARD, PACKET = Fidelity.FULL, Fidelity.CARD, Fidelity.PACKET


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


class PlannedTurn(NamedTuple):
    """One earlier turn as the plan carries it: a tuple, made 3× faster than a frozen dataclass,
    and a plan of 10,000 turns makes 10,000 of them twice."""

    turn_id: str
    index: int  # type: ignore[assignment]  # the turn's position; shadows tuple.index, unused
    fidelity: Fidelity
    tokens: int  # what this turn costs at its fidelity (0 inside the packet)
    value: float


class RenderedPacket(NamedTuple):
    """A packet's text and what it was rendered from (`Plan.packet_text`)."""

    turns: tuple[PlannedTurn, ...]
    packet: StoredPacket | None
    shape: PacketShape
    text: str


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
    framing_tokens: int  # the reset's handoff and the wrapper of each run of cards
    history_tokens: int  # Full + cards + packet + framing
    packet_featured: tuple[str, ...] = ()  # packeted turns the packet shows as whole cards
    packet_listed: tuple[str, ...] = ()  # not detailed: the packeted turns still given a line
    packet_topics: tuple[Topic, ...] = ()  # not detailed: the stretches the others are named by
    over_budget: int = 0  # history tokens past the budget (the Activity that says why)
    partial_batch: bool = False  # the newest partial batch went as cards past the budget
    # the passages recalled for the directive (`passages.py`), carried in the tail's budget
    passage_tokens: int = 0
    passage_turns: tuple[int, ...] = ()  # turn numbers they quote
    passage_refs: tuple[str, ...] = ()  # evidence ids they quote
    # the packet's text as priced, for the request to carry as is while the plan's turns,
    # stored packet and shape are still these (a plan changed after planning renders anew)
    rendered_packet: RenderedPacket | None = field(default=None, compare=False, repr=False)
    # the tool names the request carries (None: any): its cards are priced and shown for them
    present: frozenset[str] | None = field(default=None, repr=False)

    def packet_text(self) -> str | None:
        """The packet's text rendered when this plan was made, if it still holds."""
        held = self.rendered_packet
        if held is None or held.turns is not self.turns or held.packet is not self.packet:
            return None
        return held.text if held.shape == self.packet_shape else None

    @property
    def packet_shape(self) -> PacketShape:
        return PacketShape(
            self.packet_featured, self.packet_detailed, self.packet_listed, self.packet_topics
        )

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
            "packet_featured": list(self.packet_featured),
            "packet_listed": list(self.packet_listed),
            "packet_topics": [list(t) for t in self.packet_topics],
            "over_budget": self.over_budget,
            "framing_tokens": self.framing_tokens,
            "history_tokens": self.history_tokens,
            "passages": {
                "tokens": self.passage_tokens,
                "turns": list(self.passage_turns),
                "evidence": list(self.passage_refs),
            },
        }


_new = tuple.__new__  # a namedtuple made from a row, without its Python __new__


def card_runs(
    chosen: Sequence[Fidelity], packet_end: int, placed: Sequence[int] | None = None
) -> int:
    """How many `<earlier_turns>` wrappers the request renders for `chosen`: one per run of
    consecutive card turns, a whole turn or the packet ending a run (packeted turns in front of
    the packet are not rendered there, so they do not break a run of retrieved cards).
    `placed`, when given, lists the positions not packeted, in order (the only ones read)."""
    runs, open_run, previous = 0, False, -1
    for position in range(len(chosen)) if placed is None else placed:
        fidelity = chosen[position]
        if previous < packet_end <= position:
            open_run = False  # the packet sits between the retrieved turns and the rest
        previous = position
        if fidelity is CARD:
            runs += 0 if open_run else 1
            open_run = True
        elif fidelity is FULL:
            open_run = False
    return runs


def plan_working_set(
    index: TurnIndex,
    profile: CapacityProfile,
    *,
    history: Sequence[Turn],
    prefix_tokens: int,
    tail_tokens: int,
    current_turn_reserve: int,
    ranked: Candidates,
    focused: bool = False,
) -> Plan:
    """Plan which of `history` (the turns before the current one) the request carries, how;
    `ranked` is `candidates(history, …)`, priced and valued once for every budget tried.
    `focused` (a small model's question about the past, whose passages take the room:
    `assemble.py`): no turn is promoted to Full for its value and the cards take the whole
    budget, so at no budget the plan carries what every plan must: the packet and the newest
    batch (it moves in whole batches: spec §5), each of its turns whole where that costs no
    more than its card."""
    ratio = tokens_per_char(profile)
    budget = Budget(
        horizon=usable_horizon(profile),
        prefix_tokens=prefix_tokens,
        tail_tokens=tail_tokens,
        output_reserve=profile.output_reserve,
        current_turn_reserve=current_turn_reserve,
    )
    live, cards, by_value = ranked.live, ranked.cards, ranked.by_value
    full_cost, card_cost, values = ranked.full_cost, ranked.card_cost, ranked.values
    block = estimate_tokens(CARD_BLOCK_CHARS, ratio)  # the wrapper of one run of cards
    handoff = 0  # the reset's handoff rides in the history whenever turns are behind it
    if index.reset is not None and len(live) < len(history):
        handoff = estimate_tokens(len(render_handoff(index.reset.handoff)), ratio)

    def fill(available: int, packet_end: int) -> tuple[list[Fidelity], list[int]]:
        """Fidelity per position in `live` given the budget, and the positions placed outside
        the packet, in order (a few of thousands). The turn a refer-back directive
        points at (`pinned`) is a card first, wherever it is. Every turn from `packet_end` on
        is a card, newest → oldest while the cards fit (in half the budget when not all of them
        do); the slice the cards leave promotes turns to Full in descending value, a turn that
        does not fit skipped for a cheaper one further down (§10: "promoted to full record
        inside a reserved slice of the budget"). The rest are in the packet. Costs are
        counted with a wrapper per card run, never below what the request will carry."""
        chosen = [PACKET] * len(live)
        remaining, last = available, len(live) - 1
        pinned = ranked.pinned
        carded = []  # positions made cards
        if pinned is not None and card_cost[pinned] + block <= remaining:
            chosen[pinned] = CARD
            remaining -= card_cost[pinned] + block
            carded.append(pinned)
        # When not every card fits, the cards get half the budget and the other half is the
        # slice turns are promoted into: a frontier model on a long session keeps dozens of
        # turns whole instead of thousands of cards and a single whole turn.
        every_card = sum(card_cost[packet_end:]) + block
        card_room = remaining if every_card <= remaining or focused else remaining // 2
        for position in range(last, packet_end - 1, -1):
            if chosen[position] is CARD:
                continue  # the pinned turn, paid for
            cost = card_cost[position] + (block if position == last else 0)
            if cost > card_room:
                break
            chosen[position] = CARD
            card_room -= cost
            remaining -= cost
            carded.append(position)
        if focused:
            return chosen, sorted(carded)
        promoted = []
        cheapest_after, rank = ranked.cheapest_after, ranked.rank
        past_cards = max((rank[p] for p in carded), default=-1) if rank else len(live)
        for at, position in enumerate(by_value):
            if at > past_cards and remaining < cheapest_after[at]:
                break  # nothing further down fits any more
            cost = full_cost[position]
            if chosen[position] is CARD:
                left = position > 0 and chosen[position - 1] is CARD
                right = position < last and chosen[position + 1] is CARD
                runs = 1 if left and right else 0  # splitting a run adds a wrapper
                cost += runs * block - card_cost[position]
            if cost <= remaining:
                if chosen[position] is PACKET:
                    promoted.append(position)
                chosen[position] = FULL
                remaining -= cost
        return chosen, sorted(carded + promoted)

    summary_tokens = max(MIN_SUMMARY_TOKENS, min(MAX_SUMMARY_TOKENS, budget.available // 4))
    packet_end, stored, packet, packet_cost, over_batch = 0, None, None, 0, False
    bare = 0  # the bare packet's cost over the range `packet_end` sets
    settling = 0  # rounds spent pricing the packet's "shown outside" line for a fixed range
    while True:
        # a packet no stored summary covers shows its turns' lines in a share of the budget
        # kept for them, so it carries content, not only their numbers (issue #22)
        lines = 0
        if packet is None and packet_end > 0:
            lines = min(PACKET_LINES_CAP, budget.available // PACKET_LINES_SHARE)
        chosen, placed = fill(max(0, budget.available - handoff - packet_cost - lines), packet_end)
        overflow = [p for p in range(packet_end, len(live)) if chosen[p] is PACKET]
        if not overflow:
            # the bare packet names the turns of its range carried elsewhere; price that line
            # and fill again when it grew the packet, with a margin that doubles each round
            # (the line depends on which turns the fill retrieves, so it can move a little)
            actual = _bare_cost(packet, live, placed, packet_end, ratio, bare) if packet_end else 0
            if actual <= packet_cost or settling == 12:
                break
            packet_cost, settling = actual + (1 << settling) - 1, settling + 1
            continue
        # The packet covers the oldest turns up to a batch boundary past the last overflow
        # turn; it moves in whole batches of PACKET_BATCH_TURNS at both ends, so a partial
        # newest batch never enters it (it would grow by one turn a request, every request).
        wanted = math.ceil((max(overflow) + 1) / PACKET_BATCH_TURNS) * PACKET_BATCH_TURNS
        if wanted > len(live):
            wanted = len(live) // PACKET_BATCH_TURNS * PACKET_BATCH_TURNS
        if wanted <= packet_end:  # the overflow is in the partial newest batch: cards
            for position in overflow:
                chosen[position] = CARD
            placed = sorted(placed + overflow)
            over_batch = True
            break
        packet_end = wanted
        stored = index.packet_for(live[0].turn_id, live[packet_end - 1].turn_id)
        packet = stored.packet if stored else None
        packet_cost = bare = estimate_tokens(len(_bare_packet(packet, live[:packet_end])), ratio)
        settling = 0
    if focused:  # a turn cheaper whole than as a card (a short chat turn) goes whole
        chosen = [
            FULL if f is CARD and full_cost[p] <= card_cost[p] else f for p, f in enumerate(chosen)
        ]
    carried = [0] * len(live)  # what each turn costs at its fidelity
    for position in placed:
        carried[position] = full_cost[position] if chosen[position] is FULL else card_cost[position]
    spent = sum(carried) + card_runs(chosen, packet_end, placed) * block
    shape, text = PacketShape(), ""
    if packet_end:
        room = budget.available - handoff - spent - packet_cost
        view = topic_index(index, live, ranked.stop_words) if room > 0 else None
        positions, outside = _split(placed, packet_end)
        shape = _packet_shape(
            ranked, chosen, packet_end, positions, room=room, ratio=ratio, view=view
        )
        packeted = _Paired(live, positions, cards)
        span = live[:packet_end]
        while True:  # the shape was priced line by line; the rendered text is what counts
            text = render_packet(
                packet,
                span,
                packeted,
                shape,
                listing=ranked.listing,
                outside=outside,
                present=ranked.present,
                turns=index.by_turn_id,
            )
            packet_cost = estimate_tokens(len(text), ratio)
            if handoff + spent + packet_cost <= budget.available or shape == PacketShape():
                break
            featured, topics = shape.featured, shape.topics
            if shape.detailed:
                shape = PacketShape(featured)
            elif shape.listed:  # fewer lines, then none (each line was priced on its own)
                shape = PacketShape(
                    featured, listed=shape.listed[: len(shape.listed) // 2], topics=topics
                )
            elif topics and view is not None:  # coarser stretches, then none
                shape = PacketShape(featured, topics=coarser(view, packet_end, topics))
            else:
                shape = PacketShape(featured[:-1])

    planned = []
    if len(live) < len(history):
        planned = [
            PlannedTurn(t.turn_id, t.index, Fidelity.BEHIND_RESET, 0, 0.0)
            for t in history
            if t.behind_reset
        ]
    # tuple.__new__ over the columns: a namedtuple's own __new__ is Python, called per turn
    planned += map(
        _new,
        itertools.repeat(PlannedTurn),
        zip(ranked.ids, ranked.indexes, chosen, carried, values, strict=True),
    )
    if len(live) < len(history):  # the turns behind the reset come first
        planned.sort(key=lambda t: t.index)
    packet_range = (live[0].turn_id, live[packet_end - 1].turn_id) if packet_end else None
    history_tokens = handoff + spent + packet_cost
    turns = tuple(planned)
    return Plan(
        budget=budget,
        turns=turns,
        packet_range=packet_range,
        packet=stored,
        packet_tokens=packet_cost,
        packet_detailed=shape.detailed,
        summary_tokens=summary_tokens,
        framing_tokens=handoff + spent - sum(carried),
        history_tokens=history_tokens,
        packet_featured=shape.featured,
        packet_listed=shape.listed,
        packet_topics=shape.topics,
        over_budget=max(0, history_tokens - budget.available),
        partial_batch=over_batch,
        rendered_packet=RenderedPacket(turns, stored, shape, text) if packet_end else None,
        present=ranked.present,
    )


def _bare_packet(packet: Compaction | None, span: Sequence[Turn]) -> str:
    """The smallest the packet over `span` can be: summary (or its absence), range, recall."""
    return render_packet(packet, span, _Paired(span, range(len(span))))


def _bare_cost(
    packet: Compaction | None,
    live: Sequence[Turn],
    placed: Sequence[int],
    packet_end: int,
    ratio: float,
    bare: int,
) -> int:
    """The bare packet's cost when the turns of its range not packeted (of `placed`) are
    carried elsewhere (`bare`, the cost of `_bare_packet`, when none is)."""
    packeted, outside = _split(placed, packet_end)
    if not outside:
        return bare
    span = live[:packet_end]
    text = render_packet(packet, span, _Paired(live, packeted), outside=outside)
    return estimate_tokens(len(text), ratio)


def _split(placed: Sequence[int], packet_end: int) -> tuple[list[int], list[int]]:
    """The positions before `packet_end` that are packeted, and those that are not, from the
    positions `placed` outside the packet (in order): the range less those few, not a test of
    each of thousands of positions."""
    outside = list(placed[: bisect.bisect_left(placed, packet_end)])
    packeted = list(range(packet_end))
    for position in reversed(outside):
        del packeted[position]
    return packeted, outside


_NO_CARD = TurnCard(turn_id="", asked="", did=(), answered=Answer(), outcome="")


class _Paired(Sequence[tuple[Turn, TurnCard]]):
    """The packeted turns at `positions` of `turns` with their cards (or none, to price the
    bare packet), paired where the packet reads them: pricing a packet over thousands of turns
    reads the few at the ends of its runs, not a pair made for each."""

    def __init__(
        self,
        turns: Sequence[Turn],
        positions: Sequence[int],
        cards: Sequence[TurnCard] | None = None,
    ) -> None:
        self._turns, self._positions, self._cards = turns, positions, cards

    def __len__(self) -> int:
        return len(self._positions)

    def _pair(self, position: int) -> tuple[Turn, TurnCard]:
        card = self._cards[position] if self._cards is not None else _NO_CARD
        return self._turns[position], card

    def __iter__(self) -> Iterator[tuple[Turn, TurnCard]]:
        turns, cards = self._turns, self._cards
        if cards is None:
            return ((turns[p], _NO_CARD) for p in self._positions)
        return ((turns[p], cards[p]) for p in self._positions)

    @overload
    def __getitem__(self, k: int) -> tuple[Turn, TurnCard]: ...

    @overload
    def __getitem__(self, k: slice) -> Sequence[tuple[Turn, TurnCard]]: ...

    def __getitem__(
        self, k: int | slice
    ) -> tuple[Turn, TurnCard] | Sequence[tuple[Turn, TurnCard]]:
        if isinstance(k, slice):
            return [self._pair(p) for p in self._positions[k]]
        return self._pair(self._positions[k])


def _packet_shape(
    ranked: Candidates,
    chosen: Sequence[Fidelity],
    packet_end: int,
    packeted: Sequence[int],
    *,
    room: int,
    ratio: float,
    view: TopicIndex | None = None,
) -> PacketShape:
    """What the packet shows beyond its bare range, within `room` tokens: the packeted turns
    that match the directive, best first, as whole cards (at most a batch of them), then one
    line for each of the others when those fit too; else the lines of the most valuable of
    them (the first in all the room when no card is shown, the others in half of it) and a
    line for each stretch of the packet's range, the finest stretches `view` has that fit what
    is left (`topics.py`). The coarsest stretches' line is held room from the start (only the
    best covered turn, as a card or its line, comes before it): a packet names its turns by
    number only when not even that fits. `packeted`: the positions before `packet_end` that
    the packet covers, in order."""
    if room <= 0:
        return PacketShape()
    held = 0  # the coarsest stretches' line, when it fits at all
    if view is not None and packeted:
        held = estimate_tokens(coarsest_chars(view, packet_end), ratio)
        held = held if held <= room else 0
    featured: list[int] = []
    chars = len(FEATURED_HEADER) + 2
    for position in ranked.by_relevance:
        if position >= packet_end or chosen[position] is not PACKET:
            continue
        card = ranked.cards[position]
        more = chars + card_chars(card, ranked.live[position].number, ranked.present)
        if len(featured) == PACKET_BATCH_TURNS or estimate_tokens(more, ratio) > room - held:
            break
        featured.append(position)
        chars = more
    room -= estimate_tokens(chars, ratio) if featured else 0
    live = ranked.live
    # the rest: the packeted turns not featured (a few of them are read, not thousands copied)
    shown = set(featured)
    rest = len(packeted) - len(featured)
    listed = len(LISTED_HEADER) + 2
    detailed = rest > 0 and packet_end <= PACKET_LINES_TURNS
    for position in packeted if detailed else ():  # the lines add up until they no longer fit
        if position in shown:
            continue
        listed += len(_line(ranked, position)) + 1
        if estimate_tokens(listed, ratio) > room:
            detailed = False
            break
    if detailed or not rest:
        return PacketShape(tuple(live[p].turn_id for p in featured), detailed)
    # as many lines as fit, the most valuable first, the stretches between the well-matching
    # and the others (issue #22: a packet shows content, not a list of numbers, while it has room)
    lines: list[str] = []
    listed = len(PARTLY_LISTED_HEADER) + 2
    share = (room - held) // 2 if held else room
    for position in ranked.by_value:
        if position >= packet_end or chosen[position] is not PACKET or position in shown:
            continue
        # its line, and the run of numbers its leaving the "by number" line may split
        more = listed + len(_line(ranked, position)) + 1 + (0 if held else RUN_CHARS)
        first = not lines and not featured  # the best covered turn, shown before the stretches
        if estimate_tokens(more, ratio) > (room if first else min(share, room - held)):
            break
        listed = more
        lines.append(live[position].turn_id)
    spent = estimate_tokens(listed, ratio) if lines else 0
    topics, _cost = _stretches(view, packet_end, room - spent, ratio, held)
    return PacketShape(
        featured=tuple(live[p].turn_id for p in featured),
        detailed=detailed,
        listed=tuple(lines),
        topics=topics,
    )


def _stretches(
    view: TopicIndex | None, packet_end: int, room: int, ratio: float, held: int
) -> tuple[tuple[Topic, ...], int]:
    """The finest stretches that fit `room` tokens, else the coarsest (`held` tokens, 0 when
    even that did not fit the packet), and what they cost; none when `room` is below `held`."""
    if view is None or not held or room < held:
        return (), 0  # by number
    topics, chars = topics_fitting(view, packet_end, room, ratio)
    if topics:
        return topics, estimate_tokens(chars, ratio)
    return coarsest(view, packet_end), held


def _line(ranked: Candidates, position: int) -> str:
    """The packet line of the turn at `position`, rendered once per turn (the card index
    keeps them)."""
    turn = ranked.live[position]
    line = ranked.listing.get(turn.turn_id)
    if line is None:
        line = ranked.listing[turn.turn_id] = listing_line(turn, ranked.cards[position])
    return line
