"""The tail block: time facts first, the thread of packeted directives bounded by their asks."""

from __future__ import annotations

from tests.context.sessions import SessionBuilder, TurnScript, profile
from vak_desktop.context.capacity.profile import estimate_tokens
from vak_desktop.context.planning.assemble import TailContext, plan_request
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.lexicons import lexicons

CLOCK = TailContext(utc="2026-11-30T10:00:00Z", local="2026-11-30 11:00 (Monday)", timezone="CET")


def test_long_pasted_directives_do_not_blow_up_the_thread(ledger: Ledger) -> None:
    builder = SessionBuilder(ledger)
    paste = "Please review this log. " + "ERROR something failed at step 42 again. " * 60
    for n in range(60):
        builder.turn(TurnScript(directive=f"{n}: {paste}", answer="Reviewed: the step times out."))
    builder.pending("and what about the latest one?")
    index = builder.index()
    small = profile(2_500, output_reserve=256)
    plan, tail = plan_request(
        index,
        small,
        index.turns[-1],
        system="You are helpful.",
        tools=(),
        tail_context=CLOCK,
        lexicons=lexicons(),
    )
    assert plan.packet_range is not None  # the long turns went into the packet
    assert "Earlier requests, now summarised:" in tail  # a small model's plain tail
    lines = [line for line in tail.split("\n") if line.startswith("- ")]
    assert lines and all(len(line) < 200 for line in lines)  # first sentence + how much follows
    assert all("(+" in line and "words)" in line for line in lines)
    assert estimate_tokens(len(tail), 0.25) < 600
    assert plan.budget.tail_tokens >= estimate_tokens(len(tail), 0.25) - 1


def test_a_small_model_gets_the_tail_as_plain_sentences(ledger: Ledger) -> None:
    builder = SessionBuilder(ledger)
    builder.turn(TurnScript(directive="hello", answer="hi"))
    builder.pending("what time is it?")
    index = builder.index()
    for horizon, tagged in ((4_000, False), (32_000, True)):
        _, tail = plan_request(
            index,
            profile(horizon),
            index.turns[-1],
            system="S",
            tools=(),
            tail_context=CLOCK,
            lexicons=lexicons(),
        )
        assert ("<turn_context>" in tail and "<stance>" in tail) is tagged, tail
        assert CLOCK.utc in tail and CLOCK.local in tail and CLOCK.timezone in tail
