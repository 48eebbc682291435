"""Drift checks in running turns: a stale live-data card and a topic-mismatched card are each
intercepted, repaired once, then fail closed (against the loopback Ollama double); the prose
and repair paths and model drift with the scripted provider."""

from __future__ import annotations

import json

import httpx

from tests.doubles.fixtures import TOOL_MODEL, double_fixture, http_fixture  # noqa: F401
from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.runtime.card_tools import (
    COMPILER_HITS,
    HARBOUR_HITS,
    OLD_CARD,
    SearchTool,
    finished,
    last_turn,
    nudges,
    presentations,
    results,
    run_turn,
    tools,
)
from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.payloads import Activity, AssistantStep, Presentation, TurnCard
from vak_desktop.ledger import Ledger
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.runtime import ToolRegistry, TurnRunner, bind_model
from vak_desktop.runtime.events import TextChunk

METRIC = "emit_metric_card"
LIVE = "What is the current harbour water temperature?"
NARRATION = "The harbour water measured 21.5 degrees at noon, calm and clear."


def earlier_card_turn() -> list[Scripted]:
    """Turn 1 of every session here: a search, the harbour card, a short answer."""
    return [
        Scripted(calls=[("search", {"query": "harbour water temperature"})]),
        Scripted(calls=[(METRIC, OLD_CARD)]),
        Scripted(text=NARRATION),
    ]


async def _session_with_an_old_card(ledger: Ledger) -> str:
    session = ledger.create_session().id
    provider = ScriptedProvider(*earlier_card_turn())
    events = await run_turn(ledger, session, provider, "How warm is the harbour water?", _tools())
    assert finished(events).outcome == "completed"
    assert len(presentations(last_turn(ledger, session))) == 1
    return session


def _tools(hits: list[dict[str, str]] = HARBOUR_HITS) -> ToolRegistry:
    return tools(SearchTool(hits))


def _closing_statement(ledger: Ledger, session: str) -> AssistantStep:
    steps = [e.payload for e in last_turn(ledger, session) if isinstance(e.payload, AssistantStep)]
    assert steps[-1].model == "vak" and steps[-1].done_reason == "fail_closed"
    return steps[-1]


