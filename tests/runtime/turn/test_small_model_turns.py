"""A turn on a small model ends in an answer (issue #22 item 4), over real loopback servers.

Each double is scripted the way Qwen2.5-Coder 0.5B and 1.5B behaved on the planted-fact case:
tools it invented (`search_files`, `read_file`) and arguments it renamed (`q`), calls written
as text (`<tool_call>` tags through a llama.cpp-style OpenAI server), folders it made up, the
tool list printed as the answer, and tool calls that never stop.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.doubles.fixtures import TOOL_MODEL, double_fixture, http_fixture  # noqa: F401
from tests.doubles.ollama_model import Reply
from tests.doubles.ollama_server import OllamaDouble
from tests.doubles.openai_server import SSE, OpenAIDouble, text_chunks, tool_call_chunks
from vak_desktop.context.evidence.call_repair import TOOL_CALL_REPAIRED
from vak_desktop.context.evidence.text_calls import TEXT_FORM_CALL
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    CapacityProfile,
    Ewma,
    Horizon,
    Nudge,
    ToolResult,
)
from vak_desktop.context.planning.actions import ACTION_CHECK
from vak_desktop.context.planning.turns import split_turns
from vak_desktop.ledger import Ledger
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.providers.openai_compatible import OpenAICompatibleProvider
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools
from vak_desktop.runtime.capacity.binding import bind_model
from vak_desktop.runtime.events import TextChunk, TurnEvent, TurnFinished
from vak_desktop.runtime.settings import Settings
from vak_desktop.runtime.turn.answering import (
    ANSWER_CHECK,
    ANSWER_GROUNDING,
    ANSWER_NOW,
    COMPOSED,
    PLAIN_ANSWER,
    RUNTIME_READ,
    RUNTIME_SEARCH,
    SMALL_STEPS,
    WITHHELD,
)
from vak_desktop.runtime.turn.loop import CALL_TOKENS
from vak_desktop.runtime.turn.markup import MARKUP_CUT

CODE = "ZX-4471-Q"
ASK = "Search my files for the shipment code I gave you earlier and tell me which file has it."


def _files(root: Path) -> Path:
    folder = root / "files"
    (folder / "shipping").mkdir(parents=True)
    (folder / "shipping" / "manifest.txt").write_text(f"Shipment {CODE}: 40 crates.\n")
    (folder / "notes.md").write_text("# Notes\nNothing about shipments here.\n")
    return folder


def _small(binding: ModelBinding) -> CapacityProfile:
    """A measured profile of a small model (horizon 4,096: under `SMALL_HORIZON`)."""
    return CapacityProfile(
        provider=binding.provider,
        model=binding.model,
        quantisation=binding.details.quantisation if binding.details else "",
        declared_window=32_768,
        instruction_horizon=Horizon(4_096, 0.9, "2026-12-01T00:00:00Z"),
        output_reserve=256,
        tokens_per_char=Ewma(0.3, 5),
        provenance={"source": "test", "probed_at": "2026-12-01T00:00:00Z"},
    )


def _large(binding: ModelBinding) -> CapacityProfile:
    """The same with a horizon of 65,536 tokens: not a small model."""
    return dataclasses.replace(
        _small(binding), instruction_horizon=Horizon(65_536, 0.9, "2026-12-01T00:00:00Z")
    )


async def _turn(runner: TurnRunner, session: str, binding: ModelBinding) -> list[TurnEvent]:
    return [e async for e in runner.run(session, ASK, binding)]


def _payloads(ledger: Ledger, session: str, kind: type) -> list[Any]:
    return [e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, kind)]


def _activities(ledger: Ledger, session: str, kind: str) -> list[Activity]:
    return [a for a in _payloads(ledger, session, Activity) if a.type == kind]


async def _ollama_turn(
    double: OllamaDouble,
    http: httpx.AsyncClient,
    ledger: Ledger,
    folder: Path,
    *replies: Reply,
    ask: str = ASK,
    said: str = "",
    small: bool = True,
) -> tuple[str, list[TurnEvent]]:
    """`ask` in a new session over the Ollama double, on a small profile (`small`) or a large
    one; `said` (when given) is a turn of its own before it. The replies serve both."""
    double.enqueue(*replies)
    provider = OllamaProvider(http, double.url)
    binding = await bind_model(provider, TOOL_MODEL)
    runner = TurnRunner(ledger, provider, default_tools(Settings(workspace=(str(folder),))))
    session = ledger.create_session().id
    ledger.append(session, _small(binding) if small else _large(binding))
    if said:
        _ = [e async for e in runner.run(session, said, binding)]
    return session, [e async for e in runner.run(session, ask, binding)]


async def _openai_turn(
    ledger: Ledger, folder: Path, *replies: SSE
) -> tuple[str, list[TurnEvent], list[dict[str, Any]]]:
    """`ASK` in a new session over a llama.cpp-style OpenAI double, on a small profile; also
    the chat request bodies the server received, in order."""
    with OpenAIDouble(models=("qwen",), windows={"qwen": 32_768}) as server:
        server.script(*replies)
        async with httpx.AsyncClient(timeout=30) as client:
            provider = OpenAICompatibleProvider(client, server.url)
            binding = await bind_model(provider, "qwen")
            runner = TurnRunner(ledger, provider, default_tools(Settings(workspace=(str(folder),))))
            session = ledger.create_session().id
            ledger.append(session, _small(binding))
            events = await _turn(runner, session, binding)
        bodies = [body for _, target, _, body in server.requests if "chat" in target]
    return session, events, bodies


async def test_an_invented_tool_and_argument_run_as_the_real_ones_and_the_find_is_answered(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    folder = _files(tmp_path)
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        folder,
        Reply(tool_calls=[("search_files", {"q": CODE})]),
        Reply(text="The code is in shipping/manifest.txt."),
    )
    finished = events[-1]
    assert isinstance(finished, TurnFinished) and finished.outcome == "completed"
    (repair,) = _activities(ledger, session, TOOL_CALL_REPAIRED)
    (fixed,) = repair.detail["repairs"]
    assert fixed["written"] == {"name": "search_files", "arguments": {"q": CODE}}
    assert fixed["ran"] == {"name": "grep", "arguments": {"pattern": CODE}}
    result, read = _payloads(ledger, session, ToolResult)
    assert not result.is_error and "shipping/manifest.txt:1:" in result.content
    steps = _payloads(ledger, session, AssistantStep)
    assert [c.name for c in steps[0].tool_calls] == ["grep"]  # the history shows the real call
    # on a small model Vak reads the short file the search found, as its own step
    (reading,) = _activities(ledger, session, RUNTIME_READ)
    assert reading.detail["call"]["arguments"] == {"path": "shipping/manifest.txt"}
    assert steps[1].model == "vak" and read.content.startswith(f"Shipment {CODE}")
    # the step after the find is told to answer with it, as the request's last message, in
    # words (grep's `path:line:` form was searched for again by the 0.5B)
    second = double.chat_bodies()[1]["messages"]
    assert second[-1]["role"] == "user" and second[-1]["content"].startswith(f"[{ANSWER_CHECK}]")
    assert f"shipping/manifest.txt, line 1: “Shipment {CODE}: 40 crates.”" in second[-1]["content"]
    assert [n.tag for n in _payloads(ledger, session, Nudge)] == [ANSWER_CHECK]


async def test_the_workspace_is_named_and_an_invented_folder_searches_it_all(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    folder = _files(tmp_path)
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        folder,
        Reply(tool_calls=[("grep", {"pattern": CODE, "path": "path/to/your/files"})]),
        Reply(text="It is in shipping/manifest.txt."),
    )
    system = double.chat_bodies()[0]["messages"][0]["content"]
    assert str(folder.resolve()) in system  # the model is told where the files are
    result = _payloads(ledger, session, ToolResult)[0]
    assert not result.is_error and "shipping/manifest.txt:1:" in result.content
    assert "no folder 'path/to/your/files'" in result.content  # and that it searched all
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"


async def test_a_call_in_qwen_tags_through_a_llama_server_is_repaired_and_run(
    ledger: Ledger, tmp_path: Path
) -> None:
    folder = _files(tmp_path)
    tagged = (
        '<tool_call>\n{"name": "read_file", "arguments": {"file_path": '
        '"shipping/manifest.txt"}}\n</tool_call>'
    )
    session, events, _ = await _openai_turn(
        ledger, folder, SSE(text_chunks(tagged)), SSE(text_chunks("It is shipping/manifest.txt."))
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert _activities(ledger, session, TEXT_FORM_CALL)
    (repair,) = _activities(ledger, session, TOOL_CALL_REPAIRED)
    assert repair.detail["repairs"][0]["ran"] == {
        "name": "read",
        "arguments": {"path": "shipping/manifest.txt"},
    }
    (result,) = _payloads(ledger, session, ToolResult)
    assert CODE in result.content and not result.is_error
    answer = _payloads(ledger, session, AssistantStep)[-1]
    assert answer.text == "It is shipping/manifest.txt." and "{" not in answer.text


async def test_a_tool_list_printed_as_the_answer_is_asked_again_without_tools(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    folder = _files(tmp_path)
    printed = json.dumps(
        [{"name": "grep", "description": "Search files", "parameters": {"type": "object"}}]
    )
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        folder,
        Reply(tool_calls=[("grep", {"pattern": CODE})]),
        Reply(text=f"```json\n{printed}\n```"),
        Reply(text="shipping/manifest.txt holds it."),
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert [n.tag for n in _payloads(ledger, session, Nudge)] == [ANSWER_CHECK, PLAIN_ANSWER]
    bodies = double.chat_bodies()
    assert bodies[1].get("tools") and not bodies[2].get("tools")  # the re-ask can only answer
    assert _payloads(ledger, session, AssistantStep)[-1].text == "shipping/manifest.txt holds it."


async def test_a_raw_json_call_left_twice_is_never_the_answer(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    folder = _files(tmp_path)
    raw = '{"name": "grep", "arguments": ["ZX"]}'  # call-shaped, but no call anyone can run
    session, events = await _ollama_turn(
        double, http, ledger, folder, Reply(text=raw), Reply(text=raw)
    )
    finished = events[-1]
    assert isinstance(finished, TurnFinished) and finished.outcome == "degraded"
    last = _payloads(ledger, session, AssistantStep)[-1]
    assert last.model == "vak" and "`grep`" in last.text and "nothing was actually" in last.text
    # the asked-for search not made comes first: one action-check, then the close
    assert [n.tag for n in _payloads(ledger, session, Nudge)] == [ACTION_CHECK]
    turn = split_turns(ledger.chain_to_root(session))[-1]
    assert "{" not in turn.answer and len(_activities(ledger, session, WITHHELD)) == 2


async def test_a_small_models_endless_calls_end_in_one_answer_step_without_tools(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    folder = _files(tmp_path)
    listing = Reply(tool_calls=[("glob", {"pattern": "*.txt"})])  # a listing is no answer
    lost = [Reply(tool_calls=[("glob", {"pattern": f"invoices{n}/*"})]) for n in range(10)]
    session, events = await _ollama_turn(
        double, http, ledger, folder, listing, *lost[: SMALL_STEPS - 2], Reply(text="No code.")
    )
    finished = events[-1]
    assert isinstance(finished, TurnFinished) and finished.outcome == "completed"
    bodies = double.chat_bodies()
    assert len(bodies) == SMALL_STEPS
    assert all(b.get("tools") for b in bodies[:-1]) and not bodies[-1].get("tools")
    assert bodies[-1]["messages"][-1]["content"].startswith(f"[{ANSWER_NOW}]")
    assert _payloads(ledger, session, AssistantStep)[-1].text == "No code."
    assert [n.tag for n in _payloads(ledger, session, Nudge)] == [ANSWER_NOW]


async def test_an_answer_step_that_calls_again_closes_with_a_statement(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    folder = _files(tmp_path)
    lost = [Reply(tool_calls=[("glob", {"pattern": f"invoices{n}/*"})]) for n in range(10)]
    session, events = await _ollama_turn(double, http, ledger, folder, *lost)
    finished = events[-1]
    assert isinstance(finished, TurnFinished) and finished.outcome == "degraded"
    assert len(double.chat_bodies()) == SMALL_STEPS
    last = _payloads(ledger, session, AssistantStep)[-1]
    assert last.model == "vak" and "`glob`" in last.text
    assert len(_payloads(ledger, session, ToolResult)) == SMALL_STEPS - 1  # the last not run


async def test_the_tool_list_printed_in_prose_is_not_the_answer(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    folder = _files(tmp_path)
    specs = default_tools(Settings(workspace=(str(folder),))).specs()
    listed = "I can use these tools:\n" + "\n".join(f"- {s.name}: {s.description}" for s in specs)
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        folder,
        Reply(tool_calls=[("grep", {"pattern": CODE})]),
        Reply(text=listed),
        Reply(text="shipping/manifest.txt has it."),
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert [n.tag for n in _payloads(ledger, session, Nudge)] == [ANSWER_CHECK, PLAIN_ANSWER]
    assert not double.chat_bodies()[2].get("tools")


async def test_an_answer_that_says_nothing_of_the_find_is_asked_again(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    """The 1.5B echoed an earlier turn's "Got it, …" after its search had found the file."""
    folder = _files(tmp_path)
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        folder,
        Reply(tool_calls=[("grep", {"pattern": CODE})]),
        Reply(text="Got it, I will keep the shipment code in mind."),
        Reply(text="The code is in shipping/manifest.txt."),
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert [n.tag for n in _payloads(ledger, session, Nudge)] == [ANSWER_CHECK, ANSWER_GROUNDING]
    third = double.chat_bodies()[2]["messages"][-1]["content"]
    assert third.startswith(f"[{ANSWER_GROUNDING}]") and "shipping/manifest.txt:1:" in third
    assert _payloads(ledger, session, AssistantStep)[-1].text.endswith("shipping/manifest.txt.")


