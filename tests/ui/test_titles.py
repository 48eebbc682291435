"""A new chat is named by a side call after its first answer: never before the turn ends, with
a purpose-built packet on the same model and num_ctx; a rename is never replaced; a useless
reply leaves the first words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.ui.harness import until
from vak_desktop.ledger import Ledger
from vak_desktop.providers import open_provider
from vak_desktop.runtime.events import TurnFinished
from vak_desktop.runtime.turn.titles import TITLE_SYSTEM, clean_title
from vak_desktop.ui import ChatService

QUESTION = "How often should I feed a sourdough starter that lives in the fridge?"


async def _first_turn(
    double: OllamaDouble,
    ledger: Ledger,
    title_reply: Reply,
    *,
    rename: str = "",
    pending: list[bool] | None = None,
) -> tuple[str, list[str]]:
    pending = pending if pending is not None else []
    async with httpx.AsyncClient() as client:
        service = ChatService(ledger, open_provider("ollama", client, double.url), titles=True)
        try:
            await service.refresh_models()
            service.select_model("llama3.2:latest")
            await until(lambda: service.binding is not None, what="the binding")
            finished: list[TurnFinished] = []
            service.turnFinished.connect(finished.append)
            titles_seen: list[str] = []
            service.sessionsChanged.connect(
                lambda: (
                    titles_seen.append(ledger.session(service.session).title)
                    if service.session
                    else None
                )
            )
            double.enqueue(Reply(text="Once a week, after discarding half."), title_reply)
            assert service.send(QUESTION)
            await until(lambda: finished, what="the turn")
            session = finished[0].session
            assert ledger.session(session).title.startswith("How often should I feed")
            if rename:
                ledger.rename_session(session, rename)
            assert service.naming is not None
            pending.append(not service.naming.done())
            await service.naming
            return session, titles_seen
        finally:
            await service.aclose()


async def test_the_first_answer_is_followed_by_a_title_side_call_that_names_the_chat(
    double: OllamaDouble, qtbot: Any, tmp_path: Path
) -> None:
    ledger = Ledger.open(tmp_path / "l.sqlite3")
    try:
        reply = Reply(text='"Sourdough fridge feeding."', delay_per_chunk=0.05)
        pending: list[bool] = []
        session, seen = await _first_turn(double, ledger, reply, pending=pending)
        assert pending == [True]  # the turn had ended while the title was still being asked
        assert seen[-1] == "Sourdough fridge feeding"  # the sidebar was told
        turn, title_call = double.chat_bodies()[:2]
        assert title_call["messages"][0]["content"] == TITLE_SYSTEM
        assert len(title_call["messages"]) == 2 and QUESTION in title_call["messages"][1]["content"]
        assert title_call["options"]["num_ctx"] == turn["options"]["num_ctx"]  # no reload
        assert ledger.session(session).title == "Sourdough fridge feeding"
    finally:
        ledger.close()


async def test_a_rename_stays_and_a_useless_reply_leaves_the_first_words(
    double: OllamaDouble, qtbot: Any, tmp_path: Path
) -> None:
    ledger = Ledger.open(tmp_path / "l.sqlite3")
    try:
        reply = Reply(text="Starter care", delay_per_chunk=0.1)
        session, _ = await _first_turn(double, ledger, reply, rename="My bread notes")
        assert ledger.session(session).title == "My bread notes"
        # a fresh server: the renamed chat's title reply may never have been asked for
        rambling = Reply(text="Here is a title for you: " + "words " * 30)
        with OllamaDouble() as fresh:
            fresh.add_model("llama3.2")
            other, _ = await _first_turn(fresh, ledger, rambling)
        assert ledger.session(other).title.startswith("How often should I feed")
    finally:
        ledger.close()
    assert clean_title("Title: **Rust borrow errors**") == "Rust borrow errors"
    assert clean_title("") == "" and clean_title("a " * 20) == ""
