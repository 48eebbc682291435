"""session_search as the model sees it: hits from every conversation, this one marked."""

from __future__ import annotations

from tests.context.sessions import SessionBuilder, TurnScript
from tests.runtime.scripted import Scripted, ScriptedProvider
from tests.runtime.tools.helpers import call
from vak_desktop.context.payloads import ToolResult
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools


async def test_hits_come_from_every_session_best_first(ledger: Ledger) -> None:
    baking = SessionBuilder(ledger)
    baking.turn(TurnScript("how do I feed a sourdough starter", answer="Equal flour and water."))
    ledger.rename_session(baking.session, "Bread")
    other = SessionBuilder(ledger)
    other.turn(TurnScript("explain rust lifetimes", answer="Borrows end before owners."))
    other.turn(TurnScript("my sourdough starter smells of acetone", answer="Feed it more often."))
    ledger.archive_session(other.session)
    tools = default_tools()
    out = await call(tools, ledger, other.session, "session_search", query="sourdough starter")
    lines = out.content.splitlines()
    assert lines[0] == "2 turns match 'sourdough starter', best first:"
    assert sum(line.startswith(("1. ", "2. ")) for line in lines) == 2
    assert "this conversation" in out.content and "'Bread'" in out.content
    assert "archived" in out.content and "asked: explain rust" not in out.content
    assert "answered: Equal flour and water." in out.content
    none = await call(tools, ledger, other.session, "session_search", query="quantum")
    assert none.content == "no earlier turn matches 'quantum'" and not none.is_error
    bad = await call(tools, ledger, other.session, "session_search", query="x", limit=0)
    assert bad.is_error and "`limit` must be a positive whole number" in bad.content


async def test_a_turn_finds_an_earlier_conversation(ledger: Ledger) -> None:
    earlier = SessionBuilder(ledger)
    earlier.turn(TurnScript("which tent did we pick for the alps trip", answer="The 2-person."))
    provider = ScriptedProvider(
        Scripted(calls=[("session_search", {"query": "tent alps"})]), Scripted(text="The 2-person.")
    )
    session = ledger.create_session().id
    binding = ModelBinding(provider="scripted", model="m", details=None)
    runner = TurnRunner(ledger, provider, default_tools())
    _ = [e async for e in runner.run(session, "Which tent did we choose last time?", binding)]
    result = next(
        e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, ToolResult)
    )
    assert "asked: which tent did we pick for the alps trip" in result.content
    assert "this conversation" not in result.content
