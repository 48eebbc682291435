"""The handoff tells a past call of a tool the request does not carry in words (issue #22):
an imported turn's `did: read_file {"q": …}` was copied as a call by a 0.5B model in 3 of 6."""

from __future__ import annotations

from tests.context.sessions import Call, SessionBuilder, TurnScript, profile
from vak_desktop.context.planning.turns import build_turn_index
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import DEFAULT_SYSTEM_PROMPT, default_tools
from vak_desktop.runtime.turn.reset import planned_reset

TINY = profile(1_200, output_reserve=256, ratio=0.3, provider="scripted", model="tiny")
ASK = "What did the invoices search I asked for earlier find? " * 20


def _session(ledger: Ledger) -> SessionBuilder:
    session = SessionBuilder(ledger)
    session.append(TINY)
    found = Call("read_file", {"q": "invoices"}, "invoices/2023.txt: total 40 EUR")
    session.turn(TurnScript("Look through my invoices folder", ((found,),), "Found one invoice."))
    for n in range(2, 9):
        session.turn(TurnScript(f"Question {n}: the colour of box {n}?", (), f"Box {n} is red."))
    return session


def test_a_past_call_of_an_absent_tool_is_told_in_words(ledger: Ledger) -> None:
    session = _session(ledger)
    specs = default_tools().specs()
    reset = planned_reset(
        build_turn_index(session.chain()), TINY, ASK, system=DEFAULT_SYSTEM_PROMPT, tools=specs
    )
    assert reset is not None and "The earlier turn closest to the request" in reset.handoff
    assert "read_file" not in reset.handoff and '{"q"' not in reset.handoff
    assert "read file (another app's tool, not one you can call) on “invoices”" in reset.handoff


def test_a_past_call_of_a_tool_the_request_carries_keeps_its_shape(ledger: Ledger) -> None:
    session = _session(ledger)
    carried = (*default_tools().specs(), ToolSpec("read_file", "Read a file.", {"type": "object"}))
    reset = planned_reset(
        build_turn_index(session.chain()), TINY, ASK, system=DEFAULT_SYSTEM_PROMPT, tools=carried
    )
    assert reset is not None and 'did: read_file {"q":"invoices"}' in reset.handoff
