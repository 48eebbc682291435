"""Passages: every earlier turn's words, found by the question and shown verbatim (issue #22).

A card says what a turn was about; the answer to "what did Maya name her puppy?" is in the words
themselves, and often in the *next* turn ("… what breed is your puppy?" ends one turn, "A border
collie called Biscuit" opens the next). So each frozen turn's whole text — the directive, every
assistant step's text, every tool result through its digest — is cut into pieces (a sentence, or
a few short ones, at most `PIECE_WORDS` words), kept in session order across turn boundaries,
and indexed by BM25 (Lucene's always-positive idf: a small chat has few pieces; a piece shorter
than the average counts as of average length, or a chat's "Take care!" goodbyes outrank what
was said about care). A passage is a piece with its neighbours: it scores its own match plus
half of each neighbour's, so the answer after a matching question travels with it, and shows
the three pieces verbatim, each tagged with its turn number, its day and its evidence id (the
entry holding the words: `recall({"id": …})` returns them whole). The best passage is shown
last, nearest the question.

The index is kept across a session's requests like the card index (`card_index.py`): it lives in
the TurnIndex's memo and is extended from the one that index was advanced from, reading only the
turns closed since. A request scores only its own terms' postings; a term held by more than
max(64, 5 %) of the pieces (a speaker's name, "the") is left out of the query, and only the best
`RANKED` passages are kept, which keeps a 10,000-turn recall under a millisecond (0.04 ms to
rank, 0.09 to select, on the planner bench's session). Pure and deterministic.
"""

from __future__ import annotations

import functools
import heapq
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from vak_desktop.context.capacity.profile import estimate_tokens
from vak_desktop.context.evidence.digests import digest_result
from vak_desktop.context.evidence.windows import short_ref
from vak_desktop.context.payloads import AssistantStep, EvidenceBody, ToolResult
from vak_desktop.context.planning.dates import days_named, months_named, said_on
from vak_desktop.context.planning.headers import dated_parts
from vak_desktop.context.planning.kinds import (
    PREFIX,
    asks_for_several,
    piece_kinds,
    question_kinds,
    verb_of,
)
from vak_desktop.context.planning.lexicon import Lexicon, Lexicons, has_cjk
from vak_desktop.context.planning.reading import Reading, reading_for
from vak_desktop.context.planning.relative_dates import annotate, asks_when, says_when
from vak_desktop.context.planning.relevance import K1, B, Corpus, Terms, words
from vak_desktop.context.planning.turns import LINEAGE, Turn, TurnIndex

MEMO_KEY = "passages"
PIECE_WORDS = 40  # a piece is a sentence (or a few short ones) up to this many words
PIECES_PER_TEXT = 256  # a pasted 5 MB log is indexed by its first pieces, not all of them
KIND_WEIGHT = 0.5  # a kind the question asks for weighs this much of a word it uses
NEIGHBOUR_WEIGHT = 0.5  # a passage scores its piece plus this share of each neighbour's
# passages scoring below this share of the best are not shown: on a small model a weak match
# costs more by distracting than it gives by recall (decision 0124)
RELATIVE_FLOOR = 0.5
# but a question asking for several things ("which cities…", "how many…") keeps those down to
# this share: a list's items each match about as well as the others (decision 0127)
SEVERAL_FLOOR = 0.25
# a term held by more than max(COMMON_FLOOR, 1/COMMON_SHARE of the pieces) is not queried: it
# names no subject, and its postings are most of a 10,000-turn query's cost
COMMON_FLOOR, COMMON_SHARE = 64, 20
RANKED = 256  # the best passages kept for selection (a 1,536-token slice holds ~25)
MISSES = 16  # pieces that did not fit before selection stops
# The slice of the budget a plan reserves for passages, when not every turn fits whole: a third
# of what the history may use, at least PASSAGE_FLOOR (or half, when even that is less), at most
# PASSAGE_CAP (see docs/decisions/0088-passage-recall.md)
PASSAGE_SHARE, PASSAGE_FLOOR, PASSAGE_CAP = 3, 160, 1_536
# A directive that asks about the conversation's past (its reading has the memory domain:
# "remember", "earlier", "our conversation") gets two thirds, up to MEMORY_CAP: what it asks
# for is in the passages, rarely in the newest turns the rest of the budget carries (on a small
# model, all that the history's floor leaves, up to FOCUSED_CAP: `assemble.py`, decisions 0108,
# 0116 and 0125: on the real 1.5B, 768 tokens of the best passages answered as well as 1,024)
MEMORY_SHARE, MEMORY_CAP, FOCUSED_CAP = 2 / 3, 3_072, 768
# but a question asking for several things gets up to this much: a list's items are spread over
# many sessions (decision 0130: on the real 1.5B, F1 0.156 → 0.172 on its 46 changed questions)
SEVERAL_CAP = 1_024
DAY = "◷"  # a day's index term: "◷2023-10-13" (a question naming the day finds what was said)
# a month's: "◶2023-11". A question naming the month ("in November 2023") favours what was said
# in it among the passages its words found; a month holds too much to find anything by itself
MONTH = "◶"
TIME = f"{PREFIX}time"  # the kind of a piece that says when: what a "when …?" question asks for
_NOT_WORDS = (PREFIX, DAY, MONTH)  # terms that are no word of the piece: not counted in its length
HEADER = "Passages of earlier turns that match the request, verbatim (turn, day, evidence id):"
_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'-]+|\b\w*\d\w*\b")
_QUOTED = re.compile(r"[\"“”'‘’«»]([^\"“”'‘’«»]{2,80})[\"“”'‘’«»]")


