"""Rebuilding what a past step sent, from the ledger alone, against what the provider received."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.context.sessions import SessionBuilder, profile
from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.payloads import Receipt
from vak_desktop.context.planning import assemble as assemble_module
from vak_desktop.context.planning.turns import Turn
from vak_desktop.context.request import Message
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import DEFAULT_SYSTEM_PROMPT, ModelBinding, TurnRunner, default_tools
from vak_desktop.runtime.inspection.replay import NotReplayable, sent_request
from vak_desktop.runtime.settings import Settings
from vak_desktop.runtime.turn.prefix_record import PREFIX_SENT

LONG = "A long answer sentence that fills the history. " * 60


async def _turn(runner: TurnRunner, session: str, text: str) -> None:
    binding = ModelBinding(provider="scripted", model="m", details=None)
    async for _ in runner.run(session, text, binding):
        pass


async def test_every_step_of_every_turn_is_rebuilt_exactly_as_sent(ledger: Ledger) -> None:
    provider = ScriptedProvider(
        Scripted(text=LONG),
        Scripted(calls=[("recall", {"turn": 1})]),
        Scripted(text="Turn one was about the long answer."),
        Scripted(text="Third."),
    )
    tools = default_tools()
    runner = TurnRunner(ledger, provider, tools)
    session = ledger.create_session().id
    for text in ("Tell me everything", "What did turn 1 say?", "And now?"):
        await _turn(runner, session, text)

    chain = ledger.chain_to_root(session)
    receipts = [e for e in chain if isinstance(e.payload, Receipt)]
    assert len(receipts) == len(provider.requests) == 4
    turn_ids = [e.id for e in chain if e.kind == "directive"]
    steps = [(turn_ids[0], 0), (turn_ids[1], 0), (turn_ids[1], 1), (turn_ids[2], 0)]
    for (turn_id, step), sent in zip(steps, provider.requests, strict=True):
        rebuilt = sent_request(ledger, session, turn_id, step, system="unused", tools=tools)
        assert rebuilt.request.messages == sent.messages
        assert rebuilt.request.tools == sent.tools
        assert rebuilt.matches
    last = sent_request(ledger, session, turn_ids[2], system="", tools=tools)
    assert last.history_messages == len(last.request.messages) - 3  # system … tail, directive


TODAYS_FORM = assemble_module.current_turn_messages


def _tail_in_directive(turn: Turn, tail: str) -> list[Message]:
    """The current turn as steps sent it before decision 0129: the tail opening the
    directive's message."""
    first, *rest = TODAYS_FORM(turn, "")
    if not tail:
        return [first, *rest]
    return [dataclasses.replace(first, content=f"{tail}\n\n{first.content}"), *rest]