RAW = '{"name": "grep", "arguments": ["portions"]}'  # call-shaped, nothing anyone can run
LOCKER_ASK = "Which file of mine has the locker code? Tell me the file's name."


async def test_a_reply_that_is_no_answer_is_withheld_and_the_find_answers_for_it(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    """Recorded on the 0.5B: after a search that found the file, the replies were the
    loop's own nudge echoed, then a tool's name alone. The turn must not show either."""
    folder = _files(tmp_path)
    echoed = (
        "[answer-now] This turn has used its steps. Answer the user now, in plain words, "
        "from what the tool results above show."
    )
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        folder,
        Reply(tool_calls=[("grep", {"pattern": CODE})]),
        Reply(text=echoed),
        Reply(text="grep"),
    )
    finished = events[-1]
    assert isinstance(finished, TurnFinished) and finished.outcome == "degraded"
    assert [n.tag for n in _payloads(ledger, session, Nudge)] == [ANSWER_CHECK, PLAIN_ANSWER]
    turn = split_turns(ledger.chain_to_root(session))[-1]
    assert turn.answer.startswith(COMPOSED.format(tool="grep"))  # the only text shown
    assert "found in shipping/manifest.txt" in turn.answer and CODE in turn.answer
    assert "[answer-now]" not in turn.answer and "grep\n" not in turn.answer
    kept = _activities(ledger, session, WITHHELD)
    assert [a.detail["text"] for a in kept] == [echoed, "grep"]  # what was said is kept
    # the next request does not show the model its echo again
    third = double.chat_bodies()[2]["messages"]
    assert not any("[answer-now]" in str(m.get("content")) for m in third)


