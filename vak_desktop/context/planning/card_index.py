"""The card index: what every plan reads of a session's earlier turns, kept across its requests.

A plan prices and values every earlier turn: its card, the card's BM25 document, its line in a
detailed packet. For a running session those turns do not change from one request to the next —
one more closes — so the card index holds them for the *frozen* live turns of a TurnIndex (every
turn after the reset but the last, which may still grow) and is extended from the index that one
was advanced from (`TurnIndex.memo`), reading only the turns past the ones they share. That turns
the per-request work of discovery (spec §10, "BM25 at write time") from a pass over every card
into a read of the query's postings.

What may differ between two requests is keyed: the index lives in its TurnIndex (one session, one
branch: the TurnIndex is rebuilt when the chain does not continue it), a reset moves the first
live turn (built anew), and a turn without a stored card has the card `card_of` builds at the
bound model's tokens/char, so such a turn ties the index to that ratio (another profile builds
anew; a session whose cards are all stored shares one index across profiles). The index is
extended in place when it is the newest of its line and copied otherwise, so an older TurnIndex
never sees turns it does not hold. The tools a request carries are keyed too: a card that tells a
past call of a tool outside them in words (`turn_cards.card_chars`) is priced and rendered per
set of absent tools, and each set of tools is scanned for such cards once, then per new turn.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from vak_desktop.context.capacity.profile import estimate_all, estimate_tokens
from vak_desktop.context.payloads import TurnCard
from vak_desktop.context.planning.relevance import Corpus, card_terms
from vak_desktop.context.planning.turn_cards import (
    absent_tools,
    card_chars,
    card_of,
    card_tokens,
    full_tokens,
)
from vak_desktop.context.planning.turns import LINEAGE, Turn, TurnIndex

MEMO_KEY = "card_index"
BLOCKS = 4_096  # the runs of cards whose blocks are kept (a request: one per card at most)
R = TypeVar("R")


@dataclass
class _Store:
    """The growing part, owned by the newest card index of a line."""

    turns: list[Turn] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)  # the turns' ids and indexes, as columns
    indexes: list[int] = field(default_factory=list)
    cards: list[TurnCard] = field(default_factory=list)
    corpus: Corpus = field(default_factory=Corpus)
    listing: dict[str, str] = field(default_factory=dict)  # turn id -> its packet line
    # (kind, turn id, …) -> text: a card's key adds the tools it calls that the request lacks
    rendered: dict[tuple[Hashable, ...], Any] = field(default_factory=dict)
    # each card's two sizes in characters (priced per request: the ratio moves with feedback),
    # and the stored token counts of cards written before sizes were kept, by position
    chars_full: list[int] = field(default_factory=list)
    chars_card: list[int] = field(default_factory=list)
    sizeless: list[tuple[int, TurnCard]] = field(default_factory=list)
    # per set of tools a request carried: how many cards were scanned for it, and the size of
    # each card it shows otherwise than stored (position -> characters with the newline)
    told: dict[frozenset[str], tuple[int, dict[int, int]]] = field(default_factory=dict)
    # a run of cards' texts -> what it renders to as one block (`CardIndex.block`)
    blocks: dict[tuple[str, ...], Any] = field(default_factory=dict)

    def told_sizes(self, present: frozenset[str], size: int) -> dict[int, int]:
        """The cards among the first `size` that a request carrying the tools `present` shows
        with a past call told in words, and their sizes (positions past `size` may be there
        too): the cards added since the last request of these tools are the only ones read."""
        scanned, sizes = self.told.get(present, (0, {}))
        for position in range(scanned, size):
            card = self.cards[position]
            if absent_tools(card, present):
                sizes[position] = card_chars(card, self.turns[position].number, present)
        self.told[present] = (max(scanned, size), sizes)
        return sizes

    def append(self, turn: Turn, card: TurnCard) -> None:
        self.turns.append(turn)
        self.ids.append(turn.turn_id)
        self.indexes.append(turn.index)
        self.cards.append(card)
        self.corpus.append(card_terms(card))
        self.chars_full.append(card.chars_full)
        self.chars_card.append(card.chars_card + 1)  # a card is priced with its newline
        if not (card.chars_full and card.chars_card):
            self.sizeless.append((len(self.cards) - 1, card))


@dataclass(frozen=True)
class CardIndex:
    """The frozen live turns of one TurnIndex (`index.turns[start:start + size]`), their cards,
    their BM25 corpus and the packet lines rendered so far."""

    start: int  # the first live turn (the latest reset's boundary)
    size: int
    ratio: float | None  # what card-less turns' cards were built at (None: every card stored)
    store: _Store

    @property
    def turns(self) -> tuple[Turn, ...]:
        return tuple(self.store.turns[: self.size])

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self.store.ids[: self.size])

    @property
    def indexes(self) -> tuple[int, ...]:
        return tuple(self.store.indexes[: self.size])

    @property
    def cards(self) -> tuple[TurnCard, ...]:
        return tuple(self.store.cards[: self.size])

    @property
    def corpus(self) -> Corpus | None:
        """The cards' BM25 corpus, when it still holds exactly these cards."""
        return self.store.corpus if self.store.corpus.size == self.size else None

    @property
    def listing(self) -> dict[str, str]:
        return self.store.listing

    def costs(
        self, ratio: float, present: frozenset[str] | None = None
    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Each turn's full record and card in tokens at `ratio`: `full_tokens` and
        `card_tokens` over the stored sizes, a column at a time; a card a request carrying the
        tools `present` (None: any) shows with a past call told in words, at that size."""
        size, store = self.size, self.store
        full = estimate_all(store.chars_full[:size], ratio)
        card = estimate_all(store.chars_card[:size], ratio)
        for position, stored in store.sizeless:
            if position < size:
                full[position] = full_tokens(stored, ratio)
                card[position] = card_tokens(stored, ratio)
        for position, chars in self.told(present).items():
            if position < size:
                card[position] = estimate_tokens(chars, ratio)
        return tuple(full), tuple(card)

    def told(self, present: frozenset[str] | None) -> dict[int, int]:
        """The positions (and sizes) of the cards a request carrying the tools `present` (None:
        any) shows with a past call told in words; the others show as stored."""
        return {} if present is None else self.store.told_sizes(present, self.size)

    def holds(self, turn: Turn) -> bool:
        """`turn` is one of this index's turns (the same object, so the same entries)."""
        position = turn.index - self.start
        return 0 <= position < self.size and self.store.turns[position] is turn

    def kept(
        self,
    ) -> tuple[dict[tuple[Hashable, ...], Any], Sequence[Turn], Sequence[TurnCard], int, int]:
        """What `rendered` keeps (by (kind, turn id, …)), the turns it keeps them for (a turn is
        held when it is the same object at its position, below `size`) and their cards, the
        first one's index and `size`: for a caller reading a thousand turns' texts without a
        call each."""
        store = self.store
        return store.rendered, store.turns, store.cards, self.start, self.size

    def rendered(self, kind: str, turn: Turn, render: Callable[[], R]) -> R:
        """What `render` makes of `turn` (its card's text, its full record), made once per
        session: a frozen turn renders the same every request."""
        if not self.holds(turn):
            return render()
        key = (kind, turn.turn_id)
        found = self.store.rendered.get(key)
        if found is None:
            found = self.store.rendered[key] = render()
        return cast(R, found)

    def block(self, cards: Sequence[str], render: Callable[[], R]) -> R:
        """What `render` makes of a run of cards (its block), made once while the same run
        recurs: a frontier request carries a hundred runs, nearly all as the request before did.
        Keyed by the cards' texts, so nothing kept goes stale; the newest `BLOCKS` are kept."""
        key = tuple(cards)
        blocks = self.store.blocks
        found = blocks.get(key)
        if found is None:
            if len(blocks) >= BLOCKS:
                blocks.clear()
            found = blocks[key] = render()
        return cast(R, found)


def _own(index: TurnIndex, ratio: float) -> CardIndex | None:
    """The card index a plan of `index` at `ratio` was made with, if there was one."""
    own = index.memo.get(MEMO_KEY)
    return own if isinstance(own, CardIndex) and own.ratio in (None, ratio) else None


def _turn_id(turn: Turn) -> str:
    return turn.turn_id


def frozen_live(index: TurnIndex) -> tuple[int, int]:
    """(first, end) of the turns a card index holds: after the reset, before the last turn."""
    return index.reset_before, max(index.reset_before, len(index.turns) - 1)


def card_index(index: TurnIndex, ratio: float) -> CardIndex:
    """The card index of `index` at `ratio`, extended from the one it was advanced from when
    that one still fits (same first turn, a compatible ratio), else built."""
    own = _own(index, ratio)
    if own is not None:
        return own
    start, end = frozen_live(index)
    base = _reusable(index, start, ratio)
    if base is None:
        store, held, card_ratio = _Store(), 0, None
    else:
        store, held, card_ratio = base
    for turn in index.turns[start + held : end]:
        card = card_of(turn, ratio)
        if turn.card is None:
            card_ratio = ratio
        store.append(turn, card)
    built = CardIndex(start, end - start, card_ratio, store)
    index.memo[MEMO_KEY] = built
    return built


def _reusable(
    index: TurnIndex, start: int, ratio: float
) -> tuple[_Store, int, float | None] | None:
    """The store to extend (the predecessor's, or a copy when it has moved on), how many of its
    turns `index` still holds unchanged, and the ratio its card-less turns were built at."""
    found = index.memo.get(LINEAGE, {}).get(MEMO_KEY)
    if found is None:
        return None
    previous, kept = found
    if not isinstance(previous, CardIndex) or previous.start != start:
        return None
    if previous.ratio not in (None, ratio):
        return None
    held = min(previous.size, kept - start)
    if held <= 0:
        return None
    store = previous.store
    if len(store.turns) != held or store.corpus.size != held:  # not the newest: copy its turns
        copy = _Store()
        for turn, card in zip(store.turns[:held], store.cards[:held], strict=True):
            copy.append(turn, card)
        copy.listing = {
            t: store.listing[t] for t in map(_turn_id, copy.turns) if t in store.listing
        }
        store = copy
    return store, held, previous.ratio
