"""Cards in the ledger: emit tools, the fence fallback, the duplicate and repeated-card rules,
empty steps, feedback and selection — scripted turns, and a search-then-card session against
the loopback Ollama double."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.context.sessions import profile
from tests.doubles.fixtures import (  # noqa: F401
    PLAIN_MODEL,
    TOOL_MODEL,
    double_fixture,
    http_fixture,
)
from tests.doubles.ollama_server import OllamaDouble, Reply
from tests.runtime.card_tools import (
    COMPILER_HITS,
    OLD_CARD,
    SearchTool,
    evidence_ids,
    finished,
    last_turn,
    nudges,
    presentations,
    results,
    run_turn,
    tools,
)
from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.capacity.profile import estimate_tokens
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    CapacityProfile,
    Presentation,
    Receipt,
    TurnCard,
)
from vak_desktop.context.planning.turn_cards import card_block, full_record, render_card
from vak_desktop.context.planning.turns import split_turns
from vak_desktop.context.presentations.digest import canonical_payload, payload_digest
from vak_desktop.ledger import Ledger
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.runtime import DEFAULT_SYSTEM_PROMPT, TurnRunner, bind_model
from vak_desktop.runtime.inspection.preview import preview_next
from vak_desktop.runtime.presentations import (
    CardState,
    card_library,
    presentation_states,
    record_feedback,
    set_selection,
)
from vak_desktop.runtime.tools.surface import compact_surface, tool_surface

CARD = {"title": "Compiler release", "value": "incremental linking", "source": "example.org"}
METRIC = "emit_metric_card"


def fence(card: Mapping[str, object]) -> str:
    return "```vak\n" + json.dumps({"type": "metric", **card}) + "\n```\n"


async def test_a_search_then_card_session_against_the_double(
    ledger: Ledger, double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    """Turn 1 searches and emits a card; turn 2 sees it through its TurnCard digest; turn 3
    asks `recall({presentation})` for the whole payload."""
    ollama = OllamaProvider(http, double.url)
    binding = await bind_model(ollama, TOOL_MODEL)
    registry = tools(SearchTool(COMPILER_HITS))
    runner = TurnRunner(ledger, ollama, registry)
    session = ledger.create_session().id
    double.enqueue(
        Reply(tool_calls=[("search", {"query": "compiler release"})]),
        Reply(tool_calls=[(METRIC, CARD)]),
        Reply(text="The release adds incremental linking. " * 40),  # a long full record
    )
    events = [e async for e in runner.run(session, "What did the compiler release add?", binding)]
    assert finished(events).outcome == "completed"
    turn = last_turn(ledger, session)
    (entry,) = presentations(turn)
    card = entry.payload
    assert isinstance(card, Presentation)
    assert card.turn_id == turn[0].id and card.semantic_type == "metric"
    assert card.derived_from == tuple(evidence_ids(turn, "search"))  # the search before the emit
    assert card.payload == json.loads(canonical_payload(CARD))
    assert card.payload_digest == payload_digest(CARD)
    first_call = next(
        c for e in turn if isinstance(e.payload, AssistantStep) for c in e.payload.tool_calls
    )
    assert first_call.name == "search"
    ack = next(r for r in results(turn) if r.tool_name == METRIC)
    assert json.loads(ack.content) == {"presentation": entry.id, "ok": True}
    assert card.source["tool_call"].startswith("call_")
    turn_card = next(e.payload for e in turn if isinstance(e.payload, TurnCard))
    (ref,) = turn_card.answered.presentations
    assert ref.id == entry.id and ref.derived_from == card.derived_from
    assert ref.digest == "source: example.org; title: Compiler release; value: incremental linking"

    # turn 2, planned for a profile whose budget holds turn 1 as a card but not whole (sized
    # from a preview of the same request at a roomy horizon): the card shows as its digest
    ask = "Summarise our chat so far."
    assert binding.details is not None
    quantisation = binding.details.quantisation

    def measured(horizon: int) -> CapacityProfile:
        pinned = profile(horizon, output_reserve=256, provider=binding.provider, model=TOOL_MODEL)
        return dataclasses.replace(pinned, quantisation=quantisation)

    # a profile that small gets the compact surface: size the budget from that one
    surface = compact_surface(tool_surface(registry, DEFAULT_SYSTEM_PROMPT, ask), registry)
    roomy = preview_next(
        ledger,
        session,
        measured(100_000),
        directive=ask,
        system=surface.system,
        tools=surface.prefix,
    ).plan
    spent = roomy.budget.horizon - roomy.budget.available
    whole = roomy.turns[0].tokens
    as_card = estimate_tokens(len(card_block([render_card(turn_card, 1)])), 0.25)
    assert as_card < whole
    ledger.append(session, measured(spent + (as_card + whole) // 2))
    double.enqueue(Reply(text="It was about linking."))
    events = [e async for e in runner.run(session, ask, binding)]
    assert finished(events).outcome == "completed"
    receipt = next(e.payload for e in last_turn(ledger, session) if isinstance(e.payload, Receipt))
    assert [t["fidelity"] for t in receipt.plan["turns"]] == ["card"]
    sent = double.chat_bodies()[-1]["messages"]
    history = "\n".join(m["content"] for m in sent[1:-1])
    assert f'card: metric "Compiler release" — {ref.digest}' in history
    assert "incremental linking and faster builds" not in history  # the evidence is not there

    # turn 3: the model recalls the card's whole payload by its id
    double.enqueue(
        Reply(tool_calls=[("recall", {"presentation": entry.id[3:15]})]),
        Reply(text="Here is the card again."),
    )
    events = [e async for e in runner.run(session, "Show me that card in full.", binding)]
    assert finished(events).outcome == "completed"
    recalled = next(r for r in results(last_turn(ledger, session)) if r.tool_name == "recall")
    assert json.loads(recalled.content)["payload"] == card.payload
    assert ledger.verify().ok


async def test_a_fence_and_a_tool_call_of_one_card_converge_on_one_entry(ledger: Ledger) -> None:
    session = ledger.create_session().id
    provider = ScriptedProvider(
        Scripted(text="Here it is:\n\n" + fence(CARD), calls=[("search", {"query": "x"})]),
        Scripted(calls=[(METRIC, CARD)]),
        Scripted(text="As shown above.\n\n" + fence(CARD), calls=[("search", {"query": "y"})]),
        Scripted(text="Done."),
    )
    registry = tools(SearchTool(COMPILER_HITS))
    events = await run_turn(ledger, session, provider, "What did the compiler add?", registry)
    assert finished(events).outcome == "completed"
    turn = last_turn(ledger, session)
    (entry,) = presentations(turn)
    first_step = next(e for e in turn if isinstance(e.payload, AssistantStep))
    assert entry.payload.source == {"fence": first_step.id}  # type: ignore[union-attr]
    ack = next(r for r in results(turn) if r.tool_name == METRIC)
    assert json.loads(ack.content) == {"presentation": entry.id, "ok": True, "repeat": True}
    # step 2's request shows the fence that wrote the card; the later copy is dropped when the
    # turn is seen again
    assert "```vak" in provider.requests[1].messages[-2].content
    record = full_record(split_turns(ledger.chain_to_root(session))[-1])
    texts = [m.content for m in record if m.role == "assistant"]
    assert "```vak" in texts[0] and texts[2:] == ["As shown above.", "Done."]
    assert provider.requests[3].messages[-2].content == "As shown above."  # dropped in-turn too
    card = next(e.payload for e in turn if isinstance(e.payload, TurnCard))
    assert card.answered.narration == "Here it is: As shown above. Done."  # fences are not
    # within the turn every request is the previous one plus the new steps (append-only)
    sent = [r.messages for r in provider.requests]
    for earlier, later in itertools.pairwise(sent):
        assert later[: len(earlier)] == earlier


async def test_the_same_card_twice_in_a_turn_is_written_once(ledger: Ledger) -> None:
    session = ledger.create_session().id
    reordered = dict(reversed(list(CARD.items())))  # same card, other key order
    provider = ScriptedProvider(
        Scripted(calls=[(METRIC, CARD), (METRIC, reordered)]), Scripted(text="Done with it.")
    )
    events = await run_turn(ledger, session, provider, "card please", tools())
    assert finished(events).outcome == "completed"
    turn = last_turn(ledger, session)
    (entry,) = presentations(turn)
    acks = [json.loads(r.content) for r in results(turn)]
    assert acks == [
        {"presentation": entry.id, "ok": True},
        {"presentation": entry.id, "ok": True, "repeat": True},
    ]


async def test_an_invalid_card_gets_every_problem_and_the_repair_is_written(
    ledger: Ledger,
) -> None:
    session = ledger.create_session().id
    provider = ScriptedProvider(
        Scripted(calls=[(METRIC, {"value": [1], "colour": "red"})]),
        Scripted(calls=[(METRIC, CARD)]),
        Scripted(text="Fixed."),
    )
    events = await run_turn(ledger, session, provider, "card please", tools())
    assert finished(events).outcome == "completed"
    first, second = results(last_turn(ledger, session))
    assert first.is_error and "nothing was shown" in first.content
    assert "'title' is a required property" in first.content
    assert "/value" in first.content and "'colour' was unexpected" in first.content
    assert not second.is_error and len(presentations(last_turn(ledger, session))) == 1


async def test_three_all_repeat_batches_close_the_turn_on_that_card(ledger: Ledger) -> None:
    session = ledger.create_session().id
    provider = ScriptedProvider(*[Scripted(calls=[(METRIC, CARD)]) for _ in range(10)])
    events = await run_turn(ledger, session, provider, "card please", tools())
    assert finished(events).outcome == "completed"
    assert len(provider.requests) == 4  # the card, then three repeats: no fifth request
    turn = last_turn(ledger, session)
    (entry,) = presentations(turn)
    noted = [e.payload.type for e in turn if isinstance(e.payload, Activity)]
    assert noted.count("repeated_cards") == 1
    card = next(e.payload for e in turn if isinstance(e.payload, TurnCard))
    assert [p.id for p in card.answered.presentations] == [entry.id]


async def test_repeated_cards_end_the_turn_after_three_all_repeat_batches_on_the_double(
    ledger: Ledger, double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    ollama = OllamaProvider(http, double.url)
    binding = await bind_model(ollama, TOOL_MODEL)
    double.enqueue(*[Reply(tool_calls=[(METRIC, CARD)]) for _ in range(6)])
    session = ledger.create_session().id
    runner = TurnRunner(ledger, ollama, tools())
    events = [e async for e in runner.run(session, "compiler card please", binding)]
    assert finished(events).outcome == "completed"
    assert len(double.chat_bodies()) == 4  # the card and three repeats, then the turn closed
    turn = last_turn(ledger, session)
    assert len(presentations(turn)) == 1
    acks = [json.loads(r.content) for r in results(turn)]
    assert [a.get("repeat", False) for a in acks] == [False, True, True, True]


async def test_a_repeat_batch_mixed_with_new_work_resets_the_count(ledger: Ledger) -> None:
    session = ledger.create_session().id
    search = ("search", {"query": "again"})
    provider = ScriptedProvider(
        Scripted(calls=[(METRIC, CARD)]),
        Scripted(calls=[(METRIC, CARD)]),
        Scripted(calls=[(METRIC, CARD), search]),  # not all repeats
        Scripted(calls=[(METRIC, CARD)]),
        Scripted(calls=[(METRIC, CARD)]),
        Scripted(text="That is the card."),
    )
    registry = tools(SearchTool(COMPILER_HITS))
    events = await run_turn(ledger, session, provider, "compiler card please", registry)
    assert finished(events).outcome == "completed" and len(provider.requests) == 6


async def test_an_empty_step_gets_exactly_one_redo(ledger: Ledger) -> None:
    session = ledger.create_session().id
    provider = ScriptedProvider(
        Scripted(thinking="Final plan: 1. call the tool."), Scripted(text="Here is the answer.")
    )
    events = await run_turn(ledger, session, provider, "What is two plus two?", tools())
    assert finished(events).outcome == "completed"
    (nudge,) = nudges(last_turn(ledger, session))
    assert nudge.tag == "empty-step" and nudge.text.startswith("[empty-step]")
    redo = provider.requests[1].messages
    assert redo[-1].role == "user" and redo[-1].content == nudge.text


async def test_a_second_empty_step_ends_the_turn_degraded(ledger: Ledger) -> None:
    session = ledger.create_session().id
    provider = ScriptedProvider(*[Scripted(thinking="planning…") for _ in range(5)])
    events = await run_turn(ledger, session, provider, "What is two plus two?", tools())
    assert finished(events).outcome == "degraded"
    assert len(provider.requests) == 2 and len(nudges(last_turn(ledger, session))) == 1


async def test_a_card_only_turn_is_a_complete_answer(ledger: Ledger) -> None:
    session = ledger.create_session().id
    provider = ScriptedProvider(Scripted(calls=[(METRIC, CARD)]), Scripted(thinking="done"))
    events = await run_turn(ledger, session, provider, "card please", tools())
    assert finished(events).outcome == "completed"
    assert nudges(last_turn(ledger, session)) == [] and len(provider.requests) == 2


async def test_a_fence_only_answer_from_a_model_without_tools_is_a_card(ledger: Ledger) -> None:
    session = ledger.create_session().id
    provider = ScriptedProvider(Scripted(text=fence(OLD_CARD)))
    events = await run_turn(ledger, session, provider, "Show it as a metric card.", tools())
    assert finished(events).outcome == "completed"
    turn = last_turn(ledger, session)
    (entry,) = presentations(turn)
    assert entry.payload.payload == OLD_CARD  # type: ignore[union-attr]
    failed = [e for e in turn if getattr(e.payload, "type", "") == "instruction_failed"]
    assert failed == []  # the required card was written, by fence


async def test_a_model_without_tool_calling_writes_its_card_as_a_fence_on_the_double(
    ledger: Ledger, double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    ollama = OllamaProvider(http, double.url)
    binding = await bind_model(ollama, PLAIN_MODEL)  # capabilities: completion only
    double.enqueue(Reply(text="Here is the card.\n\n" + fence(CARD)))
    session = ledger.create_session().id
    events = [e async for e in TurnRunner(ledger, ollama, tools()).run(session, "card?", binding)]
    assert finished(events).outcome == "completed"
    body = double.chat_bodies()[-1]
    assert "tools" not in body  # Ollama refuses tools for this model
    system = body["messages"][0]["content"]
    assert "```vak" in system and "- metric: title, value, unit?" in system
    turn = last_turn(ledger, session)
    (entry,) = presentations(turn)
    step = next(e for e in turn if isinstance(e.payload, AssistantStep))
    assert entry.payload.source == {"fence": step.id}  # type: ignore[union-attr]


async def test_an_invalid_fence_is_recorded_and_stays_prose(ledger: Ledger) -> None:
    session = ledger.create_session().id
    text = "```vak\n" + json.dumps({"type": "gauge", "value": 1}) + "\n```\n"
    provider = ScriptedProvider(Scripted(text=text))
    await run_turn(ledger, session, provider, "hello there", tools())
    turn = last_turn(ledger, session)
    assert presentations(turn) == []
    (bad,) = [e.payload for e in turn if getattr(e.payload, "type", "") == "card_fence_invalid"]
    assert "unknown card type 'gauge'" in bad.message  # type: ignore[union-attr]


async def test_a_required_card_that_was_not_emitted_is_an_instruction_failure(
    ledger: Ledger,
) -> None:
    session = ledger.create_session().id
    provider = ScriptedProvider(Scripted(text="It costs a lot."))
    await run_turn(ledger, session, provider, "Show the price as a metric card.", tools())
    (failed,) = [
        e.payload
        for e in last_turn(ledger, session)
        if getattr(e.payload, "type", "") == "instruction_failed"
    ]
    assert "emit a metric card" in failed.message  # type: ignore[union-attr]


async def test_feedback_and_selection_fold_into_card_states(ledger: Ledger) -> None:
    session = ledger.create_session().id
    provider = ScriptedProvider(Scripted(calls=[(METRIC, CARD)]), Scripted(text="ok then"))
    await run_turn(ledger, session, provider, "card please", tools())
    (entry,) = presentations(last_turn(ledger, session))
    chain = ledger.chain_to_root
    assert presentation_states(chain(session)) == {entry.id: CardState()}
    record_feedback(ledger, session, entry.id, "up")
    set_selection(ledger, session, entry.id[:12], "dismiss")
    assert presentation_states(chain(session)) == {entry.id: CardState("up", True)}
    record_feedback(ledger, session, entry.id, "down")
    set_selection(ledger, session, entry.id, "restore")
    assert presentation_states(chain(session)) == {entry.id: CardState("down", False)}
    record_feedback(ledger, session, entry.id, "clear")
    assert presentation_states(chain(session)) == {entry.id: CardState()}
    with pytest.raises(ValueError, match="verdict"):
        record_feedback(ledger, session, entry.id, "meh")
    with pytest.raises(ValueError, match="action"):
        set_selection(ledger, session, entry.id, "explode")
    directive = chain(session)[0].id
    with pytest.raises(ValueError, match="not a card"):
        record_feedback(ledger, session, directive, "up")


def test_every_card_type_has_an_emit_tool_with_its_schema() -> None:
    registry = tools()
    names = [s.name for s in registry.specs()]
    assert names[0] == "recall"
    assert "emit_research_synthesis_card" in names and len(names) == 8
    library = card_library()
    for spec in registry.specs()[1:]:
        definition = library.by_tool(spec.name)
        assert definition is not None and spec.parameters == definition.schema


PAYLOADS: list[dict[str, Any]] = [
    CARD,
    {"title": "Compiler release", "value": 2},
    {"title": "Build time", "value": 41, "unit": "s"},
]
_step = st.one_of(
    st.tuples(st.just("call"), st.integers(0, 2)),
    st.tuples(st.just("fence"), st.integers(0, 2)),
    st.tuples(st.just("search"), st.just(0)),
    st.tuples(st.just("both"), st.integers(0, 2)),  # a fence and a call of one card in a step
)


@settings(max_examples=40, deadline=None)
@given(st.lists(_step, min_size=1, max_size=7))
def test_cards_are_unique_per_turn_derived_from_earlier_evidence_and_append_only(
    steps: list[tuple[str, int]],
) -> None:
    script = []
    for kind, n in steps:
        payload = PAYLOADS[n]
        if kind == "call":
            script.append(Scripted(calls=[(METRIC, payload)]))
        elif kind == "fence":
            script.append(Scripted(text="Card:\n\n" + fence(payload), calls=[("search", {})]))
        elif kind == "both":
            script.append(Scripted(text=fence(payload), calls=[(METRIC, payload)]))
        else:
            script.append(Scripted(calls=[("search", {"query": "compiler"})]))
    script.append(Scripted(text="That is all."))
    provider = ScriptedProvider(*script)
    with tempfile.TemporaryDirectory() as folder:
        store = Ledger.open(Path(folder) / "ledger.sqlite3")
        try:
            session = store.create_session().id
            registry = tools(SearchTool(COMPILER_HITS))
            events = asyncio.run(run_turn(store, session, provider, "compiler card", registry))
            assert finished(events).outcome == "completed"
            turn = last_turn(store, session)
        finally:
            store.close()
    assert len(provider.requests) <= len(script)
    cards = [e for e in turn if isinstance(e.payload, Presentation)]
    digests = [e.payload.payload_digest for e in cards]  # type: ignore[union-attr]
    assert len(digests) == len(set(digests))
    for entry in cards:
        before = turn[: turn.index(entry)]
        evidence = set(evidence_ids(before, "search"))
        assert set(entry.payload.derived_from) == evidence  # type: ignore[union-attr]
    written = {e.id for e in cards}
    for result in results(turn):
        if result.tool_name == METRIC:
            assert json.loads(result.content)["presentation"] in written
    sent = [r.messages for r in provider.requests]
    for earlier, later in itertools.pairwise(sent):
        assert later[: len(earlier)] == earlier
