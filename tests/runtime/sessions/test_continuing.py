"""Continue in a new chat (issue 25 item 7): a new session holding one message version's
branch through its turn, linked by `derived_from`, a chain of its own that verifies, on a real
SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest

from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    Directive,
    EvidenceBody,
    ToolCall,
    ToolResult,
)
from vak_desktop.ledger import HasDerivedSessions, Ledger
from vak_desktop.runtime.sessions.continuing import continue_in_new_chat
from vak_desktop.runtime.sessions.transcripts import session_turns


def _turn(store: Ledger, session: str, ask: str, answer: str, parent: object = None) -> str:
    kwargs = {} if parent is None else {"parent": parent}
    directive = store.append(session, Directive(text=ask), **kwargs)
    store.append(session, AssistantStep(text=answer, model="m"))
    store.append(session, Activity(type="turn_closed", detail={"outcome": "completed"}))
    return directive.id


@pytest.fixture
def store(tmp_path: Path) -> Ledger:
    ledger = Ledger.open(tmp_path / "ledger.sqlite3")
    yield ledger
    ledger.close()


def _branched(store: Ledger) -> tuple[str, str, str, str]:
    """Turn 1 with a tool call; turn 2 in two versions, the second with a turn 3 after it."""
    session = store.create_session("Trip plans").id
    store.append(session, Directive(text="what does notes.txt say"))
    call = ToolCall(id="c1", name="read_file", arguments={"path": "notes.txt"})
    store.append(session, AssistantStep(tool_calls=(call,), model="m"))
    body = store.append(session, EvidenceBody("c1", "read_file", "pack a coat", 11))
    store.append(session, ToolResult("c1", "read_file", "pack a coat", body.id, 11))
    store.append(session, AssistantStep(text="It says: pack a coat.", model="m"))
    after_one = store.append(session, Activity(type="turn_closed", detail={}))
    first = _turn(store, session, "and Lisbon?", "Lisbon is mild.")
    second = _turn(store, session, "and Oslo?", "Oslo is cold.", parent=after_one.id)
    _turn(store, session, "what to wear there?", "Wool.")
    return session, after_one.id, first, second


def test_a_new_chat_holds_that_version_through_its_turn(store: Ledger) -> None:
    session, _, first, second = _branched(store)

    made = continue_in_new_chat(store, session, first)

    assert made.derived_from == session
    assert store.session(made.id).derived_from == session
    assert made.title == "Trip plans (continued)"
    turns = session_turns(store, made.id)
    assert [t.directive.text for t in turns] == ["what does notes.txt say", "and Lisbon?"]
    assert "Lisbon is mild." in [
        e.payload.text for e in turns[1].entries if isinstance(e.payload, AssistantStep)
    ]
    # the old session is untouched, still on its newest branch
    assert [t.directive.text for t in session_turns(store, session)][-1] == "what to wear there?"

    newer = continue_in_new_chat(store, session, second)
    texts = [t.directive.text for t in session_turns(store, newer.id)]
    assert texts == ["what does notes.txt say", "and Oslo?"]  # not turn 3, not Lisbon

    report = store.verify()
    assert report.ok and report.sessions == 3


def test_copied_references_name_the_copies(store: Ledger) -> None:
    session, _, first, _ = _branched(store)
    made = continue_in_new_chat(store, session, first)
    entries = list(store.entries(made.id))
    ids = {e.id for e in entries}
    result = next(e.payload for e in entries if isinstance(e.payload, ToolResult))
    assert result.evidence in ids  # the evidence copy of this session, not the old one
    old = {e.id for e in store.entries(session)}
    assert not ids & old
    directive = next(e for e in entries if isinstance(e.payload, Directive))
    original = next(e for e in store.entries(session) if isinstance(e.payload, Directive))
    assert directive.payload.said_at == original.created_at  # when it was said, kept


def test_the_origin_is_deleted_only_with_its_continuations(store: Ledger) -> None:
    session, _, first, _ = _branched(store)
    made = continue_in_new_chat(store, session, first)
    with pytest.raises(HasDerivedSessions):
        store.delete_session(session)
    store.delete_session(made.id)  # a continuation goes on its own
    store.delete_session(session)
    assert store.sessions(include_archived=True) == []
    assert store.verify().ok


def test_an_entry_of_another_session_is_refused_and_nothing_is_written(store: Ledger) -> None:
    session, _, _, _ = _branched(store)
    with pytest.raises(KeyError):
        continue_in_new_chat(store, session, "b3:nothing-like-it")
    assert len(store.sessions()) == 1