class Piece(NamedTuple):
    """A sentence or utterance of an earlier turn, with where it was said."""

    turn: int  # the turn's index (its number is `turn + 1`)
    side: str  # "user", "assistant", or the tool whose result it is
    ref: str  # the id of the entry holding the words
    said_at: str  # ISO-8601: the entry's source time, else its turn's
    text: str


def split_pieces(text: str) -> list[str]:
    """`text` as pieces: sentences joined while they stay within `PIECE_WORDS` words, a longer
    sentence cut every `PIECE_WORDS` words; at most `PIECES_PER_TEXT` of them."""
    pieces: list[str] = []
    held: list[str] = []
    for sentence in _SENTENCE.split(text):
        found = sentence.split()
        while found and len(pieces) < PIECES_PER_TEXT:
            room = PIECE_WORDS - len(held)
            if len(found) > room and held:
                pieces.append(" ".join(held))
                held = []
                continue
            held += found[:PIECE_WORDS]
            found = found[PIECE_WORDS:]
            if len(held) >= PIECE_WORDS:
                pieces.append(" ".join(held))
                held = []
    if held and len(pieces) < PIECES_PER_TEXT:
        pieces.append(" ".join(held))
    return pieces


def pieces_of(turn: Turn) -> list[Piece]:
    """Every piece of `turn`'s words in the order they were said: the directive, then each
    step's text and each tool result (as its digest: the card's stored one, else made here)."""
    said = turn.said_at
    out = _dated_pieces(turn.index, "user", turn.turn_id, said, turn.directive.text)
    card = turn.card
    digests = {t.evidence: t.digest for t in card.did if t.digest} if card is not None else {}
    bodies = {e.id: e.payload for e in turn.entries if isinstance(e.payload, EvidenceBody)}
    for entry in turn.entries:
        payload = entry.payload
        if isinstance(payload, AssistantStep) and payload.text:
            when = payload.said_at or said
            out += _dated_pieces(turn.index, "assistant", entry.id, when, payload.text)
        elif isinstance(payload, ToolResult) and payload.evidence:
            body = bodies.get(payload.evidence)
            text = digests.get(payload.evidence)
            if text is None and isinstance(body, EvidenceBody):
                text = digest_result(body.content, payload.evidence, is_error=body.is_error)
            name = payload.tool_name or "tool"
            out += [
                Piece(turn.index, name, payload.evidence, said, p) for p in split_pieces(text or "")
            ]
    return out


def _dated_pieces(turn: int, side: str, ref: str, said_at: str, text: str) -> list[Piece]:
    """The pieces of one message's `text`, each dated by the header above it (`dated_parts`:
    a session's first line joined to the message before it keeps its own session's day)."""
    out: list[Piece] = []
    for part, when in dated_parts(text, said_at):
        found = split_pieces(part)[: PIECES_PER_TEXT - len(out)]
        out += [Piece(turn, side, ref, when, p) for p in found]
    return out