async def test_a_which_file_question_answered_by_grep_is_told_to_answer_with_it(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    """ "Which file … has" reads as a listing (glob first); grep's lines still answer it."""
    folder = _files(tmp_path)
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        folder,
        Reply(tool_calls=[("grep", {"pattern": CODE})]),
        Reply(text="shipping/manifest.txt"),
        ask=LOCKER_ASK,
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert [n.tag for n in _payloads(ledger, session, Nudge)] == [ANSWER_CHECK]


async def test_an_unperformed_search_is_withheld_and_the_redo_must_call(
    ledger: Ledger, tmp_path: Path
) -> None:
    """Recorded on the 0.5B (locker, try 1): a report of a search it never made, then, told
    to call `glob`, the word "glob". The report is not shown; the redo is sent with
    `tool_choice: required`, naming grep and its argument; its call runs and is answered."""
    folder = _files(tmp_path)
    claimed = (
        "After searching the directories, I found the file `/home/user/documents/logs/"
        "auth12.log` which has the code."
    )
    call = [("c1", "grep", json.dumps({"pattern": CODE}))]
    session, events, bodies = await _openai_turn(
        ledger,
        folder,
        SSE(text_chunks(claimed)),
        SSE(tool_call_chunks(call)),
        SSE(text_chunks("It is in shipping/manifest.txt.")),
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert [n.tag for n in _payloads(ledger, session, Nudge)] == [ACTION_CHECK, ANSWER_CHECK]
    assert "tool_choice" not in bodies[0] and bodies[1]["tool_choice"] == "required"
    assert bodies[1]["max_tokens"] == CALL_TOKENS  # a call is short; babble after it is not
    assert (
        "Call the `grep` tool (or `glob`) now with `pattern`"
        in bodies[1]["messages"][-1]["content"]
    )
    assert "tool_choice" not in bodies[2]
    turn = split_turns(ledger.chain_to_root(session))[-1]
    assert turn.answer == "It is in shipping/manifest.txt."  # the invented report not shown
    (kept,) = _activities(ledger, session, WITHHELD)
    assert kept.detail["text"] == claimed


@pytest.mark.parametrize("small", [True, False], ids=["small", "large"])
async def test_a_search_the_model_will_not_make_is_run_by_vak_for_the_value_referred_to(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path, small: bool
) -> None:
    """Recorded on the 0.5B: told to call the tool, it wrote the tool's name, or repeated a
    card line. Vak greps for the value of the earlier message the request refers to — on a
    small model at once (its repair step was a call in 0 of 6 tries on two cases), on any
    other after that one repair — and the model is told to answer with the find."""
    folder = _files(tmp_path)
    claim = Reply(text="The code is in /home/user/documents/logs/auth12.log.")
    repair = [Reply(text="glob")] if not small else []
    answer = Reply(text="It is in shipping/manifest.txt.")
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        folder,
        *[Reply(text="Noted."), claim, *repair, answer],
        said=f"My shipment code is {CODE}.",
        small=small,
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    (searched,) = _activities(ledger, session, RUNTIME_SEARCH)
    assert searched.detail["call"] == {"name": "grep", "arguments": {"pattern": "ZX\\-4471\\-Q"}}
    steps = _payloads(ledger, session, AssistantStep)
    made = [s for s in steps if s.tool_calls]
    assert made[0].model == "vak" and made[0].done_reason == "runtime_call"
    assert len(made) == (2 if small else 1)  # a small model's found file is read too
    tags = [n.tag for n in _payloads(ledger, session, Nudge)]
    assert tags == ([ANSWER_CHECK] if small else [ACTION_CHECK, ANSWER_CHECK])
    turn = split_turns(ledger.chain_to_root(session))[-1]
    assert turn.answer == "It is in shipping/manifest.txt."
    failed = [a.detail["instruction"] for a in _activities(ledger, session, "instruction_failed")]
    assert failed == ["call the `grep` tool the request asks for"] * (1 if small else 2)


async def test_the_text_beside_a_call_is_withheld_when_it_is_no_answer(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    """Recorded on the 0.5B (shipment, 2026-12-02): its call as text, then grep's
    description paraphrased until the output cap; the call ran and the rest was shown."""
    folder = _files(tmp_path)
    babble = (
        f'{{"name": "grep", "arguments": {{"pattern": "{CODE}"}}}}. This tool searches the '
        "text files in the user's workspace folders for a regular expression (Python syntax) "
        "that matches the shipment code. The results are returned as path:line: text."
    )
    session, events = await _ollama_turn(
        double, http, ledger, folder, Reply(text=babble), Reply(text="shipping/manifest.txt")
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert [r.tool_name for r in _payloads(ledger, session, ToolResult)] == ["grep", "read"]
    turn = split_turns(ledger.chain_to_root(session))[-1]
    assert turn.answer == "shipping/manifest.txt"
    # what followed the call was written before its result: not the step's text, kept whole
    assert _payloads(ledger, session, AssistantStep)[0].text == ""
    (adopted,) = _activities(ledger, session, TEXT_FORM_CALL)
    assert "This tool searches" in adopted.detail["text"]


@pytest.mark.parametrize(
    "replies",
    [
        [Reply(text=RAW), Reply(text=RAW)],
        # recorded on the 0.5B (venue): the address line answered back, twice
        [Reply(text="mail/caterer.txt, line 1: “From: j.berg@harbourfood.example”.")] * 2,
    ],
    ids=["raw-call", "the-match-answered-back"],
)
async def test_the_found_file_is_read_and_its_lines_answer_what_the_match_does_not(
    double: OllamaDouble,
    http: httpx.AsyncClient,
    ledger: Ledger,
    tmp_path: Path,
    replies: list[Reply],
) -> None:
    """The planted value is only the way to the file: "how many portions does that message
    confirm" is answered by the line after the address searched for. On a small model Vak
    reads the short file the search found; the answer-check names that line, and when the
    model still leaves no answer, Vak's composed answer quotes it."""
    folder = tmp_path / "files"
    (folder / "mail").mkdir(parents=True)
    (folder / "mail" / "caterer.txt").write_text(
        "From: j.berg@harbourfood.example\nConfirmed: 120 portions for Saturday.\n"
    )
    (folder / "mail" / "old.txt").write_text("From: someone@else.example\nMaybe 80.\n")
    ask = (
        "Search my files for the caterer's contact address I gave you and tell me how many "
        "portions that message confirms."
    )
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        folder,
        *[Reply(text="Noted."), Reply(text="Sure."), *replies],
        ask=ask,
        said="The caterer's contact is j.berg@harbourfood.example, keep it.",
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "degraded"
    assert [r.tool_name for r in _payloads(ledger, session, ToolResult)] == ["grep", "read"]
    check = double.chat_bodies()[2]["messages"][-1]["content"]
    assert check.startswith(f"[{ANSWER_CHECK}]")
    assert "line 2: “Confirmed: 120 portions for Saturday.”" in check
    answer = _payloads(ledger, session, AssistantStep)[-1]
    assert answer.model == "vak" and answer.text.startswith(COMPOSED.format(tool="grep"))
    assert "mail/caterer.txt, line 2: “Confirmed: 120 portions for Saturday.”" in answer.text
    assert "Maybe 80" not in answer.text


async def test_an_answer_from_the_read_lines_is_an_answer_without_the_line_that_led_there(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    """Recorded on the 1.5B (venue): told the find and the read file's bearing line, the model
    answered "The hall is booked for 46 guests on 12 June." That answers "how many guests";
    it was asked again and then Vak composed an answer "silent on what the search found"."""
    folder = tmp_path / "files"
    (folder / "mail").mkdir(parents=True)
    (folder / "mail" / "caterer.txt").write_text(
        "From: j.berg@harbourfood.example\nConfirmed: 120 portions for Saturday.\n"
    )
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        folder,
        Reply(text="Noted."),  # the earlier turn's answer
        Reply(text="Sure."),  # the first step: no call, so Vak searches and reads at once
        Reply(text="120 portions are confirmed for Saturday."),
        ask=(
            "Search my files for the caterer's contact address I gave you and tell me how "
            "many portions that message confirms."
        ),
        said="The caterer's contact is j.berg@harbourfood.example, keep it.",
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert [n.tag for n in _payloads(ledger, session, Nudge)] == [ANSWER_CHECK]
    turn = split_turns(ledger.chain_to_root(session))[-1]
    assert turn.answer.endswith("120 portions are confirmed for Saturday.")
    assert _payloads(ledger, session, AssistantStep)[-1].model != "vak"


async def test_a_which_file_answer_that_does_not_name_the_file_is_asked_again(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    """Recorded on the 0.5B (locker): told to answer with the find, it quoted the line and
    left out the file the request asked for. That is no answer to "which file"."""
    folder = _files(tmp_path)
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        folder,
        Reply(tool_calls=[("grep", {"pattern": CODE})]),
        Reply(text=f"Shipment {CODE}: 40 crates."),
        Reply(text="It is shipping/manifest.txt."),
        ask=LOCKER_ASK,
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    tags = [n.tag for n in _payloads(ledger, session, Nudge)]
    assert tags == [ANSWER_CHECK, ANSWER_GROUNDING]
    turn = split_turns(ledger.chain_to_root(session))[-1]
    assert turn.answer.endswith("It is shipping/manifest.txt.")


async def test_a_step_that_can_only_answer_keeps_its_tools_where_tool_choice_is_sent(
    ledger: Ledger, tmp_path: Path
) -> None:
    """On an OpenAI-compatible server (llama.cpp) the re-ask says `tool_choice: "none"` and
    keeps the tools: the template renders them either way, so the cached prefix holds."""
    folder = _files(tmp_path)
    printed = json.dumps([{"name": "grep", "description": "Search files", "parameters": {}}])
    call = [("c1", "grep", json.dumps({"pattern": CODE}))]
    session, events, bodies = await _openai_turn(
        ledger,
        folder,
        SSE(tool_call_chunks(call)),
        SSE(text_chunks(f"```json\n{printed}\n```")),
        SSE(text_chunks("shipping/manifest.txt holds it.")),
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert [n.tag for n in _payloads(ledger, session, Nudge)] == [ANSWER_CHECK, PLAIN_ANSWER]
    assert bodies[2]["tool_choice"] == "none" and bodies[2]["tools"] == bodies[1]["tools"]
    assert "tool_choice" not in bodies[1]


async def test_a_small_models_failed_searches_get_vaks_and_calls_after_the_find_get_one_answer_step(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    """Recorded on the 0.5B (shipment, 2026-12-02): grep called without a pattern four times
    over; and, told to answer with the find, the same grep, the read and `recall` until the
    step budget. Vak searches for the value the request names once the model's own searches
    found nothing, and after the find one step without tools must answer."""
    folder = _files(tmp_path)
    broken = Reply(tool_calls=[("grep", {"path": "."})])  # no pattern: an error
    again = Reply(tool_calls=[("grep", {"pattern": CODE})])
    ask = f"Search my files for the shipment code {CODE} and tell me which file has it."
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        folder,
        broken,
        again,
        Reply(text="It is in shipping/manifest.txt."),
        ask=ask,
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    (searched,) = _activities(ledger, session, RUNTIME_SEARCH)
    assert searched.detail["call"]["arguments"] == {"pattern": "ZX\\-4471\\-Q"}
    check, now = _payloads(ledger, session, Nudge)
    assert (check.tag, now.tag) == (ANSWER_CHECK, ANSWER_NOW)
    # the step that can only answer is told the find again, with where it is: told only
    # "from what the tool results above show", the 0.5B named no file (2026-12-05)
    assert "shipping/manifest.txt, line 1: “Shipment ZX-4471-Q: 40 crates.”" in now.text
    bodies = double.chat_bodies()
    assert len(bodies) == 3 and bodies[1].get("tools") and not bodies[2].get("tools")
    assert (
        split_turns(ledger.chain_to_root(session))[-1].answer == "It is in shipping/manifest.txt."
    )


async def test_a_model_silent_after_the_find_gets_the_composed_answer(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    """Recorded on the 0.5B (venue, 2026-12-02): told to answer with the find, empty twice;
    the turn closed with "the model returned no answer" while the find was in hand."""
    folder = _files(tmp_path)
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        folder,
        Reply(tool_calls=[("grep", {"pattern": CODE})]),
        Reply(text=""),
        Reply(text=""),
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "degraded"
    answer = _payloads(ledger, session, AssistantStep)[-1]
    assert answer.model == "vak" and answer.text.startswith(COMPOSED.format(tool="grep"))
    assert "shipping/manifest.txt, line 1" in answer.text


async def test_qwens_tools_tag_opening_an_answer_is_cut_from_the_stream_and_the_answer(
    ledger: Ledger, tmp_path: Path
) -> None:
    """The real 1.5B opened answers with its template's bare `<tools>` tag (issue #22): the
    words after it are the answer, shown without the tag and not asked again; the text as
    written is kept in an Activity."""
    folder = _files(tmp_path)
    call = tool_call_chunks([("c1", "grep", json.dumps({"pattern": CODE}))])
    written = "<tools>\n\nIt is shipping/manifest.txt."
    session, events, bodies = await _openai_turn(
        ledger, folder, SSE(call), SSE(text_chunks(written, chunk_chars=3))
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    shown = "".join(e.text for e in events if isinstance(e, TextChunk))
    assert shown == "It is shipping/manifest.txt."
    assert _payloads(ledger, session, AssistantStep)[-1].text == "It is shipping/manifest.txt."
    (cut,) = _activities(ledger, session, MARKUP_CUT)
    assert cut.detail["text"] == written
    assert len(bodies) == 2  # the answer was taken, not redone


async def test_a_listing_without_the_value_asked_for_is_no_find(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    """Recorded on the 0.5B (locker, fresh chat, 2026-12-05): asked which file has the value
    the request gives, it listed `**/*.md`, and the listing was taken as the find; the turn
    ended with Vak's answer naming a file that does not hold the value. A result without the
    value found nothing: Vak greps for it, and the model answers with that."""
    folder = _files(tmp_path)
    session, events = await _ollama_turn(
        double,
        http,
        ledger,
        folder,
        Reply(tool_calls=[("glob", {"pattern": "**/*.md"})]),
        Reply(text="It is in shipping/manifest.txt."),
        ask=f"Which file of mine has the shipment code {CODE}? Tell me the file's name.",
    )
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    (listing,) = [r for r in _payloads(ledger, session, ToolResult) if r.tool_name == "glob"]
    assert listing.content == "notes.md"
    (searched,) = _activities(ledger, session, RUNTIME_SEARCH)
    assert searched.detail["call"]["arguments"] == {"pattern": "ZX\\-4471\\-Q"}
    (check,) = [n for n in _payloads(ledger, session, Nudge) if n.tag == ANSWER_CHECK]
    assert "shipping/manifest.txt" in check.text and "notes.md" not in check.text
    turn = split_turns(ledger.chain_to_root(session))[-1]
    assert turn.answer == "It is in shipping/manifest.txt."
