"""A tool-free turn of a small model planned at a memory horizon above `SMALL_HORIZON`.

The real Qwen2.5-Coder 0.5B, after three idle retries of its probe, followed the
answer-from-memory task to 9,493 tokens while its tool horizon stayed 2,792 (LoCoMo conv-49,
issue #22). Planned at the memory horizon, its tool-free turns had been judged a large
model's: no focused plan, 8,350-token requests of the newest turns, 150 s a question.
"""

from __future__ import annotations

import dataclasses

from tests.context.planning.test_passages import SYSTEM, TAIL, TOOLS, chatty
from tests.context.sessions import TurnScript, profile
from vak_desktop.context.capacity.profile import SMALL_HORIZON, is_small
from vak_desktop.context.payloads import Horizon
from vak_desktop.context.planning.planner import PACKET_BATCH_TURNS, Fidelity
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.turn.projection import plan_turn


def test_a_small_model_stays_small_at_its_memory_horizon() -> None:
    said = " ".join(["The puppy chewed a shoe, then slept, then chewed the sofa."] * 3)
    session = chatty(Ledger.open(":memory:"))
    for n in range(240):
        session.turn(TurnScript(f"Maya: puppy day {n}. {said}", answer="Tom: Ha, puppies."))
    session.pending("Do you remember what breed the puppy was?")
    small = profile(2_792, output_reserve=512)
    remembers = dataclasses.replace(
        small, declared_window=32_768, memory_horizon=Horizon(9_493, 0.81, "2026-12-05")
    )
    assert is_small(remembers) and SMALL_HORIZON < 9_493
    projection = plan_turn(
        session.index(), remembers, system=SYSTEM, tools=TOOLS, tail_context=TAIL, pending=True
    )
    plan = projection.plan
    assert plan.budget.horizon == 9_493  # planned at the memory horizon, as a tool-free turn
    carried = [t for t in plan.turns if t.fidelity is not Fidelity.PACKET]
    assert len(carried) <= PACKET_BATCH_TURNS + 1  # the focused floor, not the newest turns
    assert "called Biscuit" in projection.tail
    assert plan.history_tokens + plan.passage_tokens < plan.budget.horizon // 2
