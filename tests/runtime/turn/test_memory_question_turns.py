"""A question about the conversation on a small model: no file search is made for it, and
whatever JSON the model writes instead of an answer is never shown as the answer.

Recorded on Qwen2.5-Coder 1.5B over a long imported chat (LoCoMo conv-49, issue #22): asked
"Which country was Evan visiting in May 2023?", Vak searched the (absent) workspace for "2023"
and answered with the error; "How often does Sam get health checkups?" ended as
`{"function": "recall", "arguments": {"turn": 76}}`, and another question as a call of an
invented `recipe_request` tool — each shown as the answer.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.doubles.fixtures import double_fixture, http_fixture  # noqa: F401
from tests.doubles.ollama_model import Reply
from tests.doubles.ollama_server import OllamaDouble
from tests.runtime.turn.test_small_model_turns import _ollama_turn, _payloads
from vak_desktop.context.payloads import AssistantStep, Nudge, ToolResult
from vak_desktop.context.planning.turns import split_turns
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.events import TurnEvent, TurnFinished
from vak_desktop.runtime.turn.answering import REPEAT_CALL

ASKED = "Answer from our conversation in a few words: Which country was Evan visiting in May 2023?"


async def test_a_question_about_the_conversation_naming_a_year_searches_no_files(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        tmp_path,
        Reply(tool_calls=[("session_search", {"query": "Evan visiting May 2023"})]),
        Reply(text="Canada."),
        ask=ASKED,
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    searched = [r.tool_name for r in _payloads(ledger, session, ToolResult)]
    assert searched == ["session_search"]  # the model's own; Vak searched no files
    assert split_turns(ledger.chain_to_root(session))[-1].answer == "Canada."


async def test_a_recall_written_with_a_function_key_runs_as_the_call(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        tmp_path,
        Reply(text="Noted."),
        Reply(text='{"function": "recall", "arguments": {"turn": 1}}'),
        Reply(text="Every three months."),
        ask="Answer from our conversation in a few words: How often does Sam get checkups?",
        said="Sam gets a health checkup every three months.",
    )
    assert isinstance(events[-1], TurnFinished)
    assert [r.tool_name for r in _payloads(ledger, session, ToolResult)] == ["recall"]
    assert split_turns(ledger.chain_to_root(session))[-1].answer == "Every three months."


async def test_a_call_of_an_invented_tool_is_never_the_answer(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    # as recorded: the output limit cut it inside its string
    invented = '{"name": "recipe_request", "arguments": {"recipe": " marinaded vegetables and gr'
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        tmp_path,
        *[Reply(text=invented)] * 8,
        ask="Answer from our conversation in a few words: What recipe did Evan ask Sam for?",
    )
    assert isinstance(events[-1], TurnFinished)
    answer = split_turns(ledger.chain_to_root(session))[-1].answer
    assert "recipe_request" not in answer or not answer.lstrip().startswith("{"), answer
    assert '"arguments"' not in answer, answer
    shown = [s.text for s in _payloads(ledger, session, AssistantStep) if s.text]
    assert shown, "the turn says something"


POTTERY = "When did I sign up for a pottery class?"


async def _pottery_turn(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, folder: Path, *replies: Reply
) -> tuple[str, list[TurnEvent]]:
    """A turn that said "…pottery class yesterday", answered; then `POTTERY` asked, with
    `replies` as the steps of its turn."""
    return await _ollama_turn(
        double,
        http,
        ledger,
        folder,
        Reply(text="Nice!"),
        *replies,
        ask=f"Answer from our conversation in a few words: {POTTERY}",
        said="I just signed up for a pottery class yesterday.",
    )


async def test_the_same_recall_asked_again_is_not_run_and_the_next_step_can_only_answer(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    # as recorded on the 1.5B (conv-26): the same recall again and again, written as text
    again = '{"name": "recall", "arguments": {"turn": 1}}'
    session, events = await _pottery_turn(
        double,
        http,
        ledger,
        tmp_path,
        Reply(tool_calls=[("recall", {"turn": 1})]),
        Reply(text=again),
        Reply(text="The day before you told me."),
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    first, repeat = _payloads(ledger, session, ToolResult)
    assert "yesterday (= " in first.content  # the record says which day "yesterday" was
    assert repeat.tool_name == "recall" and repeat.content.startswith("not run again")
    assert first.evidence.removeprefix("b3:")[:12] in repeat.content
    (nudge,) = _payloads(ledger, session, Nudge)
    assert nudge.tag == REPEAT_CALL and POTTERY in nudge.text
    last = [body for method, path, body in double.requests if path == "/api/chat"][-1]
    assert not last.get("tools"), "the step after a repeat can only answer"
    assert split_turns(ledger.chain_to_root(session))[-1].answer == "The day before you told me."


async def test_a_repeat_beside_a_new_call_runs_both(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    session, _ = await _pottery_turn(
        double,
        http,
        ledger,
        tmp_path,
        Reply(tool_calls=[("recall", {"turn": 1})]),
        Reply(tool_calls=[("recall", {"turn": 1}), ("session_search", {"query": "pottery"})]),
        Reply(text="Yesterday."),
    )
    results = _payloads(ledger, session, ToolResult)
    assert [r.tool_name for r in results] == ["recall", "recall", "session_search"]
    assert not any(r.content.startswith("not run again") for r in results)
    assert not _payloads(ledger, session, Nudge)


async def test_an_empty_step_after_results_is_told_the_request_again(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    session, _ = await _pottery_turn(
        double,
        http,
        ledger,
        tmp_path,
        Reply(tool_calls=[("recall", {"turn": 1})]),
        Reply(text=""),
        Reply(text="Yesterday."),
    )
    (nudge,) = _payloads(ledger, session, Nudge)
    assert nudge.tag == "empty-step" and POTTERY in nudge.text
    assert split_turns(ledger.chain_to_root(session))[-1].answer == "Yesterday."


async def test_the_question_asked_back_gets_one_redo_and_is_never_the_answer(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    # as recorded on the 1.5B (LoCoMo conv-41): a find_tools call, the same again, then the
    # question written back as the answer
    asked = "Answer from our conversation in a few words: Which country was Evan visiting?"
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        tmp_path,
        Reply(text="Which country was Evan visiting?"),
        Reply(text="Canada."),
        ask=asked,
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    (nudge,) = _payloads(ledger, session, Nudge)
    assert nudge.tag == "plain-answer" and "the user's question asked back" in nudge.text
    last = [body for method, path, body in double.requests if path == "/api/chat"][-1]
    assert not last.get("tools"), "the redo can only answer"
    assert split_turns(ledger.chain_to_root(session))[-1].answer == "Canada."
