"""A card's gist of a long text: its salient sentences within a word budget, in their order
(spec §10; #22 item 3).

A card is a few lines whatever it summarises, so a long directive or answer is shown by part of
itself. Its first sentence is the least informative part of a chat message ("Thanks, Anna.",
"Hey! How are you?"), so the gist keeps the sentences that carry the turn's content instead:
each sentence is scored by what it names — numbers and dates, proper names, quoted strings,
code identifiers and paths, long content words — per word, so a long sentence is not preferred
for its length; a sentence of nothing but greetings, fillers and stop words scores down. The
best sentences are taken until the budget is full (a sentence longer than the whole budget is
cut to its most salient run of words) and shown in the order they were written, a gap marked
"…". Deterministic: the same text gives the same gist; no model call, no corpus.

A speaker label opening the text ("Caroline: …", as chat imports write them) is kept in front.
"""

from __future__ import annotations

import math
import re
from collections.abc import Set

# Split at a sentence end followed by space, and at line breaks (a list is a line each).
_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\s*\n\s*")
_SPEAKER = re.compile(r"^([A-Z][\w.'’-]*(?: [A-Z][\w.'’-]*){0,3}):\s+")
_QUOTED = re.compile(r"\"[^\"]{1,200}\"|“[^”]{1,200}”|`[^`]{1,200}`|«[^»]{1,200}»")
_EDGE = "\"'“”‘’`«»()[]{}<>,.;:!?…*_~"
_DIGIT = re.compile(r"\d")
_WORDS = re.compile(r"\S+")
_IDENTIFIER = re.compile(r"[a-z0-9][A-Z]|_|::|\(\)|/|\.\w|@|#\w|=")
_CAPITALISED = re.compile(r"^[A-ZÀ-ÖØ-ÞĀ-Ž]")

NUMBER = 3.0  # a number, a date, an amount, a version
QUOTED = 3.0  # a word inside quotes or backticks
NAME = 2.5  # a capitalised word that is not the sentence's opening word (or is a known name)
IDENTIFIER = 2.5  # code: snake_case, camelCase, a path, a call, a flag
LONG = 1.5  # a content word of LONG_LETTERS or more
WORD = 1.0  # another content word of four letters or more
SHORT = 0.3  # a short word that is no stop word
LONG_LETTERS = 7
GAP = "…"  # where words of the text are left out
WEAK = 1 / 3  # a sentence scoring under this share of the best one is left out
MIN_RUN = 6  # the fewest words of a sentence cut to fit the room left
FILLER_ONLY = 0.2  # a sentence with nothing but fillers (and names): "Thanks, Anna!"


def _set(written: str) -> frozenset[str]:
    return frozenset(written.split())


MONTHS_AND_DAYS = _set(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday "
    "saturday sunday today yesterday tomorrow tonight weekend"
)
# Greetings, acknowledgements and fillers: what a chat message opens with and says nothing by.
FILLERS = _set(
    "hi hey hello hiya yo thanks thank thx ty cheers bye goodbye ok okay okey sure yes yeah yep "
    "yup no nope nah wow oh ah aw aww haha hahaha lol lmao omg hmm um uh well so great good nice "
    "cool awesome amazing wonderful fantastic glad happy sorry please welcome congrats "
    "congratulations hope hopefully really totally definitely absolutely indeed anyway btw "
    "just like love lovely sounds sound fun exciting excited interesting true right agreed "
    "appreciate appreciated means mean feel feels felt know think guess bet dear buddy friend "
    "man dude pal mate you your you're i i'm im me my mine we us our it it's its that's this "
    "that the a an and or but to of in on at for with is are was were be been am do does did "
    "have has had can could would should will what how much too very always never ever again "
    "there here such kind lot lots thing things stuff agree"
)


def _bare(word: str) -> str:
    return word.strip(_EDGE)


def word_weight(word: str, *, opening: bool, stop_words: Set[str], quoted: bool) -> float:
    """What one word says: see the module docstring's order."""
    bare = _bare(word)
    if not bare:
        return 0.0
    lowered = bare.lower()
    if _DIGIT.search(bare):
        return NUMBER
    if quoted:
        return QUOTED
    if lowered in MONTHS_AND_DAYS:
        return NUMBER
    if lowered in FILLERS or lowered in stop_words:
        return 0.0
    if _IDENTIFIER.search(bare):
        return IDENTIFIER
    if _CAPITALISED.match(bare) and not opening:
        return NAME
    letters = sum(c.isalpha() for c in bare)
    if letters >= LONG_LETTERS:
        return LONG
    return WORD if letters >= 4 else SHORT


