"""BASELINE for bench/pointers.py: the English word sets and regexes the lexicons' `stop_words`,
`conversation` and `actions` replaced (main before issue #16's second round:
vak_desktop/context/planning/drift.py, planner.py, actions.py), kept verbatim so the bench
measures the lexicon reading beside them in the same run. Not imported by the app."""

from __future__ import annotations

import re
from collections.abc import Sequence

# Words by which a directive points back at the previous exchange ("do that again", "the second
# one", "why did it fail?"). Deictic, not topical: they carry no subject of their own.
_ANAPHORA = re.compile(
    r"\b(that|this|these|those|it|its|them|they|again|above|previous|earlier|same|"
    r"the (first|second|third|last|other) one|you (said|wrote|found|mentioned))\b",
    re.IGNORECASE,
)
# Words by which a directive points back at an earlier turn it does not name ("the code I gave
# you earlier", "what did we decide about …"): the best match of the card index then travels at
# card fidelity or better, whatever else the budget packets. Kept small and here so that the
# reading's lexicons can take it over.
_REFER_BACK = re.compile(
    r"\b(earlier|before|previously|last time|remember|"
    r"you (said|wrote|found|mentioned|told me|suggested)|"
    r"i (gave|told|sent|showed|mentioned|said|shared|pasted|noted|asked)|"
    r"we (decided|discussed|agreed|talked|said|settled|chose|found)|did we)\b",
    re.IGNORECASE,
)


def refers_back(directive: str) -> bool:
    return _ANAPHORA.search(directive) is not None


def recalls_earlier(directive: str) -> bool:
    return _REFER_BACK.search(directive) is not None


_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "these",
        "those",
        "from",
        "into",
        "onto",
        "about",
        "what",
        "whats",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "are",
        "was",
        "were",
        "been",
        "being",
        "have",
        "has",
        "had",
        "does",
        "did",
        "doing",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "not",
        "but",
        "you",
        "your",
        "yours",
        "our",
        "ours",
        "their",
        "theirs",
        "its",
        "they",
        "them",
        "there",
        "here",
        "then",
        "than",
        "also",
        "just",
        "only",
        "very",
        "more",
        "most",
        "some",
        "any",
        "all",
        "each",
        "every",
        "other",
        "such",
        "same",
        "own",
        "out",
        "off",
        "over",
        "under",
        "again",
        "further",
        "once",
        "please",
        "tell",
        "show",
        "give",
        "get",
        "let",
        "make",
        "want",
        "need",
        "like",
        "know",
        "think",
        "say",
        "said",
        "one",
        "two",
        "per",
        "via",
        "use",
        "using",
        "used",
        "now",
        "today",
        "current",
        "currently",
        "latest",
        "live",
        "right",
        "moment",
    ]
)
# A directive about the conversation itself ("summarise our chat so far") continues it.
_ABOUT_CONVERSATION = re.compile(
    r"\b(so far|chat|conversation|discussion|we (discussed|talked)|you (said|told))\b", re.I
)


def content_words(text: str) -> set[str]:
    """Lower-cased words of three or more letters that carry meaning, plurals folded."""
    return {_singular(w) for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP}


def _singular(word: str) -> str:
    """An English plural folded to its singular ("tomatoes" and "tomato" are one word)."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith("ss"):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("oes", "xes", "ches", "shes", "sses")):
        return word[:-2]
    return word[:-1]


def about_conversation(directive: str) -> bool:
    return _ABOUT_CONVERSATION.search(directive) is not None


ACTION_CHECK = "action-check"
_OBJECT = r"(my|the|our|these|those|this)\s+(\w+\s+)?(files?|folders?|notes|documents?|docs|code|project|repo|repository|workspace|logs?)"
# (pattern, the tools that perform it, most fitting first)
_ACTIONS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(rf"\b(search|grep|look\s+through|scan)\b.*\b{_OBJECT}\b", re.I), ("grep", "glob")),
    (re.compile(rf"\b(find|look\s+for|look\s+up)\b.*\bin\s+{_OBJECT}\b", re.I), ("grep", "glob")),
    (re.compile(rf"\b(read|open)\b\s+({_OBJECT}|\S+\.\w{{1,5}}\b)", re.I), ("read",)),
    (re.compile(rf"\b(list|which)\b.*\b{_OBJECT}\b", re.I), ("glob", "grep")),
)


def requested_tool(directive: str, offered: Sequence[str]) -> str | None:
    """The tool the directive asks to be used on the user's things, if one is offered."""
    for pattern, tools in _ACTIONS:
        if pattern.search(directive):
            return next((t for t in tools if t in offered), None)
    return None
