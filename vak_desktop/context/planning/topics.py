"""The topic index: what the covered turns a packet cannot list one by one are about (issue #22).

A packet over a long history has room for a few of its turns' lines; the others used to be a
list of numbers ("Also covered, by number: turns 1–7, 9–27, …"), which no model can use. The
topic index says what each stretch of them holds instead, in a line: its turns, its day and the
words that mark it out ("- Turns 1–7, 9–10 (20 Jan 2023): dance, competition, Paris, banker").

A *stretch* is a run of consecutive turns of one day (its turns' `said_at`), at most
`STRETCH_TURNS` of them; turns with no date make runs of that many. Where a stretch starts is
read from the turns before it only, so a new turn never moves an earlier boundary. A stretch's
words are its turns' words (their passages' pieces, `passages.py`, speaker labels left out)
weighed as a card's gist weighs them (`gist.word_weight`: numbers, names, long content words
first; fillers, stop words, times, dates and ids nothing), each stem's weight summed over the
stretch, damped (log1p) and multiplied by its idf over the stretches *up to and including this
one*: what is new here, against what came
before. So a stretch's line is a function of the turns up to its end — it is fixed once the
stretch closes, whatever the session adds later (the packet stays byte-stable where its range
and room stay) — and it is computed once, when the stretch closes, in the TurnIndex's memo
like the card and passage indexes.

When the lines of every stretch do not fit the packet's room, stretches are merged in aligned
groups of 2, 4, 8, … (`topics(end, level)`): a group's words are its stretches' best words
summed, and a closed group's line is kept too. The planner takes the finest level that fits.
Pure and deterministic.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from vak_desktop.context.capacity.profile import estimate_tokens
from vak_desktop.context.planning.dates import day_span
from vak_desktop.context.planning.gist import MONTHS_AND_DAYS, NAME, split_sentences, word_weight
from vak_desktop.context.planning.passages import Piece, passage_index, passages_over, stem
from vak_desktop.context.planning.turns import LINEAGE, Turn, TurnIndex

MEMO_KEY = "topics"
STRETCH_TURNS = 16  # the most turns of one day a stretch holds (and of undated turns)
KEPT = 24  # the best words a closed stretch keeps (what a merged group chooses from)
WORDS, MIN_WORDS = 5, 3  # the words a line names (fewer, to fit finer stretches)
LINE_CHARS = 24  # the shortest a line is: where the search for a level starts
TOPICS_HEADER = "The other covered turns by stretch (turns, day: what they name):"
CACHED = 64  # open or clipped stretches' words (and groups' lines) kept: the newest plans'
_SPEAKER = re.compile(r"^([A-Z][\w.'’-]*(?: [A-Z][\w.'’-]*){0,3}):\s+")
_PART = re.compile(r"\w+", re.UNICODE)
# a digest's framing ("[evidence:ab12… — 850 chars; call recall to expand]", "… lines 3–9]")
_FRAMING = re.compile(r"\[(?:evidence|ev):[^\]]{0,200}\]|\bev:\w+")
_HASH = re.compile(r"(?=[a-f]*\d)(?=\d*[a-f])[0-9a-f]{8,}")
_CLOCK = re.compile(r"\d:\d\d")
_EDGE = "\"'“”‘’`«»()[]{}<>,.;:!?…*_~"


class Topic(NamedTuple):
    """One line of the topic index: turns `first`…`last` (indexes, inclusive), their day or
    span of days, and the words that mark them."""

    first: int
    last: int
    day: str
    words: str


Ranked = tuple[tuple[str, str, float], ...]  # (stem, surface, score), best first


def turn_words(
    pieces: Sequence[Piece], stop: frozenset[str]
) -> tuple[dict[str, float], dict[str, str], set[str]]:
    """One turn's stems weighed (summed over its pieces), each stem's surface form (as a name
    where the turn writes it as one), and the speakers its labels name."""
    weights: dict[str, float] = {}
    surfaces: dict[str, str] = {}
    speakers: set[str] = set()
    for piece in pieces:
        text = piece.text
        label = _SPEAKER.match(text)
        if label:
            speakers.update(stem(w.lower()) for w in _PART.findall(label.group(1)))
            text = text[label.end() :]
        if "ev" in text:
            text = _FRAMING.sub(" ", text)
        for sentence in split_sentences(text):  # each sentence's opening word is no name
            said = sentence.split()
            for at, word in enumerate(said):
                found = _terms(word, at == 0, stop)
                if not found or _dated(said, at):
                    continue
                for key, surface, weight in found:
                    weights[key] = weights.get(key, 0.0) + weight
                    if key not in surfaces or (weight == NAME and surfaces[key].islower()):
                        surfaces[key] = surface
    return weights, surfaces, speakers


@functools.lru_cache(maxsize=1 << 16)  # a chat's words recur: each is read once
def _terms(word: str, opening: bool, stop: frozenset[str]) -> tuple[tuple[str, str, float], ...]:
    """What one word of a sentence adds to its turn: (stem, surface, weight) for each of its
    parts that names something (`gist.word_weight`; no stop word, id or day's name)."""
    weight = word_weight(word, opening=opening, stop_words=stop, quoted=False)
    if weight <= 0:
        return ()
    out = []
    for part in _PART.findall(word.strip(_EDGE)):
        lowered = part.lower()
        if len(part) < (2 if part.isdigit() else 3) or lowered in stop:
            continue
        if _HASH.fullmatch(lowered) or lowered in MONTHS_AND_DAYS:
            continue  # an id, not a word; a day's name says when, and the line has its day
        out.append((stem(lowered), part if weight == NAME else lowered, weight))
    return tuple(out)


def _dated(said: Sequence[str], at: int) -> bool:
    """The word at `at` is part of a time or a date ("7:28", "19 June", "June 19"): when, which
    the line's day says, not what."""
    word = said[at].strip(_EDGE)
    if not word[:1].isdigit():
        return False
    if _CLOCK.search(word):
        return True
    around = (said[i].strip(_EDGE).lower() for i in (at - 1, at + 1) if 0 <= i < len(said))
    return any(w in MONTHS_AND_DAYS for w in around)


def _idf(stretches: int, holders: int) -> float:
    return math.log(1 + (stretches - holders + 0.5) / (holders + 0.5))


@dataclass
class _Store:
    """The growing part, owned by the newest topic index of a line."""

    stop: frozenset[str]
    turns: list[Turn] = field(default_factory=list)
    weights: list[dict[str, float]] = field(default_factory=list)
    surfaces: list[dict[str, str]] = field(default_factory=list)
    days: list[str] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)  # each stretch's first turn (position)
    best: list[Ranked] = field(default_factory=list)  # each closed stretch's words
    idf: list[dict[str, float]] = field(default_factory=list)  # each closed stretch's idf
    holders: dict[str, int] = field(default_factory=dict)  # closed stretches holding a stem
    speakers: set[str] = field(default_factory=set)
    lines: dict[tuple[int, int, int], Topic] = field(default_factory=dict)  # closed groups
    open: dict[tuple[int, int], Ranked] = field(default_factory=dict)  # (start, end) → words
    # groups cut by a packet's end (or ending in the open stretch), by (level, first, last, end)
    clipped: dict[tuple[int, int, int, int], Topic] = field(default_factory=dict)

    def append(self, turn: Turn, pieces: Sequence[Piece]) -> None:
        day = turn.said_at[:10]
        size = len(self.turns)
        if not self.starts or day != self.days[-1] or size - self.starts[-1] >= STRETCH_TURNS:
            if self.starts:
                self._close(self.starts[-1], size)
            self.starts.append(size)
        weights, surfaces, speakers = turn_words(pieces, self.stop)
        self.turns.append(turn)
        self.weights.append(weights)
        self.surfaces.append(surfaces)
        self.days.append(day)
        self.speakers |= speakers

    def _summed(self, start: int, end: int) -> tuple[dict[str, float], dict[str, str]]:
        total: dict[str, float] = {}
        surface: dict[str, str] = {}
        for position in range(start, end):
            for key, weight in self.weights[position].items():
                total[key] = total.get(key, 0.0) + weight
            for key, form in self.surfaces[position].items():
                surface.setdefault(key, form)
        return total, surface

    def _close(self, start: int, end: int) -> None:
        total, surface = self._summed(start, end)
        holders = self.holders
        for key in total:
            holders[key] = holders.get(key, 0) + 1
        count = len(self.best) + 1
        idf = {key: _idf(count, holders[key]) for key in total}
        self.idf.append(idf)
        self.best.append(self._ranked(total, surface, idf, KEPT))

    def _ranked(
        self, total: dict[str, float], surface: dict[str, str], idf: dict[str, float], size: int
    ) -> Ranked:
        scored = [  # a word said a hundred times is not a hundred times the subject
            (key, surface[key], math.log1p(weight) * idf[key])
            for key, weight in total.items()
            if key not in self.speakers
        ]
        scored.sort(key=lambda item: -item[2])  # stable: first said first among equals
        return tuple(scored[:size])

    def words(self, stretch: int, end: int) -> Ranked:
        """The words of stretch `stretch` over its turns before position `end`."""
        start = self.starts[stretch]
        stop = self.starts[stretch + 1] if stretch + 1 < len(self.starts) else len(self.turns)
        if end >= stop and stretch < len(self.best):
            return self.best[stretch]
        end = min(end, stop)
        found = self.open.get((start, end))
        if found is None:
            total, surface = self._summed(start, end)
            if stretch < len(self.idf):  # a closed stretch cut by the packet's end: its idf
                idf = self.idf[stretch]
            else:  # the open stretch: against the closed ones and itself
                count = len(self.best) + 1
                idf = {k: _idf(count, self.holders.get(k, 0) + 1) for k in total}
            found = self._ranked(total, surface, idf, KEPT)
            if len(self.open) >= CACHED:
                self.open.clear()
            self.open[(start, end)] = found
        return found


