"""BASELINE for bench/reading.py: the in-code English reading as it stood before lexicons
(commit f7787b1, vak_desktop/context/planning/reading.py), kept verbatim so the bench measures
the lexicon reading beside it in the same run. Not imported by the app.

The reading of a directive: which domains it touches and which cards it reads as (spec §5, §7).

The tool surface loads a tool when the reading meets the domains the tool serves, so the reading
has to be cheap, deterministic and the same every time the ledger is replayed: it is a set of
word cues over the directive's text, never a model call. When no cue fires the reading is
*orienting* — the explicit floor that loads the file and memory tools — rather than a guess.

Live data (§7) is temporal deixis ("current", "right now", "today", "latest", "live") in a
request that seeks a fact, and not beside something local: "the current price of copper" is
live, "the current directory", "refactor the current parser" and "what time is it now" are not;
"live" counts only as the adjective, never as the verb ("we live in the city").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vak_desktop.context.payloads import JsonObject


def _set(words: str) -> frozenset[str]:
    """A set of words written as one space-separated string."""
    return frozenset(words.split())


FILES = "files"  # the user's folders: reading, listing, searching files
MEMORY = "memory"  # earlier conversations and earlier turns
WEB = "web"  # anything found online
LIVE = "live"  # a value as it stands now (§7's live-data domain)
ORIENTATION = frozenset({FILES, MEMORY})  # what an uncertain reading loads

CARD_TYPES = ("chart", "checklist", "entity", "metric", "research", "table", "timeline")

_WORD = re.compile(r"[\w'-]+")
_EXTENSIONS = (
    "py|md|txt|json|toml|yaml|yml|rs|js|ts|tsx|jsx|c|h|cpp|hpp|go|java|kt|swift|rb|php|cs|"
    "html|css|scss|sh|ini|cfg|conf|csv|tsv|log|xml|sql|pdf|docx?|xlsx?|ipynb|lock|env"
)
# a file name with a known extension, or a path: ./x, ../x, ~/x, /x, or a/b/c
_FILE_NAME = re.compile(rf"\w[\w-]*\.(?:{_EXTENSIONS})\b|(?:^|\s)(?:\.{{1,2}}/|~/|/)\w|\w+/\w+/\w")

_FILE_WORDS = _set(
    "file files folder folders directory directories dir path paths repo repository codebase "
    "code source sources script scripts readme grep glob workspace module modules function "
    "functions class classes line lines document documents pdf csv log logs config"
)
_MEMORY_WORDS = _set(
    "earlier previous previously remember remembered recall yesterday conversation "
    "conversations chat chats discussed mentioned"
)
_WEB_WORDS = _set("web online internet website websites url news search")
_DEIXIS = _set("current currently now today tonight latest live present")
_DEIXIS_PHRASES = ("right now", "at the moment", "this week", "as of now", "up to date")
_FACT_SEEKING = _set(
    "what whats what's how which who when where is are does do did price rate score value "
    "tell show find check give get look fetch"
)
# Beside one of these, "current" / "now" is about the user's machine or the conversation.
_LOCAL = _set(
    "directory folder file files branch repo repository time date clock you your yourself "
    "parser code function class module session conversation chat model project line "
    "working cwd path workspace"
)
_QUANTITY = _set(
    "price prices rate rates score scores temperature cost costs value level count total "
    "percent percentage exchange population balance"
)
_LIVE_VERB_BEFORE = _set("i we you they he she who people to")
# "And now?", "OK now summarise it": `now` opening a request is a step in the conversation.
_DISCOURSE_BEFORE = _set("and so ok okay then but well right alright")
_FILLER = _set("and so ok okay then but well right alright what how about the a an it this that")
_LIVE_VERB_AFTER = _set("in at with on here there near by together")
_CARD_CUES = {
    "chart": _set("chart charts graph graphs plot plots visualise visualize"),
    "checklist": _set("checklist checklists todo to-do"),
    "entity": _set("profile entity who's"),
    "metric": _set("metric metrics kpi kpis"),
    "research": _set("research sources citations cite synthesis literature"),
    "table": _set("table tables tabulate spreadsheet columns"),
    "timeline": _set("timeline timelines chronology chronological milestones"),
}


@dataclass(frozen=True)
class Reading:
    """What the surface needs to know about a request: its domains and its card types."""

    domains: frozenset[str]
    cards: frozenset[str] = frozenset()
    orienting: bool = False  # no cue fired: `domains` is the orientation floor
    everything: bool = False  # every domain (a surface that does not slice tools)

    def meets(self, serves: frozenset[str]) -> bool:
        """Whether a tool serving `serves` is wanted by this reading."""
        return self.everything or bool(self.domains & serves)

    def reads_as_card(self, tool_name: str) -> bool:
        """Whether `emit_<type>_card` is a card this request reads as."""
        if self.everything:
            return True
        kind = tool_name.removeprefix("emit_").removesuffix("_card")
        return any(kind == card or kind.startswith(card + "_") for card in self.cards)

    def to_json(self) -> JsonObject:
        return {
            "domains": sorted(self.domains),
            "cards": sorted(self.cards),
            "orienting": self.orienting,
            "everything": self.everything,
        }


EVERYTHING = Reading(domains=frozenset(), everything=True)


def read_directive(text: str) -> Reading:
    """The reading of a directive's text, by its word cues alone (deterministic)."""
    lowered = text.lower()
    tokens = _WORD.findall(lowered)
    present = set(tokens)
    domains: set[str] = set()
    if present & _FILE_WORDS or _FILE_NAME.search(lowered):
        domains.add(FILES)
    if present & _MEMORY_WORDS or any(p in lowered for p in ("last time", "you said", "we said")):
        domains.add(MEMORY)
    if present & _WEB_WORDS or "look up" in lowered or "http" in lowered:
        domains.add(WEB)
    if _is_live(tokens, lowered) and not _FILE_NAME.search(lowered):  # a file is local
        domains.add(LIVE)
    cards = {kind for kind, cues in _CARD_CUES.items() if present & cues}
    if "who is" in lowered:
        cards.add("entity")
    if LIVE in domains and (present & _QUANTITY or "how much" in lowered):
        cards.add("metric")  # one value as it stands now is a metric card's whole job
    if not domains:
        return Reading(ORIENTATION, frozenset(cards), orienting=True)
    return Reading(frozenset(domains), frozenset(cards))


