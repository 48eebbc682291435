"""How a turn ends in the ledger: its TurnCard (deterministic, no model call), then its mark.

A turn closes with a `turn_closed` Activity carrying its outcome and the tokens it cost. A turn
a killed process left open is closed by the next turn of its session: first the text it was
streaming when it died (from the stream journal, `ledger/journal.py`) as an assistant step
marked interrupted, then its card, then a `turn_interrupted` mark.
"""

from __future__ import annotations

from vak_desktop.context.capacity.profile import FALLBACK_TOKENS_PER_CHAR
from vak_desktop.context.payloads import Activity, AssistantStep, JsonObject, Usage
from vak_desktop.context.planning.reading import Reading, reading_for
from vak_desktop.context.planning.turn_cards import build_turn_card
from vak_desktop.context.planning.turns import TURN_CLOSED, TURN_INTERRUPTED, Turn, split_turns
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.lexicons import lexicons


def reading_of(turn: Turn, reading: Reading | None = None) -> JsonObject:
    """The reading of the turn's directive, as its TurnCard keeps it (spec §10 `reading`):
    domains, card types, languages, and the digest of the lexicons that read it, so the
    reading is reproducible from the ledger after a lexicon changes. `reading`: the one the
    turn was planned with, when the caller has it (the directive is read once a turn)."""
    read = lexicons()
    if reading is None or reading.text != turn.directive.text:
        reading = reading_for(turn.directive.text, read)
    return {**reading.to_json(), "lexicons": read.digest}


def card_stop_words() -> frozenset[str]:
    """The words a card's gist scores down: every shipped language's stop words."""
    read = lexicons()
    return read.stop_words(read.languages).words


def close_turn(
    ledger: Ledger,
    session: str,
    outcome: str,
    usage: Usage,
    error: str,
    ratio: float,
    reading: Reading | None = None,
) -> None:
    """Write the session's last turn's TurnCard, then the closing mark."""
    turn = split_turns(ledger.chain_to_root(session))[-1]
    card = build_turn_card(
        turn, outcome, ratio, reading=reading_of(turn, reading), stop_words=card_stop_words()
    )
    ledger.append(session, card)
    ledger.append(session, closed(outcome, usage, error))


def close_interrupted(ledger: Ledger, session: str) -> str | None:
    """Close the session's last turn as interrupted if it never closed (the process died
    mid-turn): its TurnCard, then the mark. Returns the turn's id if it did."""
    turns = split_turns(ledger.chain_to_root(session))
    if not turns or turns[-1].closed:
        return None
    streamed = ledger.unfolded_stream(session)
    if streamed is not None and any(streamed):
        text, thinking = streamed
        model = turns[-1].directive.model
        ledger.append(
            session, AssistantStep(text=text, thinking=thinking, model=model, interrupted=True)
        )
        turns = split_turns(ledger.chain_to_root(session))
    last = turns[-1]
    card = build_turn_card(
        last,
        "interrupted",
        FALLBACK_TOKENS_PER_CHAR,
        reading=reading_of(last),
        stop_words=card_stop_words(),
    )
    ledger.append(session, card)
    ledger.append(
        session,
        Activity(
            type=TURN_INTERRUPTED,
            message="the turn ended without closing: the app stopped while it ran",
            detail={"turn": last.turn_id},
        ),
    )
    return last.turn_id


def closed(outcome: str, usage: Usage, error: str) -> Activity:
    """The activity that closes a turn, with its outcome and the tokens it cost."""
    return Activity(
        type=TURN_CLOSED,
        message=error,
        detail={
            "outcome": outcome,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
        },
    )
