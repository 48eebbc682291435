"""System prompts in the window: a chat's own prompt (a ledger entry, once), presets created,
edited, picked and made the default for new chats; the prefix digest changes once per change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.doubles.ollama_server import OllamaDouble
from tests.shots import shots_dir
from tests.ui.harness import Harness, open_harness, until
from vak_desktop.context.payloads import Activity, Receipt
from vak_desktop.runtime.sessions.system_prompts import SYSTEM_PROMPT_SET, PresetStore

TERSE = "You are a terse reviewer. Answer in one sentence."


async def _turn(harness: Harness, text: str) -> None:
    count = len(harness.finished)
    harness.window.composer.input.setPlainText(text)
    harness.window.composer.send_button.click()
    await until(lambda: len(harness.finished) > count, what=f"the turn {text!r}")


def _system_sent(double: OllamaDouble) -> str:
    first = double.chat_bodies()[-1]["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def _prefix_digests(harness: Harness, session: str) -> list[str]:
    return [
        e.payload.prefix_digest
        for e in harness.ledger.chain_to_root(session)
        if isinstance(e.payload, Receipt) and e.payload.step == 0
    ]


async def test_a_chats_system_prompt_is_one_entry_and_changes_the_prefix_digest_once(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window = harness.window
        window.picker.choose("llama3.2:latest")
        await until(lambda: harness.service.binding is not None, what="the binding")
        await _turn(harness, "first, with the built-in prompt")
        session = harness.service.session
        assert session is not None
        builtin = harness.service.builtin_prompt
        assert _system_sent(double).startswith(builtin.strip()[:40])

        dialog = window.edit_system_prompt()
        assert dialog.editor.toPlainText() == builtin
        dialog.editor.setPlainText("")
        assert not dialog.use() and "cannot be empty" in dialog.message.text()
        dialog.editor.setPlainText(TERSE)
        assert dialog.use()
        assert harness.service.system_prompt == TERSE
        for text in ("second", "third"):
            await _turn(harness, text)
            assert _system_sent(double).startswith(TERSE)
        # the same text again writes nothing
        dialog = window.edit_system_prompt()
        assert dialog.editor.toPlainText() == TERSE
        assert not dialog.use() and "already" in dialog.message.text()

        chain = harness.ledger.chain_to_root(session)
        sets = [
            e.payload
            for e in chain
            if isinstance(e.payload, Activity) and e.payload.type == SYSTEM_PROMPT_SET
        ]
        assert [a.detail["text"] for a in sets] == [TERSE]
        first, second, third = _prefix_digests(harness, session)
        assert first != second == third
        # the inspector's rebuilt request sends what the step sent
        turn_id = harness.finished[-1].turn_id
        rebuilt = window.inspection.request_for(turn_id)
        assert rebuilt.matches and rebuilt.prefix_matches


async def test_presets_are_created_edited_picked_and_a_default_starts_new_chats(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        window, service = harness.window, harness.service
        window.picker.choose("llama3.2:latest")
        await until(lambda: service.binding is not None, what="the binding")
        dialog = window.edit_system_prompt()
        dialog.name.setText("")
        dialog.editor.setPlainText(TERSE)
        assert not dialog.save_preset() and "needs a name" in dialog.message.text()
        dialog.name.setText("Terse")
        assert dialog.save_preset()
        dialog.editor.setPlainText(TERSE + " Never apologise.")
        assert dialog.save_preset()  # the same name: edited in place
        dialog.default_box.setChecked(True)
        store = PresetStore.open(ledger_path.parent)
        assert store.names() == ["Terse"] and store.default == "Terse"
        assert store.default_text("") == TERSE + " Never apologise."
        dialog.grab().save(str(shots_dir("dsk") / "preset_editor.png"))
        dialog.reject()

        service.new_session()
        assert service.system_prompt == TERSE + " Never apologise."
        await _turn(harness, "hello from a new chat")
        assert _system_sent(double).startswith(TERSE + " Never apologise.")
        session = service.session
        assert session is not None
        sets = [
            e.payload
            for e in harness.ledger.chain_to_root(session)
            if isinstance(e.payload, Activity) and e.payload.type == SYSTEM_PROMPT_SET
        ]
        assert len(sets) == 1 and sets[0].detail["preset"] == "Terse"

        # another new chat picks the built-in prompt instead of the default
        service.new_session()
        dialog = window.edit_system_prompt()
        dialog.choose_preset("")
        assert dialog.editor.toPlainText() == service.builtin_prompt
        assert dialog.use() and service.system_prompt == service.builtin_prompt
        service.new_session()
        dialog = window.edit_system_prompt()
        dialog.choose_preset("Terse")
        assert dialog.delete_preset()
        assert PresetStore.open(ledger_path.parent).names() == []
        assert service.system_prompt == service.builtin_prompt  # no default any more
