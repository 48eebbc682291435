"""Lexicons: the cue words a directive's reading is made of, one per language, as plain data.

Why it exists: which tools a turn loads, whether the live-data gate fires, which card a request
reads as and whether the model failed an explicit instruction all rest on word cues (spec §5,
§7). Written in code they were English only; here they are values parsed from the shipped
`lexicons/<lang>.json` files (schema: `lexicons/schema.json`). The runtime loads the files once
(`runtime/lexicons.py`) and hands the parsed `Lexicons` in, the way the card library is handed
in: this module reads no file.

A cue is written in one of these forms (matched on the NFKC-normalised, case-folded text):

    word        a whole word                     "price"
    stem*       a word starting with the stem    "teraz*", "aktuell*"  (inflections)
    *tail       a word ending with the tail      "*preis"              (compound heads)
    *part*      a word containing the part       "*temperatur*"
    two words   consecutive words, each element one of the forms above, and an element may
                list alternatives with `|`        "right now", "no live|current data|value"
    現在         a cue in Chinese or Japanese script is found anywhere in the text: these
                scripts have no spaces, so a cue is matched as the character n-gram it is

Words are runs of letters, digits, `'`, `’` and `-`; a word also matches through its parts
("l'heure" matches "heure", "Metrik-Karte" matches "karte"). A run of CJK characters is kept
apart from Latin letters beside it ("recallツール" is "recall" and "ツール").

A cue set is matched by presence (`Cues`) or, where word order is the reading (asked-for
actions: "search … my files"), compiled to one regular expression per rule (`Actions`); both
read the same cue syntax. Over 400 lines on purpose: the cue syntax, the text it is matched
over and its two compiled forms must agree word for word (a Latin cue's regex edges are
exactly the word boundaries `Text` splits at), so they are kept in one module.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import blake3

_WORD = re.compile(r"[\w'’-]+", re.UNICODE)
_PARTS = re.compile(r"['’-]")
# Han, Hiragana, Katakana (incl. the prolonged-sound mark), CJK punctuation-free ranges
_CJK_RANGES = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_RUN = re.compile(f"[{_CJK_RANGES}]+")
KEPT_READINGS = 4  # directives whose reading `Lexicons.remembered` keeps
R = TypeVar("R")
_SENTENCE = re.compile(r"[.!?]+(?=\s|$)|[。！？\n]+")  # "research.synthesis" is one sentence


def normalise(text: str) -> str:
    """The form every cue and every text is matched in: NFKC (full-width forms folded), then
    case-folded ("ß" → "ss", "Ｓｈｏｗ" → "show")."""
    return unicodedata.normalize("NFKC", text).casefold()


def has_cjk(text: str) -> bool:
    return CJK_RUN.search(text) is not None


def split_words(text: str) -> list[str]:
    """The words of normalised text, CJK runs kept apart from the letters beside them."""
    out: list[str] = []
    for match in _WORD.findall(text):
        if not has_cjk(match):
            out.append(match)
            continue
        position = 0
        for run in CJK_RUN.finditer(match):
            if run.start() > position:
                out.append(match[position : run.start()])
            out.append(run.group())
            position = run.end()
        if position < len(match):
            out.append(match[position:])
    return [w for w in out if w.strip("'’-")]


def sentences(text: str) -> list[str]:
    """Normalised text split at sentence ends (Latin and CJK punctuation, line breaks)."""
    return [s for s in _SENTENCE.split(text) if s.strip()]


@dataclass(frozen=True)
class Text:
    """A directive (or a sentence of one) ready for cue matching."""

    lowered: str
    words: tuple[str, ...]
    parts: tuple[frozenset[str], ...]  # per word: itself and its pieces split at ' ’ -

    @classmethod
    def of(cls, text: str, *, normalised: bool = False) -> Text:
        lowered = text if normalised else normalise(text)
        words = tuple(split_words(lowered))
        made: dict[str, frozenset[str]] = {}  # one parts set per distinct word
        parts = []
        for w in words:
            found = made.get(w)
            if found is None:
                found = made[w] = frozenset({w, *(p for p in _PARTS.split(w) if p)})
            parts.append(found)
        return cls(lowered, words, tuple(parts))

    @functools.cached_property
    def at_parts(self) -> dict[frozenset[str], list[int]]:
        """Each distinct word's parts and the positions of the words that have them: a cue set
        is tested once per distinct word, not once per word (a 5 MB paste repeats its words)."""
        where: dict[frozenset[str], list[int]] = {}
        for i, parts in enumerate(self.parts):
            found = where.get(parts)
            if found is None:
                where[parts] = [i]
            else:
                found.append(i)
        return where

    @functools.cached_property
    def vocabulary(self) -> frozenset[str]:
        """Every word and word part of the text."""
        return frozenset().union(*self.at_parts)


@dataclass(frozen=True)
class _Element:
    """One word position of a cue: its alternatives by form, so a word is tested with one
    `in`, one `startswith` and one `endswith` over tuples (C loops, not Python ones)."""

    whole: frozenset[str] = frozenset()
    stems: tuple[str, ...] = ()
    tails: tuple[str, ...] = ()
    inner: tuple[str, ...] = ()

    def matches(self, parts: frozenset[str]) -> bool:
        if not self.whole.isdisjoint(parts):
            return True
        if not (self.stems or self.tails or self.inner):
            return False  # most elements are whole words: one set test, no loop
        for word in parts:
            if (
                word.startswith(self.stems)
                or word.endswith(self.tails)
                or any(text in word for text in self.inner)
            ):
                return True
        return False


def _element(written: str) -> _Element:
    whole, stems, tails, inner = set(), [], [], []
    for alternative in written.split("|"):
        head, tail = alternative.startswith("*"), alternative.endswith("*")
        text = alternative.strip("*")
        if head and tail:
            inner.append(text)
        elif head:
            tails.append(text)
        elif tail:
            stems.append(text)
        else:
            whole.add(text)
    return _Element(frozenset(whole), tuple(stems), tuple(tails), tuple(inner))


@dataclass(frozen=True)
class Cues:
    """A compiled cue set: whole words (a set lookup), single-element patterns, multi-word
    phrases and CJK substrings."""

    words: frozenset[str] = frozenset()
    patterns: tuple[_Element, ...] = ()  # one-word cues with a `*` or `|`, one element each
    phrases: tuple[tuple[_Element, ...], ...] = ()
    substrings: tuple[str, ...] = ()
    any_pattern: _Element = _Element()  # every pattern's forms in one element

    @classmethod
    def of(cls, written: Iterable[str]) -> Cues:
        words, patterns, phrases, substrings = set(), [], [], []
        for cue in (normalise(c).strip() for c in written):
            if has_cjk(cue):
                substrings.append(cue)
            elif " " in cue:
                phrases.append(tuple(_element(e) for e in cue.split()))
            elif "*" in cue or "|" in cue:
                patterns.append(_element(cue))
            else:
                words.add(cue)
        merged = _Element(
            frozenset(),
            tuple(s for p in patterns for s in p.stems),
            tuple(t for p in patterns for t in p.tails),
            tuple(x for p in patterns for x in p.inner),
        )
        return cls(
            frozenset(words | {w for p in patterns for w in p.whole}),
            tuple(patterns),
            tuple(phrases),
            tuple(substrings),
            merged,
        )

    def at(self, text: Text, i: int) -> bool:
        """Whether word `i` of `text` is a one-word cue of this set."""
        parts = text.parts[i]
        return not self.words.isdisjoint(parts) or self.any_pattern.matches(parts)

    def matches(self, parts: frozenset[str]) -> bool:
        """Whether a word with these parts is a one-word cue of this set."""
        return not self.words.isdisjoint(parts) or self.any_pattern.matches(parts)

    def positions(self, text: Text) -> list[int]:
        found = [i for parts, at in text.at_parts.items() if self.matches(parts) for i in at]
        return sorted(found)

    def phrase_hit(self, text: Text) -> bool:
        """Whether a multi-word phrase or a CJK cue of this set occurs in `text`."""
        if any(s in text.lowered for s in self.substrings):
            return True
        parts = text.parts
        for phrase in self.phrases:
            first, rest = phrase[0], phrase[1:]
            starts = (i for p, at in text.at_parts.items() if first.matches(p) for i in at)
            for start in starts:
                if start + len(rest) < len(parts) and all(
                    e.matches(parts[start + 1 + k]) for k, e in enumerate(rest)
                ):
                    return True
        return False

    def hit(self, text: Text) -> bool:
        """Whether any cue of this set occurs in `text`."""
        if not self.words.isdisjoint(text.vocabulary):
            return True
        if self.patterns and any(self.any_pattern.matches(p) for p in text.at_parts):
            return True
        return self.phrase_hit(text)

    def count(self, text: Text) -> int:
        """How many distinct cues of this set occur in `text` (words, patterns, substrings)."""
        present = text.vocabulary
        found = len(self.words & present)
        distinct = text.at_parts
        found += sum(1 for p in self.patterns if any(p.matches(parts) for parts in distinct))
        return found + sum(1 for s in self.substrings if s in text.lowered)

    def strip(self, lowered: str) -> str:
        """`lowered` with every CJK cue of this set taken out (what is left is the subject)."""
        for s in sorted(self.substrings, key=len, reverse=True):
            lowered = lowered.replace(s, " ")
        return lowered


@dataclass(frozen=True)
class StopWords:
    """Words that carry no subject: a set for words with spaces around them, and the Chinese
    and Japanese ones (longest first) to take out of a CJK run before it is cut into bigrams."""

    words: frozenset[str] = frozenset()
    cjk: tuple[str, ...] = ()

    @classmethod
    def of(cls, written: Iterable[str]) -> StopWords:
        words = {normalise(w).strip() for w in written}
        cjk = sorted((w for w in words if has_cjk(w)), key=len, reverse=True)
        return cls(frozenset(w for w in words if not has_cjk(w)), tuple(cjk))

    def __or__(self, other: StopWords) -> StopWords:
        cjk = sorted(set(self.cjk) | set(other.cjk), key=len, reverse=True)
        return StopWords(self.words | other.words, tuple(cjk))


# a Latin cue's edges: not beside another letter or digit, but beside a CJK character is fine
# ("用grep搜索"); in text without CJK these are exactly `\b` at a word's start and end
_START = rf"(?<![^\W{_CJK_RANGES}])"
_END = rf"(?![^\W{_CJK_RANGES}])"
# Language-neutral structure, not word cues: a file name with a known extension (its end may
# touch CJK text: "notes.mdを読んで"), or a path (./x, ../x, ~/x, /x, or a/b/c).
_EXTENSIONS = (
    "py|md|txt|json|toml|yaml|yml|rs|js|ts|tsx|jsx|c|h|cpp|hpp|go|java|kt|swift|rb|php|cs|"
    "html|css|scss|sh|ini|cfg|conf|csv|tsv|log|xml|sql|pdf|docx?|xlsx?|ipynb|lock|env"
)
# Each alternative starts only where a run of word characters starts (`(?<!\w)`): from every
# position inside a long word, `[\w-]*` ran to its end and back, quadratic in the word (a 5 MB
# directive of 1,000-character words took 8 s); whether one matches is the same.
FILE_NAME = re.compile(
    rf"(?<!\w)\w[\w-]*\.(?:{_EXTENSIONS}){_END}|(?:^|\s)(?:\.{{1,2}}/|~/|/)\w|(?<!\w)\w+/\w+/\w"
)


def cue_pattern(cue: str) -> str:
    """A cue (any of the forms above) as a regular expression over normalised text, without
    its edges: a CJK cue as itself, anything else word by word (`*` is any run of letters,
    the words joined by space)."""
    cue = normalise(cue).strip()
    if has_cjk(cue):
        return re.escape(cue)
    elements = []
    for element in cue.split():
        forms = [
            (r"\w*" if form.startswith("*") else "")
            + re.escape(form.strip("*"))
            + (r"\w*" if form.endswith("*") else "")
            for form in element.split("|")
        ]
        elements.append("|".join(forms) if len(forms) == 1 else "(?:" + "|".join(forms) + ")")
    return r"\s+".join(elements)


def any_of(cues: Iterable[str], *, end: bool = True) -> str:
    """One pattern for a cue set ("" when the set is empty): the Latin cues between word
    edges (`end=False`: open at the end, "document" then matches "documentation"), the CJK
    cues anywhere."""
    latin = [cue_pattern(c) for c in cues if not has_cjk(c)]
    cjk = [cue_pattern(c) for c in cues if has_cjk(c)]
    parts = [_START + "(?:" + "|".join(latin) + ")" + (_END if end else "")] if latin else []
    parts += cjk
    return "(?:" + "|".join(parts) + ")" if parts else ""


ACTION_RULES = ("search", "find", "read", "list")


@dataclass(frozen=True)
class Actions:
    """A language's asked-for actions (`actions` in the schema) as one pattern per rule, in
    `ACTION_RULES` order; a rule with an empty cue set has none.

    An object is an owner and a thing, at most one word between ("my notes", "the project
    logs", "我的文件"). `verb_first`: the verb, then its object anywhere after it (for find:
    an inside word right before the object), a read verb right before its object or a file
    name. `any`: the verb and its object in either order, a read verb anywhere with either."""

    rules: tuple[tuple[str, re.Pattern[str]], ...] = ()

    @classmethod
    def of(cls, document: Mapping[str, Any]) -> Actions:
        owners, things = any_of(document["owners"]), any_of(document["things"], end=False)
        owner_thing = rf"{owners}\s*(?:\w+\s+)?{things}"
        thing = owner_thing + _END
        inside = any_of(document["inside"])
        objects = {"search": thing, "find": rf"{inside}\s*{thing}", "list": thing}
        verbs = {rule: any_of(document[rule]) for rule in ACTION_RULES}
        if document["order"] == "verb_first":
            # the thing unbounded at its end here, as the English rule always had it ("read the
            # documentation" reads)
            objects["read"] = rf"\s+(?:{owner_thing}|\S+\.\w{{1,5}}\b)"
            shapes = {r: f"{v}.*{objects[r]}" for r, v in verbs.items()}
            shapes["read"] = verbs["read"] + objects["read"]
        else:
            objects["read"] = rf"(?:{thing}|{FILE_NAME.pattern})"
            shapes = {r: f"{v}.*{objects[r]}|{objects[r]}.*{v}" for r, v in verbs.items()}
        usable = [r for r in ACTION_RULES if verbs[r] and (r != "find" or inside)]
        return cls(tuple((r, re.compile(shapes[r])) for r in usable))

    def asked(self, lowered: str) -> str | None:
        """The first rule whose pattern occurs in normalised text, if any."""
        return next((rule for rule, pattern in self.rules if pattern.search(lowered)), None)


@dataclass(frozen=True)
class Sense:
    """A deixis word that is not temporal beside these words ("we live in", "eine gerade
    Linie")."""

    before: Cues = Cues()
    after: Cues = Cues()


@dataclass(frozen=True)
class Lexicon:
    """One language's cue sets (see `lexicons/schema.json` for what each one is for)."""

    language: str
    name: str
    function_words: Cues
    domains: Mapping[str, Cues]
    deixis: Cues
    senses: Mapping[str, Sense]
    discourse_deixis: Cues
    discourse_openers: Cues
    fact_seeking: Cues
    local: Cues
    filler: Cues
    quantity: Cues
    declined: Cues
    admitted: Cues
    card_words: Cues
    card_any: Cues
    card_types: Mapping[str, Cues]
    show_verbs: Cues
    call_verbs: Cues
    tool_words: Cues
    stop_words: StopWords
    about_conversation: Cues
    anaphora: Cues
    recall: Cues
    actions: Actions
    answer_form: Cues = Cues()  # how the answer is to be shaped ("in a few words"): no subject

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> Lexicon:
        """A lexicon from its JSON document (already validated against the schema)."""
        live, cards, said = document["live"], document["cards"], document["instructions"]
        return cls(
            language=document["language"],
            name=document["name"],
            function_words=Cues.of(document["function_words"]),
            domains={k: Cues.of(v) for k, v in document["domains"].items()},
            deixis=Cues.of(live["deixis"]),
            senses={
                normalise(word): Sense(Cues.of(s.get("before", ())), Cues.of(s.get("after", ())))
                for word, s in live.get("senses", {}).items()
            },
            discourse_deixis=Cues.of(live["discourse"]["deixis"]),
            discourse_openers=Cues.of(live["discourse"]["openers"]),
            fact_seeking=Cues.of(live["fact_seeking"]),
            local=Cues.of(live["local"]),
            filler=Cues.of(live["filler"]),
            quantity=Cues.of(live["quantity"]),
            declined=Cues.of(live["declined"]),
            admitted=Cues.of(live["admitted"]),
            card_words=Cues.of(cards["card"]),
            card_any=Cues.of(cards["any"]),
            card_types={k: Cues.of(v) for k, v in cards["types"].items()},
            show_verbs=Cues.of(said["show"]),
            call_verbs=Cues.of(said["call"]),
            tool_words=Cues.of(said["tool"]),
            stop_words=StopWords.of(document["stop_words"]),
            about_conversation=Cues.of(document["conversation"]["about"]),
            anaphora=Cues.of(document["conversation"]["anaphora"]),
            recall=Cues.of(document["conversation"]["recall"]),
            actions=Actions.of(document["actions"]),
            answer_form=Cues.of(document["conversation"].get("form", ())),
        )


@dataclass(frozen=True)
class Lexicons:
    """Every shipped lexicon, in language order, and the digest of the files they came from
    (part of the prefix digest's inputs: the lexicons decide which tools the prefix loads)."""

    languages: tuple[Lexicon, ...]
    digest: str = ""
    _by_code: Mapping[str, Lexicon] = field(default_factory=dict, compare=False, repr=False)
    _stops: dict[tuple[str, ...], StopWords] = field(
        default_factory=dict, compare=False, repr=False
    )
    # the readings of the latest few directives (`reading.reading_for`), by their text
    _readings: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, documents: Sequence[Mapping[str, Any]], digest: str = "") -> Lexicons:
        parsed = tuple(Lexicon.from_json(d) for d in documents)
        return cls(parsed, digest, {lex.language: lex for lex in parsed})

    def language(self, code: str) -> Lexicon:
        return self._by_code[code]

    def stop_words(self, languages: Sequence[Lexicon]) -> StopWords:
        """The stop words of these languages together (joined once per set of languages)."""
        key = tuple(lex.language for lex in languages)
        joined = self._stops.get(key)
        if joined is None:
            joined = StopWords()
            for lex in languages:
                joined |= lex.stop_words
            self._stops[key] = joined
        return joined

    def subjectless(self) -> frozenset[str]:
        """Every language's stop and function words: what names no subject in any of them (the
        topic index's words leave them out). Joined once."""
        key = ("*", "function")
        joined = self._stops.get(key)
        if joined is None:
            words = self.stop_words(self.languages).words
            for lex in self.languages:
                words |= lex.function_words.words
            joined = self._stops[key] = StopWords(words)
        return joined.words

    def remembered(self, text: str, read: Callable[[], R]) -> R:
        """The reading `read` makes of `text`, kept for the latest `KEPT_READINGS` texts: a
        turn's consumers (surface, plan, rules, card) share one reading of its directive."""
        found = self._readings.pop(text, None)
        if found is None:
            found = read()
        self._readings[text] = found  # the newest last
        while len(self._readings) > KEPT_READINGS:
            del self._readings[next(iter(self._readings))]
        return cast(R, found)

    def identify(self, text: Text) -> tuple[Lexicon, ...]:
        """The languages `text` is written in: those whose function words it uses most. A text
        with no function word of any language ("Kupferpreis jetzt?") is read in every one."""
        counts = [(lex.function_words.count(text), lex) for lex in self.languages]
        best = max((c for c, _ in counts), default=0)
        if best == 0:
            return self.languages
        return tuple(lex for c, lex in counts if c == best)


def files_digest(contents: Sequence[tuple[str, bytes]]) -> str:
    """blake3 over the lexicon files (name and bytes), in name order."""
    hasher = blake3.blake3()
    for name, data in sorted(contents):
        hasher.update(name.encode("utf-8") + b"\0" + data + b"\0")
    return "b3:" + hasher.hexdigest()
