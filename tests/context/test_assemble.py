"""The foundation's request rendering: whole turns, thinking only in the current turn, every
tool call paired with a result."""

from __future__ import annotations

from dataclasses import dataclass

from vak_desktop.context.assemble import NOT_RUN, full_history, prefix_digest
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    Directive,
    Payload,
    Receipt,
    ToolCall,
    ToolResult,
)
from vak_desktop.context.request import ToolSpec
from vak_desktop.context.turns import TURN_CLOSED, split_turns


@dataclass(frozen=True)
class E:
    id: str
    payload: Payload


def _chain(*payloads: Payload) -> list[E]:
    return [E(f"b3:{i:04d}", p) for i, p in enumerate(payloads)]


CLOSED = Activity(TURN_CLOSED, detail={"outcome": "completed"})


def test_past_thinking_is_dropped_and_current_thinking_kept() -> None:
    chain = _chain(
        Directive("q1"),
        AssistantStep(text="a1", thinking="old thoughts"),
        CLOSED,
        Directive("q2"),
        AssistantStep(thinking="new thoughts", tool_calls=(ToolCall("c", "recall", {}),)),
        ToolResult("c", "recall", "r", "b3:e", 1),
    )
    messages = full_history(chain, "sys")
    assert [m.role for m in messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
    ]
    assert messages[2].thinking == ""
    assert messages[4].thinking == "new thoughts"


def test_a_call_without_a_result_gets_an_explicit_not_run_result() -> None:
    chain = _chain(
        Directive("q1"),
        AssistantStep(tool_calls=(ToolCall("c1", "recall", {}), ToolCall("c2", "recall", {}))),
        ToolResult("c1", "recall", "r", "b3:e", 1),
        Activity("turn_interrupted"),
        Directive("q2"),
    )
    messages = full_history(chain, "")
    tool_messages = [m for m in messages if m.role == "tool"]
    assert [(m.tool_call_id, m.content) for m in tool_messages] == [("c1", "r"), ("c2", NOT_RUN)]
    assert messages[-1].content == "q2"


def test_activities_and_receipts_are_never_model_visible() -> None:
    chain = _chain(Directive("q"), Receipt("p", "m"), Activity("x", "secret note"), CLOSED)
    assert all("secret" not in m.content for m in full_history(chain, "s"))


def test_turns_split_at_directives_and_know_their_outcome() -> None:
    chain = _chain(Directive("a"), AssistantStep(text="x"), CLOSED, Directive("b"))
    turns = split_turns(chain)
    assert [t.directive.text for t in turns] == ["a", "b"]
    assert [t.outcome for t in turns] == ["completed", "interrupted"]
    assert turns[0].answer == "x"


def test_prefix_digest_changes_only_with_system_or_tools() -> None:
    tools = [ToolSpec("recall", "d")]
    assert prefix_digest("s", tools) == prefix_digest("s", list(tools))
    assert prefix_digest("s", tools) != prefix_digest("s2", tools)
    assert prefix_digest("s", tools) != prefix_digest("s", [])