@dataclass(frozen=True)
class TopicIndex:
    """The topic index of turns `start`… of a TurnIndex (`size` of the store's turns)."""

    start: int
    size: int
    store: _Store

    def stretches(self, end: int) -> int:
        """How many stretches the first `end` turns (positions) reach into."""
        return bisect.bisect_left(self.store.starts, min(end, self.size))

    def topics(self, end: int, level: int) -> list[Topic]:
        """The lines over the first `end` turns, a group of 2**level stretches each. A closed
        group's line is kept for good; one cut by `end` or ending in the open stretch is a
        function of the turns before `end` only, so it is kept by `end` too, the newest few
        (a plan prices the group over the whole packet in each of its tries, and the packet's
        end holds still for a batch of requests)."""
        store, end = self.store, min(end, self.size)
        width, count = 1 << level, self.stretches(end)
        out: list[Topic] = []
        for first in range(0, count, width):
            last = min(first + width, count) - 1
            stop = store.starts[last + 1] if last + 1 < len(store.starts) else len(store.turns)
            if stop <= end and last < len(store.best):
                key = (level, first, last)
                line = store.lines.get(key)
                if line is None:
                    line = store.lines[key] = self._group(first, last, end)
            else:
                cut = (level, first, last, end)
                line = store.clipped.get(cut)
                if line is None:
                    if len(store.clipped) >= CACHED:
                        store.clipped.clear()
                    line = store.clipped[cut] = self._group(first, last, end)
            out.append(line)
        return out

    def _group(self, first: int, last: int, end: int) -> Topic:
        store = self.store
        # each stretch's best word, the best of those first, then each one's second best …: a
        # group names what marks its stretches apart, not what they all say a little of
        offered = [
            (rank, -score, stretch, key, form)
            for stretch in range(first, last + 1)
            for rank, (key, form, score) in enumerate(store.words(stretch, end)[:WORDS])
        ]
        offered.sort()
        chosen: list[str] = []
        surface: dict[str, str] = {}
        for _rank, _score, _stretch, key, form in offered:
            if key not in surface:
                surface[key] = form
                chosen.append(key)
                if len(chosen) == WORDS:
                    break
        stop = store.starts[last + 1] if last + 1 < len(store.starts) else len(store.turns)
        stop = min(stop, end)
        begin = store.starts[first]
        day = day_span(store.days[begin], store.days[stop - 1])
        words = ", ".join(surface[k] for k in chosen)
        return Topic(store.turns[begin].index, store.turns[stop - 1].index, day, words)


