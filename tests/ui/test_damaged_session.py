"""A chat with an entry changed outside Vak, in the real window: one line naming the entry, the
rest of the app working, nothing written to the damaged chat (issue 13 item 13)."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidget

from tests.context.sessions import SessionBuilder, TurnScript
from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.shots import shots_dir
from tests.ui.harness import open_harness, until
from vak_desktop.context.payloads import AssistantStep, TurnCard
from vak_desktop.ledger import Ledger

SCREENSHOT = shots_dir("damaged") / "vak-damaged-session.png"


def _tamper(ledger_path: Path, seq: int, change: str) -> None:
    """Change a stored row as another program would (the append-only trigger dropped)."""
    with sqlite3.connect(ledger_path) as conn:
        conn.execute("DROP TRIGGER entries_no_update")
        conn.execute(f"UPDATE entries SET payload = {change} WHERE seq = ?", [seq])
    conn.close()


def _count(ledger_path: Path, session: str) -> int:
    with sqlite3.connect(ledger_path) as conn:
        (n,) = conn.execute("SELECT count(*) FROM entries WHERE session = ?", [session]).fetchone()
    conn.close()
    return int(n)


def _two_chats(ledger_path: Path) -> tuple[str, str, int]:
    """(a healthy chat, the newer chat to damage, the seq of its answer to damage)."""
    ledger = Ledger.open(ledger_path)
    try:
        healthy = SessionBuilder(ledger)
        healthy.turn(TurnScript(directive="Plan a trip to Lisbon", answer="Alfama and Belém."))
        damaged = SessionBuilder(ledger)
        damaged.turn(TurnScript(directive="Sourdough starter", answer="Feed it twice a day."))
        step = next(
            e.seq for e in ledger.entries(damaged.session) if isinstance(e.payload, AssistantStep)
        )
        return healthy.session, damaged.session, step
    finally:
        ledger.close()


def _click(listing: QListWidget, session: str) -> None:
    from vak_desktop.ui.sessions.session_list import SESSION_ID

    row = next(r for r in range(listing.count()) if listing.item(r).data(SESSION_ID) == session)
    listing.setCurrentRow(row)


@pytest.mark.allow_log_warnings  # the dropped trigger is restored, with a warning
@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("CAST(CAST(payload AS BLOB) || x'ff' AS TEXT)", "its text is not UTF-8 at byte"),
        ("'not json'", "its assistant_step payload does not read back"),
        ("'{\"text\": 5}'", "its assistant_step payload does not read back"),
    ],
    ids=["not-utf8", "not-json", "wrong-shape"],
)
async def test_opening_a_damaged_chat_says_which_entry_and_the_rest_keeps_working(
    double: OllamaDouble,
    qtbot: Any,
    ledger_path: Path,
    caplog: pytest.LogCaptureFixture,
    change: str,
    said: str,
) -> None:
    caplog.set_level(logging.INFO, logger="vak_desktop.ui")
    healthy, damaged, step = _two_chats(ledger_path)
    _tamper(ledger_path, step, change)
    before = _count(ledger_path, damaged)
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window, service = harness.window, harness.service
        sidebar = window.sessions
        status = window.statusBar()
        assert sidebar.titles() == ["Sourdough starter", "Plan a trip to Lisbon"]  # listed

        assert not window.reopen_last_chat()  # the newest chat is the damaged one
        message = status.currentMessage()
        assert message == (
            f"Cannot open this chat: entry {step} was changed outside Vak; "
            "`vak ledger verify` tells more."
        )
        assert any(said in r.getMessage() for r in caplog.records)  # the cause, in the log
        assert service.session is None

        status.clearMessage()
        _click(sidebar.list, damaged)  # the user clicks it in the sidebar
        assert status.currentMessage() == message
        assert service.session is None and sidebar.list.currentRow() == -1
        if change.startswith("CAST"):
            assert window.grab().save(str(SCREENSHOT))

        _click(sidebar.list, healthy)  # another chat still opens
        assert service.session == healthy
        assert "Alfama and Belém." in harness.chat_text()
        _click(sidebar.list, damaged)  # refused again: the healthy chat stays shown
        assert service.session == healthy and "Alfama and Belém." in harness.chat_text()
        assert sidebar.list.item(sidebar.list.currentRow()).text() == "Plan a trip to Lisbon"

        service.new_session()  # and a new chat works
        window.picker.choose("qwen2.5:0.5b")
        await until(lambda: service.binding is not None, what="the model binding")
        double.enqueue(Reply(text="A new chat answers."))
        qtbot.keyClicks(window.composer.input, "Hello again")
        qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
        await until(lambda: harness.finished, what="the new chat's turn")
        assert harness.finished[0].outcome == "completed"
        assert "A new chat answers." in harness.chat_text()
        assert service.session not in (healthy, damaged)
    assert _count(ledger_path, damaged) == before  # nothing written to the damaged chat


@pytest.mark.allow_log_warnings  # the dropped trigger is restored, with a warning
async def test_search_over_a_damaged_card_names_it_and_other_chats_still_open(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    healthy, damaged, _step = _two_chats(ledger_path)
    ledger = Ledger.open(ledger_path)
    card = next(e.seq for e in ledger.entries(damaged) if isinstance(e.payload, TurnCard))
    ledger.close()
    _tamper(ledger_path, card, "CAST(CAST(payload AS BLOB) || x'ff' AS TEXT)")
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        sidebar = harness.window.sessions
        qtbot.keyClicks(sidebar.search, "sourdough")
        await until(lambda: sidebar.stack.currentWidget() is sidebar.no_hits, what="the note")
        note = sidebar.no_hits.text()
        assert f"entry {card} of the ledger cannot be read" in note and "vak ledger verify" in note
        sidebar.search.clear()
        await until(lambda: sidebar.stack.currentWidget() is sidebar.list, what="the list")
        _click(sidebar.list, healthy)
        assert harness.service.session == healthy
        assert "Alfama and Belém." in harness.chat_text()


@pytest.mark.allow_log_warnings  # the dropped trigger is restored, with a warning
async def test_a_turn_in_a_chat_damaged_while_it_is_shown_ends_in_one_line(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    """Changed by another program while the window shows it: the next turn reads the chain."""
    healthy, _damaged, _step = _two_chats(ledger_path)
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window, service = harness.window, harness.service
        refused: list[str] = []
        service.turnRefused.connect(refused.append)
        _click(window.sessions.list, healthy)
        window.picker.choose("qwen2.5:0.5b")
        await until(lambda: service.binding is not None, what="the model binding")
        answer = next(
            e.seq for e in harness.ledger.entries(healthy) if isinstance(e.payload, AssistantStep)
        )
        _tamper(ledger_path, answer, "'not json'")
        before = _count(ledger_path, healthy)
        double.enqueue(Reply(text="never read"))
        qtbot.keyClicks(window.composer.input, "And Porto?")
        qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
        await until(lambda: refused or harness.finished, what="the turn to end")
        said = refused[0] if refused else harness.finished[0].error
        assert f"entry {answer} of the ledger cannot be read" in said, said
        assert "vak ledger verify" in said and "\n" not in said
        await until(lambda: not service.busy, what="the service to be free")
        assert harness.chat_text() == f"✕ {said}"  # the chat it can no longer read, not shown
        assert _count(ledger_path, healthy) == before  # nothing written to it
        assert window.grab().save(str(SCREENSHOT.with_name("vak-damaged-while-shown.png")))
