"""Delete a chat from the window (issue 25 item 7): it leaves the list at once with
"Deleted “TITLE” — Undo", Undo brings it back untouched, and only once the undo time is up
(or the window quits) is it deleted for good, off the UI thread; "New chat from here" continues
a message version in a new chat. A real offscreen window over a real ledger file."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.ui.harness import Harness, open_harness, until
from tests.ui.test_session_list import _context_menu_action, _write_chats
from vak_desktop.context.payloads import Directive
from vak_desktop.ledger import UnknownSession
from vak_desktop.ui.sessions.deleting import PendingDeletions

LISBON = "Plan a trip to Lisbon"


def _confirm(qtbot: Any, box: QMessageBox | None) -> None:
    assert box is not None and box.isVisible()
    assert "for good" in box.informativeText() and "undo" in box.informativeText()
    button = box.findChild(object, "confirmDeleteButton")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def _gone(harness: Harness, session: str) -> bool:
    try:
        harness.ledger.session(session)
    except UnknownSession:
        return True
    return False


async def test_a_deleted_chat_leaves_at_once_and_undo_brings_it_back(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    chats = _write_chats(ledger_path)
    session, _ = chats[LISBON]
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        sidebar = harness.window.sessions
        harness.service.open_session(session)
        _context_menu_action(sidebar, session, "Delete…").trigger()
        _confirm(qtbot, sidebar.confirm_box)

        assert LISBON not in sidebar.titles()  # at once
        assert harness.service.session is None  # the shown chat went away: a new one
        notice = sidebar.undo_notice
        assert notice.isVisible() and notice.text() == f"Deleted “{LISBON}” — Undo"
        assert not _gone(harness, session)  # nothing deleted within the undo time

        qtbot.mouseClick(notice.undo, Qt.MouseButton.LeftButton)
        assert LISBON in sidebar.titles() and not notice.isVisible()
        assert len(harness.ledger.chain_to_root(session)) > 0

        # the search does not find a chat waiting to be deleted
        sidebar.deletions.undo_ms = 60_000
        sidebar.delete(session, LISBON)
        sidebar.search.setText("lisbon")
        sidebar.run_search()
        assert sidebar.stack.currentWidget() is sidebar.no_hits
        sidebar.deletions.undo()
        sidebar.run_search()
        assert sidebar.hits.count() == 1
        sidebar.search.setText("")


async def test_the_delete_happens_after_the_undo_time_off_the_ui_thread(
    double: OllamaDouble, qtbot: Any, ledger_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran_on: list[str] = []  # the thread each deletion ran on (sampling `_running` from the
    real = PendingDeletions._delete  # UI thread missed a deletion that ended between polls)

    def spied(ledger: Any, pending: Any) -> str:
        ran_on.append(threading.current_thread().name)
        return real(ledger, pending)

    monkeypatch.setattr(PendingDeletions, "_delete", staticmethod(spied))
    chats = _write_chats(ledger_path)
    session, _ = chats[LISBON]
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        sidebar = window.sessions
        sidebar.deletions.undo_ms = 300
        harness.service.open_session(session)
        window.delete_action.trigger()  # Chat → Delete chat… on the shown chat
        _confirm(qtbot, sidebar.confirm_box)
        assert LISBON not in sidebar.titles()
        await until(
            lambda: _gone(harness, session) and sidebar.deletions.idle(),
            what="the deletion",
            within=20,
        )
        assert ran_on == ["delete-chat"]  # its own thread: the window kept handling events
        assert not sidebar.undo_notice.isVisible()
        assert LISBON not in sidebar.titles() and len(sidebar.titles()) == 2
        data = b"".join(p.read_bytes() for p in ledger_path.parent.iterdir() if p.is_file())
        assert b"Alfama" not in data and b"Sintra" not in data
        assert b"Feed it twice a day" in data  # the other chats are all there
        report = harness.ledger.verify()
        assert report.ok and report.deletions == 1


async def test_quitting_inside_the_undo_time_deletes_then(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    chats = _write_chats(ledger_path)
    session, _ = chats[LISBON]
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        sidebar = harness.window.sessions
        sidebar.deletions.undo_ms = 60_000
        sidebar.delete(session, LISBON)
        assert not _gone(harness, session)
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.setQuitOnLastWindowClosed(False)  # as the app runs (`app.py`): the test's loop stays
        try:
            harness.window.close()
        finally:
            app.setQuitOnLastWindowClosed(True)
        assert _gone(harness, session)
        assert harness.ledger.verify().ok


@pytest.mark.parametrize("version", [1, 2])
async def test_new_chat_from_here_continues_that_version(
    double: OllamaDouble, qtbot: Any, ledger_path: Path, version: int
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        harness.window.picker.choose("llama3.2:latest")
        await until(lambda: harness.service.binding is not None, what="the model binding")
        double.enqueue(Reply(text="Paris."), Reply(text="Two million."), Reply(text="More."))
        for n, question in enumerate(["Capital of France?", "How many live there?"], start=1):
            assert harness.service.send(question)
            await until(lambda n=n: len(harness.finished) == n, what=f"turn {n}")
        old = harness.service.session
        assert old is not None
        chat = harness.window.chat
        second = harness.finished[1].turn_id
        regenerate = chat.answer_message(second).findChild(object, "regenerateButton")  # type: ignore[union-attr]
        qtbot.mouseClick(regenerate, Qt.MouseButton.LeftButton)
        await until(lambda: len(harness.finished) == 3, what="the second version")
        newest = harness.finished[2].turn_id
        if version == 1:
            assert chat.show_alternative(newest, -1)
        turn = second if version == 1 else newest
        onward = chat.answer_message(turn).findChild(object, "continueButton")  # type: ignore[union-attr]
        assert onward is not None and onward.accessibleName()
        qtbot.mouseClick(onward, Qt.MouseButton.LeftButton)

        made = harness.service.session
        assert made is not None and made != old
        assert harness.ledger.session(made).derived_from == old
        text = harness.chat_text()
        wanted, other = ("Two million.", "More.") if version == 1 else ("More.", "Two million.")
        assert "Paris." in text and wanted in text and other not in text
        titles = harness.window.sessions.titles()
        assert "Capital of France? (continued)" in titles and "Capital of France?" in titles
        directives = [
            e.payload.text for e in harness.ledger.entries(made) if isinstance(e.payload, Directive)
        ]
        assert directives == ["Capital of France?", "How many live there?"]

        double.enqueue(Reply(text="Yes, the Seine."))  # the new chat goes on by itself
        assert harness.service.send("Is there a river?")
        await until(lambda: len(harness.finished) == 4, what="a turn in the new chat")
        assert (
            len([e for e in harness.ledger.entries(old) if isinstance(e.payload, Directive)]) == 3
        )
        assert harness.ledger.verify().ok


@pytest.mark.allow_log_warnings  # the refusal is logged too
async def test_a_chat_busy_elsewhere_comes_back_with_a_notice(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    """A turn running in that chat in another process (`vak chat --session`): the deletion is
    refused, the chat shows again and the notice line says why; nothing was removed."""
    chats = _write_chats(ledger_path)
    session, _ = chats[LISBON]
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        sidebar = harness.window.sessions
        sidebar.deletions.undo_ms = 50
        entries = len(list(harness.ledger.entries(session)))
        with harness.ledger.hold(session):  # as the other process's turn does
            sidebar.delete(session, LISBON)
            assert LISBON not in sidebar.titles()
            await until(sidebar.deletions.idle, what="the refused deletion", within=20)
        assert LISBON in sidebar.titles()
        notice = harness.window.notice_line.text.text()
        assert f"“{LISBON}” was not deleted" in notice and "busy" in notice
        assert len(list(harness.ledger.entries(session))) == entries
        assert harness.ledger.verify().ok