def topics_over(turns: Sequence[Turn], stop: frozenset[str]) -> TopicIndex:
    """A topic index of `turns` built whole (a plan outside a running session)."""
    found = passages_over(turns)
    store = _Store(stop)
    _extend(store, turns, found.store.pieces, found.pieces)
    return TopicIndex(0, len(turns), store)


def _extend(store: _Store, turns: Sequence[Turn], pieces: Sequence[Piece], limit: int) -> None:
    """Append `turns` to `store`, each with its pieces out of the first `limit` of `pieces`
    (in turn order: a passage store that moved on holds another branch's turns past them)."""
    for turn in turns:
        at = bisect.bisect_left(pieces, turn.index, hi=limit, key=_turn_of)
        upto = bisect.bisect_right(pieces, turn.index, lo=at, hi=limit, key=_turn_of)
        store.append(turn, pieces[at:upto])


def _turn_of(piece: Piece) -> int:
    return piece.turn


def topic_index(index: TurnIndex, live: Sequence[Turn], stop: frozenset[str]) -> TopicIndex:
    """The topic index of `live`: the one kept in `index`'s memo (its frozen live turns, extended
    from its predecessor's when that is the newest of its line) when `live` is those turns,
    else one built over `live`."""
    start = index.reset_before
    end = max(start, len(index.turns) - 1)
    frozen = index.head is not None and len(live) == end - start
    if not frozen or (live and index.turns[start] is not live[0]):
        return topics_over(live, stop)
    own = index.memo.get(MEMO_KEY)
    if isinstance(own, TopicIndex) and (own.store.stop is stop or own.store.stop == stop):
        return own
    store, held = _Store(stop), 0
    found = index.memo.get(LINEAGE, {}).get(MEMO_KEY)
    if found is not None:
        previous, kept = found
        usable = min(previous.size, kept - start) if isinstance(previous, TopicIndex) else 0
        same = isinstance(previous, TopicIndex) and previous.store.stop == stop
        if same and usable > 0 and previous.start == start and len(previous.store.turns) == usable:
            store, held = previous.store, usable  # the newest of its line: extended in place
    if held < end - start:
        passages = passage_index(index)
        _extend(store, index.turns[start + held : end], passages.store.pieces, passages.pieces)
    built = TopicIndex(start, end - start, store)
    index.memo[MEMO_KEY] = built
    return built