async def test_a_stale_current_card_is_intercepted_repaired_once_then_fails_closed(
    ledger: Ledger, double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    session = await _session_with_an_old_card(ledger)
    old = presentations(ledger.chain_to_root(session))[0]
    ollama = OllamaProvider(http, double.url)
    binding = await bind_model(ollama, TOOL_MODEL)
    double.enqueue(
        Reply(tool_calls=[(METRIC, OLD_CARD)]),  # the old figure, as if current
        Reply(tool_calls=[(METRIC, {**OLD_CARD, "value": 20.0})]),  # a "repair" still stale
        Reply(text="should never be asked for"),
    )
    runner = TurnRunner(ledger, ollama, _tools())
    events = [e async for e in runner.run(session, LIVE, binding)]
    done = finished(events)
    assert done.outcome == "degraded" and "no current value" in done.error
    assert len(double.chat_bodies()) == 2  # intercepted, repaired once, then closed
    turn = last_turn(ledger, session)
    assert presentations(turn) == []  # neither stale card was written
    first, second = results(turn)
    assert first.is_error and "[freshness-check]" in first.content
    assert second.is_error and "[freshness-check]" in second.content
    # the model saw the check as its card call's result before the repair
    sent = double.chat_bodies()[1]["messages"]
    assert sent[-1]["role"] == "tool" and "[freshness-check]" in sent[-1]["content"]
    statement = _closing_statement(ledger, session).text
    assert statement.startswith("No current value was retrieved in this turn")
    assert "value: 21.5" in statement and old.created_at[:10] in statement
    assert statement in "".join(e.text for e in events if isinstance(e, TextChunk))
    card = next(e.payload for e in turn if isinstance(e.payload, TurnCard))
    assert card.outcome == "degraded" and card.answered.narration.startswith("No current value")


async def test_a_stale_card_repaired_by_retrieving_first_is_written(ledger: Ledger) -> None:
    session = await _session_with_an_old_card(ledger)
    fresh = {**OLD_CARD, "value": 19.0}
    provider = ScriptedProvider(
        Scripted(calls=[(METRIC, OLD_CARD)]),
        Scripted(calls=[("search", {"query": "harbour water temperature now"})]),
        Scripted(calls=[(METRIC, fresh)]),
        Scripted(text="It is 19 degrees now."),
    )
    events = await run_turn(ledger, session, provider, LIVE, _tools())
    assert finished(events).outcome == "completed"
    (entry,) = presentations(last_turn(ledger, session))
    assert isinstance(entry.payload, Presentation) and entry.payload.payload["value"] == 19.0
    assert len(entry.payload.derived_from) == 1


async def test_a_stale_prose_answer_gets_one_redo_then_fails_closed(ledger: Ledger) -> None:
    session = await _session_with_an_old_card(ledger)
    provider = ScriptedProvider(
        Scripted(text="It is 21.5 degrees."), Scripted(text="Still 21.5 degrees.")
    )
    events = await run_turn(ledger, session, provider, LIVE, _tools())
    assert finished(events).outcome == "degraded" and len(provider.requests) == 2
    (nudge,) = nudges(last_turn(ledger, session))
    assert nudge.tag == "freshness-check"
    assert provider.requests[1].messages[-1].content == nudge.text
    assert "value: 21.5" in _closing_statement(ledger, session).text


async def test_a_plain_no_current_value_answer_and_a_declined_request_pass(
    ledger: Ledger,
) -> None:
    session = await _session_with_an_old_card(ledger)
    provider = ScriptedProvider(Scripted(text="I cannot access live data right now."))
    events = await run_turn(ledger, session, provider, LIVE, _tools())
    assert finished(events).outcome == "completed" and nudges(last_turn(ledger, session)) == []
    provider = ScriptedProvider(Scripted(calls=[(METRIC, OLD_CARD)]), Scripted(text="From memory."))
    declined = "What is the current harbour water temperature? No live data, from memory is fine."
    events = await run_turn(ledger, session, provider, declined, _tools())
    assert finished(events).outcome == "completed"
    assert len(presentations(last_turn(ledger, session))) == 1


async def test_a_topic_mismatched_card_is_intercepted_repaired_once_then_fails_closed(
    ledger: Ledger, double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    session = await _session_with_an_old_card(ledger)
    ollama = OllamaProvider(http, double.url)
    binding = await bind_model(ollama, TOOL_MODEL)
    double.enqueue(
        Reply(tool_calls=[("search", {"query": "compiler news"})]),
        Reply(tool_calls=[(METRIC, OLD_CARD)]),  # copied from the older turn
        Reply(tool_calls=[(METRIC, {**OLD_CARD, "label": "harbour"})]),  # still unrelated
        Reply(text="should never be asked for"),
    )
    runner = TurnRunner(ledger, ollama, _tools(COMPILER_HITS))
    events = [e async for e in runner.run(session, "What is the top compiler news?", binding)]
    done = finished(events)
    assert done.outcome == "degraded" and "did not match" in done.error
    assert len(double.chat_bodies()) == 3
    turn = last_turn(ledger, session)
    assert presentations(turn) == []
    checks = [r for r in results(turn) if r.tool_name == METRIC]
    assert [("[topic-mismatch]" in r.content, r.is_error) for r in checks] == [(True, True)] * 2
    statement = _closing_statement(ledger, session).text
    assert "> " in statement and "incremental linking and faster builds" in statement
    assert "21.5" not in statement  # the wrong card is not shown
    closed = [e.payload for e in turn if isinstance(e.payload, Activity)]
    assert any(a.type == "failed_closed" and a.detail["check"] == "topic-mismatch" for a in closed)


async def test_a_card_built_from_the_retrieval_passes_the_topic_check(ledger: Ledger) -> None:
    session = await _session_with_an_old_card(ledger)
    provider = ScriptedProvider(
        Scripted(calls=[("search", {"query": "compiler news"})]),
        Scripted(calls=[(METRIC, OLD_CARD)]),
        Scripted(calls=[(METRIC, {"title": "Compiler release", "value": "incremental linking"})]),
        Scripted(text="The compiler release adds incremental linking."),
    )
    ask = "What is the top compiler news?"
    events = await run_turn(ledger, session, provider, ask, _tools(COMPILER_HITS))
    assert finished(events).outcome == "completed"
    (entry,) = presentations(last_turn(ledger, session))
    assert entry.payload.title == "Compiler release"  # type: ignore[union-attr]


async def test_without_a_retrieval_the_topic_check_stays_quiet(ledger: Ledger) -> None:
    session = await _session_with_an_old_card(ledger)
    checklist = {"title": "Packing", "items": [{"label": "towel"}]}
    provider = ScriptedProvider(
        Scripted(calls=[("emit_checklist_card", checklist)]), Scripted(text="Have fun.")
    )
    events = await run_turn(ledger, session, provider, "Make me a packing list.", _tools())
    assert finished(events).outcome == "completed"
    assert len(presentations(last_turn(ledger, session))) == 1


async def test_three_verbatim_repeats_of_an_earlier_answer_end_the_turn_degraded(
    ledger: Ledger,
) -> None:
    session = await _session_with_an_old_card(ledger)
    provider = ScriptedProvider(*[Scripted(text=NARRATION) for _ in range(5)])
    ask = "Explain how tides work along a rocky coast."
    events = await run_turn(ledger, session, provider, ask, _tools())
    done = finished(events)
    assert done.outcome == "degraded" and "repeated an earlier answer 3 times" in done.error
    assert len(provider.requests) == 3
    turn = last_turn(ledger, session)
    steering = nudges(turn)
    assert [n.tag for n in steering] == ["steering-drift"] * 2
    assert ask in steering[0].text  # the nudge names the directive it should serve
    kinds = [e.payload.type for e in turn if isinstance(e.payload, Activity)]
    assert kinds.count("model_drift") == 3 and kinds.count("instruction_failed") == 3
    assert _closing_statement(ledger, session).text.startswith("The model kept repeating")


async def test_one_repeat_then_a_real_answer_completes(ledger: Ledger) -> None:
    session = await _session_with_an_old_card(ledger)
    provider = ScriptedProvider(Scripted(text=NARRATION), Scripted(text="Tides follow the moon."))
    ask = "Explain how tides work along a rocky coast."
    events = await run_turn(ledger, session, provider, ask, _tools())
    assert finished(events).outcome == "completed"
    assert [n.tag for n in nudges(last_turn(ledger, session))] == ["steering-drift"]
    assert json.dumps(provider.requests[1].messages[-1].content).count("steering-drift") == 1
