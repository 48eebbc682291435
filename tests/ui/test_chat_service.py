"""The service on its own: what happens to a turn when the app closes in the middle of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.ui.harness import open_harness, until
from vak_desktop.context.payloads import Activity, AssistantStep
from vak_desktop.context.planning.turns import TURN_CLOSED


async def test_closing_mid_turn_keeps_the_partial_answer_and_closes_the_turn_cancelled(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        service = harness.service
        await until(lambda: service.binding is not None, what="the model binding")
        double.enqueue(Reply(text="slowly " * 100, chunk_chars=7, delay_per_chunk=0.02))
        chunks: list[str] = []
        service.textChunk.connect(chunks.append)
        assert service.send("Tell me something long")
        await until(lambda: len(chunks) >= 2, what="two chunks")

        await service.aclose()  # what the app does when its last window closes

        assert not service.busy
        session = service.session
        assert session is not None
        payloads = [e.payload for e in harness.ledger.chain_to_root(session)]
        (step,) = [p for p in payloads if isinstance(p, AssistantStep)]
        assert step.interrupted and step.text == "".join(chunks)
        closes = [p for p in payloads if isinstance(p, Activity) and p.type == TURN_CLOSED]
        assert [c.detail["outcome"] for c in closes] == ["cancelled"]


async def test_send_is_refused_without_a_model_and_says_why(qtbot: Any, ledger_path: Path) -> None:
    with OllamaDouble() as empty:  # a server with no models at all
        async with open_harness(qtbot, ledger_path, empty.url) as harness:
            refusals: list[str] = []
            harness.service.turnRefused.connect(refusals.append)
            assert harness.service.models == []
            assert not harness.service.send("hello")
            assert refusals and "Pick a model" in refusals[0]
            assert harness.service.session is None
            assert harness.ledger.sessions() == []


async def test_a_session_busy_in_another_window_or_process_is_refused_clearly(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    """Issue 13 item 5: the window never runs a second turn in a session another writer holds."""
    from vak_desktop.ledger import Ledger

    other = Ledger.open(ledger_path)  # another window (or `vak chat`) on the same ledger
    session = other.create_session().id
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        service = harness.service
        await until(lambda: service.binding is not None, what="the model binding")
        refusals: list[str] = []
        service.turnRefused.connect(refusals.append)
        assert service.open_session(session)
        with other.hold(session):
            assert service.send("me too")
            await until(lambda: refusals, what="the refusal")
        assert f"session {session} is busy" in refusals[0]
        assert [e for e in harness.ledger.entries(session)] == []  # nothing written
    other.close()
