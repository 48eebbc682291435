"""Payloads survive the trip to JSON and back; old entries without new fields still decode."""

from __future__ import annotations

import pytest

from vak_desktop.context.codec import PayloadDecodeError, decode_payload, to_json_value
from vak_desktop.context.payloads import (
    PAYLOAD_TYPES,
    Activity,
    Answer,
    AssistantStep,
    CapacityProfile,
    Compaction,
    Directive,
    EvidenceBody,
    Ewma,
    Horizon,
    Nudge,
    Presentation,
    PresentationFeedback,
    PresentationRef,
    PresentationSelection,
    Receipt,
    Reset,
    Timings,
    ToolCall,
    ToolResult,
    TraceLine,
    TurnCard,
    Usage,
)

EXAMPLES = [
    Directive(text="hi", images=("aGk=",), model="m", provider="ollama", system="s"),
    AssistantStep(text="t", thinking="th", tool_calls=(ToolCall("c1", "recall", {"id": "x"}),)),
    EvidenceBody("c1", "recall", "body", 4, is_error=False),
    ToolResult("c1", "recall", "body", "b3:00", 4, windowed=True),
    Receipt("ollama", "m", Usage(1, 2, 3, 4, 5), Timings(1, 2, 3, 4, 5, 6), "b3:1", 10, 2, 8192),
    Presentation(
        "b3:t", {"tool_call": "c"}, "metric", "card", "1", 1, {"v": 1}, "b3:p", ("b3:e",), "T"
    ),
    PresentationFeedback("b3:p", "down", "wrong"),
    PresentationSelection("b3:p", "dismiss"),
    TurnCard(
        "b3:t",
        "asked",
        (TraceLine("read", "b3:a", "b3:e", "text"),),
        Answer((PresentationRef("b3:p", "metric", "T", "d"),), "n"),
        "completed",
        {"act": "answer"},
        100,
        10,
    ),
    Compaction("b3:a", "b3:b", "summary", "m", ("b3:e",)),
    CapacityProfile(
        "ollama",
        "m",
        131072,
        Horizon(13000, 0.6, "2026-11-30T00:00:00Z"),
        2048,
        "Q4",
        20000,
        Ewma(0.3, 4),
    ),
    Activity("turn_closed", "", {"outcome": "completed"}),
    Reset("handoff text", "no usable horizon"),
    Nudge("empty-step", "[empty-step] answer the question"),
]


def test_every_kind_has_an_example() -> None:
    assert {type(e).KIND for e in EXAMPLES} == set(PAYLOAD_TYPES)


@pytest.mark.parametrize("payload", EXAMPLES, ids=lambda p: type(p).KIND)
def test_round_trip(payload: object) -> None:
    kind = type(payload).KIND  # type: ignore[attr-defined]
    assert decode_payload(kind, to_json_value(payload)) == payload


def test_missing_optional_fields_take_their_defaults_and_unknown_keys_are_ignored() -> None:
    assert decode_payload("directive", {"text": "old", "future_field": 1}) == Directive(text="old")


def test_a_wrong_shape_names_the_field() -> None:
    with pytest.raises(PayloadDecodeError, match=r"AssistantStep.tool_calls\[0\].name"):
        decode_payload("assistant_step", {"tool_calls": [{"id": "c", "name": 3}]})
    with pytest.raises(PayloadDecodeError, match="unknown entry kind"):
        decode_payload("gossip", {})
