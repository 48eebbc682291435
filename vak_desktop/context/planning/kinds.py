"""Kinds: which kind of thing an English noun names, so "which cities has Jon visited?" finds
"a short trip to Rome" and "what is Evan's favourite food?" finds "ginger snaps are my weakness".

A question that asks for a kind of thing ("which cities", "what martial arts", "which country")
shares no word with the turn that answers it: the answer names a member ("Rome", "taekwondo",
"the UK"). Lexical recall cannot see that; a noun taxonomy can. WordNet 3.0's nouns ship as
`resources/kinds/wordnet-nouns.txt.gz` (written by `tools/make_kinds.py`; ~1 MB, read once, on
the first passage query): each synset's depth and hypernyms, and each lemma's most frequent
senses. The same file holds WordNet's irregular English verb forms ("bought" → "buy"), which
`passages.stem` reads through `verb_of` (decision 0115).

Both sides of a passage match use it (`passages.py`):
- a piece's nouns (a word, or two adjacent words that are one lemma: "ginger snap", "martial
  art") stand for the kinds above their `INDEXED_SENSES` most frequent senses, up to `HOPS`
  hypernyms up and never a kind shallower than `MIN_DEPTH` ("entity", "object", "matter" name
  no subject): each such kind is one more index term of the piece, `⊂<id>`;
- the nouns naming a question's answer type ("which *cities*", "favourite *food*":
  `answer_type`) ask for the kinds they name (their `ASKED_SENSES` senses): `⊂<id>` terms.
A kind many pieces hold ("activity", "region") is a common term like any other: BM25's idf weighs
it down and the commonness rule leaves it out of the query. English only: other languages' words
are not WordNet lemmas and pass unchanged. Pure and deterministic.
"""

from __future__ import annotations

import functools
import gzip
import itertools
import json
import re
from dataclasses import dataclass

from vak_desktop.shipped import shipped

