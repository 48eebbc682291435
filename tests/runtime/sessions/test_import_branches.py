"""Imports keep every branch, image and tool step, itemise what they skip, and import once
(issue 25 item 5). The fixtures are small exports in the two apps' published shapes."""

from __future__ import annotations

import base64
import copy
import json
import shutil
import struct
import zlib
from pathlib import Path

import pytest

from vak_desktop.context.payloads import AssistantStep, Directive, ToolResult
from vak_desktop.context.planning.turns import split_turns
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.sessions.assets import FolderAssets
from vak_desktop.runtime.sessions.branches import version_positions
from vak_desktop.runtime.sessions.formats import read_conversations
from vak_desktop.runtime.sessions.importing import import_all

FIXTURES = Path(__file__).parent / "fixtures"


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def _chatgpt() -> list[dict]:  # type: ignore[type-arg]
    return json.loads((FIXTURES / "chatgpt_conversations.json").read_text(encoding="utf-8"))


def test_every_chatgpt_branch_becomes_a_version_and_the_shown_one_stays_shown(
    tmp_path: Path,
) -> None:
    ledger = Ledger.open(tmp_path / "l.sqlite3")
    report = import_all(ledger, read_conversations(_chatgpt()))
    session = report.imported[0].session
    entries = list(ledger.entries(session))
    directives = [e for e in entries if isinstance(e.payload, Directive)]
    # the regenerated first answer is kept, as a second version of turn 1
    assert len(directives) == 3 and report.branches == 1
    versions = version_positions(entries)
    first = [d for d in directives if d.payload.text.startswith("How often")]
    assert sorted(versions[d.id] for d in first) == [(1, 2), (2, 2)]
    answers = [e.payload.text for e in entries if isinstance(e.payload, AssistantStep)]
    assert "An answer the user regenerated." in answers
    # the chat opens on ChatGPT's current node
    turns = split_turns(ledger.chain_to_root(session))
    assert turns[0].answer.startswith("Once or twice") and "ready to bake" in turns[1].answer
    assert "1 other branch kept" in report.summary()


def test_a_code_call_and_its_output_become_a_tool_step(tmp_path: Path) -> None:
    ledger = Ledger.open(tmp_path / "l.sqlite3")
    session = import_all(ledger, read_conversations(_chatgpt())).imported[0].session
    turn = split_turns(ledger.chain_to_root(session))[1]
    steps = [e.payload for e in turn.entries if isinstance(e.payload, AssistantStep)]
    (call,) = steps[0].tool_calls
    assert call.name == "python" and call.arguments == {"code": "measure_bubbles('starter.jpg')"}
    (result,) = [e.payload for e in turn.entries if isinstance(e.payload, ToolResult)]
    assert result.tool_call_id == call.id and result.content == "0.71"
    assert steps[-1].text.startswith("Yes: it is full of bubbles")


def test_an_image_given_in_the_export_folder_is_attached(tmp_path: Path) -> None:
    folder = tmp_path / "export"
    (folder / "user-x").mkdir(parents=True)
    shutil.copy(FIXTURES / "chatgpt_conversations.json", folder / "conversations.json")
    (folder / "user-x" / "file-Abc123-starter.png").write_bytes(_png())
    ledger = Ledger.open(tmp_path / "l.sqlite3")
    read = read_conversations(_chatgpt(), FolderAssets(folder))
    report = import_all(ledger, read)
    turn = split_turns(ledger.chain_to_root(report.imported[0].session))[1]
    assert base64.b64decode(turn.directive.images[0]) == _png()
    assert not [s for s in report.skipped if s.kind == "image"]


def test_the_report_itemises_each_skipped_thing_and_counts_agree() -> None:
    ledger = Ledger.open(":memory:")
    items = _chatgpt()
    node = items[0]["mapping"]["u-2"]["message"]["content"]["parts"]
    node.insert(0, {"content_type": "audio_asset_pointer", "asset_pointer": "sediment://file_9"})
    report = import_all(ledger, read_conversations(items))
    lines = [str(s) for s in report.skipped]
    assert "“Sourdough starter”: skipped: image in message 3 (no file)" in lines
    assert "“Sourdough starter”: skipped: audio in message 3 (Vak keeps no audio or video)" in lines
    summary = report.summary()
    assert "3 things skipped (" in summary and "1 image" in summary and "1 audio" in summary
    one = import_all(Ledger.open(":memory:"), read_conversations(_chatgpt()[:1]))
    assert "1 thing skipped (1 image)" in one.summary() and "things" not in one.summary()


