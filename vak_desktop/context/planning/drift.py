"""Drift checks (spec §7): pure tests the runtime applies to a turn, never a sentence asking the
model to cope.

- Directive drift: the user changed subject. The turns of the old subject are *paused*: the
  planner weighs their recency at PAUSED_RECENCY (no cut, a re-weighting) and the thread lists
  them as "earlier, now paused".
- Live data: a request whose reading has the live-data domain (temporal deixis in a
  fact-seeking request, nothing local beside it), answered with nothing that observed the world
  in this turn, can only repeat an older figure → `[freshness-check]`.
- Topic mismatch: after a retrieval succeeded, a card whose values share no word with the
  directive and the retrieved evidence was copied from elsewhere → `[topic-mismatch]`.
- Model drift: a final answer that repeats an earlier turn's narration verbatim →
  `[steering-drift]`.

Word tests use content words: letters only, three or more (character bigrams in Chinese and
Japanese), minus the lexicons' stop words, so that numbers, JSON punctuation and function words
never make two unrelated texts "overlap".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from vak_desktop.context.payloads import TurnCard
from vak_desktop.context.planning.lexicon import CJK_RUN, Lexicons, StopWords, Text, normalise
from vak_desktop.context.planning.reading import LIVE, Reading, reading_for
from vak_desktop.context.planning.turn_cards import leading_sentence, narration_of

FRESHNESS_CHECK = "freshness-check"
TOPIC_MISMATCH = "topic-mismatch"
STEERING_DRIFT = "steering-drift"
EMPTY_STEP = "empty-step"
PAUSED_RECENCY = 0.5  # a paused turn's recency weight: the new subject's turns rank first
GOAL_READINGS = 8  # how many recent directives the active goal is read from
MIN_DRIFT_WORDS = 2  # "and Paris?" is a follow-up, not a new subject
MIN_REPEAT_WORDS = 6  # repeating a one-line "Done." is not drift

_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)


def content_words(text: str, lexicons: Lexicons) -> set[str]:
    """The words of a text that carry meaning: words of three or more letters, lower-cased,
    plurals folded, and in Chinese and Japanese the character bigrams of what is left once the
    stop words are taken out — minus the stop words of the languages the text is written in
    (`stop_words`; every shipped language's for a text with no function word, such as a card's
    values)."""
    lowered = normalise(text)
    seen = Text.of(lowered, normalised=True)
    return _content_words(lowered, lexicons.stop_words(lexicons.identify(seen)))


def directive_words(directive: str | Reading, lexicons: Lexicons) -> set[str]:
    """`content_words` of a directive, from its one reading (made once per reading)."""
    read = reading_for(directive, lexicons)
    return read.derived(
        "content_words",
        lambda: _content_words(read.seen.lowered, lexicons.stop_words(read.read_in)),
    )


def _content_words(lowered: str, stop: StopWords) -> set[str]:
    words = {_singular(w) for w in _WORD.findall(CJK_RUN.sub(" ", lowered)) if w not in stop.words}
    for run in CJK_RUN.findall(lowered):
        for stop_word in stop.cjk:
            run = run.replace(stop_word, " ")
        for piece in run.split():
            words.update(piece[i : i + 2] for i in range(len(piece) - 1))
    return words


def about_conversation(directive: str | Reading, lexicons: Lexicons) -> bool:
    """A directive about the conversation itself ("summarise our chat so far") continues it."""
    read = reading_for(directive, lexicons)
    return read.derived(
        "about_conversation",
        lambda: any(lex.about_conversation.hit(read.seen) for lex in read.read_in),
    )


def _singular(word: str) -> str:
    """An English plural folded to its singular ("tomatoes" and "tomato" are one word)."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith("ss"):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("oes", "xes", "ches", "shes", "sses")):
        return word[:-2]
    return word[:-1]


def values_text(value: Any) -> str:
    """Every string and number in a JSON value (its keys left out), as one text."""
    if isinstance(value, Mapping):
        return " ".join(values_text(v) for v in value.values())
    if isinstance(value, list | tuple):
        return " ".join(values_text(v) for v in value)
    return "" if value is None or isinstance(value, bool) else str(value)


# -- live data ----------------------------------------------------------------------------------


def seeks_live_data(directive: str | Reading, lexicons: Lexicons) -> bool:
    """The directive asks for a value as it stands now: its reading has the live-data domain
    (temporal deixis in a fact-seeking request, nothing local beside it, live data not declined
    — "no live data", "from memory": `context/planning/reading.py`)."""
    return LIVE in reading_for(directive, lexicons).domains


