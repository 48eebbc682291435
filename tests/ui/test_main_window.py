"""One real turn from the window, against the loopback Ollama double."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QWidget,
)

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.ui.harness import SCREENSHOTS, Harness, open_harness, until
from vak_desktop.context.payloads import Activity, AssistantStep, Directive
from vak_desktop.context.planning.turns import TURN_CLOSED
from vak_desktop.ledger import Ledger
from vak_desktop.providers import open_provider
from vak_desktop.ui import ChatService, MainWindow
from vak_desktop.ui.shell.opening import MENUS, OPENING, OpeningView, first_frame

ANSWER = (
    "Hello! I am a small model running on your own machine. "
    "Every word of this answer arrived as its own chunk, and the ledger kept all of it."
)


def _kinds_and_payloads(harness: Harness, session: str) -> list[Any]:
    return [e.payload for e in harness.ledger.chain_to_root(session)]


async def _ready(harness: Harness, model: str) -> None:
    window = harness.window
    assert window.picker.combo.count() == 2
    window.picker.choose(model)
    await until(lambda: harness.service.binding is not None, what="the model binding")


async def test_a_typed_message_streams_its_answer_into_the_view_and_the_ledger(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        await _ready(harness, "qwen2.5:0.5b")
        double.enqueue(Reply(text=ANSWER, chunk_chars=9, delay_per_chunk=0.005))
        seen: list[str] = []  # the view's text after every chunk: it must grow chunk by chunk
        harness.service.textChunk.connect(lambda _chunk: seen.append(harness.chat_text()))

        qtbot.keyClicks(window.composer.input, "Say hello to the screenshot")
        qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
        assert window.composer.input.toPlainText() == ""
        assert window.composer.stop_button.isEnabled()
        await until(lambda: harness.finished, what="the turn to finish")

        (finished,) = harness.finished
        assert finished.outcome == "completed"
        assert ANSWER in harness.chat_text()
        assert "Say hello to the screenshot" in harness.chat_text()
        assert len(seen) == -(-len(ANSWER) // 9)
        assert all(len(a) < len(b) for a, b in itertools.pairwise(seen))
        assert ANSWER[:9] in seen[0] and ANSWER not in seen[0]

        payloads = _kinds_and_payloads(harness, finished.session)
        directive = next(p for p in payloads if isinstance(p, Directive))
        assert (directive.text, directive.model) == ("Say hello to the screenshot", "qwen2.5:0.5b")
        steps = [p for p in payloads if isinstance(p, AssistantStep)]
        assert [s.text for s in steps] == [ANSWER] and not steps[0].interrupted
        assert double.chat_bodies()[-1]["model"] == "qwen2.5:0.5b"

        assert "0.5b" in window.model_status.text()
        gauge = window.inspection.gauge  # the request's size as the provider counted it
        assert gauge is not None and gauge.request_tokens == finished.usage.prompt_tokens()
        assert f"{gauge.request_tokens:,} / " in window.status.gauge_label.text()
        assert finished.usage.output_tokens > 0
        assert not window.composer.stop_button.isEnabled()
        assert window.sessions.list.count() == 1
        assert window.sessions.list.item(0).text() == "Say hello to the screenshot"
        assert not window.banner.isVisible()
        harness.screenshot("chat_streamed")


async def test_stop_keeps_the_partial_answer_and_records_a_cancelled_turn(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        await _ready(harness, "llama3.2:latest")
        double.enqueue(Reply(text="word " * 200, chunk_chars=5, delay_per_chunk=0.02))
        chunks: list[str] = []
        harness.service.textChunk.connect(chunks.append)

        qtbot.keyClicks(window.composer.input, "Count slowly")
        qtbot.mouseClick(window.composer.send_button, Qt.MouseButton.LeftButton)
        await until(lambda: len(chunks) >= 3, what="a few chunks")
        qtbot.mouseClick(window.composer.stop_button, Qt.MouseButton.LeftButton)
        await until(lambda: harness.finished, what="the stopped turn")

        (finished,) = harness.finished
        assert finished.outcome == "cancelled"
        partial = "".join(chunks)
        assert 3 <= len(chunks) < 200
        assert partial.strip() in harness.chat_text()
        assert "Stopped" in harness.chat_text()
        payloads = _kinds_and_payloads(harness, finished.session)
        (step,) = [p for p in payloads if isinstance(p, AssistantStep)]
        assert step.interrupted and step.text == partial
        closes = [p for p in payloads if isinstance(p, Activity) and p.type == TURN_CLOSED]
        assert [c.detail["outcome"] for c in closes] == ["cancelled"]
        assert not harness.service.busy
        assert window.sessions.list.isEnabled()
        harness.screenshot("chat_stopped")


async def test_a_turn_the_app_never_closed_shows_as_interrupted_when_loaded(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        ledger, window = harness.ledger, harness.window
        crashed = ledger.create_session().id
        ledger.append(crashed, Directive(text="Write me a long story", model="llama3.2"))
        ledger.append(crashed, AssistantStep(text="Once upon a time", model="llama3.2"))
        window.sessions.reload()

        assert window.sessions.list.count() == 1
        window.sessions.list.setCurrentRow(0)

        assert harness.service.session == crashed
        text = harness.chat_text()
        assert "Write me a long story" in text and "Once upon a time" in text
        assert "Interrupted" in text


async def test_new_chat_starts_an_empty_session_listed_first_after_its_first_turn(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        await _ready(harness, "llama3.2:latest")
        double.enqueue(Reply(text="First answer."), Reply(text="Second answer."))
        for n, message in enumerate(["First question", "Second question"], start=1):
            qtbot.mouseClick(window.sessions.new_chat, Qt.MouseButton.LeftButton)
            assert harness.service.session is None
            assert "Start a conversation" in harness.chat_text()
            window.composer.input.setPlainText(message)
            window.composer.send_button.click()
            await until(lambda n=n: len(harness.finished) == n, what=f"turn {n}")

        titles = [window.sessions.list.item(i).text() for i in range(window.sessions.list.count())]
        assert titles == ["Second question", "First question"]
        window.sessions.list.setCurrentRow(1)
        assert "First answer." in harness.chat_text()
        assert "Second answer." not in harness.chat_text()


async def test_shift_enter_starts_a_new_line_and_enter_alone_sends(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        box = harness.window.composer.input
        await _ready(harness, "llama3.2:latest")
        qtbot.keyClicks(box, "first line")
        qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
        qtbot.keyClicks(box, "second line")
        assert box.toPlainText() == "first line\nsecond line"
        qtbot.keyClick(box, Qt.Key.Key_Enter)
        assert box.toPlainText() == ""
        await until(lambda: harness.finished, what="the turn")
        assert "first line\nsecond line" in harness.chat_text()


async def test_a_turn_that_cannot_start_says_why_and_gives_the_text_back(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        del double.models["qwen2.5:0.5b"]  # as if `ollama rm` ran after the list came
        window.picker.choose("qwen2.5:0.5b")
        qtbot.keyClicks(window.composer.input, "Are you there?")
        qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)

        await until(
            lambda: not harness.service.busy and "Not sent" in harness.chat_text(),
            what="the refusal",
        )
        assert "qwen2.5:0.5b" in harness.chat_text()
        assert window.composer.input.toPlainText() == "Are you there?"
        assert harness.ledger.sessions() == []
        assert harness.finished == []


async def test_a_stream_that_breaks_keeps_its_text_and_says_it_failed(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        await _ready(harness, "llama3.2:latest")
        double.enqueue(
            Reply(text="The answer begins well and then", chunk_chars=8, error_after_chunks=2)
        )
        harness.window.composer.input.setPlainText("Go on")
        harness.window.composer.send_button.click()
        await until(lambda: harness.finished, what="the failed turn")

        (finished,) = harness.finished
        assert finished.outcome == "failed"
        text = harness.chat_text()
        assert "The answer begin\n" in text and "Failed" in text  # two chunks of 8
        assert "unexpected EOF" in text  # the server's own words reach the user


async def test_window_shortcuts_new_chat_search_inspector_and_escape_stops(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        window.activateWindow()
        await _ready(harness, "llama3.2:latest")
        double.enqueue(Reply(text="word " * 300, chunk_chars=5, delay_per_chunk=0.02))
        chunks: list[str] = []
        harness.service.textChunk.connect(chunks.append)
        box = window.composer.input
        qtbot.keyClicks(box, "Count slowly")
        qtbot.keyClick(box, Qt.Key.Key_Return)
        await until(lambda: len(chunks) >= 3, what="a few chunks")
        qtbot.keyClick(box, Qt.Key.Key_Escape)
        await until(lambda: harness.finished, what="the stopped turn")
        assert harness.finished[0].outcome == "cancelled" and len(chunks) < 300
        assert harness.service.session is not None

        qtbot.keyClick(box, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
        assert harness.service.session is None
        assert "Start a conversation" in harness.chat_text()

        qtbot.keyClick(box, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
        assert window.sessions.search.hasFocus()
        qtbot.keyClick(window.sessions.search, Qt.Key.Key_Escape)  # no turn: Esc is not taken
        assert not window.inspector.isVisible()
        qtbot.keyClick(window.sessions.search, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier)
        assert window.inspector.isVisible() and window.inspector_button.isChecked()
        qtbot.keyClick(window.sessions.search, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier)
        assert not window.inspector.isVisible()


async def test_every_control_of_the_shell_has_an_accessible_name(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        await _ready(harness, "llama3.2:latest")
        window.toggle_inspector(True)
        inspector = window.inspector
        owners = (
            window.sessions, window.status, inspector, inspector.plan, inspector.request,
            inspector.evidence, inspector.probe,
        )  # fmt: skip
        unnamed = []
        for owner in owners:
            assert owner.accessibleName()
            found = [v for v in vars(owner).values() if isinstance(v, QWidget)]
            found += [v for v in getattr(owner, "facts", {}).values()]
            unnamed += [
                f"{type(owner).__name__}: {type(w).__name__} {w.objectName()!r}"
                for w in found
                if not w.accessibleName()
            ]
        assert unnamed == []
        assert window.inspector_button.accessibleName()


async def test_compact_now_runs_the_planner_and_says_what_it_did(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        notices: list[str] = []
        harness.service.notice.connect(notices.append)
        window.compact_action.trigger()  # no chat yet
        assert "Nothing to compact now" in window.statusBar().currentMessage()
        await _ready(harness, "qwen2.5:0.5b")
        double.enqueue(Reply(text="Short answer."))
        window.composer.input.setPlainText("A short question")
        window.composer.send_button.click()
        await until(lambda: harness.finished, what="the turn to finish")
        asked = len(double.chat_bodies())
        window.compact_action.trigger()
        await until(lambda: any("nothing to compact" in n.lower() for n in notices), what="notice")
        assert len(double.chat_bodies()) == asked  # the short chat fits: no summariser call


async def test_a_refusal_is_cleared_by_the_next_turn_that_starts(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        service, window = harness.service, harness.window
        service.select_model(None)
        assert not service.send("hello?")
        assert "Pick a model first" in harness.chat_text()
        await _ready(harness, "llama3.2:latest")
        window.composer.input.setPlainText("hello again")
        window.composer.send_button.click()
        await until(lambda: harness.finished, what="the turn")
        assert "Pick a model first" not in harness.chat_text()
        assert harness.finished[0].outcome == "completed"


async def test_a_restart_reopens_the_last_chat_and_ctrl_q_closes_the_window(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        await _ready(harness, "llama3.2:latest")
        for text in ("first chat", "second chat"):
            harness.service.new_session()
            harness.window.composer.input.setPlainText(text)
            harness.window.composer.send_button.click()
            await until(lambda: not harness.service.busy and harness.finished, what="a turn")
            harness.finished.clear()
        last = harness.service.session
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        assert harness.service.session is None
        assert window.reopen_last_chat()
        assert harness.service.session == last and "second chat" in harness.chat_text()
        assert window.quit_action.shortcut().toString() == "Ctrl+Q"
        assert window.quit_action in window.file_menu.actions()
        qtbot.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
        await until(lambda: not window.isVisible(), what="the window to close")


async def test_the_first_frame_is_the_shell_disabled_and_becomes_the_whole_window_in_place(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    """At start-up the window is shown before its services exist (`app.py`): the same
    window object gets them with `attach`, and from then on works as one made with them."""
    ledger = Ledger.open(ledger_path)
    try:
        session = ledger.create_session("from before").id
        ledger.append(session, Directive(text="what was asked before"))
        ledger.append(session, AssistantStep(text="what was answered before"))
        window = MainWindow()  # no service: the first frame
        qtbot.addWidget(window)
        window.show()
        await first_frame(window)
        assert window.windowHandle().isExposed() and not window.ready
        assert window.statusBar().currentMessage() == OPENING
        assert [a.text() for a in window.menuBar().actions()] == list(MENUS)
        assert not any(a.isEnabled() for a in window.menuBar().actions())
        controls = [
            w
            for w in window.findChildren(QWidget)
            if isinstance(w, QAbstractButton | QComboBox | QLineEdit | QListWidget | QPlainTextEdit)
            and w.isVisibleTo(window)
        ]
        assert len(controls) >= 8 and not any(c.isEnabled() for c in controls)
        shell = window.grab()
        SCREENSHOTS.mkdir(exist_ok=True)
        assert shell.save(str(SCREENSHOTS / "first_frame_opening.png"))
        handle = window.windowHandle()

        async with httpx.AsyncClient() as client:
            service = ChatService(ledger, open_provider("ollama", client, double.url))
            window.attach(service, ledger)
            try:
                assert window.ready and window.opening is None
                assert window.windowHandle() is handle and window.isVisible()  # not re-mapped
                assert [a.text() for a in window.menuBar().actions()] == list(MENUS)
                assert window.quit_action in window.file_menu.actions()
                assert window.sessions.list.count() == 1
                assert window.statusBar() is window.status
                await service.refresh_models()
                assert window.picker.combo.count() == 2
                assert window.reopen_last_chat()
                assert "what was answered before" in window.chat.toPlainText()
                window.picker.choose("llama3.2:latest")
                await until(lambda: service.binding is not None, what="the model binding")
                double.enqueue(Reply(text="hello again"))
                qtbot.keyClicks(window.composer.input, "and now?")
                qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
                await until(lambda: "hello again" in window.chat.toPlainText(), what="the answer")
                await until(lambda: not service.busy, what="the turn to close")
                assert not window.findChildren(OpeningView)
                assert window.grab().save(str(SCREENSHOTS / "first_frame_whole.png"))
                with pytest.raises(RuntimeError, match="attached already"):
                    window.attach(service, ledger)
            finally:
                await service.aclose()
    finally:
        ledger.close()
