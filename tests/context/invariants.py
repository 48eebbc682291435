"""The spec's invariants over one planned and assembled request, asserted for the tests.

The checks themselves are production code (`vak_desktop/context/invariants.py`, which `vak
eval` runs over a user's ledger and which returns findings); the tests assert there are none,
plus what only holds for the sessions tests build (distinct directives, so each whole turn is
found by its words).
"""

from __future__ import annotations

from collections.abc import Sequence

from vak_desktop.context.capacity.profile import tokens_per_char
from vak_desktop.context.invariants import (
    handoff_tokens,
    history_tokens_measured,
    request_findings,
    results_of,
    thread_lines,
    tool_pair_findings,
)
from vak_desktop.context.payloads import CapacityProfile
from vak_desktop.context.planning.assemble import (
    AssembledRequest,
    TailContext,
    assemble,
    plan_request,
)
from vak_desktop.context.planning.planner import Plan
from vak_desktop.context.planning.turns import Turn, TurnIndex
from vak_desktop.context.request import Message, ToolSpec
from vak_desktop.runtime.lexicons import lexicons

__all__ = [
    "check_request",
    "check_tool_pairs",
    "checked_request",
    "handoff_tokens",
    "history_tokens_measured",
    "results_of",
    "thread_lines",
]


def check_tool_pairs(messages: Sequence[Message]) -> None:
    """Every assistant tool call is followed by exactly one result, in call order; no result
    stands without its call."""
    findings = tool_pair_findings(messages)
    assert not findings, "\n".join(map(str, findings))


def check_request(
    index: TurnIndex, plan: Plan, request: AssembledRequest, current: Turn, ratio: float
) -> None:
    """Assert every invariant on one request (see vak_desktop/context/invariants.py)."""
    history = [t for t in index.turns if t.turn_id != current.turn_id]
    assert len({t.directive.text for t in history}) == len(history), "distinct directives"
    findings = request_findings(index, plan, request, current, ratio)
    assert not findings, "\n".join(map(str, findings))


def checked_request(
    index: TurnIndex,
    capacity: CapacityProfile,
    *,
    system: str,
    tools: Sequence[ToolSpec],
    tail_context: TailContext,
) -> tuple[Plan, AssembledRequest]:
    """Plan and assemble the request of the index's last turn (the running one), and assert
    every invariant on it."""
    current = index.turns[-1]
    plan, tail = plan_request(
        index, capacity, current, system=system, tools=tools, tail_context=tail_context,
        lexicons=lexicons(),
    )  # fmt: skip
    ratio = tokens_per_char(capacity)
    request = assemble(index, plan, current, system=system, tools=tools, tail=tail, ratio=ratio)
    check_request(index, plan, request, current, ratio)
    return plan, request