def admits_no_live_value(text: str, lexicons: Lexicons) -> bool:
    """An answer that says plainly it has no current value (in any shipped language): an
    accepted answer, not a stale one."""
    seen = Text.of(text)
    return any(lex.admitted.hit(seen) for lex in lexicons.identify(seen))


def freshness_nudge(directive: str) -> str:
    return (
        f"[{FRESHNESS_CHECK}] The request asks for a current value (“{_short(directive)}”) and "
        "nothing in this turn has read it yet: anything from earlier turns is an old figure. "
        "Retrieve it first with a tool that reads the present state, then answer; or say "
        "plainly that no current value is available."
    )


def freshness_statement(last: tuple[str, str] | None) -> str:
    """The system-authored end of a turn that never retrieved a current value: it names the
    last figure the conversation recorded and when, never presenting it as current."""
    said = "No current value was retrieved in this turn, so there is no current figure to show."
    if last is None:
        return said + " This conversation has no earlier figure for it either."
    figure, when = last
    return f"{said} The last figure this conversation recorded was {figure}, recorded {when}."


# -- topic mismatch -----------------------------------------------------------------------------


def topic_mismatch(
    payload: Mapping[str, Any],
    directive: str | Reading,
    evidence: Iterable[str],
    lexicons: Lexicons,
) -> bool:
    """The card's values share no content word with the directive and this turn's retrieved
    evidence. A card with no words at all (a bare number) gives nothing to judge: False."""
    card = content_words(values_text(payload), lexicons)
    if not card:
        return False
    if card & directive_words(directive, lexicons):
        return False
    return all(card.isdisjoint(content_words(text, lexicons)) for text in evidence)


def topic_nudge(title: str, directive: str) -> str:
    return (
        f"[{TOPIC_MISMATCH}] The card “{_short(title)}” shares nothing with the request "
        f"(“{_short(directive)}”) or with what this turn retrieved: it looks copied from "
        "somewhere else. Build the card from the results retrieved in this turn."
    )


def mismatch_statement(quotes: Sequence[str]) -> str:
    """The system-authored end of a turn whose cards kept missing the retrieved evidence."""
    lines = [
        "The cards written in this turn did not match what was retrieved, so none is shown. "
        "Here is what the retrieval returned:"
    ]
    for quote in quotes:
        lines.append("\n".join("> " + line for line in quote.splitlines() or [""]))
    return "\n\n".join(lines)


# -- model drift --------------------------------------------------------------------------------


def repeated_narration(text: str, earlier: Sequence[TurnCard]) -> TurnCard | None:
    """The earlier TurnCard whose narration `text` repeats verbatim, if any."""
    narration = narration_of(text)
    if len(narration.split()) < MIN_REPEAT_WORDS:
        return None
    return next((c for c in reversed(earlier) if c.answered.narration == narration), None)


def steering_nudge(directive: str) -> str:
    return (
        f"[{STEERING_DRIFT}] That answer repeats an earlier turn word for word. Answer the "
        f"current request: “{_short(directive)}”."
    )


def empty_step_nudge(request: str = "") -> str:
    """`[empty-step]`, quoting the request when there is one: told only to "answer in text"
    after a few tool results, the 1.5B replied "I need a tool call or a text response to
    continue" (LoCoMo conv-26, issue #22)."""
    asked = " ".join(request.split())[:200]
    answer = f"answer the user's request in text: “{asked}”" if asked else "answer in text"
    return (
        f"[{EMPTY_STEP}] The last response had neither text nor a tool call. Carry out what "
        f"you planned: call the tool now, or {answer}"
    )


# -- directive drift ----------------------------------------------------------------------------


def paused_turns(
    directive: str | Reading, asked: Sequence[str], back: bool, lexicons: Lexicons
) -> tuple[int, ...]:
    """Positions in `asked` (the directives of earlier turns, oldest first) that a subject
    change pauses: the run of recent directives about the previous subject. None when the
    directive refers back (`back`), is too short to name a subject, or shares a word with the
    latest directive (the same subject continues)."""
    new = directive_words(directive, lexicons)
    if back or len(new) < MIN_DRIFT_WORDS or not asked or about_conversation(directive, lexicons):
        return ()
    latest = directive_words(asked[-1], lexicons)  # the last turn's reading, when kept
    if not latest or latest & new:
        return ()
    run, goal = [len(asked) - 1], set(latest)
    for position in range(len(asked) - 2, max(-1, len(asked) - 1 - GOAL_READINGS), -1):
        words = content_words(asked[position], lexicons)
        if not words & goal or words & new:
            break
        run.append(position)
        goal |= words
    return tuple(sorted(run))


def _short(text: str) -> str:
    """The text's first sentence (a semantic boundary, never a character count)."""
    flat = " ".join(text.split())
    first = leading_sentence(flat)
    return first if first == flat else first + " …"