SOURCE = "kinds/wordnet-nouns.txt.gz"
PREFIX = "⊂"  # a kind's index term: "⊂4197" (no word of any text starts with it)
INDEXED_SENSES = 2  # a piece's noun stands for the kinds above its two most frequent senses
ASKED_SENSES = 2  # a question's noun asks for its two most frequent senses
HOPS = 4  # kinds up to this many hypernyms above a sense ("gingersnap" … "food" is four)
MIN_DEPTH = 4  # kinds nearer the root than this name no subject ("entity" 0, "location" 3)
MIN_LETTERS = 3  # "us", "it", "am" are WordNet nouns (the United States, IT, americium): a
# shorter word is read only where it was written in capitals ("the UK", "in the US")
# the words after which a question names its answer's kind, and the words skipped there
_ASKING = frozenset({"what", "which", "favorite", "favourite"})
_SKIPPED = frozenset({"kind", "kinds", "type", "types", "sort", "sorts", "of"})
_SHORT_CAPITALS = re.compile(r"\b[A-Z]{2}\b")
# a regular plural's endings and what its singular ends with, tried in order (WordNet's own
# detachment rules for nouns); irregular plurals ("children") come from the file
_PLURALS = (
    ("ses", "s"),
    ("xes", "x"),
    ("zes", "z"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("men", "man"),
    ("ies", "y"),
    ("s", ""),
)


@dataclass(frozen=True)
class Taxonomy:
    """WordNet's nouns as the shipped file holds them."""

    depth: tuple[int, ...]  # by synset id
    parents: tuple[tuple[int, ...], ...]  # hypernyms (instance hypernyms too), by synset id
    senses: dict[str, tuple[int, ...]]  # lemma ("ginger_snap") → synset ids, most frequent first
    plurals: dict[str, str]  # irregular plural → lemma
    verbs: dict[str, str]  # irregular verb form → the verb ("bought" → "buy", "ran" → "run")
    stop: frozenset[str]  # English stop and function words: never read as nouns


@functools.cache
def taxonomy() -> Taxonomy:
    """The shipped taxonomy, read once."""
    depth: list[int] = []
    parents: list[tuple[int, ...]] = []
    senses: dict[str, tuple[int, ...]] = {}
    plurals: dict[str, str] = {}
    verbs: dict[str, str] = {}
    text = gzip.decompress(shipped(SOURCE).read_bytes()).decode("utf-8")
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "S":
            first, *others = rest.split()
            depth.append(int(first))
            parents.append(tuple(map(int, others)))
        elif kind == "L":
            lemma, *ids = rest.split()
            senses[lemma] = tuple(map(int, ids))
        elif kind == "X":
            plural, lemma = rest.split()
            plurals[plural] = lemma
        elif kind == "V":
            form, verb = rest.split()
            verbs[form] = verb
    english = json.loads(shipped("lexicons/en.json").read_text(encoding="utf-8"))
    stop = frozenset(english["stop_words"]) | frozenset(english["function_words"])
    return Taxonomy(tuple(depth), tuple(parents), senses, plurals, verbs, stop)


def verb_of(word: str) -> str:
    """The verb an irregular English verb form (lower-case) is a form of ("bought" → "buy",
    "met" → "meet", "shopping" → "shop"), else `word` itself."""
    return taxonomy().verbs.get(word, word)


@functools.lru_cache(maxsize=1 << 16)
def lemma(word: str, capitals: bool = False) -> str | None:
    """The WordNet noun lemma `word` (lower-case; two words joined by "_") is a form of: itself,
    its irregular plural's singular, or a regular plural's; None when it is no noun here.
    `capitals`: the word was written in capitals (a short one is read then)."""
    found = taxonomy()
    if (word in found.stop and not capitals) or len(word) < (2 if capitals else MIN_LETTERS):
        return None
    if word in found.senses:
        return word
    if word in found.plurals:
        return found.plurals[word]
    for ending, replacement in _PLURALS:
        if word.endswith(ending):
            singular = word[: -len(ending)] + replacement
            if len(singular) >= MIN_LETTERS and singular in found.senses:
                return singular
    return None


@functools.lru_cache(maxsize=1 << 16)
def kinds_of(word: str, capitals: bool = False) -> tuple[str, ...]:
    """The index terms of the kinds `word` (a noun, or "ginger_snaps") is a member of."""
    noun = lemma(word, capitals)
    if noun is None:
        return ()
    found = taxonomy()
    kinds: set[int] = set()
    for sense in found.senses[noun][:INDEXED_SENSES]:
        level = {sense}
        for _ in range(HOPS):
            level = {p for s in level for p in found.parents[s]}
            kinds |= {k for k in level if found.depth[k] >= MIN_DEPTH}
    return tuple(f"{PREFIX}{k}" for k in sorted(kinds))


@functools.lru_cache(maxsize=1 << 12)
def asked_kinds(word: str) -> tuple[str, ...]:
    """The index terms of the kinds a question's noun `word` asks for ("cities" → city)."""
    noun = lemma(word)
    if noun is None:
        return ()
    found = taxonomy()
    return tuple(
        f"{PREFIX}{s}" for s in found.senses[noun][:ASKED_SENSES] if found.depth[s] >= MIN_DEPTH
    )


def piece_kinds(words: list[str], text: str = "") -> set[str]:
    """The kinds a piece's lower-cased `words` name: each word's, each adjacent pair's that is
    one lemma ("martial arts", "ginger snaps"), and each short word `text` has in capitals."""
    kinds = {k for short in _SHORT_CAPITALS.findall(text) for k in kinds_of(short.lower(), True)}
    previous = ""
    for word in words:
        if not word.isalpha():
            previous = ""
            continue
        kinds.update(kinds_of(word))
        if previous:
            kinds.update(kinds_of(f"{previous}_{word}"))
        previous = word
    return kinds


def asks_for_several(words: list[str]) -> bool:
    """Whether a question's lower-cased `words` ask for several things: "how many", or a plural
    noun names its answer's kind ("which cities…", "what martial arts…", "what items…")."""
    if any(a == "how" and b == "many" for a, b in itertools.pairwise(words)):
        return True
    return any(word and _plural(word) for word in answer_type(words))


def _plural(word: str) -> bool:
    """`word` is a noun's plural: a form of another lemma ("cities"), or a noun whose own
    singular is a noun too ("arts", "things": WordNet lists both)."""
    singular = lemma(word)
    if singular is None:
        return False
    if singular != word:
        return True
    return word.endswith("s") and not word.endswith("ss") and lemma(word[:-1]) == word[:-1]


def answer_type(words: list[str]) -> list[str]:
    """The words of a question that name the kind of thing its answer is: the phrase after
    "what" or "which" ("which cities has…", "what martial arts…", "in what country…"), or
    after "favourite" ("Evan's favorite food"), up to the next function word, "kind of" and
    the like skipped. Only these ask for kinds: "…after talking about healthy snacks" is the
    question's topic, not its answer's kind (LoCoMo conv-49: expanding every noun of the
    question cost two answers their passages)."""
    found: list[str] = []
    stop = taxonomy().stop
    for at, word in enumerate(words):
        if word not in _ASKING:
            continue
        for following in range(at + 1, len(words)):  # not a slice: a copy per "what" is
            after = words[following]  # quadratic on a pasted 5 MB directive
            if after in _SKIPPED:
                continue
            if after in stop or not after.isalpha():
                break
            found.append(after)
        found.append("")  # phrases stay apart: no pair across two of them
    return found


def question_kinds(words: list[str]) -> list[str]:
    """The kinds a question's lower-cased `words` ask for (its `answer_type`), each once, in
    order."""
    asked: dict[str, None] = {}
    previous = ""
    for word in answer_type(words):
        if not word:
            previous = ""
            continue
        if previous:
            asked.update(dict.fromkeys(asked_kinds(f"{previous}_{word}")))
        asked.update(dict.fromkeys(asked_kinds(word)))
        previous = word
    return list(asked)
