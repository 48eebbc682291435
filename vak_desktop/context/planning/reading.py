"""The reading of a directive: which domains it touches and which cards it reads as (spec §5, §7).

The tool surface loads a tool when the reading meets the domains the tool serves, so the reading
has to be cheap, deterministic and the same every time the ledger is replayed: it is a set of
word cues over the directive's text, never a model call. The cues are data, one lexicon per
language (`lexicon.py`); a directive is read in the languages its function words say it is
written in (every shipped language when they say nothing), and the readings in those languages
are joined. When no cue fires the reading is *orienting* — the explicit floor that loads the
file and memory tools — rather than a guess.

Live data (§7) is temporal deixis ("current", "right now", "gerade", "сейчас", "现在") in a
request that seeks a fact, and not beside something local: "the current price of copper" is
live, "the current directory", "refactor the current parser" and "what time is it now" are not;
a deixis word counts only in its temporal sense, never as the verb ("we live in the city").

A request for a card of a named type ("as a table", "als Diagramm") reads as that card; a
request for "a card" of no named type ("as a card", "als Karte") reads as every card type
(which one it wants is not read, so none is guessed), while "that card" refers back to one
already shown and loads none; a live request for one quantity reads as a metric card.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from vak_desktop.context.payloads import JsonObject
from vak_desktop.context.planning.lexicon import FILE_NAME, Lexicon, Lexicons, Text, has_cjk

FILES = "files"  # the user's folders: reading, listing, searching files
MEMORY = "memory"  # earlier conversations and earlier turns
WEB = "web"  # anything found online
LIVE = "live"  # a value as it stands now (§7's live-data domain)
ORIENTATION = frozenset({FILES, MEMORY})  # what an uncertain reading loads

CARD_TYPES = ("chart", "checklist", "entity", "metric", "research", "table", "timeline")

# Language-neutral structure, not word cues: a URL (a file name: `lexicon.FILE_NAME`).
_URL = re.compile(r"https?://|www\.")
_MIN_SUBJECT = 3  # a word shorter than this is no subject to seek a fact about ("ok", "so")
_MIN_CJK_SUBJECT = 2  # characters of CJK text left once deixis and filler are taken out
_NOT_LETTER = re.compile(r"[\W_]+")
R = TypeVar("R")


@dataclass(frozen=True)
class Reading:
    """What the surface needs to know about a request: its domains and its card types; and,
    for every other consumer of the directive's words (the planner's refer-back and recall
    cues, drift, asked-for actions, explicit instructions, the card at close), the directive
    as read once: its normalised text and the lexicons of its languages. What a consumer
    derives from them is kept here too (`derived`), so no consumer reads the text again."""

    domains: frozenset[str]
    cards: frozenset[str] = frozenset()
    orienting: bool = False  # no cue fired: `domains` is the orientation floor
    everything: bool = False  # every domain (a surface that does not slice tools)
    languages: tuple[str, ...] = ()  # the lexicons the directive was read in
    text: str = field(default="", compare=False, repr=False)  # the directive as written
    seen: Text = field(default=Text("", (), ()), compare=False, repr=False)
    read_in: tuple[Lexicon, ...] = field(default=(), compare=False, repr=False)
    lexicons: Lexicons | None = field(default=None, compare=False, repr=False)
    _derived: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def derived(self, key: str, make: Callable[[], R]) -> R:
        """What `make` derives from this reading, made once per reading."""
        if key not in self._derived:
            self._derived[key] = make()
        return cast(R, self._derived[key])

    def meets(self, serves: frozenset[str]) -> bool:
        """Whether a tool serving `serves` is wanted by this reading."""
        return self.everything or bool(self.domains & serves)

    def reads_as_card(self, tool_name: str) -> bool:
        """Whether `emit_<type>_card` is a card this request reads as."""
        if self.everything:
            return True
        kind = tool_name.removeprefix("emit_").removesuffix("_card")
        return any(kind == card or kind.startswith(card + "_") for card in self.cards)

    @property
    def terms(self) -> tuple[str, ...]:
        """What the reading adds to a relevance query (§4) and to a TurnCard's index terms:
        its domains and card types as `domain:x` / `card:x`, which no word of a text can be, so
        a German request for a current price finds an English turn that read the same."""
        return terms_of(self.to_json())

    def to_json(self) -> JsonObject:
        return {
            "domains": sorted(self.domains),
            "cards": sorted(self.cards),
            "orienting": self.orienting,
            "everything": self.everything,
            "languages": list(self.languages),
        }


EVERYTHING = Reading(domains=frozenset(), everything=True)


def terms_of(reading: JsonObject) -> tuple[str, ...]:
    """The relevance terms of a reading as JSON (`Reading.to_json`, a TurnCard's `reading`).
    An orienting reading's domains are the floor, no subject, so they add nothing (its card
    types do); the everything-reading adds nothing."""
    if not reading or reading.get("everything"):
        return ()
    domains = [] if reading.get("orienting") else reading.get("domains", [])
    cards = reading.get("cards", [])
    assert isinstance(domains, list) and isinstance(cards, list)
    return tuple([f"domain:{d}" for d in domains] + [f"card:{c}" for c in cards])


def reading_for(directive: str | Reading, lexicons: Lexicons) -> Reading:
    """The reading of `directive`: itself when it is one (read with these lexicons), else the
    one `lexicons` keeps for that text (the latest few), else read now. Every consumer of a
    directive goes through here, so a turn reads its directive once however many ask."""
    if isinstance(directive, Reading) and directive.lexicons is lexicons:
        return directive
    text = directive.text if isinstance(directive, Reading) else directive
    return lexicons.remembered(text, lambda: read_directive(text, lexicons))


def read_directive(text: str, lexicons: Lexicons) -> Reading:
    """The reading of a directive's text, by the cues of `lexicons` alone (deterministic).
    Linear in the text's length: it is normalised and split once, its languages identified
    once, each cue set matched in one pass."""
    seen = Text.of(text)
    languages = lexicons.identify(seen)
    local_file = FILE_NAME.search(seen.lowered) is not None
    domains: set[str] = set()
    cards: set[str] = set()
    if local_file:
        domains.add(FILES)
    if _URL.search(seen.lowered):
        domains.add(WEB)
    for lexicon in languages:
        found = {d for d, cues in lexicon.domains.items() if cues.hit(seen)}
        if not local_file and _is_live(seen, lexicon):  # a file is local
            found.add(LIVE)
        domains |= found
        cards |= _cards(seen, lexicon, live=LIVE in found)
    codes = tuple(lex.language for lex in languages)
    orienting = not domains
    return Reading(
        ORIENTATION if orienting else frozenset(domains),
        frozenset(cards),
        orienting=orienting,
        languages=codes,
        text=text,
        seen=seen,
        read_in=languages,
        lexicons=lexicons,
    )


def _cards(seen: Text, lexicon: Lexicon, *, live: bool) -> set[str]:
    named = {kind for kind, cues in lexicon.card_types.items() if cues.hit(seen)}
    if not named and lexicon.card_any.hit(seen):
        return set(CARD_TYPES)  # "a card", no type named: every type, none guessed
    if live and lexicon.quantity.hit(seen):
        named.add("metric")  # one value as it stands now is a metric card's whole job
    return named


def _is_live(seen: Text, lexicon: Lexicon) -> bool:
    """Temporal deixis in a fact-seeking request, not beside anything local (§7)."""
    deixis = [
        i
        for i in lexicon.deixis.positions(seen)
        if not _other_sense(seen, lexicon, i) and not _discourse_step(seen, lexicon, i)
    ]
    if not deixis and not lexicon.deixis.phrase_hit(seen):
        return False
    if lexicon.local.hit(seen) or lexicon.declined.hit(seen):
        return False
    if not _has_subject(seen, lexicon):
        return False  # no subject to seek a fact about ("and now?", "what now?", "那现在呢？")
    return lexicon.fact_seeking.hit(seen) or seen.lowered.rstrip().endswith("?")


def _has_subject(seen: Text, lexicon: Lexicon) -> bool:
    """A word that is neither deixis nor filler: what the fact is about. CJK text has no
    words to count, so what is left of it once every deixis and filler cue is taken out is."""
    for i, word in enumerate(seen.words):
        if lexicon.deixis.at(seen, i) or lexicon.filler.at(seen, i):
            continue
        if not has_cjk(word):
            if len(word) >= _MIN_SUBJECT:
                return True
            continue
        rest = _NOT_LETTER.sub("", lexicon.filler.strip(lexicon.deixis.strip(word)))
        if len(rest) >= _MIN_CJK_SUBJECT:
            return True
    return False


def _discourse_step(seen: Text, lexicon: Lexicon, i: int) -> bool:
    """`now` opening the request, alone or after "and", "so", "ok" …: a turn of the
    conversation, not a point in time."""
    if not lexicon.discourse_deixis.at(seen, i):
        return False
    return all(lexicon.discourse_openers.at(seen, k) for k in range(i))


def _other_sense(seen: Text, lexicon: Lexicon, i: int) -> bool:
    """A deixis word in a sense that says nothing about time ("we live in …", "un'ora"): the
    word before or after it, or an elided part joined to it, gives it that sense."""
    for part in seen.parts[i]:
        sense = lexicon.senses.get(part)
        if sense is None:
            continue
        joined = Text.of(seen.words[i].removesuffix(part), normalised=True)
        if (
            (i > 0 and sense.before.at(seen, i - 1))
            or (i + 1 < len(seen.words) and sense.after.at(seen, i + 1))
            or any(sense.before.at(joined, k) for k in range(len(joined.words)))
        ):
            return True
    return False
