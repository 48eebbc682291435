"""Card definitions: every type loads and validates, digests follow each schema's identity, and
the ```vak fence fallback is found, deduplicated and kept out of the narration."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vak_desktop.context.presentations.digest import payload_digest
from vak_desktop.context.presentations.library import (
    CardDefinitionError,
    CardLibrary,
    find_fences,
    narration_text,
    projected_text,
    tool_name,
)
from vak_desktop.runtime.presentations import card_library

TYPES = ["chart", "checklist", "entity", "metric", "research.synthesis", "table", "timeline"]

EXAMPLES: dict[str, dict[str, Any]] = {
    "metric": {"title": "Copper price", "value": 9312.5, "unit": "USD/t", "as_of": "10:00"},
    "table": {
        "title": "Release sizes",
        "columns": ["version", "size"],
        "rows": [["1.0", 120], ["1.1", 131], ["1.2", 140]],
    },
    "chart": {
        "title": "Requests per day",
        "kind": "line",
        "series": [
            {"name": "api", "points": [{"x": "mon", "y": 3}, {"x": "tue", "y": 5}]},
            {"name": "web", "points": [{"x": "mon", "y": 1}]},
        ],
        "accessible_summary": "API traffic rose from 3 to 5.",
    },
    "entity": {
        "title": "Ada Lovelace",
        "entity_type": "person",
        "fields": [{"label": "born", "value": 1815}],
    },
    "checklist": {"title": "Release", "items": [{"label": "tag", "done": True}, {"label": "ship"}]},
    "timeline": {
        "title": "Project",
        "events": [{"when": "2024", "label": "start"}, {"when": "2025", "label": "launch"}],
    },
    "research.synthesis": {
        "title": "Parsers compared",
        "takeaways": ["PEG parsers backtrack", "LR parsers do not"],
        "sources": [
            {"title": "PEG paper", "url": "https://example.org/peg", "snippet": "x" * 2_000},
            {"title": "LR survey", "url": "https://example.org/lr", "snippet": "y" * 2_000},
        ],
    },
}


def test_the_library_defines_every_card_type_with_its_emit_tool() -> None:
    library = card_library()
    assert library.types() == TYPES
    assert tool_name("research.synthesis") == "emit_research_synthesis_card"
    for kind in TYPES:
        definition = library.cards[kind]
        assert library.by_tool(definition.tool_name) is definition
        assert definition.schema["$schema"].endswith("draft/2020-12/schema")
        assert definition.errors(EXAMPLES[kind]) == [], kind


def test_a_bad_payload_gets_every_problem_with_where_it_is() -> None:
    table = card_library().cards["table"]
    problems = table.errors({"title": "", "columns": "a,b", "rows": [["x"], "y"], "extra": 1})
    text = "\n".join(problems)
    assert len(problems) == 4, problems
    assert "/title" in text and "/columns" in text and "/rows/1" in text
    assert "'extra' was unexpected" in text
    assert card_library().cards["metric"].errors({"value": 3}) == [
        "the card: 'title' is a required property"
    ]


def test_digests_show_each_schemas_identity_fields() -> None:
    cards = card_library().cards
    metric = cards["metric"].digest(EXAMPLES["metric"])
    assert metric == "as_of: 10:00; title: Copper price; unit: USD/t; value: 9312.5"
    table = cards["table"].digest(EXAMPLES["table"])
    assert table == "title: Release sizes; columns: version | size; 3 rows; first row: 1.0 | 120"
    chart = cards["chart"].digest(EXAMPLES["chart"])
    assert chart == (
        "title: Requests per day; series: api | web; 3 points; "
        "accessible_summary: API traffic rose from 3 to 5."
    )
    entity = cards["entity"].digest(EXAMPLES["entity"])
    assert entity == "title: Ada Lovelace; type: person; fields: label=born, value=1815"
    assert cards["checklist"].digest(EXAMPLES["checklist"]) == "title: Release; items: tag | ship"
    timeline = cards["timeline"].digest(EXAMPLES["timeline"])
    assert timeline == "title: Project; events: 2024 — start | 2025 — launch"
    research = cards["research.synthesis"].digest(EXAMPLES["research.synthesis"])
    assert "PEG parsers backtrack | LR parsers do not" in research
    assert "PEG paper — https://example.org/peg" in research
    assert "xxx" not in research and len(research) < 200  # the snippets stay in the payload


def test_a_definition_with_a_broken_schema_is_refused_by_name() -> None:
    with pytest.raises(CardDefinitionError, match="'gauge'"):
        CardLibrary.from_json(
            {
                "library": "t",
                "version": "1",
                "cards": [{"type": "gauge", "schema": {"type": "no-such-type"}}],
            }
        )
    with pytest.raises(CardDefinitionError, match="missing"):
        CardLibrary.from_json({"cards": []})


def _fence(card: dict[str, Any]) -> str:
    return "```vak\n" + json.dumps(card) + "\n```\n"


def test_fences_are_found_with_their_payload_and_problems() -> None:
    card = {"type": "metric", **EXAMPLES["metric"]}
    text = "Here it is:\n\n" + _fence(card) + "\n```vak\nnot json\n```\n" + _fence({"x": 1})
    fences = find_fences(text)
    assert [f.semantic_type for f in fences] == ["metric", "", ""]
    assert fences[0].payload == EXAMPLES["metric"]
    assert fences[0].digest == payload_digest(EXAMPLES["metric"])
    assert "not JSON" in fences[1].problem and '"type"' in fences[2].problem


def test_a_fence_repeating_a_card_already_written_is_dropped_from_the_projection() -> None:
    card = {"type": "metric", **EXAMPLES["metric"]}
    text = "Before.\n\n" + _fence(card) + "\nAfter."
    digest = payload_digest(EXAMPLES["metric"])
    assert projected_text(text, set()) == text  # the fence that wrote the card stays
    assert projected_text(text, {digest}) == "Before.\n\nAfter."
    twice = "A.\n\n" + _fence(card) + "\nB.\n\n" + _fence(card) + "\nC."
    assert projected_text(twice, set()).count("```vak") == 1  # the second copy is the duplicate
    assert narration_text(twice) == "A.\n\nB.\n\nC."
