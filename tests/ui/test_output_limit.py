"""A cut answer is said under it in the window (issue #17 item 6): the answer that stopped at
the output limit the request sent (the double's `done_reason: "length"`) gets a line naming the
limit and saying "continue" goes on, live and read back from the ledger; an answer that ended
on its own gets none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.runtime.turn.test_output_limit import LONG
from tests.ui.harness import open_harness, until


async def test_a_cut_answer_shows_the_limit_under_it_live_and_after_reopening(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window, service = harness.window, harness.service
        window.picker.choose("qwen2.5:0.5b")
        await until(lambda: service.binding is not None, what="the model binding")
        double.enqueue(Reply(text=LONG), Reply(text="A short one."))
        window.composer.input.setPlainText("Tell me everything.")
        window.composer.send_button.click()
        await until(lambda: harness.finished, what="the cut turn")
        cut = harness.finished[0].turn_id
        answer = window.chat.answer_message(cut)
        assert answer is not None and answer.notice.isVisible()
        said = answer.notice.text()
        assert "512-token output limit" in said and '"continue"' in said, said
        assert said in harness.chat_text()
        harness.screenshot("answer_cut_at_output_limit")
        window.composer.input.setPlainText("continue")
        window.composer.send_button.click()
        await until(lambda: len(harness.finished) == 2, what="the second turn")
        second = window.chat.answer_message(harness.finished[1].turn_id)
        assert second is not None and not second.notice.isVisibleTo(second)
        assert double.chat_bodies()[-1]["options"]["num_predict"] == 1_024
        window.chat.reload()  # read back from the ledger: the same words under the same answer
        again = window.chat.answer_message(cut)
        assert again is not None and again is not answer and again.notice.text() == said
        assert again.notice.isVisibleTo(again)
