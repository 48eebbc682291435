"""A runtime notice is readable in the window: the status bar's message area is what its
permanent widgets leave (a dozen characters at the default size), so the newest notice is also
shown whole above the composer until dismissed (`ui/chat/notice_line.py`). The notice here is a real
turn's: the answer the Ollama double cut at the request's `num_predict`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.runtime.turn.test_output_limit import LONG
from tests.ui.harness import open_harness, until


async def test_a_turns_notice_is_shown_whole_above_the_composer_until_dismissed(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window, service = harness.window, harness.service
        line = window.notice_line
        assert not line.isVisible()
        window.picker.choose("qwen2.5:0.5b")
        await until(lambda: service.binding is not None, what="the model binding")
        double.enqueue(Reply(text=LONG))
        window.composer.input.setPlainText("Tell me everything.")
        window.composer.send_button.click()
        await until(lambda: harness.finished, what="the cut turn")
        await until(lambda: line.isVisible(), what="the notice line")
        said = line.text.text()
        assert "512-token output limit" in said and '"continue"' in said, said
        assert said.endswith("to go on")  # whole, not cut to what the status bar has room for
        assert line.text.width() > window.width() // 2
        harness.screenshot("notice_line")
        line.dismiss.click()
        assert not line.isVisible()


async def test_the_status_bar_shows_a_notice_whole_or_not_at_all(
    qtbot: Any, ledger_path: Path, double: OllamaDouble
) -> None:
    """The status bar's message area is what its permanent widgets leave: a notice that does
    not fit there is not shown cut ("the prefix (94"); the notice line holds it whole."""
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        long = (
            "the prefix (940 tokens), the tail and the new turn (310) with the output reserve "
            "(512) fill the horizon of 1,352 tokens: turns 1–3 go behind a reset with a handoff"
        )
        harness.service.notice.emit(long)
        assert window.statusBar().currentMessage() == ""
        assert window.notice_line.text.text().endswith("with a handoff")
        harness.service.notice.emit("Saved.")
        assert window.statusBar().currentMessage() == "Saved."