def piece_terms(text: str) -> list[str]:
    """A piece's index terms: its words (`relevance.words`, read in one pass when it holds no
    Chinese or Japanese: lower-cased once, not word by word, since indexing a session's pieces
    is most of its cost), each brought to its `stem`, then the kinds its nouns name
    (`kinds.py`), and `TIME` when it says when something happened."""
    found = _lowered_words(text)
    when = [TIME] if says_when(text) else []
    return [stem(w) for w in found] + sorted(piece_kinds(found, text)) + when


def _lowered_words(text: str) -> list[str]:
    lowered = text.lower()
    return words(text) if has_cjk(lowered) else _WORD.findall(lowered)


@functools.lru_cache(maxsize=1 << 17)  # most of a chat's words recur
def stem(word: str) -> str:
    """`word` without an inflection a query and a passage may not share, so "what did Maria
    buy?" finds "I bought…" and "dance competitions" finds "dancing": an irregular English
    verb form becomes its verb ("bought" → "buy", "met" → "meet": WordNet's list, `kinds.py`);
    a plural's or a past's or a gerund's ending is cut from a word of five letters or more
    ("cities" → "city", "visited" → "visit", "painting" → "paint"); and a final silent "e"
    goes where no "-ing" or "-ed" was cut, so "dance", "dances", "danced" and "dancing" are
    all "danc". Crude and deterministic; every language's words go through it alike, so both
    sides of a match are cut the same way."""
    if not word.isalpha():
        return word
    word = verb_of(word)
    if len(word) >= 5:
        for ending, replacement in _ENDINGS:
            if word.endswith(ending) and len(word) - len(ending) >= 3:
                if ending == "s" and word.endswith(_KEEP_S):
                    break
                cut = word[: -len(ending)] + replacement
                return cut if ending in _VERB_ENDINGS else _without_silent_e(cut)
    return _without_silent_e(word)


def _without_silent_e(word: str) -> str:
    return word[:-1] if len(word) >= 4 and word.endswith("e") else word


# endings tried in order: "cities" → "city", "classes" → "class", "visited" → "visit",
# "painting" → "paint", "parents" → "parent" (but "glass", "status", "basis" keep theirs)
_ENDINGS = (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("s", ""))
_VERB_ENDINGS = ("ing", "ed")  # what they leave has lost its silent "e" already ("danc-ing")
_KEEP_S = ("ss", "us", "is")


def day_term(iso: str) -> str:
    """The index term of the day an ISO-8601 time falls on ("◷2023-10-13"), "" when none."""
    return f"{DAY}{iso[:10]}" if len(iso) >= 10 else ""


def _index_terms(piece: Piece) -> Counter[str]:
    """Every index term of `piece`: its `piece_terms`, and the day and month it was said."""
    counts = Counter(piece_terms(piece.text))
    if day := day_term(piece.said_at):
        counts[day] = 1
        counts[MONTH + piece.said_at[:7]] = 1  # "◶2023-10"
    return counts


def _terms(piece: Piece) -> Terms:
    counts = _index_terms(piece)
    return (tuple(counts), tuple(counts.values())) if counts else (("∅",), (1,))


@dataclass
class _Store:
    """The growing part, owned by the newest passage index of a line."""

    turns: list[Turn] = field(default_factory=list)
    pieces: list[Piece] = field(default_factory=list)
    corpus: Corpus = field(default_factory=Corpus)

    def append(self, turn: Turn) -> None:
        self.turns.append(turn)
        for piece in pieces_of(turn):
            self.pieces.append(piece)
            terms = _terms(piece)
            words = sum(n for t, n in zip(*terms, strict=True) if t[0] not in _NOT_WORDS)
            self.corpus.append(terms, max(words, 1))


@dataclass(frozen=True)
class PassageIndex:
    """The pieces of the frozen turns of one TurnIndex (`turns[start:start + size]`)."""

    start: int
    size: int
    store: _Store
    pieces: int  # how many of the store's pieces are this index's


