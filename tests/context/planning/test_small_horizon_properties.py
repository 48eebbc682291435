"""Small horizons (issue #17): for every generated session and profile with a horizon of at
least 1,500 tokens, the assembled request stays within the horizon, the prefix within a third of
it, each turn is in exactly one fidelity (the production invariant checker), and as the session
grows turn by turn the packet range moves only in whole batches of PACKET_BATCH_TURNS."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.context.invariants import checked_request
from tests.context.sessions import Call, SessionBuilder, TurnScript, profile, search_result
from vak_desktop.context.capacity.profile import estimate_tokens
from vak_desktop.context.planning.assemble import (
    AssembledRequest,
    TailContext,
)
from vak_desktop.context.planning.planner import PACKET_BATCH_TURNS, Fidelity
from vak_desktop.context.planning.turns import Turn, TurnIndex
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.turn.reset import needs_reset

TAIL = TailContext(utc="2026-11-30T10:20:00Z", local="2026-11-30 11:20 (Monday)", timezone="CET")
TOOLS = (ToolSpec("recall", "Return a turn or a result in full.", {"type": "object"}),)
ASKS = ("What about part {n}?", "Search my files for the code I gave you earlier.", "And {n}?")


@st.composite
def turn_scripts(draw: st.DrawFn, n: int) -> TurnScript:
    words = draw(st.integers(3, 60))
    directive = f"Turn {n}: " + " ".join(f"word{(n * 7 + i) % 97}" for i in range(words))
    steps: tuple[tuple[Call, ...], ...] = ()
    if draw(st.booleans()):
        size = draw(st.sampled_from([200, 3_000, 35_000]))
        steps = ((Call("search", {"q": f"q{n}"}, search_result(f"s{n}", size)),),)
    answer = f"Answer {n}. " * draw(st.integers(0, 80))
    return TurnScript(directive, steps, answer)


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[TurnScript], int, int, float, str, str]:
    count = draw(st.integers(1, 40))
    scripts = [draw(turn_scripts(n)) for n in range(1, count + 1)]
    horizon = draw(st.integers(1_500, 12_000))
    reserve = draw(st.integers(0, horizon // 8))
    ratio = draw(st.floats(0.25, 0.4))
    system = "You are a careful assistant. " * draw(st.integers(1, 12))
    ask = draw(st.sampled_from(ASKS)).format(n=count)
    return scripts, horizon, reserve, ratio, system, ask


def _at(index: TurnIndex, closed: int) -> TurnIndex:
    """The session as it stood when turn `closed + 1` (the pending one) was asked."""
    current = index.turns[-1]
    asked = Turn(current.turn_id, closed, current.directive, current.entries)
    return TurnIndex((*index.turns[:closed], asked), index.packets, index.reset)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_a_small_horizon_request_fits_and_its_packet_moves_in_whole_batches(
    case: tuple[list[TurnScript], int, int, float, str, str],
) -> None:
    scripts, horizon, reserve, ratio, system, ask = case
    ledger = Ledger.open(":memory:")
    try:
        session = SessionBuilder(ledger, card_ratio=ratio)
        for script in scripts:
            session.turn(script)
        session.pending(ask)
        capacity = profile(horizon, output_reserve=reserve, ratio=ratio)
        full = session.index()
        for closed in range(len(scripts) + 1):
            index = _at(full, closed)
            plan, request = checked_request(  # one fidelity, no cut, …
                index, capacity, system=system, tools=TOOLS, tail_context=TAIL
            )
            assert plan.budget.prefix_tokens <= horizon / 3
            if plan.packet_range is not None:
                last = index.by_id(plan.packet_range[1])
                assert last is not None and (last.index + 1) % PACKET_BATCH_TURNS == 0
                assert plan.packet_range[0] == index.turns[0].turn_id
            fidelities = [p.fidelity for p in plan.turns]
            assert len(fidelities) == closed and Fidelity.BEHIND_RESET not in fidelities
            sent = estimate_tokens(request_chars(request), ratio)
            if needs_reset(plan):  # the runtime writes a Reset first (tests/runtime/turn)
                continue
            if plan.over_budget == 0:
                assert sent + reserve <= horizon, (sent, reserve, horizon)
            else:  # only the newest partial batch may go past its budget, and it says so
                assert plan.partial_batch and sent <= horizon, (sent, horizon)
    finally:
        ledger.close()


def request_chars(request: AssembledRequest) -> int:
    return sum(m.chars() for m in request.messages) + sum(t.chars() for t in request.tools)