def _is_live(tokens: list[str], lowered: str) -> bool:
    """Temporal deixis in a fact-seeking request, not beside anything local (§7)."""
    deixis = [
        i
        for i, word in enumerate(tokens)
        if word in _DEIXIS and not _verb_live(tokens, i) and not _discourse_now(tokens, i)
    ]
    if not deixis and not any(phrase in lowered for phrase in _DEIXIS_PHRASES):
        return False
    if not [t for t in tokens if t not in _DEIXIS and t not in _FILLER and len(t) > 2]:
        return False  # no subject to seek a fact about ("and now?", "what now?")
    if not (set(tokens) & _FACT_SEEKING or lowered.rstrip().endswith("?")):
        return False
    return not set(tokens) & _LOCAL


def _discourse_now(tokens: list[str], i: int) -> bool:
    """`now` opening the request, alone or after "and", "so", "ok" …: a turn of the
    conversation, not a point in time."""
    if tokens[i] != "now":
        return False
    return all(t in _DISCOURSE_BEFORE for t in tokens[:i])


def _verb_live(tokens: list[str], i: int) -> bool:
    """`live` used as the verb ("we live in …"), which says nothing about time."""
    if tokens[i] != "live":
        return False
    before = tokens[i - 1] if i > 0 else ""
    after = tokens[i + 1] if i + 1 < len(tokens) else ""
    return before in _LIVE_VERB_BEFORE or after in _LIVE_VERB_AFTER
