"""Every card a request shows tells a past call of a tool the request does not carry in words,
and the plan prices it as told (issue #22: an imported turn's `did: read_file {"q": …}` was
copied as a call by a 0.5B model in 3 tries of 6; the handoff already told it in words, the
`<earlier_turns>` cards and the packet's cards did not).

The session: an imported turn that called another app's `read_file` on "invoices", then many
short turns, and a question now; the request carries `recall` and `grep`, not `read_file`.
"""

from __future__ import annotations

from tests.context.invariants import checked_request
from tests.context.sessions import Call, SessionBuilder, TurnScript, profile, search_result
from vak_desktop.context.capacity.profile import estimate_tokens, tokens_per_char
from vak_desktop.context.payloads import CapacityProfile
from vak_desktop.context.planning.assemble import (
    AssembledRequest,
    TailContext,
)
from vak_desktop.context.planning.card_index import MEMO_KEY
from vak_desktop.context.planning.planner import Fidelity, Plan
from vak_desktop.context.planning.turn_cards import render_card
from vak_desktop.context.planning.turns import TurnIndex, advance_turn_index, build_turn_index
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger

TAIL = TailContext(utc="2026-11-30T10:20:00Z", local="2026-11-30 11:20 (Monday)", timezone="CET")
SYSTEM = "You are a helpful assistant."
TOOLS = (ToolSpec("recall", "Bring back anything from earlier."), ToolSpec("grep", "Search."))
READ_FILE = ToolSpec("read_file", "Read a file.", {"type": "object"})
TOLD = "did: read file (another app's tool, not one you can call) on “invoices” → search_results"
ASK = "What did the invoices folder show?"


def _session(ledger: Ledger, turns: int = 60) -> SessionBuilder:
    imported = SessionBuilder(ledger, model="another-app")
    found = Call("read_file", {"q": "invoices"}, search_result("inv", 3_000))
    answer = "Found one invoice. " + "It lists the total and the date of the order. " * 80
    imported.turn(TurnScript("Look through my invoices folder", ((found,),), answer))
    for n in range(2, turns):
        imported.turn(
            TurnScript(f"Question {n}: the colour of box {n}?", (), f"Box {n} is red. " * 20)
        )
    imported.model = "m"  # the model asked now
    return imported


def _request(
    index: TurnIndex, capacity: CapacityProfile, tools: tuple[ToolSpec, ...] = TOOLS
) -> tuple[Plan, AssembledRequest]:
    return checked_request(index, capacity, system=SYSTEM, tools=tools, tail_context=TAIL)


def _text(request: AssembledRequest) -> str:
    return "\n".join(m.content for m in request.messages)


def test_a_card_tells_a_past_call_of_a_tool_the_request_lacks_in_words(ledger: Ledger) -> None:
    session = _session(ledger)
    session.pending(ASK)
    index = session.index()
    capacity = profile(3_000, output_reserve=256)
    plan, request = _request(index, capacity)
    assert plan.turns[0].fidelity is Fidelity.CARD
    text = _text(request)
    assert "read_file {" not in text and '{"q"' not in text
    assert TOLD in text  # still what was done, on what, with its evidence id
    # priced as sent: the card's price is that of the text the request carries
    card = index.turns[0].card
    assert card is not None
    shown = render_card(card, 1, {t.name for t in TOOLS})
    assert f"{shown}\n" in text
    assert plan.turns[0].tokens == estimate_tokens(len(shown) + 1, tokens_per_char(capacity))


def test_a_packet_shows_its_featured_card_the_same_way(ledger: Ledger) -> None:
    session = _session(ledger)
    session.pending(ASK)
    index = session.index()
    plan, request = _request(index, profile(1_800, output_reserve=256))
    assert plan.turns[0].fidelity is Fidelity.PACKET
    assert index.turns[0].turn_id in plan.packet_featured
    text = _text(request)
    assert "read_file {" not in text
    assert TOLD in text


def test_a_card_keeps_the_call_shape_of_a_tool_the_request_carries(ledger: Ledger) -> None:
    session = _session(ledger)
    session.pending(ASK)
    index = session.index()
    plan, request = _request(index, profile(3_000, output_reserve=256), (*TOOLS, READ_FILE))
    assert plan.turns[0].fidelity is Fidelity.CARD
    text = _text(request)
    assert 'did: read_file {"q":"invoices"} → search_results' in text
    assert "another app's tool" not in text


def _card_of_turn_one(request: AssembledRequest) -> str:
    block = next(m.content for m in request.messages if m.content.startswith("<earlier_turns>"))
    return block[block.index("Turn 1 (") : block.index("\nTurn 2 (")]


def test_a_running_session_shows_a_told_card_alike_while_its_tools_hold(ledger: Ledger) -> None:
    """The card index keeps what a card renders to for the tools it lacks: the session's next
    request shows the card byte for byte as the last one did, and a request that carries
    `read_file` shows the call again (what was told in words is kept apart from it)."""
    session = _session(ledger)
    capacity = profile(3_000, output_reserve=256)
    session.pending(ASK)
    index = advance_turn_index(build_turn_index([]), session.chain())
    plan, request = _request(index, capacity)
    assert plan.turns[0].fidelity is Fidelity.CARD
    told = _card_of_turn_one(request)
    assert TOLD in told
    session.pending("And the box after that one?")  # the next request of the running session
    index = advance_turn_index(index, session.chain())
    plan, request = _request(index, capacity)
    assert plan.turns[0].fidelity is Fidelity.CARD
    assert _card_of_turn_one(request) == told
    kept = index.memo[MEMO_KEY].kept()[0]
    assert kept[("card", index.turns[0].turn_id, "read_file")] == told.rstrip("\n")
    _, request = _request(index, capacity, (*TOOLS, READ_FILE))
    assert 'did: read_file {"q":"invoices"}' in _card_of_turn_one(request)
