"""File → Import chats… and File → Export chat… in the window: other apps' exports in with a
progress bar and a report of what was skipped; the shown chat out as OpenAI JSON or Markdown."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.doubles.ollama_server import OllamaDouble
from tests.shots import shots_dir
from tests.ui.harness import open_harness, until

FIXTURES = Path(__file__).parents[1] / "runtime" / "sessions" / "fixtures"
SHOTS = shots_dir("dsk")


async def test_importing_a_chatgpt_export_shows_progress_and_what_was_skipped(
    double: OllamaDouble, qtbot: Any, ledger_path: Path, tmp_path: Path
) -> None:
    source = tmp_path / "conversations.json"
    shutil.copy(FIXTURES / "chatgpt_conversations.json", source)
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        dialog = window.import_chats()
        task = dialog.start(str(source))
        assert task is not None
        report = await task
        assert report is not None and len(report.imported) == 1
        assert dialog.bar.value() == dialog.bar.maximum() == 2
        assert "Imported 1 of 2 conversations" in dialog.status.text()
        assert "1 other branch kept" in dialog.status.text()
        assert "2 things skipped (1 image, 1 conversation)" in dialog.status.text()
        details = dialog.details.toPlainText()
        assert dialog.details.isVisible()
        assert "• “Sourdough starter”: skipped: image in message 3 (no file)" in details
        dialog.grab().save(str(SHOTS / "import_dialog.png"))
        assert harness.service.session == report.imported[0].session
        assert "sourdough" in harness.chat_text().lower()
        await until(lambda: "Sourdough starter" in window.sessions.titles(), what="the list")
        # the same file again: nothing is written, and the report says where it already is
        written = harness.service.ledger.count()
        again = dialog.start(str(source))
        assert again is not None and (await again) is not None
        assert harness.service.ledger.count() == written
        assert "Imported 0 of 2 conversations" in dialog.status.text()
        assert "1 conversation already imported" in dialog.status.text()
        assert (
            "• “Sourdough starter”: already imported as “Sourdough starter”"
            in dialog.details.toPlainText()
        )


async def test_a_large_import_advances_the_bar_and_cancel_keeps_what_was_written(
    double: OllamaDouble, qtbot: Any, ledger_path: Path, tmp_path: Path
) -> None:
    many = [
        {"title": f"chat {i}", "messages": [{"role": "user", "content": f"hi {i}"}]}
        for i in range(400)
    ]
    source = tmp_path / "many.json"
    source.write_text(json.dumps(many), encoding="utf-8")
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        dialog = harness.window.import_chats()
        seen: list[int] = []
        dialog.bar.valueChanged.connect(seen.append)
        task = dialog.start(str(source))
        assert task is not None
        await until(lambda: dialog.bar.value() >= 20, what="the bar to move")
        dialog.cancel_button.click()  # says Cancel while it runs
        report = await task
        assert report is not None and 20 <= len(report.imported) < 400
        assert seen == sorted(seen) and len(set(seen)) > 10
        assert "Stopped by the user" in dialog.details.toPlainText()
        assert len(harness.ledger.sessions()) == len(report.imported)
        bad = tmp_path / "bad.json"
        bad.write_text('{"something": "else"}', encoding="utf-8")
        failed = dialog.start(str(bad))
        assert failed is not None and await failed is None
        assert "ChatGPT's conversations.json" in dialog.status.text()


async def test_export_writes_openai_json_and_markdown_and_says_why_it_could_not(
    double: OllamaDouble, qtbot: Any, ledger_path: Path, tmp_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        assert window.export_chat() is None  # no chat shown yet
        window.picker.choose("llama3.2:latest")
        await until(lambda: harness.service.binding is not None, what="the binding")
        window.composer.input.setPlainText("Export me")
        window.composer.send_button.click()
        await until(lambda: harness.finished, what="the turn")
        dialog = window.export_chat()
        assert dialog is not None
        dialog.path.setText(str(tmp_path / "out.json"))
        assert dialog.export()
        document = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
        assert [m["role"] for m in document["messages"]][-2:] == ["user", "assistant"]
        dialog.choose_format("markdown")
        assert dialog.path.text().endswith("out.md")
        assert dialog.export()
        assert "## You\n\nExport me" in (tmp_path / "out.md").read_text(encoding="utf-8")
        dialog.grab().save(str(SHOTS / "export_dialog.png"))
        dialog.path.setText(str(tmp_path / "no" / "such" / "dir" / "x.md"))
        assert not dialog.export() and "Could not write" in dialog.message.text()