async def test_a_step_sent_with_the_tail_in_the_directive_is_rebuilt_in_that_form(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ledger written before the tail became a message of its own still shows its requests
    as they went out, not in today's form."""
    provider = ScriptedProvider(Scripted(calls=[("recall", {"turn": 1})]), Scripted(text="Done."))
    tools = default_tools()
    runner = TurnRunner(ledger, provider, tools)
    session = ledger.create_session().id
    with monkeypatch.context() as patched:
        patched.setattr(assemble_module, "current_turn_messages", _tail_in_directive)
        await _turn(runner, session, "What did we say?")
    turn_id = ledger.chain_to_root(session)[0].id
    for step, sent in enumerate(provider.requests):
        assert sent.messages[1].content.endswith("\n\nWhat did we say?")  # the old form
        rebuilt = sent_request(ledger, session, turn_id, step, system="unused", tools=tools)
        assert rebuilt.request.messages == sent.messages and rebuilt.matches
        assert rebuilt.history_messages == 0


async def test_a_changed_tool_list_is_reported_not_hidden(ledger: Ledger) -> None:
    provider = ScriptedProvider(Scripted(text="hello"))
    runner = TurnRunner(ledger, provider, default_tools())
    session = ledger.create_session().id
    await _turn(runner, session, "hi")
    turn_id = ledger.chain_to_root(session)[0].id
    rebuilt = sent_request(ledger, session, turn_id, system="", tools=())
    assert not rebuilt.prefix_matches and not rebuilt.matches
    with pytest.raises(NotReplayable, match="step 3"):
        sent_request(ledger, session, turn_id, 3, system="", tools=())


async def test_a_request_with_a_catalogue_is_rebuilt_through_the_registry(
    ledger: Ledger, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("the plan is to ship on Friday\n")
    registry = default_tools(Settings(workspace=(str(tmp_path),)))
    provider = ScriptedProvider(
        Scripted(calls=[("read", {"path": str(tmp_path / "notes.txt")})]),
        Scripted(text="It says Friday."),
    )
    runner = TurnRunner(ledger, provider, registry)
    session = ledger.create_session().id
    await _turn(runner, session, "What does notes.txt say?")
    turn_id = ledger.chain_to_root(session)[0].id
    for step, sent in enumerate(provider.requests):
        rebuilt = sent_request(ledger, session, turn_id, step, system="", tools=registry)
        assert rebuilt.request.messages == sent.messages  # the system text with its catalogue
        assert rebuilt.request.tools == sent.tools
        assert rebuilt.matches
    assert "More tools" in provider.requests[0].messages[0].content
    bare = sent_request(ledger, session, turn_id, system="", tools=registry.specs())
    assert not bare.matches  # every admitted tool and no catalogue is not what was sent


@pytest.mark.parametrize("own_prompt", ["", "You are a terse assistant for my garden notes."])
async def test_a_request_after_a_probe_is_rebuilt_exactly(
    ledger: Ledger, tmp_path: Path, own_prompt: str
) -> None:
    """Once the probe measured a small model, turns send the compact surface (short system
    text, first-sentence tool descriptions): the rebuild through the registry is byte-for-byte
    that request, with or without the chat's own prompt (#25 item 1: it showed a 1,179-character
    system prompt where 353 went out)."""
    (tmp_path / "notes.txt").write_text("the plan is to ship on Friday\n")
    registry = default_tools(Settings(workspace=(str(tmp_path),)))
    provider = ScriptedProvider(
        Scripted(text="Before the probe."),
        Scripted(calls=[("grep", {"pattern": "Friday"})]),
        Scripted(text="It says Friday."),
    )
    kwargs = {"system_prompt": own_prompt} if own_prompt else {}
    runner = TurnRunner(ledger, provider, registry, **kwargs)  # type: ignore[arg-type]
    session = SessionBuilder(ledger)
    await _turn(runner, session.session, "Hello")
    session.append(profile(1_400, provider="scripted", model="m"))  # what the probe stored
    await _turn(runner, session.session, "Search my files for the ship date")
    chain = ledger.chain_to_root(session.session)
    turn_ids = [e.id for e in chain if e.kind == "directive"]
    before, after = provider.requests[0], provider.requests[1]
    assert len(after.messages[0].content) < len(before.messages[0].content)  # compact now
    steps = [(turn_ids[0], 0), (turn_ids[1], 0), (turn_ids[1], 1)]
    base = own_prompt or DEFAULT_SYSTEM_PROMPT
    for (turn_id, step), sent in zip(steps, provider.requests, strict=True):
        rebuilt = sent_request(ledger, session.session, turn_id, step, system=base, tools=registry)
        assert rebuilt.request.messages[0].content == sent.messages[0].content
        assert rebuilt.request.tools == sent.tools
        assert rebuilt.matches, (turn_id, step)


async def test_the_prefix_is_read_back_as_recorded_whatever_changed_since(
    ledger: Ledger, tmp_path: Path
) -> None:
    """Each new system text and schema is recorded once (`prefix_sent`), so a request is
    rebuilt exactly even after the registry, the folders or the profile changed: no guessing
    which form the surface had (#25 item 1)."""
    notes = tmp_path / "notes"
    notes.mkdir()
    registry = default_tools(Settings(workspace=(str(notes),)))
    provider = ScriptedProvider(Scripted(text="One."), Scripted(text="Two."))
    runner = TurnRunner(ledger, provider, registry)
    session = ledger.create_session().id
    await _turn(runner, session, "Hello")
    await _turn(runner, session, "Again")
    chain = ledger.chain_to_root(session)
    recorded = [e for e in chain if getattr(e.payload, "type", "") == PREFIX_SENT]
    assert len(recorded) == 1, "the second turn sent the same prefix: nothing new recorded"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    changed = default_tools(Settings(workspace=(str(elsewhere),)))  # what the app has today
    for turn_id, sent in zip(
        [e.id for e in chain if e.kind == "directive"], provider.requests, strict=True
    ):
        rebuilt = sent_request(ledger, session, turn_id, system="", tools=changed)
        assert rebuilt.request.messages == sent.messages and rebuilt.matches