def passage_slice(available: int, memory: bool = False) -> int:
    """The tokens a plan reserves for passages out of the `available` history budget (more
    when the directive asks about the conversation's past: `memory`)."""
    if memory:
        return min(MEMORY_CAP, int(available * MEMORY_SHARE))
    return min(PASSAGE_CAP, max(available // PASSAGE_SHARE, min(PASSAGE_FLOOR, available // 2)))


def focused_cap(directive: str) -> int:
    """The most tokens of passages a focused request carries: `FOCUSED_CAP`, or `SEVERAL_CAP`
    when the `directive` asks for several things (`kinds.asks_for_several`)."""
    return SEVERAL_CAP if asks_for_several(_lowered_words(directive)) else FOCUSED_CAP


def passages_over(turns: Sequence[Turn]) -> PassageIndex:
    """A passage index of `turns` built whole (a request outside a running session)."""
    store = _Store()
    for turn in turns:
        store.append(turn)
    return PassageIndex(0, len(turns), store, len(store.pieces))


def passage_index(index: TurnIndex) -> PassageIndex:
    """The passage index of `index`'s frozen turns (every turn but the last, those behind a
    reset too: what was said before it is still asked about), extended from the one its
    predecessor built when that one is the newest of its line."""
    own = index.memo.get(MEMO_KEY)
    if isinstance(own, PassageIndex):
        return own
    start = 0
    end = max(start, len(index.turns) - 1)
    store, held = _Store(), 0
    found = index.memo.get(LINEAGE, {}).get(MEMO_KEY)
    if found is not None:
        previous, kept = found
        usable = min(previous.size, kept - start) if isinstance(previous, PassageIndex) else 0
        if usable > 0 and previous.start == start and len(previous.store.turns) == usable:
            store, held = previous.store, usable  # the newest of its line: extended in place
    for turn in index.turns[start + held : end]:
        store.append(turn)
    built = PassageIndex(start, end - start, store, len(store.pieces))
    index.memo[MEMO_KEY] = built
    return built


def recall_for(
    turns: TurnIndex | Sequence[Turn],
    asked: str,
    lexicons: Lexicons,
    *,
    available: int,
    whole: int,
    memory: bool = False,
    behind: int = 0,
) -> tuple[PassageIndex | None, list[tuple[int, float]], int]:
    """The passage index of a request's earlier turns (a running session's `TurnIndex`, kept
    across requests, or the earlier turns themselves), the passages matching `asked`, and the
    slice the plan reserves for them out of the `available` history budget. `behind`: how many
    turns sit behind a reset (the request carries none of their words). When every live turn
    fits whole (`whole` tokens) their words are all in the request already: only the passages
    of turns behind the reset are recalled then, and none without a reset. `memory`: the
    directive asks about the conversation's past (`passage_slice`)."""
    if not asked or (whole <= available and not behind):
        return None, [], 0
    found = passage_index(turns) if isinstance(turns, TurnIndex) else passages_over(turns)
    recalled = ranked_passages(found, asked, query_stop_words(asked, lexicons))
    if whole <= available:  # only what the request does not carry already
        pieces = found.store.pieces
        recalled = [(c, s) for c, s in recalled if pieces[c].turn < behind]
    return found, recalled, passage_slice(available, memory) if recalled else 0


def query_stop_words(directive: str | Reading, lexicons: Lexicons) -> frozenset[str]:
    """The words of the directive's languages that name no subject: stop and function words and
    the one-word cues of asking about the conversation or an earlier turn ("conversation",
    "earlier", "remember"), which every question of that kind shares. Joined once per reading
    of the directive (`reading_for`: its languages as read, shared by a turn's requests), not
    by normalising its text and joining the lexicons' sets again on every request."""
    read = reading_for(directive, lexicons)
    return read.derived("query_stop_words", lambda: _subjectless(read.read_in, lexicons))


def _subjectless(languages: Sequence[Lexicon], lexicons: Lexicons) -> frozenset[str]:
    stop = set(lexicons.stop_words(languages).words)
    for lex in languages:
        stop |= lex.function_words.words | lex.about_conversation.words | lex.recall.words
        stop |= lex.answer_form.words
    return frozenset(stop)


def query_terms(directive: str, stop: frozenset[str] = frozenset()) -> list[str]:
    """The directive's words for a passage query, less `stop` (read before `stem` cuts them:
    "there" is a stop word, "ther" is not) and one-letter words; its names, numbers and quoted
    words ("Biscuit", "2023", 'the "blue" folder') count twice; the days it names ("on
    October 13, 2023" asks for what was said that day: `day_term`), and the months, twice as
    names are (`MONTH`); then the kinds its answer type asks for ("which cities" asks for any
    city: `kinds.py`), and `TIME` when it asks when."""
    query = _asked(directive, stop)
    for match in _NAME.finditer(directive):
        query += _asked(match.group(), stop)
    for match in _QUOTED.finditer(directive):
        query += _asked(match.group(1), stop)
    query += [day_term(day) for day in days_named(directive)]
    query += [MONTH + month for month in months_named(directive) for _ in range(2)]
    when = [TIME] if asks_when(directive) else []
    return query + question_kinds(_lowered_words(directive)) + when


def _asked(text: str, stop: frozenset[str]) -> list[str]:
    kept = (stem(w) for w in _lowered_words(text) if w not in stop)
    return [w for w in kept if len(w) > 1]


def ranked_passages(
    found: PassageIndex, directive: str, stop: frozenset[str] = frozenset()
) -> list[tuple[int, float]]:
    """Passage centres (the positions of the pieces that match) by score, best first (newest
    first on ties), down to `RELATIVE_FLOOR` of the best (`SEVERAL_FLOOR` when the directive
    asks for several things: `kinds.asks_for_several`): each scores its piece's BM25 plus
    `NEIGHBOUR_WEIGHT` of each neighbour's."""
    corpus, size = found.store.corpus, found.pieces
    if not size:
        return []
    weights: dict[str, float] = {}
    for term in query_terms(directive, stop):
        weights[term] = weights.get(term, 0.0) + (KIND_WEIGHT if term[0] == PREFIX else 1.0)
    held = {t: corpus.holders[t] for t in weights if corpus.holders.get(t)}
    if size < corpus.size:  # an older view of a store that moved on: its own counts only
        held = {t: n for t in held if (n := sum(1 for p, _ in corpus.postings[t] if p < size))}
    common = max(COMMON_FLOOR, size // COMMON_SHARE)
    # a word this many pieces hold is no subject alone (a speaker's name), nor is a month
    rare = {t: n for t, n in held.items() if n <= common and t[0] != MONTH}
    broad = {t: n for t, n in held.items() if t not in rare}
    scores = _bm25(corpus, size, rare, weights)
    if not scores:  # every word asked is a common one: no passage is told apart by them
        return []
    windows = {
        centre: score
        + NEIGHBOUR_WEIGHT * (scores.get(centre - 1, 0.0) + scores.get(centre + 1, 0.0))
        for centre, score in scores.items()
    }
    ranked = heapq.nsmallest(RANKED, windows.items(), key=lambda item: (-item[1], -item[0]))
    if broad:  # the common words asked still tell the best of the found passages apart
        average = _average_length(corpus, size)
        ranked = sorted(
            ((c, s + _broad_score(found, c, broad, weights, average)) for c, s in ranked),
            key=lambda item: (-item[1], -item[0]),
        )
    several = asks_for_several(_lowered_words(directive))
    floor = ranked[0][1] * (SEVERAL_FLOOR if several else RELATIVE_FLOOR)
    return [(c, s) for c, s in ranked if s >= floor]


def _broad_score(
    found: PassageIndex,
    position: int,
    broad: dict[str, int],
    weights: dict[str, float],
    average: float,
) -> float:
    """The BM25 of the common query words `broad` (term → holders) in the piece at `position`,
    each count read by bisecting the term's postings (`Corpus.count`): walking them whole is
    too long on every request, and tokenising the piece again took most of a ranking."""
    corpus = found.store.corpus
    norm = _length_norm(corpus.lengths[position], average)
    score = 0.0
    for term, holders in broad.items():
        count = corpus.count(term, position)
        if count:
            idf = _idf(found.pieces, holders)
            score += weights[term] * idf * count * (K1 + 1) / (count + norm)
    return score


def _average_length(corpus: Corpus, size: int) -> float:
    """The mean length of the first `size` pieces (an older view counts only its own)."""
    lengths = corpus.lengths
    return sum(lengths[:size]) / size if size < len(lengths) else corpus.total / size


def _length_norm(length: int, average: float) -> float:
    """BM25's length norm of a piece `length` words long, a piece shorter than the `average`
    read as of average length: Okapi's norm weighs each word of a three-word "Nate: Take care!"
    ~1.6 times an average piece's, and a chat's goodbyes then outranked the pieces that named
    the subject (decision 0126). A longer piece is still scored down."""
    return K1 * (1 - B + B * max(length, average) / average)


def _idf(size: int, holders: int) -> float:
    """Lucene's always-positive idf of a term `holders` of `size` pieces hold."""
    return math.log(1 + (size - holders + 0.5) / (holders + 0.5))


def _bm25(
    corpus: Corpus, size: int, held: dict[str, int], weights: dict[str, float]
) -> dict[int, float]:
    """Okapi BM25 with Lucene's idf over the first `size` pieces, for the terms in `held`."""
    lengths = corpus.lengths
    average = _average_length(corpus, size)
    scores: dict[int, float] = {}
    for term, holders in held.items():
        weight = weights[term] * _idf(size, holders)
        for position, count in corpus.postings[term]:
            if position >= size:
                break
            norm = _length_norm(lengths[position], average)
            scores[position] = scores.get(position, 0.0) + weight * (
                count * (K1 + 1) / (count + norm)
            )
    return scores


@dataclass(frozen=True)
class Recalled:
    """The passages a request carries: their text, cost, and what they quote."""

    text: str = ""
    tokens: int = 0
    turns: tuple[int, ...] = ()  # the turn numbers quoted, in order
    refs: tuple[str, ...] = ()  # the evidence ids quoted, in order


def passage_line(piece: Piece) -> str:
    """One piece as the request shows it: "[turn 15, user, Mon 8 May 2023, ev:ab12cd…] …", its
    relative times resolved where they are said."""
    day = said_on(piece.said_at)
    when = f", {day}" if day else ""
    head = f"[turn {piece.turn + 1}, {piece.side}{when}, ev:{short_ref(piece.ref)}]"
    return f"{head} {annotate(piece.text, piece.said_at)}"


def select_passages(
    found: PassageIndex,
    ranked: Sequence[tuple[int, float]],
    tokens: int,
    ratio: float,
    shown: Iterable[int] = (),
) -> Recalled:
    """The best passages of `ranked` within `tokens` at `ratio`, each piece once, none from a
    turn in `shown` (turn indexes the request carries whole): each passage's centre first, then
    the piece after it (an answer follows its question), then the one before; shown as runs of
    adjacent pieces in session order, the run of the best passage last (`_best_run_last`)."""
    if tokens <= 0 or not ranked:
        return Recalled()
    skip, pieces = set(shown), found.store.pieces
    chosen: dict[int, str] = {}  # by position, in the order the passages chose them
    chars, misses = len(HEADER), 0
    limit = found.pieces
    for centre, _score in ranked:
        around: tuple[int, ...] = (centre, centre + 1, centre - 1)
        if pieces[centre].turn in skip:  # the request has its turn whole: what answers it
            around = (centre + 1,) if centre + 1 < limit else ()  # may open the next turn
        for position in around:
            if not 0 <= position < limit or position in chosen:
                continue
            piece = pieces[position]
            if piece.turn in skip:
                continue
            line = passage_line(piece)
            if estimate_tokens(chars + 1 + len(line), ratio) > tokens:
                misses += 1
                if position == centre:
                    break  # the passage's own piece does not fit: try a smaller one
                continue
            chosen[position] = line
            chars += 1 + len(line)
        if misses >= MISSES:
            break  # the slice is as full as the passages left can make it
    if not chosen:
        return Recalled()
    order = _best_run_last(list(chosen))
    lines = [HEADER]
    for at, position in enumerate(order):  # a piece after its own entry's, said the same
        previous = order[at - 1] if at else -2  # day: one line
        if previous == position - 1 and _same_line(pieces[previous], pieces[position]):
            lines[-1] += " " + annotate(pieces[position].text, pieces[position].said_at)
        else:
            lines.append(chosen[position])
    text = "\n".join(lines)
    turns = tuple(dict.fromkeys(pieces[p].turn + 1 for p in order))
    refs = tuple(dict.fromkeys(short_ref(pieces[p].ref) for p in order))
    return Recalled(text, estimate_tokens(len(text), ratio), turns, refs)


def _best_run_last(chosen: list[int]) -> list[int]:
    """The `chosen` positions (in the order the passages chose them, the best's first) as runs
    of adjacent pieces, each in session order, the run chosen first last: nearest the question,
    where a small model reads best (decision 0128: on the real 1.5B, F1 0.233 → 0.263 with the
    same pieces)."""
    placed = {position: at for at, position in enumerate(chosen)}
    runs: list[list[int]] = []
    for position in sorted(chosen):
        if runs and runs[-1][-1] == position - 1:
            runs[-1].append(position)
        else:
            runs.append([position])
    runs.sort(key=lambda run: -min(placed[p] for p in run))
    return [p for run in runs for p in run]


def _same_line(before: Piece, after: Piece) -> bool:
    return before.ref == after.ref and before.said_at[:10] == after.said_at[:10]
