"""Presentations in the ledger: writing a card, the fence fallback, the checks a card passes
before it is written, and the user's feedback and selection (spec §7, §10).

A card is written as a `Presentation` entry the moment it validates, whether it came through an
`emit_<type>_card` call or a ```vak fence in the text of a model without tool calling; both
converge on the same entry because the duplicate rule is one rule: a payload digest already
written in the turn is not written again (the call gets the existing id as a no-op ack, the
fence is dropped from what the model sees). Before a card is written it passes the drift
gates: no current value observed for a live-data request → `[freshness-check]`; a card unrelated
to both the directive and this turn's retrieval → `[topic-mismatch]`.

Feedback and selection are entries keyed by the presentation's entry id; `presentation_states`
folds them into what the window shows.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    EvidenceBody,
    Presentation,
    PresentationFeedback,
    PresentationSelection,
)
from vak_desktop.context.planning.drift import (
    content_words,
    freshness_nudge,
    seeks_live_data,
    topic_mismatch,
    topic_nudge,
    values_text,
)
from vak_desktop.context.planning.turn_cards import is_card_tool
from vak_desktop.context.planning.turns import EntryLike, Turn, split_turns
from vak_desktop.context.presentations.digest import canonical_payload, payload_digest
from vak_desktop.context.presentations.library import CardDefinition, CardLibrary, find_fences
from vak_desktop.ledger import Entry, Ledger, UnknownEntry
from vak_desktop.runtime.events import CardShown
from vak_desktop.runtime.lexicons import lexicons
from vak_desktop.shipped import shipped

VERDICTS = ("up", "down", "clear")
ACTIONS = ("dismiss", "restore", "select")
CARD_FENCE_INVALID = "card_fence_invalid"  # Activity: a fence that is not a valid card
Observes = Callable[[str], bool]  # does the tool of this name read the world as it is now?


@functools.cache
def card_library() -> CardLibrary:
    """The card definitions shipped in `resources/presentations.json`."""
    text = shipped("presentations.json").read_text()
    return CardLibrary.from_json(json.loads(text))


def ack(presentation: str, *, repeat: bool = False) -> str:
    """The short answer to a card call: never an echo of the payload."""
    body: dict[str, Any] = {"presentation": presentation, "ok": True}
    if repeat:
        body["repeat"] = True  # already shown in this turn: nothing was written
    return json.dumps(body)


def parse_ack(content: str) -> dict[str, Any] | None:
    try:
        value = json.loads(content)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) and "presentation" in value else None


def current_turn(chain: Sequence[EntryLike]) -> Turn:
    turns = split_turns(chain)
    if not turns:
        raise ValueError("there is no turn to present a card in")
    return turns[-1]


def written(turn: Turn) -> dict[str, str]:
    """Payload digest → entry id of every card written in the turn so far."""
    return {
        e.payload.payload_digest: e.id for e in turn.entries if isinstance(e.payload, Presentation)
    }


def evidence_before(turn: Turn) -> tuple[str, ...]:
    """The evidence a card emitted now is derived from: every EvidenceBody of the turn so far,
    except card acks and error results (they are not evidence of anything)."""
    return tuple(
        e.id
        for e in turn.entries
        if isinstance(e.payload, EvidenceBody)
        and not e.payload.is_error
        and not is_card_tool(e.payload.tool_name)
    )


def observed(turn: Turn, observes: Observes) -> list[EvidenceBody]:
    """Results in this turn of calls that read the world as it is now and succeeded."""
    return [
        e.payload
        for e in turn.entries
        if isinstance(e.payload, EvidenceBody)
        and not e.payload.is_error
        and observes(e.payload.tool_name)
    ]


def gate(
    turn: Turn, definition: CardDefinition, payload: Mapping[str, Any], observes: Observes
) -> str:
    """The drift check a card must pass before it is written: "" when it passes, else the
    tagged message that intercepts it (the model repairs from it)."""
    seen = observed(turn, observes)
    directive = turn.directive.text
    if not seen:
        return freshness_nudge(directive) if seeks_live_data(directive, lexicons()) else ""
    if topic_mismatch(payload, directive, (b.content for b in seen), lexicons()):
        return topic_nudge(definition.title_of(payload), directive)
    return ""


@dataclass(frozen=True)
class Written:
    """The outcome of presenting one card: its entry id and whether this call wrote it."""

    id: str
    new: bool


def present(
    ledger: Ledger,
    session: str,
    turn: Turn,
    library: CardLibrary,
    definition: CardDefinition,
    payload: Mapping[str, Any],
    source: Mapping[str, str],
) -> Written:
    """Write a validated card (or find the one already written with the same payload digest)."""
    canonical = json.loads(canonical_payload(payload))
    digest = payload_digest(canonical)
    already = written(turn).get(digest)
    if already is not None:
        return Written(already, False)
    entry = ledger.append(
        session,
        Presentation(
            turn_id=turn.turn_id,
            source=dict(source),
            semantic_type=definition.type,
            skill_id=library.library,
            skill_version=library.version,
            schema_version=definition.schema_version,
            payload=canonical,
            payload_digest=digest,
            derived_from=evidence_before(turn),
            title=definition.title_of(canonical),
            identity_digest=definition.digest(canonical),
        ),
    )
    return Written(entry.id, True)


@dataclass(frozen=True)
class FenceOutcome:
    """What the fences of one step did: cards written, and the check that intercepted one."""

    presented: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    intercepted: str = ""  # the tagged nudge text of the first gated fence


def converge_fences(
    ledger: Ledger, session: str, step: Entry, library: CardLibrary, observes: Observes
) -> FenceOutcome:
    """The fence fallback: each ```vak block of the step's text that parses, names a card type
    and validates is written as that card (source {"fence": step id}) after the same gate a
    card call passes; one that does not is recorded as an Activity and stays prose."""
    assert isinstance(step.payload, AssistantStep)
    presented: list[str] = []
    types: list[str] = []
    for fence in find_fences(step.payload.text):
        definition = library.cards.get(fence.semantic_type) if fence.payload is not None else None
        problems = [fence.problem] if fence.problem else []
        if fence.payload is not None and definition is None:
            known = ", ".join(library.types())
            problems = [f"unknown card type {fence.semantic_type!r} (types: {known})"]
        elif definition is not None:
            problems = definition.errors(dict(fence.payload or {}))
        if problems or definition is None or fence.payload is None:
            ledger.append(
                session,
                Activity(
                    type=CARD_FENCE_INVALID,
                    message="a vak block is not a valid card: " + "; ".join(problems),
                    detail={"step": step.id, "problems": problems},
                ),
            )
            continue
        turn = current_turn(ledger.chain_to_root(session))
        if fence.digest not in written(turn):
            stop = gate(turn, definition, fence.payload, observes)
            if stop:
                return FenceOutcome(tuple(presented), tuple(types), stop)
        card = present(
            ledger, session, turn, library, definition, fence.payload, {"fence": step.id}
        )
        if card.new:
            presented.append(card.id)
            types.append(definition.type)
    return FenceOutcome(tuple(presented), tuple(types))


def last_figure(chain: Sequence[Entry], turn: Turn) -> tuple[str, str] | None:
    """The last figure the conversation recorded before this turn about what the directive
    asks (a card sharing a word with it, else the newest card): (figure, when)."""
    cards = [
        (e.created_at, e.payload)
        for e in chain
        if isinstance(e.payload, Presentation) and e.payload.turn_id != turn.turn_id
    ]
    if not cards:
        return None
    asked = content_words(turn.directive.text, lexicons())
    related = [c for c in cards if asked & content_words(values_text(c[1].payload), lexicons())]
    at, card = (related or cards)[-1]
    figure = f"“{card.identity_digest}” (the {card.semantic_type} card “{card.title}”)"
    return figure, at.replace("T", " ").split(".")[0] + " UTC"


def shown(ledger: Ledger, presentation_id: str) -> CardShown:
    """The event announcing the card written as entry `presentation_id`."""
    card = ledger.entry(presentation_id).payload
    assert isinstance(card, Presentation), presentation_id
    return CardShown(presentation_id, card.semantic_type, card.title)


def acked_card(ledger: Ledger, tool_name: str, result: str, is_error: bool) -> CardShown | None:
    """The card a card call's result says it wrote (None for any other result, an error, or a
    repeat: a repeat wrote nothing)."""
    if is_error or not is_card_tool(tool_name):
        return None
    body = parse_ack(result)
    if body is None or body.get("repeat") is True:
        return None
    return shown(ledger, str(body["presentation"]))


# -- feedback and selection ---------------------------------------------------------------------


def _presentation(ledger: Ledger, session: str, presentation_id: str) -> Entry:
    try:
        entry = ledger.find(session, presentation_id)
    except UnknownEntry as exc:
        raise ValueError(str(exc)) from None
    if not isinstance(entry.payload, Presentation):
        raise ValueError(f"{presentation_id!r} names a {entry.kind} entry, not a card")
    return entry


def record_feedback(
    ledger: Ledger, session: str, presentation_id: str, verdict: str, note: str = ""
) -> Entry:
    """The user rated a card: "up", "down", or "clear" to take a rating back."""
    if verdict not in VERDICTS:
        raise ValueError(f"a verdict is one of {', '.join(VERDICTS)}, not {verdict!r}")
    card = _presentation(ledger, session, presentation_id)
    return ledger.append(session, PresentationFeedback(card.id, verdict, note))


def set_selection(ledger: Ledger, session: str, presentation_id: str, action: str) -> Entry:
    """The user dismissed, restored or selected a card."""
    if action not in ACTIONS:
        raise ValueError(f"an action is one of {', '.join(ACTIONS)}, not {action!r}")
    card = _presentation(ledger, session, presentation_id)
    return ledger.append(session, PresentationSelection(card.id, action))


@dataclass(frozen=True)
class CardState:
    """What the user's clicks on one card add up to: the last verdict ("up", "down", or "" for
    none or taken back) and whether the card is dismissed."""

    verdict: str = ""
    dismissed: bool = False


def presentation_states(entries: Iterable[EntryLike]) -> dict[str, CardState]:
    """Every card's state folded from the entries in order (the latest click wins)."""
    states: dict[str, CardState] = {}
    for entry in entries:
        payload = entry.payload
        if isinstance(payload, Presentation):
            states.setdefault(entry.id, CardState())
        elif isinstance(payload, PresentationFeedback) and payload.presentation in states:
            verdict = "" if payload.verdict == "clear" else payload.verdict
            states[payload.presentation] = CardState(
                verdict, states[payload.presentation].dismissed
            )
        elif isinstance(payload, PresentationSelection) and payload.presentation in states:
            old = states[payload.presentation]
            if payload.action in ("dismiss", "restore"):
                old = CardState(old.verdict, payload.action == "dismiss")
            states[payload.presentation] = old
    return states
