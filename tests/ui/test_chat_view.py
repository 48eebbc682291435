"""The chat view against the loopback Ollama double: Markdown as it streams, thinking and tool
calls collapsed, receipts, image attachments and the thinking toggle."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QColor, QGuiApplication, QImage, QTextTable

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.ui.harness import Harness, open_harness, until
from vak_desktop.context.payloads import Directive
from vak_desktop.ui.chat.markdown_stream import MarkdownStream, safe_boundary
from vak_desktop.ui.chat.message_widgets import AssistantMessage
from vak_desktop.ui.parts.markdown import MarkdownPane
from vak_desktop.ui.parts.message_sections import ThinkingSection, ToolSection

MARKDOWN = """Here are the numbers you asked for.

| Model | Horizon |
|---|---:|
| qwen2.5:0.5b | 6,144 |
| llama3.2 | 24,576 |

Run this to measure again:

```sh
vak probe qwen2.5:0.5b --json
```

- one item
- two items
"""


async def _ready(harness: Harness, model: str) -> None:
    harness.window.picker.choose(model)
    await until(
        lambda: harness.service.binding is not None and harness.service.binding.model == model,
        what="the model binding",
    )


def _answers(harness: Harness) -> list[AssistantMessage]:
    return [m for m in harness.window.chat.messages if isinstance(m, AssistantMessage)]


def _panes(answer: AssistantMessage) -> list[MarkdownPane]:
    return [p for s in answer.sections if isinstance(s, MarkdownStream) for p in s.panes]


def _tables(pane: MarkdownPane) -> list[QTextTable]:
    frames, tables = [pane.document().rootFrame()], []
    while frames:
        frame = frames.pop()
        if isinstance(frame, QTextTable):
            tables.append(frame)
        frames.extend(frame.childFrames())
    return tables


async def test_a_streamed_answer_renders_its_table_and_code_block_as_markdown(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        await _ready(harness, "llama3.2:latest")
        double.enqueue(Reply(text=MARKDOWN, chunk_chars=6, delay_per_chunk=0.004))
        renders: list[int] = []
        chunks: list[str] = []
        harness.service.textChunk.connect(chunks.append)
        assert harness.service.send("Compare my models")
        await until(lambda: len(chunks) >= 3, what="the first chunks")
        (answer,) = _answers(harness)
        # while it streams, the text is there at once (raw) and rendered on the timer
        assert chunks[0].strip() in harness.chat_text()
        stream = answer.live_markdown
        assert stream is not None
        original = stream.render_pending

        def counting() -> None:
            renders.append(len(stream.source))
            original()

        stream.render_pending = counting  # type: ignore[method-assign]
        await until(lambda: harness.finished, what="the turn to finish")

        # far fewer renders than chunks: deltas are coalesced on the timer
        n_chunks = -(-len(MARKDOWN) // 6)
        assert 1 <= len(renders) < n_chunks / 2
        (pane,) = _panes(answer)  # a short answer ends as one selectable pane
        text = pane.toPlainText()
        assert "| Model |" not in text and "```" not in text  # no Markdown syntax left
        markdown_tables = [t for t in _tables(pane) if t.rows() == 3]
        assert len(markdown_tables) == 1
        cell = markdown_tables[0].cellAt(1, 0)
        assert pane.document().toPlainText()[cell.firstPosition() : cell.lastPosition()] == (
            "qwen2.5:0.5b"
        )
        assert pane.codes == ["vak probe qwen2.5:0.5b --json"]
        code = pane.document().find("vak probe qwen2.5:0.5b --json")
        assert code.block().blockFormat().nonBreakableLines()  # a <pre> block
        assert "monospace" in code.charFormat().fontFamilies()
        assert "Copy" in text
        pane.anchorClicked.emit(QUrl("copy:0"))
        assert QGuiApplication.clipboard().text() == "vak probe qwen2.5:0.5b --json"
        assert "one item" in text and "two items" in text

        # the receipt line: tokens and speeds from the receipt
        receipt = answer.stats.text()
        assert "in context" in receipt and "output tokens" in receipt and "tok/s" in receipt
        finished = harness.finished[0]
        assert f"{finished.usage.output_tokens:,} output tokens" in receipt

        # the same session drawn from the ledger looks the same
        harness.service.open_session(finished.session)
        (loaded,) = _answers(harness)
        (loaded_pane,) = _panes(loaded)
        assert loaded_pane.toPlainText() == text
        assert loaded.stats.text() == receipt


def test_a_live_part_is_only_cut_where_the_rest_cannot_change_it() -> None:
    text = "para one\n\n```\ncode\n\nmore code\n```\n\n- a\n\n- b\n\nlast para\n"
    cut = safe_boundary(text)
    assert text[cut:] == "last para\n"  # not inside the fence, not between list items
    assert safe_boundary("one paragraph still growing") == 0
    assert safe_boundary("a\n\n```\nopen fence\n\nstill code\n") == 3


async def test_thinking_and_tool_calls_are_collapsed_with_the_evidence_id(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    double.add_model("qwen3:4b", capabilities=("completion", "tools", "thinking"))
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        await _ready(harness, "qwen3:4b")
        double.enqueue(
            Reply(
                thinking="I should look at turn 1 before answering.",
                tool_calls=[("recall", {"turn": 1})],
            ),
            Reply(text="Turn 1 was **empty**."),
        )
        assert harness.service.send("What did we say in turn 1?")
        await until(lambda: harness.finished, what="the turn")
        (answer,) = _answers(harness)
        thinking = [s for s in answer.sections if isinstance(s, ThinkingSection)]
        tools = [s for s in answer.sections if isinstance(s, ToolSection)]
        assert len(thinking) == 1 and len(tools) == 1
        assert not thinking[0].expanded
        assert thinking[0].title.startswith("Thought (")
        thinking[0].header.click()
        assert thinking[0].expanded
        assert "look at turn 1" in thinking[0].pane.toPlainText()

        tool = tools[0]
        assert not tool.expanded and tool.result is not None
        chars, _is_error, evidence = tool.result
        assert evidence.startswith("b3:")
        title = tool.title
        assert "recall" in title and evidence[3:11] in title and f"{chars:,} characters" in title
        tool.header.click()
        assert evidence in tool.details.text()
        assert "Turn 1 was empty." in harness.chat_text()
        # the order they happened in: thinking, the call, then the answer
        kinds = [type(s).__name__ for s in answer.sections]
        assert kinds == ["ThinkingSection", "ToolSection", "MarkdownStream"]

        # rebuilt from the ledger: the same pieces, the same evidence id
        harness.service.open_session(harness.finished[0].session)
        (loaded,) = _answers(harness)
        loaded_tools = [s for s in loaded.sections if isinstance(s, ToolSection)]
        assert loaded_tools[0].result == tool.result
        assert [type(s).__name__ for s in loaded.sections] == kinds


def _png(path: Path) -> Path:
    image = QImage(8, 6, QImage.Format.Format_RGB32)
    image.fill(QColor("#2563eb"))
    assert image.save(str(path))
    return path


async def test_an_image_goes_with_the_directive_to_a_vision_model(
    double: OllamaDouble, qtbot: Any, ledger_path: Path, tmp_path: Path
) -> None:
    double.add_model("llava", capabilities=("completion", "vision"))
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        composer = harness.window.composer
        await _ready(harness, "llama3.2:latest")
        assert composer.attach_button.isHidden()  # llama3.2 cannot see
        await _ready(harness, "llava:latest")
        assert not composer.attach_button.isHidden()
        assert not composer.think_choice.isEnabled()  # nor can llava think
        problems = composer.attach_images([_png(tmp_path / "dot.png"), tmp_path / "missing.png"])
        assert len(problems) == 1 and "missing.png" in problems[0]
        assert "dot.png" in composer.attachments.text()
        double.enqueue(Reply(text="A blue rectangle."))
        composer.input.setPlainText("What is in this picture?")
        composer.send_button.click()
        await until(lambda: harness.finished, what="the turn")

        data = base64.b64encode((tmp_path / "dot.png").read_bytes()).decode()
        user_message = double.chat_bodies()[-1]["messages"][-1]
        assert user_message["role"] == "user" and user_message["images"] == [data]
        directives = [
            e.payload
            for e in harness.ledger.chain_to_root(harness.finished[0].session)
            if isinstance(e.payload, Directive)
        ]
        assert directives[0].images == (data,)
        assert composer.images == ()  # sent: the attachments are cleared
        thumbnails = harness.window.chat.findChildren(object, "imageThumbnail")
        assert len(thumbnails) == 1


async def test_the_thinking_toggle_reaches_the_request(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    double.add_model("qwen3:4b", capabilities=("completion", "tools", "thinking"))
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        composer = harness.window.composer
        await _ready(harness, "qwen3:4b")
        choice = composer.think_choice
        assert not choice.isHidden() and harness.service.think is None  # the model decides
        assert double.chat_bodies() == [] or "think" not in double.chat_bodies()[-1]
        texts = {choice.itemText(i) for i in range(choice.count())}
        assert len(texts) == 3  # on, off and the default read differently
        choice.setCurrentIndex(choice.findData(True))
        assert harness.service.think is True and "on" in choice.currentText()
        choice.setCurrentIndex(choice.findData(False))  # off
        assert harness.service.think is False and "off" in choice.currentText()
        double.enqueue(Reply(text="Quick answer."))
        assert harness.service.send("Answer without thinking")
        await until(lambda: harness.finished, what="the turn")
        assert double.chat_bodies()[-1]["think"] is False

        await _ready(harness, "llama3.2:latest")
        # shown, but disabled and saying why: a switch with no effect does not just vanish
        assert not composer.think_choice.isHidden() and not composer.think_choice.isEnabled()
        assert "no effect" in composer.think_choice.toolTip()
        assert harness.service.think is None  # a model that cannot think is not asked to