def topic_chars(topic: Topic) -> int:
    """The characters of a stretch's line (`packets.topic_line`), with its newline."""
    numbers = len(str(topic.first + 1))
    if topic.last > topic.first:
        numbers += len(str(topic.last + 1)) + 1
    day = len(topic.day) + 3 if topic.day else 0
    words = len(topic.words) + 2 if topic.words else 0
    return len("- Turns ") + numbers + day + words + 1


def _fewer(topic: Topic, size: int) -> Topic:
    return topic._replace(words=", ".join(topic.words.split(", ")[:size]))


def topics_fitting(
    view: TopicIndex, end: int, room: int, ratio: float
) -> tuple[tuple[Topic, ...], int]:
    """The finest stretches of the first `end` turns whose lines fit `room` tokens at `ratio`
    (`WORDS` words each, else `MIN_WORDS`), and their characters with the header; none when
    not even one line over them all fits. The search starts at the level whose lines could
    just fit at their shortest, so a 10,000-turn packet prices a few dozen lines."""
    count = view.stretches(end)
    if not count or room <= 0:
        return (), 0
    room_chars = int(room / ratio) if ratio > 0 else 0
    top = (count - 1).bit_length()  # the level of one line over every stretch
    finest = 0
    while finest < top and -(-count >> finest) * LINE_CHARS > room_chars:
        finest += 1
    for level in range(finest, top + 1):
        topics = view.topics(end, level)
        for size in (WORDS, MIN_WORDS):
            shown = topics if size == WORDS else [_fewer(t, size) for t in topics]
            chars = len(TOPICS_HEADER) + 2 + sum(map(topic_chars, shown))
            if estimate_tokens(chars, ratio) <= room:
                return tuple(shown), chars
    return (), 0


def coarser(view: TopicIndex, end: int, topics: Sequence[Topic]) -> tuple[Topic, ...]:
    """Stretches a level coarser than `topics` (fewer lines), none past a single line."""
    if len(topics) <= 1:
        return ()
    for level in range((view.stretches(end) - 1).bit_length() + 1):
        found = view.topics(end, level)
        if len(found) < len(topics):
            return tuple(_fewer(t, MIN_WORDS) for t in found)
    return ()


def coarsest(view: TopicIndex, end: int) -> tuple[Topic, ...]:
    """One line over every stretch of the first `end` turns, `MIN_WORDS` words."""
    count = view.stretches(end)
    if not count:
        return ()
    return tuple(_fewer(t, MIN_WORDS) for t in view.topics(end, (count - 1).bit_length()))


def coarsest_chars(view: TopicIndex, end: int) -> int:
    """What `coarsest` costs in characters, with the header (0: no stretch)."""
    lines = coarsest(view, end)
    return len(TOPICS_HEADER) + 2 + sum(map(topic_chars, lines)) if lines else 0
