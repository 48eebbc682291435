"""The tool surface over real turns: what is loaded, the catalogue, find_tools, misreads."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.context.sessions import profile
from tests.doubles.fixtures import TOOL_MODEL, double_fixture, http_fixture  # noqa: F401
from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.runtime.scripted import Scripted, ScriptedProvider
from tests.runtime.tools.helpers import make_tree
from vak_desktop.context.invariants import catalogued_tools, tool_name_findings
from vak_desktop.context.payloads import Activity, Receipt, ToolCall, ToolResult
from vak_desktop.context.planning.assemble import prefix_digest
from vak_desktop.context.planning.reading import read_directive
from vak_desktop.context.request import ChatRequest, ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.runtime import (
    DEFAULT_SYSTEM_PROMPT,
    ModelBinding,
    ToolRegistry,
    TurnRunner,
    bind_model,
    default_tools,
)
from vak_desktop.runtime.events import TurnFinished
from vak_desktop.runtime.lexicons import lexicons
from vak_desktop.runtime.settings import Settings
from vak_desktop.runtime.tools import ToolContext, ToolOutput, catalogue_text, tool_surface
from vak_desktop.runtime.tools.find_tools import match_tools
from vak_desktop.runtime.tools.surface import (
    CATALOGUE_HEADING,
    COMPACT_SYSTEM,
    MISREAD,
    fitted_surface,
)


class UnitConvert:
    """A deferred tool: it serves a domain no reading here meets."""

    spec = ToolSpec(
        "unit_convert",
        "Convert a quantity between units of measure. Length, mass and volume.",
        {
            "type": "object",
            "properties": {"value": {"type": "number"}, "to": {"type": "string"}},
            "required": ["value", "to"],
        },
    )
    serves = ("units",)

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        return ToolOutput(f"{arguments['value'] * 1.609344:.3f} {arguments['to']}")


class EmitChartCard:
    """A card tool, loaded only when the request reads as a chart."""

    spec = ToolSpec("emit_chart_card", "Show the user a chart card. Series and points.")

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        return ToolOutput('{"ok": true}')


class Undeclared:
    """Declares no domains: loaded whatever the reading."""

    spec = ToolSpec("echo", "Echo the arguments back.")

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        return ToolOutput(json.dumps(arguments))


def _registry(tmp_path: Path | None = None) -> ToolRegistry:
    """The default tools (over a real workspace when given one) and the three above."""
    folders = (str(make_tree(tmp_path).root),) if tmp_path else ()
    registry = default_tools(Settings(workspace=folders), cards=False)
    for tool in (UnitConvert(), EmitChartCard(), Undeclared()):
        registry.add(tool)
    return registry


def _binding() -> ModelBinding:
    return ModelBinding(provider="scripted", model="m", details=None)


def _names(request: ChatRequest) -> list[str]:
    return [t.name for t in request.tools]


async def _turn(runner: TurnRunner, session: str, text: str) -> TurnFinished:
    events = [e async for e in runner.run(session, text, _binding())]
    assert isinstance(events[-1], TurnFinished)
    return events[-1]


def test_the_catalogue_lists_what_is_not_always_loaded_sorted_by_name(tmp_path: Path) -> None:
    text = catalogue_text(_registry(tmp_path))
    assert text.splitlines() == [
        CATALOGUE_HEADING,
        "- echo — Echo the arguments back.",
        "- emit_chart_card — Show the user a chart card.",
        "- unit_convert — Convert a quantity between units of measure.",
    ]


def test_loaded_is_core_plus_domains_plus_undeclared_plus_the_cards_read(tmp_path: Path) -> None:
    registry = _registry(tmp_path)
    core = ["recall", "find_tools", "read", "glob", "grep", "session_search"]
    plain = tool_surface(registry, "sys", "How many miles is a marathon?")
    assert plain.reading.orienting
    assert [t.name for t in plain.prefix] == [*core, "echo"]
    chart = tool_surface(registry, "sys", "Plot a chart of these numbers: 3, 5, 8")
    assert [t.name for t in chart.prefix] == [*core, "emit_chart_card", "echo"]
    # a loaded tool is named once: by its schema, not also as "not loaded yet"
    assert "emit_chart_card" in catalogued_tools(plain.system)
    assert "emit_chart_card" not in catalogued_tools(chart.system)
    assert catalogued_tools(chart.system) == {"unit_convert"}
    assert tool_name_findings(chart.system, chart.tools) == []


async def test_find_tools_loads_a_tool_for_the_rest_of_the_turn_and_the_prefix_stays(
    ledger: Ledger, tmp_path: Path
) -> None:
    provider = ScriptedProvider(
        Scripted(calls=[("find_tools", {"query": "convert units of length"})]),
        Scripted(calls=[("unit_convert", {"value": 26.2, "to": "km"})]),
        Scripted(text="A marathon is 42.165 km."),
    )
    runner = TurnRunner(ledger, provider, _registry(tmp_path))
    session = ledger.create_session().id
    finished = await _turn(runner, session, "How long is a 26.2 mile marathon in km?")
    assert finished.outcome == "completed"

    first, second, third = provider.requests
    assert "unit_convert" not in _names(first)
    assert _names(second) == [*_names(first), "unit_convert"]  # appended after the prefix
    assert third.tools == second.tools
    assert second.tools[: len(first.tools)] == first.tools  # schemas byte-identical
    assert second.messages[0] == first.messages[0]  # the system text, catalogue included
    assert second.messages[: len(first.messages)] == first.messages  # an append
    assert "- unit_convert — Convert a quantity" in first.messages[0].content

    chain = ledger.chain_to_root(session)
    results = [e.payload for e in chain if isinstance(e.payload, ToolResult)]
    found = json.loads(results[0].content)
    assert found["loaded"] == ["unit_convert"]
    assert found["tools"][0]["parameters"] == UnitConvert.spec.parameters
    assert results[1].content == "42.165 km"
    digests = {e.payload.prefix_digest for e in chain if isinstance(e.payload, Receipt)}
    assert digests == {prefix_digest(first.messages[0].content, first.tools)}
    misreads = [
        e.payload for e in chain if isinstance(e.payload, Activity) and e.payload.type == MISREAD
    ]
    assert [(m.detail["tool"], m.detail["via"]) for m in misreads] == [
        ("unit_convert", "find_tools")
    ]
    assert misreads[0].detail["reading"]["orienting"] is True

    # the next turn keeps what the session carried (append-only: the prefix cache holds), and
    # names the found tool once, by its schema
    provider.enqueue(Scripted(text="Yes."))
    await _turn(runner, session, "Is that right?")
    after = provider.requests[-1]
    assert after.tools == third.tools
    assert "unit_convert" not in catalogued_tools(after.messages[0].content)
    assert "unit_convert" in catalogued_tools(third.messages[0].content)  # found in the turn


async def test_across_turns_the_tools_only_grow_and_each_is_named_once(
    ledger: Ledger, tmp_path: Path
) -> None:
    provider = ScriptedProvider()
    runner = TurnRunner(ledger, provider, _registry(tmp_path))
    session = ledger.create_session().id
    asks = [
        "grep for TODO",
        "Plot a chart of rainfall by month",
        "What did we discuss earlier?",
        "hello",
    ]
    for ask in asks:
        provider.enqueue(Scripted(text="ok"))
        await _turn(runner, session, ask)
    requests = provider.requests
    loaded = [_names(r) for r in requests]
    assert "emit_chart_card" in loaded[1] and "emit_chart_card" not in loaded[0]
    for before, after in itertools.pairwise(requests):  # a tool load never reorders or drops
        assert after.tools[: len(before.tools)] == before.tools
        same = after.tools == before.tools
        assert (after.messages[0] == before.messages[0]) == same  # the text moves only with them
    assert loaded[3] == loaded[2] == loaded[1]  # nothing new read: the prefix is unchanged
    for request in requests:
        names = set(_names(request))
        assert not names & catalogued_tools(request.messages[0].content)
        assert tool_name_findings(request.messages[0].content, request.tools) == []
    folders = runner.tools.session_notes(ledger, session)  # where the user's files are
    catalogue = catalogue_text(runner.tools, set(loaded[0]))
    expected = "\n\n".join((DEFAULT_SYSTEM_PROMPT, catalogue, *folders))
    assert requests[0].messages[0].content == expected and tmp_path.name in expected


async def test_a_catalogue_tool_called_without_find_tools_runs_and_is_a_misread(
    ledger: Ledger, tmp_path: Path
) -> None:
    provider = ScriptedProvider(
        Scripted(calls=[("unit_convert", {"value": 1, "to": "km"})] * 2),
        Scripted(calls=[("unit_convert", {"value": 2, "to": "km"})]),
        Scripted(text="1.609 km"),
    )
    session = ledger.create_session().id
    await _turn(TurnRunner(ledger, provider, _registry(tmp_path)), session, "a mile in km?")
    chain = ledger.chain_to_root(session)
    results = [e.payload.content for e in chain if isinstance(e.payload, ToolResult)]
    assert results == ["1.609 km", "1.609 km", "3.219 km"]  # every admitted tool is callable
    misreads = [
        e.payload for e in chain if isinstance(e.payload, Activity) and e.payload.type == MISREAD
    ]
    assert [(m.detail["tool"], m.detail["via"]) for m in misreads] == [
        ("unit_convert", "catalogue")
    ]


def test_find_tools_matches_names_first_then_words() -> None:
    catalogue = (UnitConvert.spec, EmitChartCard.spec, Undeclared.spec)
    assert [s.name for s in match_tools("echo, unit_convert", catalogue)] == [
        "echo",
        "unit_convert",
    ]
    assert [s.name for s in match_tools("I need charts", catalogue)] == ["emit_chart_card"]
    assert [s.name for s in match_tools("converting measures", catalogue)] == ["unit_convert"]
    assert match_tools("the weather tool", catalogue) == ()


async def test_find_tools_with_nothing_matching_lists_what_there_is(
    ledger: Ledger, tmp_path: Path
) -> None:
    provider = ScriptedProvider(
        Scripted(calls=[("find_tools", {"query": "translate French"}), ("find_tools", {})]),
        Scripted(text="none"),
    )
    session = ledger.create_session().id
    await _turn(TurnRunner(ledger, provider, _registry(tmp_path)), session, "translate this")
    results = [
        e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, ToolResult)
    ]
    assert results[0].content.startswith("no tool matches 'translate French'")
    assert "echo, emit_chart_card, unit_convert" in results[0].content
    assert results[1].is_error and "find_tools needs `query`" in results[1].content
    assert provider.requests[1].tools == provider.requests[0].tools


def test_the_reading_is_deterministic_and_orients_when_unsure() -> None:
    assert read_directive("hello there", lexicons()).orienting
    assert read_directive("open src/main.py", lexicons()).domains == {"files"}
    assert read_directive("show a timeline of the project", lexicons()).cards == {"timeline"}


async def test_find_tools_through_the_ollama_double_loads_the_tool_on_the_wire(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    provider = OllamaProvider(http, double.url)
    binding = await bind_model(provider, TOOL_MODEL)
    double.enqueue(
        Reply(tool_calls=[("find_tools", {"query": "unit_convert"})]),
        Reply(tool_calls=[("unit_convert", {"value": 3, "to": "km"})]),
        Reply(text="3 miles is 4.828 km."),
    )
    runner = TurnRunner(ledger, provider, _registry(tmp_path))
    session = ledger.create_session().id
    events = [e async for e in runner.run(session, "3 miles in km?", binding)]
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    first, second, third = (b for b in double.chat_bodies() if b.get("tools"))
    names = [[t["function"]["name"] for t in body["tools"]] for body in (first, second, third)]
    assert names[1] == [*names[0], "unit_convert"] and names[2] == names[1]
    assert second["tools"][: len(first["tools"])] == first["tools"]
    assert second["messages"][: len(first["messages"])] == first["messages"]
    assert "unit_convert — Convert a quantity" in first["messages"][0]["content"]
    assert third["messages"][-1]["content"] == "4.828 km"


def test_a_runtime_nudge_can_load_a_named_catalogue_tool(tmp_path: Path) -> None:
    surface = tool_surface(_registry(tmp_path), "sys", "hello")
    loaded = surface.load(["emit_chart_card", "emit_chart_card", "recall", "no_such_tool"])
    assert [t.name for t in loaded.tools] == [*(t.name for t in surface.prefix), "emit_chart_card"]
    assert loaded.prefix == surface.prefix and loaded.system == surface.system
    assert loaded.load(["emit_chart_card"]) == loaded


QUERIES = st.sampled_from(
    ["unit_convert", "chart", "echo", "convert units", "nothing here", "", "echo, emit_chart_card"]
)
CALLS = st.lists(
    st.one_of(
        QUERIES.map(lambda q: ToolCall("f", "find_tools", {"query": q})),
        st.sampled_from(["unit_convert", "echo", "emit_chart_card", "read", "nope"]).map(
            lambda name: ToolCall("c", name, {})
        ),
    ),
    max_size=4,
)


@settings(max_examples=200, deadline=None)
@given(
    directive=st.sampled_from(["hello", "plot a chart", "grep the files"]),
    steps=st.lists(CALLS, max_size=5),
)
def test_within_a_turn_the_tools_only_grow_and_the_prefix_never_moves(
    directive: str, steps: list[list[ToolCall]]
) -> None:
    surface = tool_surface(_registry(), DEFAULT_SYSTEM_PROMPT, directive)
    first = surface
    misread: list[str] = []
    for calls in steps:
        before = surface.tools
        surface, activities = surface.after(calls)
        assert surface.tools[: len(before)] == before  # an append, never a reshuffle
        assert surface.prefix == first.prefix and surface.system == first.system
        assert len({t.name for t in surface.tools}) == len(surface.tools)  # each schema once
        misread += [a.detail["tool"] for a in activities]
    assert len(misread) == len(set(misread))  # one misread per tool per turn
    assert not set(misread) & {t.name for t in first.prefix}


def test_the_surface_is_fitted_to_the_profile(tmp_path: Path) -> None:
    registry = default_tools(Settings(workspace=(str(tmp_path),)))
    ask = "Search my files for the shipment code."
    frontier = fitted_surface(registry, DEFAULT_SYSTEM_PROMPT, ask, profile(200_000))
    assert frontier == tool_surface(registry, DEFAULT_SYSTEM_PROMPT, ask)  # the full surface
    small = fitted_surface(registry, DEFAULT_SYSTEM_PROMPT, ask, profile(4_000))
    assert small.system.startswith(COMPACT_SYSTEM)
    assert [spec.name for spec in small.prefix] == ["glob", "grep"]  # the search, nothing else
    # no action asked: the compact form keeps what the reading loaded, described shortly
    chat = fitted_surface(registry, DEFAULT_SYSTEM_PROMPT, "How are you?", profile(4_000))
    full = tool_surface(registry, DEFAULT_SYSTEM_PROMPT, "How are you?")
    assert [s.name for s in chat.prefix] == [s.name for s in full.prefix]
    assert sum(s.chars() for s in chat.prefix) < sum(s.chars() for s in full.prefix)
    # byte-stable: the same profile and reading give the same prefix every turn
    again = fitted_surface(registry, DEFAULT_SYSTEM_PROMPT, ask, profile(4_000))
    assert prefix_digest(again.system, again.prefix) == prefix_digest(small.system, small.prefix)


def test_a_small_models_question_about_the_past_carries_the_memory_tools_alone(
    tmp_path: Path,
) -> None:
    """A question a cue reads as about the conversation alone is answered from the passages
    the plan recalls; a small model gets `recall` and `session_search` beside them, not the
    file tools (~400 tokens of schemas on the real 1.5B's LoCoMo questions)."""
    registry = default_tools(Settings(workspace=(str(tmp_path),)))
    asks = (
        "Answer from our conversation in a few words: what did Joanna write in her notebook?",
        "Do you remember the recipe we talked about?",
    )
    for ask in asks:
        small = fitted_surface(registry, DEFAULT_SYSTEM_PROMPT, ask, profile(4_000))
        assert [spec.name for spec in small.prefix] == ["recall", "session_search"]
        assert small.system.startswith(COMPACT_SYSTEM)
        frontier = fitted_surface(registry, DEFAULT_SYSTEM_PROMPT, ask, profile(200_000))
        assert frontier == tool_surface(registry, DEFAULT_SYSTEM_PROMPT, ask)
    # a question that also reads as about files, or one no cue read, keeps what it loaded
    for ask in ("What was the name of the file I mentioned a while ago?", "How are you?"):
        small = fitted_surface(registry, DEFAULT_SYSTEM_PROMPT, ask, profile(4_000))
        full = tool_surface(registry, DEFAULT_SYSTEM_PROMPT, ask)
        assert [s.name for s in small.prefix] == [s.name for s in full.prefix]
    # tools the session carried before stay first: the prefix cache holds
    earlier = ("read", "glob")
    small = fitted_surface(
        registry, DEFAULT_SYSTEM_PROMPT, asks[1], profile(4_000), earlier=earlier
    )
    assert [spec.name for spec in small.prefix] == ["read", "glob", "recall", "session_search"]
