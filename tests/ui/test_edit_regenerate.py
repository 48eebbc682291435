"""Edit and regenerate append new entries beside the old ones (`parent=`): the ledger keeps
every version, the view shows the current branch, and ‹ n/m › switches between versions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.ui.harness import Harness, open_harness, until
from vak_desktop.context.payloads import AssistantStep, Directive


async def _two_turns(harness: Harness, double: OllamaDouble) -> str:
    harness.window.picker.choose("llama3.2:latest")
    await until(lambda: harness.service.binding is not None, what="the model binding")
    double.enqueue(Reply(text="Paris."), Reply(text="About two million people."))
    for n, question in enumerate(["Capital of France?", "How many live there?"], start=1):
        assert harness.service.send(question)
        await until(lambda n=n: len(harness.finished) == n, what=f"turn {n}")
    session = harness.service.session
    assert session is not None
    return session


def _directives(harness: Harness, session: str, branch_only: bool) -> list[str]:
    entries = (
        harness.ledger.chain_to_root(session) if branch_only else harness.ledger.entries(session)
    )
    return [e.payload.text for e in entries if isinstance(e.payload, Directive)]


def _answers(harness: Harness, session: str) -> list[str]:
    return [
        e.payload.text
        for e in harness.ledger.chain_to_root(session)
        if isinstance(e.payload, AssistantStep)
    ]


async def test_editing_a_directive_starts_a_new_branch_and_keeps_the_old_one(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        session = await _two_turns(harness, double)
        chat = harness.window.chat
        first = harness.finished[0].turn_id
        before = harness.ledger.count()

        user = chat.user_message(first)
        assert user is not None and user.edit_button is not None
        qtbot.mouseClick(user.edit_button, Qt.MouseButton.LeftButton)
        assert user.editor is not None
        user.editor.setPlainText("Capital of Italy?")
        double.enqueue(Reply(text="Rome."))
        sent = user.findChild(object, "sendEdit")
        qtbot.mouseClick(sent, Qt.MouseButton.LeftButton)
        await until(lambda: len(harness.finished) == 3, what="the edited turn")

        # the old entries are all still there; the shown branch is the new one
        assert harness.ledger.count() > before
        assert _directives(harness, session, branch_only=False) == [
            "Capital of France?", "How many live there?", "Capital of Italy?"
        ]  # fmt: skip
        assert _directives(harness, session, branch_only=True) == ["Capital of Italy?"]
        assert _answers(harness, session) == ["Rome."]
        new_turn = harness.finished[2].turn_id
        assert harness.ledger.entry(new_turn).parent is None  # an alternative of the first turn
        text = harness.chat_text()
        assert "Capital of Italy?" in text and "Rome." in text
        assert "Paris." not in text and "How many live there?" not in text
        # the model was not sent the old branch
        sent_texts = [m["content"] for m in double.chat_bodies()[-1]["messages"]]
        assert not any("Paris." in t or "How many live there" in t for t in sent_texts)

        switcher = chat.user_message(new_turn).findChild(object, "branchPosition")  # type: ignore[union-attr]
        assert switcher.text() == "2/2"
        previous = chat.user_message(new_turn).findChild(object, "branchPrevious")  # type: ignore[union-attr]
        qtbot.mouseClick(previous, Qt.MouseButton.LeftButton)
        text = harness.chat_text()
        assert "Paris." in text and "About two million people." in text and "Rome." not in text
        assert chat.user_message(first).findChild(object, "branchPosition").text() == "1/2"  # type: ignore[union-attr]

        # a message sent while the old branch is shown continues the old branch
        double.enqueue(Reply(text="Yes, the Seine."))
        assert harness.service.send("Is there a river?")
        await until(lambda: len(harness.finished) == 4, what="the turn on the old branch")
        assert _directives(harness, session, branch_only=True) == [
            "Capital of France?", "How many live there?", "Is there a river?"
        ]  # fmt: skip
        assert "Paris." in harness.chat_text() and "Yes, the Seine." in harness.chat_text()


async def test_regenerate_asks_again_and_keeps_the_first_answer(
    double: OllamaDouble, qtbot: Any, ledger_path: Path
) -> None:
    async with open_harness(qtbot, ledger_path, double.url) as harness:
        session = await _two_turns(harness, double)
        chat = harness.window.chat
        second = harness.finished[1].turn_id
        answer = chat.answer_message(second)
        assert answer is not None
        regenerate = answer.findChild(object, "regenerateButton")
        double.enqueue(Reply(text="Roughly 2.1 million."))
        qtbot.mouseClick(regenerate, Qt.MouseButton.LeftButton)
        await until(lambda: len(harness.finished) == 3, what="the regenerated turn")

        new_turn = harness.finished[2].turn_id
        assert harness.ledger.entry(new_turn).parent == harness.ledger.entry(second).parent
        assert _directives(harness, session, branch_only=False) == [
            "Capital of France?", "How many live there?", "How many live there?"
        ]  # fmt: skip
        assert _answers(harness, session) == ["Paris.", "Roughly 2.1 million."]
        everything = [
            e.payload.text
            for e in harness.ledger.entries(session)
            if isinstance(e.payload, AssistantStep)
        ]
        assert "About two million people." in everything  # the first answer stays
        text = harness.chat_text()
        assert "Roughly 2.1 million." in text and "About two million people." not in text
        position = chat.user_message(new_turn).findChild(object, "branchPosition")  # type: ignore[union-attr]
        assert position.text() == "2/2"

        # after a restart the newest branch is what shows, with both versions reachable
        harness.service.open_session(session)
        assert "Roughly 2.1 million." in harness.chat_text()
        assert harness.service.alternatives(new_turn) == (2, 2)
        assert chat.show_alternative(new_turn, -1)
        assert "About two million people." in harness.chat_text()
        assert not chat.show_alternative(second, -1)  # there is nothing before the first


def test_versions_and_chains_are_read_from_one_pass_over_the_entries(tmp_path: Path) -> None:
    from vak_desktop.ledger import Ledger
    from vak_desktop.runtime.sessions.branches import (
        alternatives,
        chain_from,
        newest_leaf,
        version_positions,
    )

    ledger = Ledger.open(tmp_path / "ledger.sqlite3")
    try:
        session = ledger.create_session().id
        first = ledger.append(session, Directive(text="one"))
        answer = ledger.append(session, AssistantStep(text="1"))
        second = ledger.append(session, Directive(text="two"))
        ledger.append(session, AssistantStep(text="2"))
        edited = ledger.append(session, Directive(text="two, edited"), parent=answer.id)
        root = ledger.append(session, Directive(text="one, edited"), parent=None)
        entries = list(ledger.entries(session))
        assert alternatives(entries, second.id) == [second.id, edited.id]
        assert version_positions(entries) == {
            first.id: (1, 2), root.id: (2, 2), second.id: (1, 2), edited.id: (2, 2)
        }  # fmt: skip
        assert chain_from(entries, None) == ledger.chain_to_root(session)
        leaf = newest_leaf(entries, second.id)
        assert [e.payload.text for e in chain_from(entries, leaf)] == ["one", "1", "two", "2"]  # type: ignore[union-attr]
    finally:
        ledger.close()
