"""The fixture session `vak eval` plans: twenty closed search turns and a pending question.

Written into a ledger (always a temporary one) the way the runtime writes a live turn: the
Directive, a step calling `search`, the EvidenceBody with the whole result and the ToolResult as
carried, the answer, the TurnCard built from the ledger, the closing Activity. Each result is a
search response of ~14,000 characters, so the session is ~70k tokens whole: a small profile
needs a packet for it, a large one carries every turn whole. Everything is deterministic, so
two runs plan the same session.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from vak_desktop.context.capacity.profile import FALLBACK_TOKENS_PER_CHAR
from vak_desktop.context.evidence.windows import carry
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    CapacityProfile,
    Directive,
    EvidenceBody,
    Ewma,
    Horizon,
    ToolCall,
    ToolResult,
)
from vak_desktop.context.planning.turn_cards import build_turn_card
from vak_desktop.context.planning.turns import TURN_CLOSED, Turn
from vak_desktop.ledger import Entry, Ledger

FIXTURE_TURNS = 20
RESULT_CHARS = 14_000
ASK = "Now compare the first topic with the latest one."
SMALL_HORIZON, LARGE_HORIZON = 6_000, 200_000  # a packet is needed / every turn fits whole
_WORDS = (
    "the source reviews the topic in depth with figures tables and a short history of how "
    "it developed over the last decade including the open questions that remain "
)


def search_result(topic: int, chars: int = RESULT_CHARS, hits: int = 10) -> str:
    """A search response of about `chars` characters: ten hits with titles, URLs and bodies."""
    body = max(0, chars // hits - 120)
    text = (_WORDS * (body // len(_WORDS) + 1))[:body]
    return json.dumps(
        {
            "query": f"topic {topic}",
            "results": [
                {
                    "title": f"Source {i} on topic {topic}",
                    "url": f"https://example.org/topic{topic}/{i}",
                    "content": text,
                    "score": round(0.9 - i / 100, 2),
                }
                for i in range(hits)
            ],
        }
    )


def write_fixture(ledger: Ledger, *, model: str, pending: str = ASK) -> str:
    """Write the fixture session into `ledger`; returns its id. Its last turn is `pending`
    (written, not answered) unless that is empty. `model`: the one its turns were given to
    (a plan reserves for the turn what that model's own turns reached)."""
    session = ledger.create_session(title="vak eval fixture").id
    for n in range(1, FIXTURE_TURNS + 1):
        directive = Directive(
            text=f"Turn {n}: what does the search say about topic {n}?", model=model
        )
        head = ledger.append(session, directive)
        call = ToolCall(f"call_{n}", "search", {"query": f"topic {n}"})
        result = search_result(n)
        entries: list[Entry] = [ledger.append(session, AssistantStep(tool_calls=(call,)))]
        body = ledger.append(session, EvidenceBody(call.id, call.name, result, len(result)))
        carried = carry(result, body.id)
        entries.append(body)
        entries.append(
            ledger.append(
                session,
                ToolResult(
                    call.id, call.name, carried.text, body.id, len(result), False, carried.windowed
                ),
            )
        )
        answer = f"Topic {n} is covered by ten sources; the first says it is well understood."
        entries.append(ledger.append(session, AssistantStep(text=answer, model=model)))
        turn = Turn(head.id, n - 1, directive, tuple(entries))
        ledger.append(session, build_turn_card(turn, "completed", FALLBACK_TOKENS_PER_CHAR))
        ledger.append(session, Activity(type=TURN_CLOSED, detail={"outcome": "completed"}))
    if pending:
        ledger.append(session, Directive(text=pending, model=model))
    return session


def fixture_profile(
    provider: str, model: str, quantisation: str, horizon: int, *, output_reserve: int
) -> CapacityProfile:
    """A pinned profile of `horizon` tokens for the model the fixture is planned against (its
    key, so the runtime's own profile lookup finds it in the fixture's chain)."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return CapacityProfile(
        provider=provider,
        model=model,
        quantisation=quantisation,
        declared_window=max(horizon, 8_192),
        instruction_horizon=Horizon(horizon, 0.9, now),
        output_reserve=output_reserve,
        tokens_per_char=Ewma(0.25, 5),
        provenance={"source": "vak eval", "probed_at": now},
    )