def test_importing_the_same_conversation_again_writes_nothing(tmp_path: Path) -> None:
    ledger = Ledger.open(tmp_path / "l.sqlite3")
    first = import_all(ledger, read_conversations(_chatgpt()))
    before = ledger.count()
    again = import_all(ledger, read_conversations(_chatgpt()))
    assert ledger.count() == before and not again.imported
    (already,) = again.already
    assert str(already) == "“Sourdough starter”: already imported as “Sourdough starter”"
    assert already.session == first.imported[0].session
    assert "1 conversation already imported" in again.summary()
    # a copy that changed since (the chat went on in ChatGPT) is imported beside it, and said
    changed = _chatgpt()
    changed[0]["mapping"]["a-2"]["message"]["content"]["parts"] = ["Now it is ready."]
    third = import_all(ledger, read_conversations(changed))
    assert len(third.imported) == 1 and "changed since it was imported" in third.notes[0]


def _openwebui() -> list[dict]:  # type: ignore[type-arg]
    return json.loads((FIXTURES / "openwebui_export.json").read_text(encoding="utf-8"))


def test_open_webui_branches_inline_images_and_reimport(tmp_path: Path) -> None:
    items = _openwebui()
    messages = items[0]["chat"]["history"]["messages"]
    inline = "data:image/png;base64," + base64.b64encode(_png()).decode()
    messages["m-1"]["files"] = [{"type": "image", "url": inline}]
    ledger = Ledger.open(tmp_path / "l.sqlite3")
    report = import_all(ledger, read_conversations(copy.deepcopy(items)))
    lisbon = report.imported[0].session
    entries = list(ledger.entries(lisbon))
    answers = [e.payload.text for e in entries if isinstance(e.payload, AssistantStep)]
    assert "A first try the user regenerated." in answers and report.imported[0].branches == 1
    turns = split_turns(ledger.chain_to_root(lisbon))
    assert "Santa Luzia" in turns[-1].answer  # currentId's branch is the one shown
    assert base64.b64decode(turns[0].directive.images[0]) == _png()
    assert turns[1].directive.said_at == "2024-11-20T10:55:00Z"  # its timestamp kept
    lines = [str(s) for s in report.skipped]
    assert "“Plan a weekend in Lisbon”: skipped: image in message 3 (not in the export)" in lines
    before = ledger.count()
    again = import_all(ledger, read_conversations(copy.deepcopy(items)))
    assert ledger.count() == before and len(again.already) == 2


@pytest.mark.parametrize("current", ["a-1-old", "u-1", "missing"])
def test_the_shown_branch_follows_current_node(current: str) -> None:
    items = _chatgpt()[:1]
    items[0]["current_node"] = current
    ledger = Ledger.open(":memory:")
    session = import_all(ledger, read_conversations(items)).imported[0].session
    turns = split_turns(ledger.chain_to_root(session))
    expected = "An answer the user regenerated." if current != "missing" else "Yes: it is full"
    if current == "u-1":  # not a leaf: the newest leaf below it
        expected = "Yes: it is full"
    assert expected in turns[-1].answer


def _node(key: str, parent: str | None, role: str, content: dict, **extra: object) -> dict:  # type: ignore[type-arg]
    message = {"id": key, "author": {"role": role, "name": extra.pop("name", None)}}
    message |= {"content": content, "create_time": extra.pop("at", None), "metadata": {}}
    message["recipient"] = extra.pop("recipient", "all")
    message["metadata"] |= extra
    return {"id": key, "parent": parent, "children": [], "message": message}


def _text(*parts: object) -> dict:  # type: ignore[type-arg]
    kind = "multimodal_text" if any(isinstance(p, dict) for p in parts) else "text"
    return {"content_type": kind, "parts": list(parts)}


