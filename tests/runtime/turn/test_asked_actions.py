"""An asked-for action is performed, not claimed (issue #17): "search my files for …" answered
from memory gets one repair nudge naming the tool, then the degraded outcome with a statement —
never an invented result presented as found — and each strike is an explicit-instruction
failure the horizon feedback folds."""

from __future__ import annotations

from pathlib import Path

from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.capacity.feedback import INSTRUCTION_FAILED
from vak_desktop.context.payloads import Activity, AssistantStep, Nudge
from vak_desktop.context.planning.actions import ACTION_CHECK, requested_tool
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools
from vak_desktop.runtime.events import TurnFinished
from vak_desktop.runtime.lexicons import lexicons
from vak_desktop.runtime.settings import Settings

ASK = "Search my files for the shipment code I gave you earlier."
LEX = lexicons()
BINDING = ModelBinding(provider="scripted", model="m", details=None)


def test_the_directive_names_the_tool_it_asks_for() -> None:
    offered = ("read", "glob", "grep", "recall")
    assert requested_tool(ASK, offered, LEX) == "grep"
    assert requested_tool("Read notes.md and summarise it", offered, LEX) == "read"
    assert requested_tool("Which files in my project mention parsers?", offered, LEX) == "glob"
    assert requested_tool("What is the capital of France?", offered, LEX) is None
    assert requested_tool(ASK, ("recall",), LEX) is None  # not offered: nothing to ask for


async def _run(ledger: Ledger, tmp_path: Path, *replies: Scripted) -> tuple[str, TurnFinished]:
    (tmp_path / "manifest.txt").write_text("Shipment ZX-4471-Q: 40 crates.\n")
    session = ledger.create_session().id
    tools = default_tools(Settings(workspace=(str(tmp_path),)))
    runner = TurnRunner(ledger, ScriptedProvider(*replies), tools)
    finished = None
    async for event in runner.run(session, ASK, BINDING):
        if isinstance(event, TurnFinished):
            finished = event
    assert finished is not None
    return session, finished


async def test_a_claimed_search_is_nudged_once_then_degraded(
    ledger: Ledger, tmp_path: Path
) -> None:
    claim = Scripted(text="I searched your files: the shipment code is AB-1000-X.")
    session, finished = await _run(ledger, tmp_path, claim, claim)
    chain = ledger.chain_to_root(session)
    nudges = [e.payload for e in chain if isinstance(e.payload, Nudge)]
    assert [n.tag for n in nudges] == [ACTION_CHECK] and "`grep`" in nudges[0].text
    assert finished.outcome == "degraded"
    last = [e.payload for e in chain if isinstance(e.payload, AssistantStep)][-1]
    assert last.model == "vak" and "nothing was actually searched" in last.text
    failed = [
        e.payload
        for e in chain
        if isinstance(e.payload, Activity) and e.payload.type == INSTRUCTION_FAILED
    ]
    assert len(failed) >= 2  # both strikes reach the horizon feedback


async def test_a_search_after_the_nudge_completes_the_turn(ledger: Ledger, tmp_path: Path) -> None:
    _, finished = await _run(
        ledger,
        tmp_path,
        Scripted(text="The shipment code is ZX-4471-Q."),
        Scripted(calls=[("grep", {"pattern": "Shipment"})]),
        Scripted(text="Found it in manifest.txt: ZX-4471-Q."),
    )
    assert finished.outcome == "completed"
