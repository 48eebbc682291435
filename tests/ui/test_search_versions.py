"""A search hit in an older message version opens that version, the hit marked (issue 25 item 5).

A ChatGPT export whose first answer was regenerated is imported (both versions kept); searching
for a word only the older answer holds, and clicking the hit in the real window, shows version
1/2 with that answer and the word marked in it, scrolled into view."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from tests.doubles.ollama_server import OllamaDouble
from tests.ui.harness import open_harness, until
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.sessions.formats import read_conversations
from vak_desktop.runtime.sessions.importing import import_all
from vak_desktop.ui.chat.chat_highlight import HIT_BACKGROUND
from vak_desktop.ui.parts.markdown import MarkdownPane

FIXTURES = Path(__file__).parents[1] / "runtime" / "sessions" / "fixtures"


def _import(ledger_path: Path) -> str:
    items = json.loads((FIXTURES / "chatgpt_conversations.json").read_text(encoding="utf-8"))
    ledger = Ledger.open(ledger_path)
    try:
        return import_all(ledger, read_conversations(items)).imported[0].session
    finally:
        ledger.close()


async def test_a_hit_in_an_older_version_opens_that_version_with_the_hit_marked(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    session = _import(ledger_path)
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window: Any = harness.window
        sidebar = window.sessions
        qtbot.keyClicks(sidebar.search, "regenerated")
        await until(lambda: sidebar.stack.currentWidget() is sidebar.hits, what="the hits")
        assert sidebar.hits.count() == 1
        qtbot.mouseClick(
            sidebar.hits.viewport(),
            Qt.MouseButton.LeftButton,
            pos=sidebar.hits.visualItemRect(sidebar.hits.item(0)).center(),
        )
        assert harness.service.session == session
        text = harness.chat_text()
        assert "An answer the user regenerated." in text  # the older version, not the newest
        assert "Once or twice a day" not in text
        turn = window.focused_turn
        user = window.chat.user_message(turn)
        assert user is not None
        position = user.findChild(QLabel, "branchPosition")
        assert position is not None and position.text() == "1/2"
        answer = window.chat.answer_message(turn)
        panes = answer.findChildren(MarkdownPane)
        marks = [s.cursor.selectedText() for pane in panes for s in pane.extraSelections()]
        assert marks == ["regenerated"] and window.chat.hit_marks == ("regenerated",)
        assert panes[0].extraSelections()[0].format.background().color().name() == HIT_BACKGROUND
        await until(lambda: not answer.visibleRegion().isEmpty(), what="the hit in view")
