"""Running a step's calls: concurrently, recorded in call order, and never a crash."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.scripted import Scripted, ScriptedProvider
from tests.runtime.tools.helpers import make_tree
from vak_desktop.context.payloads import EvidenceBody, ToolResult
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools
from vak_desktop.runtime.events import TurnFinished
from vak_desktop.runtime.settings import Settings
from vak_desktop.runtime.tools import (
    GrepTool,
    RecallTool,
    ToolContext,
    ToolOutput,
    ToolRegistry,
    ToolTraits,
    traits_of,
)

RENDEZVOUS_S = 5.0  # generous: a sequential run waits it out and fails, a concurrent one never


class Rendezvous:
    """Two of these meet: each announces itself, then waits for the other. Run one after the
    other, the first times out; run at once, both pass. `linger` delays the answer after the
    meeting, so the one called first can finish last."""

    def __init__(self, name: str, arrived: dict[str, asyncio.Event], linger: float) -> None:
        self.spec = ToolSpec(name, f"Meets the other one ({name}).")
        self.arrived = arrived
        self.linger = linger
        self.finished: list[str] = []

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        me = self.spec.name
        self.arrived[me].set()
        other = next(name for name in self.arrived if name != me)
        await asyncio.wait_for(self.arrived[other].wait(), RENDEZVOUS_S)
        await asyncio.sleep(self.linger)
        self.finished.append(me)
        return ToolOutput(f"{me} met {other}")


class Exploding:
    spec = ToolSpec("explode", "Raises whatever it is given.")

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        raise KeyError(arguments.get("key", "missing"))


def _binding() -> ModelBinding:
    return ModelBinding(provider="scripted", model="m", details=None)


async def test_parallel_calls_run_at_once_and_are_recorded_in_call_order(ledger: Ledger) -> None:
    arrived = {"slow": asyncio.Event(), "quick": asyncio.Event()}
    slow, quick = Rendezvous("slow", arrived, 0.2), Rendezvous("quick", arrived, 0.0)
    order: list[str] = []
    slow.finished = quick.finished = order
    provider = ScriptedProvider(
        Scripted(calls=[("slow", {}), ("quick", {})]), Scripted(text="both met")
    )
    session = ledger.create_session().id
    runner = TurnRunner(ledger, provider, ToolRegistry([RecallTool(), slow, quick]))
    events = [e async for e in runner.run(session, "meet", _binding())]
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert order == ["quick", "slow"]  # the second call finished first …
    chain = ledger.chain_to_root(session)
    recorded = [e.payload for e in chain if isinstance(e.payload, ToolResult | EvidenceBody)]
    assert [(type(p).__name__, p.tool_name) for p in recorded] == [
        ("EvidenceBody", "slow"),
        ("ToolResult", "slow"),
        ("EvidenceBody", "quick"),
        ("ToolResult", "quick"),
    ]  # … and still comes second, as it was called
    assert [m.content for m in provider.requests[1].messages[-2:]] == [
        "slow met quick",
        "quick met slow",
    ]


async def test_file_tools_of_one_step_run_in_threads_side_by_side(
    ledger: Ledger, tmp_path: Path
) -> None:
    tree = make_tree(tmp_path)
    tools = default_tools(Settings(workspace=(str(tree.root),)))
    calls = [
        ("grep", {"pattern": "TODO"}),
        ("read", {"path": "notes.md"}),
        ("glob", {"pattern": "**/*.py"}),
    ]
    provider = ScriptedProvider(Scripted(calls=calls), Scripted(text="done"))
    session = ledger.create_session().id
    events = [e async for e in TurnRunner(ledger, provider, tools).run(session, "x", _binding())]
    assert isinstance(events[-1], TurnFinished)
    sent = provider.requests[1].messages[-3:]
    assert [m.tool_name for m in sent] == ["grep", "read", "glob"]
    assert sent[0].content.startswith("4 matching lines in 4 files:")
    assert sent[2].content == "src/app.py\nsrc/util.py"


@pytest.mark.allow_log_warnings  # the traceback is logged for whoever fixes the tool
async def test_a_tool_that_raises_becomes_an_error_result_and_the_turn_goes_on(
    ledger: Ledger,
) -> None:
    provider = ScriptedProvider(
        Scripted(calls=[("explode", {"key": "fuse"}), ("recall", {"turn": 99})]),
        Scripted(text="The tool failed; I will answer without it."),
    )
    session = ledger.create_session().id
    runner = TurnRunner(ledger, provider, ToolRegistry([RecallTool(), Exploding()]))
    events = [e async for e in runner.run(session, "go", _binding())]
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    results = [
        e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, ToolResult)
    ]
    assert results[0].is_error and results[0].content == "error: explode failed: KeyError: 'fuse'"
    assert results[1].is_error and "there is no turn 99" in results[1].content
    seen = provider.requests[1].messages
    assert seen[-2].content == results[0].content and seen[-2].tool_name == "explode"
    assert ledger.verify().ok


def test_declarations_default_for_a_tool_that_declares_nothing() -> None:
    assert traits_of(Exploding()) == ToolTraits()
    assert ToolTraits().undeclared
    grep = traits_of(GrepTool())
    assert grep.always_loaded and grep.observes_now and grep.serves == {"files"}
    recall = traits_of(RecallTool())
    assert recall.always_loaded and not recall.observes_now


def test_two_tools_with_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="two tools are named 'explode'"):
        ToolRegistry([Exploding(), Exploding()])