def test_the_newer_export_shapes_keep_instructions_thoughts_edits_and_generated_images(
    tmp_path: Path,
) -> None:
    """Shapes of 2025 exports: `sediment://` pointers and `file_…-sanitized.png` names, a
    DALL-E result in `dalle-generations/`, thoughts as one string, hidden custom instructions,
    an edited question (two user children), a browsing result with no call before it, and the
    `{"conversations": [...]}` wrapper some exports use."""
    folder = tmp_path / "export"
    (folder / "dalle-generations").mkdir(parents=True)
    (folder / "file_00aa11-sanitized.png").write_bytes(_png())
    webp = b"RIFF\x1a\x00\x00\x00WEBPVP8L" + b"\x00" * 14
    (folder / "dalle-generations" / "file-Dx9-6f1e.webp").write_bytes(webp)
    pointer = {"content_type": "image_asset_pointer", "asset_pointer": "sediment://file_00aa11"}
    drawn = {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Dx9"}
    nodes = [
        {"id": "root", "parent": None, "children": [], "message": None},
        _node(
            "ci",
            "root",
            "system",
            _text("Answer briefly."),
            is_user_system_message=True,
            is_visually_hidden_from_conversation=True,
        ),
        _node("q1", "ci", "user", _text(pointer, "What is in this photo?"), at=1735689600),
        _node("th", "q1", "assistant", {"content_type": "thoughts", "thoughts": "Look closely."}),
        _node("rr", "th", "assistant", {"content_type": "reasoning_recap", "content": "8s"}),
        _node("a1", "rr", "assistant", _text("A bicycle."), model_slug="o3"),
        _node("q2", "a1", "user", _text("Draw one.")),
        _node("q2e", "a1", "user", _text("Draw a red one.")),  # the edit, shown
        _node(
            "d",
            "q2e",
            "assistant",
            {"content_type": "code", "text": '{"prompt": "red"}'},
            recipient="dalle.text2im",
        ),
        _node("dr", "d", "tool", _text(drawn), name="dalle.text2im"),
        _node(
            "br",
            "dr",
            "tool",
            {"content_type": "tether_browsing_display", "result": "r"},
            name="browser",
        ),
        _node("a2", "br", "assistant", _text("Here it is.")),
    ]
    mapping = {n["id"]: n for n in nodes}
    chat = {"title": "Bikes", "conversation_id": "c-1", "mapping": mapping, "current_node": "a2"}
    ledger = Ledger.open(tmp_path / "l.sqlite3")
    report = import_all(ledger, read_conversations({"conversations": [chat]}, FolderAssets(folder)))
    assert [str(s) for s in report.skipped] == [] and report.branches == 1
    turns = split_turns(ledger.chain_to_root(report.imported[0].session))
    first, second = turns
    assert first.directive.system == "Answer briefly."
    assert base64.b64decode(first.directive.images[0]) == _png()
    steps = [e.payload for e in first.entries if isinstance(e.payload, AssistantStep)]
    assert [s.thinking for s in steps] == ["Look closely.", ""] and steps[1].text == "A bicycle."
    assert second.directive.text == "Draw a red one."
    results = [e.payload for e in second.entries if isinstance(e.payload, ToolResult)]
    assert [r.tool_name for r in results] == ["dalle.text2im", "browser"]
    assert base64.b64decode(results[0].images[0]) == webp and results[1].content == "r"
    calls = [c for e in second.entries if isinstance(e.payload, AssistantStep)
             for c in e.payload.tool_calls]  # fmt: skip
    assert [c.name for c in calls] == ["dalle.text2im", "browser"]
    assert calls[0].arguments == {"prompt": "red"}
    assert [r.tool_call_id for r in results] == [c.id for c in calls]
    edited = [e for e in ledger.entries(report.imported[0].session)
              if isinstance(e.payload, Directive) and e.payload.text == "Draw one."]  # fmt: skip
    assert len(edited) == 1 and version_positions(list(ledger.entries(edited[0].session)))[
        edited[0].id
    ] == (1, 2)