def sentence_weights(sentence: str, stop_words: Set[str]) -> list[float]:
    """Each word's weight in `sentence` (the words as `str.split` gives them)."""
    spans = [m.span() for m in _WORDS.finditer(sentence)]
    quotes = [m.span() for m in _QUOTED.finditer(sentence)]
    weights, q = [], 0
    for i, (start, end) in enumerate(spans):
        while q < len(quotes) and quotes[q][1] <= start:
            q += 1
        inside = q < len(quotes) and quotes[q][0] <= start and end <= quotes[q][1] + 1
        word = sentence[start:end]
        weights.append(word_weight(word, opening=i == 0, stop_words=stop_words, quoted=inside))
    return weights


def fillers_only(weights: list[float]) -> bool:
    """Nothing but fillers, stop words and names: "Thanks, Anna!", "Hey Tom, how are you?"."""
    return not any(w not in (0.0, NAME, SHORT) for w in weights)


def sentence_score(weights: list[float]) -> float:
    """A sentence's salience: its weight per word, damped by length (so a long sentence is not
    preferred for its length alone), and scored down when it holds nothing but fillers and
    names ("Thanks, Anna." says nothing the name alone would not)."""
    if not weights:
        return 0.0
    total = sum(weights) * (FILLER_ONLY if fillers_only(weights) else 1.0)
    return total / math.sqrt(len(weights))


def _best_window(words: list[str], weights: list[float], size: int) -> tuple[int, int]:
    """The run of `size` words of the highest total weight (the earliest of equals)."""
    best, at, running = -1.0, 0, sum(weights[:size])
    for start in range(len(words) - size + 1):
        if start:
            running += weights[start + size - 1] - weights[start - 1]
        if running > best + 1e-9:
            best, at = running, start
    return at, at + size


def split_sentences(flat: str) -> list[str]:
    return [s for s in _SENTENCE.split(flat) if s.strip()]


def gist(text: str, budget: int, stop_words: Set[str] = frozenset()) -> tuple[str, int]:
    """The salient part of `text` within `budget` words, and how many words of it are shown.
    Sentences keep their order; a gap between two shown sentences (or before the first, after
    the last) is "…"."""
    text = text.strip()
    speaker = ""
    label = _SPEAKER.match(text)
    if label:
        speaker, text = label.group(1) + ":", text[label.end() :]
    sentences = split_sentences(text)
    scored = []
    for position, sentence in enumerate(sentences):
        weights = sentence_weights(sentence, stop_words)
        scored.append((sentence_score(weights), position, sentence.split(), weights))
    # a sentence of fillers is shown only when the text has nothing else to show
    informative = [s for s in scored if not fillers_only(s[3])] or scored
    chosen: dict[int, list[str]] = {}
    room = budget
    ranked = sorted(informative, key=lambda s: (-s[0], s[1]))
    floor = ranked[0][0] * WEAK if ranked else 0.0
    said: set[tuple[str, ...]] = set()
    for score, position, words, weights in ranked:
        if room <= 0 or (chosen and score < floor):
            break  # what is left says little beside what was chosen
        if tuple(words) in said:
            continue  # a repeated sentence (a pasted log's lines) says nothing new
        said.add(tuple(words))
        if len(words) <= room:
            chosen[position] = words
            room -= len(words)
        elif not chosen or room >= MIN_RUN:  # over the room left: its most salient run
            start, end = _best_window(words, weights, room)
            cut = words[start:end]
            chosen[position] = ([GAP] if start else []) + cut + ([GAP] if end < len(words) else [])
            room = 0
    parts: list[str] = [speaker] if speaker else []
    labelled = len(speaker.split())
    previous = -1
    for position in sorted(chosen):
        if position != previous + 1:
            parts.append(GAP)
        parts.extend(chosen[position])
        previous = position
    if previous != len(sentences) - 1:
        parts.append(GAP)
    shown = labelled + sum(len(ws) - ws.count(GAP) for ws in chosen.values())
    kept = [p for i, p in enumerate(parts) if p != GAP or i == 0 or parts[i - 1] != GAP]
    return " ".join(kept), shown
