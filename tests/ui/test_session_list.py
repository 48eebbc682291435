"""The sidebar over a real ledger: newest first, rename, archive and restore, search."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QMenu

from tests.context.sessions import SessionBuilder, TurnScript
from tests.doubles.ollama_server import OllamaDouble
from tests.ui.harness import open_harness, until
from vak_desktop.ledger import Ledger

CHATS = {
    "Plan a trip to Lisbon": "Three days: Alfama, Belém, and a day trip to Sintra.",
    "Fix the failing CI build": "The cache key changed; pin the runner image.",
    "Sourdough starter schedule": "Feed it twice a day at room temperature.",
}


def _write_chats(ledger_path: Path) -> dict[str, tuple[str, str]]:
    """title -> (session, first turn id), written oldest first through the ledger API."""
    ledger = Ledger.open(ledger_path)
    try:
        out = {}
        for asked, answered in CHATS.items():
            builder = SessionBuilder(ledger)
            turn = builder.turn(TurnScript(directive=asked, answer=answered))
            builder.turn(TurnScript(directive="Thanks, and one more thing", answer="Sure."))
            out[asked] = (builder.session, turn)
        return out
    finally:
        ledger.close()


async def test_chats_are_listed_newest_first_and_titled_from_their_first_directive(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    _write_chats(ledger_path)
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        assert harness.window.sessions.titles() == list(reversed(CHATS))


async def test_rename_inline_writes_the_title_to_the_ledger(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    chats = _write_chats(ledger_path)
    session, _ = chats["Fix the failing CI build"]
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        sidebar = harness.window.sessions
        sidebar.start_rename(session)
        editor = sidebar.list.findChild(QLineEdit)
        assert editor is not None and editor.isVisible()
        editor.selectAll()
        qtbot.keyClicks(editor, "CI: runner image pinned")
        qtbot.keyClick(editor, Qt.Key.Key_Return)
        await until(
            lambda: harness.ledger.session(session).title != "Fix the failing CI build",
            what="the rename",
        )
        assert harness.ledger.session(session).title == "CI: runner image pinned"
        assert "CI: runner image pinned" in sidebar.titles()
        sidebar.rename(session, "   ")  # an empty title is refused, the old one stays
        assert harness.ledger.session(session).title == "CI: runner image pinned"


async def test_archive_hides_a_chat_keeps_its_entries_and_restore_brings_it_back(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    chats = _write_chats(ledger_path)
    session, _ = chats["Plan a trip to Lisbon"]
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window, ledger = harness.window, harness.ledger
        sidebar = window.sessions
        entries = len(ledger.chain_to_root(session))
        harness.service.open_session(session)
        _context_menu_action(sidebar, session, "Archive").trigger()

        assert "Plan a trip to Lisbon" not in sidebar.titles()
        assert harness.service.session is None  # the shown chat went away: a new one
        assert len(ledger.chain_to_root(session)) == entries  # nothing deleted
        assert ledger.session(session).archived

        qtbot.mouseClick(sidebar.archived_toggle, Qt.MouseButton.LeftButton)
        assert sidebar.archived and sidebar.titles() == ["Plan a trip to Lisbon"]
        sidebar.list.setCurrentRow(0)
        assert harness.service.session == session  # an archived chat still opens
        _context_menu_action(sidebar, session, "Restore").trigger()
        assert sidebar.titles() == []
        qtbot.mouseClick(sidebar.archived_toggle, Qt.MouseButton.LeftButton)
        assert "Plan a trip to Lisbon" in sidebar.titles()
        assert not ledger.session(session).archived


def _context_menu_action(sidebar: Any, session: str, text: str) -> Any:
    row = next(r for r in range(sidebar.list.count()) if sidebar.list.item(r).data(256) == session)
    at = sidebar.list.visualItemRect(sidebar.list.item(row)).center()
    sidebar.list.customContextMenuRequested.emit(at)
    menu = next(m for m in QApplication.topLevelWidgets() if isinstance(m, QMenu) and m.isVisible())
    action = next(a for a in menu.actions() if a.text() == text)
    menu.close()
    return action


async def test_search_finds_a_turn_in_any_chat_and_opens_it_at_that_turn(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    chats = _write_chats(ledger_path)
    session, turn = chats["Sourdough starter schedule"]
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window: Any = harness.window
        sidebar = window.sessions
        harness.ledger.archive_session(chats["Plan a trip to Lisbon"][0])
        sidebar.reload()
        window.toggle_inspector(True)
        qtbot.keyClicks(sidebar.search, "sourdough")
        await until(lambda: sidebar.stack.currentWidget() is sidebar.hits, what="the hits")
        assert sidebar.hits.count() == 1
        hit = sidebar.hits.item(0)  # the row says it whole to assistive tech; the view may elide
        assert hit.data(Qt.ItemDataRole.AccessibleTextRole) == (
            "Sourdough starter schedule: Sourdough starter schedule"
        )
        assert sidebar.hit_texts()[0].startswith("Sourdough st")
        qtbot.mouseClick(
            sidebar.hits.viewport(),
            Qt.MouseButton.LeftButton,
            pos=sidebar.hits.visualItemRect(sidebar.hits.item(0)).center(),
        )
        assert harness.service.session == session
        assert window.focused_turn == turn
        assert window.inspector.turn_id == turn
        assert "Feed it twice a day" in harness.chat_text()

        sidebar.search.setText("lisbon")  # archived chats are searched too, and say so
        sidebar.run_search()
        (text,) = sidebar.hit_texts()
        assert text.startswith("Plan a") and "\nArchived · “Plan a" in text
        sidebar.search.setText("zanzibar")
        sidebar.run_search()
        assert sidebar.stack.currentWidget() is sidebar.no_hits
        sidebar.search.clear()
        sidebar.run_search()
        assert sidebar.stack.currentWidget() is sidebar.list
