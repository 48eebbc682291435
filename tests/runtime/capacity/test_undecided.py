"""Slowness is never failure (issue #22 item 5) and the window served now wins (item 6).

Against the loopback doubles: a probe stopped by a turn or the user keeps its decided rungs and
continues from the next one; a probe that left rungs undecided is retried only once the machine
is idle; the answer-from-memory task is probed beside the tool task and a tool-free turn is
planned against the larger confirmed horizon; a stored profile measured at a larger window is
planned within the window the server reports at bind.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.doubles.ollama_server import OllamaDouble
from tests.doubles.openai_server import OpenAIDouble
from tests.runtime.probe_doubles import HeldAfter, is_probe_body
from vak_desktop.context.capacity.probe import HorizonSearch, Rung, left_undecided
from vak_desktop.context.capacity.probe_history import ProbeHistory
from vak_desktop.context.capacity.probe_result import probe_profile, resume_from
from vak_desktop.context.capacity.probe_verdict import Sample
from vak_desktop.context.capacity.profile import (
    METADATA_CONFIDENCE,
    for_turn,
    is_small,
    metadata_profile,
    usable_horizon,
)
from vak_desktop.context.payloads import Activity, Directive, Horizon
from vak_desktop.context.planning.turns import build_turn_index
from vak_desktop.ledger import Ledger
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.providers.openai_compatible import OpenAICompatibleProvider
from vak_desktop.runtime import TurnRunner, bind_model, default_tools
from vak_desktop.runtime.capacity.probe import run_probe
from vak_desktop.runtime.capacity.scheduler import ProbePolicy, ProbeScheduler
from vak_desktop.runtime.capacity.service import CapacityService, key_of
from vak_desktop.runtime.tools import tool_surface
from vak_desktop.runtime.turn.projection import plan_turn, tail_context_now

MODEL = "qwen2.5-coder:0.5b"
TRAINED = 32_768


@pytest.fixture(name="http")
async def http_fixture() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def _double(horizon: int = 6_000, memory: int | None = None) -> OllamaDouble:
    double = OllamaDouble(instruction_horizon=horizon, memory_horizon=memory, search_requests=True)
    double.add_model(MODEL, trained_window=TRAINED)
    return double


class Idleness:
    """The machine's idleness as a test scripts it: each check takes the next answer (the
    last one repeats), and `checks` counts them."""

    def __init__(self, *answers: bool) -> None:
        self.answers, self.checks = list(answers), 0

    async def __call__(self) -> bool:
        self.checks += 1
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


async def test_a_paused_probe_keeps_its_rungs_and_resume_continues_from_the_next(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    with _double() as double:
        provider = HeldAfter(http, double, allowed=6)  # three rungs' worth of samples
        binding = await bind_model(provider, MODEL)
        prefix = TurnRunner(ledger, provider, default_tools()).probe_prefix(binding)
        pause = asyncio.Event()
        probing = asyncio.ensure_future(
            run_probe(provider, MODEL, prefix=prefix, pause=pause, nonce="pause")
        )
        await asyncio.wait_for(provider.probe_waiting.wait(), 10)
        pause.set()  # the seventh sample is held: Pause cuts it
        paused = await asyncio.wait_for(probing, 10)
        assert paused.paused and paused.activity.detail["stopped"]["reason"] == "paused"
        decided = paused.activity.detail["rungs"]
        assert [r["followed"] for r in decided] == [True, True, False]  # 2k, 4k; not 8k
        sent_before = sum(is_probe_body(b) for b in double.chat_bodies())

        provider.gate.set()
        resumed = await run_probe(
            provider, MODEL, prefix=prefix, resume=resume_from(paused.activity)
        )
        rungs = resumed.activity.detail["rungs"]
        assert rungs[:3] == decided  # the decided rungs are kept, not sent again
        first_new = rungs[3]
        sent = [b for b in double.chat_bodies() if is_probe_body(b)][sent_before:]
        # the resumed probe's first request is the third rung, in the same conversation
        assert sent[0]["messages"][0]["content"].startswith("[probe pause]")
        assert len(sent[0]["messages"]) > len(double.chat_bodies()[0]["messages"])
        assert first_new["phase"] == "bisect"  # between the two it decided
        assert decided[1]["turns"] < first_new["turns"] < decided[2]["turns"]
        assert resumed.profile.provenance["outcome"] == "completed"
        assert 0.85 * 6_000 <= resumed.profile.instruction_horizon.tokens <= 6_000
        # every request sent is counted: the decided samples and the one Pause cut
        assert resumed.profile.provenance["requests"] == sum(len(r["samples"]) for r in rungs) + 1


async def test_the_user_pause_holds_a_background_probe_until_resume(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    with _double() as double:
        provider = HeldAfter(http, double, allowed=2)
        scheduler = ProbeScheduler(provider, store=ledger.profiles(), idle=Idleness(True))
        binding = await bind_model(provider, MODEL)
        task = scheduler.maybe_start(binding)
        assert task is not None
        await asyncio.wait_for(provider.probe_waiting.wait(), 10)
        assert scheduler.pause_model(MODEL)
        assert await asyncio.wait_for(task, 10) is None  # paused, nothing stored
        paused = scheduler.paused(MODEL)
        assert paused is not None and len(paused.record.activity.detail["rungs"]) == 1
        assert ledger.profiles().count() == 0
        assert scheduler.maybe_start(binding) is None  # a finished turn does not restart it

        provider.gate.set()
        resumed = scheduler.resume_model(MODEL)
        assert resumed is not None
        record = await asyncio.wait_for(resumed, 20)
        assert record is not None and record.profile.provenance["outcome"] == "completed"
        assert record.activity.detail["rungs"][0] == paused.record.activity.detail["rungs"][0]
        assert scheduler.paused(MODEL) is None and ledger.profiles().count() == 1
        await scheduler.aclose()


async def test_a_probe_left_undecided_is_retried_only_when_the_machine_is_idle(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    with _double() as double:
        provider = OllamaProvider(http, double.url)
        binding = await bind_model(provider, MODEL)
        # a first probe stops at its budget after its first rung: the rest is undecided
        first = await run_probe(provider, MODEL, nonce="slow", max_prompt_tokens=9_000)
        cut = dataclasses.replace(
            first.profile,
            provenance=first.profile.provenance | {"stopped": {"reason": "sample_timeout"}},
        )
        detail = first.activity.detail
        kept = detail | {"rungs": detail["rungs"][:1], "stopped": {"reason": "sample_timeout"}}
        kept["requests"] = len(kept["rungs"][0]["samples"])
        ledger.profiles().record(cut, Activity(first.activity.type, "", kept))

        idle = Idleness(False, False, True)
        scheduler = ProbeScheduler(
            provider,
            store=ledger.profiles(),
            idle=idle,
            idle_poll_s=0.05,
            policy=ProbePolicy(memory=False),
        )
        sent_before = sum(is_probe_body(b) for b in double.chat_bodies())
        task = scheduler.maybe_start(binding)
        assert task is not None  # not fresh: its probe left rungs undecided
        record = await asyncio.wait_for(task, 20)
        assert idle.checks == 3  # it waited through two busy checks
        assert record is not None and record.activity.detail["rungs"][0] == kept["rungs"][0]
        sent = sum(is_probe_body(b) for b in double.chat_bodies()) - sent_before
        assert sent == record.profile.provenance["requests"] - len(kept["rungs"][0]["samples"])
        assert record.profile.provenance["outcome"] == "completed"
        await scheduler.aclose()


async def test_a_turn_stops_a_background_probe_which_then_continues_from_its_rungs(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    with _double() as double:
        provider = HeldAfter(http, double, allowed=2)
        scheduler = ProbeScheduler(provider, store=ledger.profiles(), idle=Idleness(False))
        capacity = CapacityService(ledger, scheduler=scheduler)
        binding = await bind_model(provider, MODEL)
        task = scheduler.maybe_start(binding)
        assert task is not None
        await asyncio.wait_for(provider.probe_waiting.wait(), 10)
        capacity.turn_starting(binding)  # a turn needs the runner
        assert await asyncio.wait_for(task, 10) is None
        provider.gate.set()
        again = scheduler.maybe_start(binding)  # the turn finished: it continues at once
        assert again is not None
        record = await asyncio.wait_for(again, 20)
        assert record is not None and record.profile.provenance["outcome"] == "completed"
        assert record.activity.detail["rungs"][0]["samples"] == [True, True]
        assert len(record.activity.detail["rungs"]) >= 3
        await scheduler.aclose()


async def test_the_memory_task_is_probed_beside_the_tool_task_and_governs_tool_free_turns(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    with _double(horizon=3_000, memory=14_000) as double:
        provider = OllamaProvider(http, double.url)
        binding = await bind_model(provider, MODEL)
        prefix = TurnRunner(ledger, provider, default_tools()).probe_prefix(binding)
        record = await run_probe(provider, MODEL, prefix=prefix, memory=True, nonce="mem")
        bodies = [b for b in double.chat_bodies() if is_probe_body(b)]
    profile = record.profile
    tool, memory = profile.instruction_horizon, profile.memory_horizon
    assert 0.85 * 3_000 <= tool.tokens <= 3_000
    assert memory is not None and 0.85 * 14_000 <= memory.tokens <= 14_000
    assert memory.confidence >= 0.85 and tool.confidence >= 0.85  # both recorded, with each's
    asks = {b["messages"][-1]["content"].split()[0] for b in bodies}
    assert asks == {"Search", "What"}  # both tasks were sent
    # every sample opens on the same fact: the two tasks share the runner's prefix cache
    facts = {b["messages"][1]["content"] for b in bodies}
    assert len(facts) == 1 and "remember" in facts.pop()
    assert record.activity.detail["memory_horizon"] == memory.tokens
    # a turn that asks for no tool plans to the larger horizon; any other to the tool one
    assert usable_horizon(for_turn(profile, tool_free=True)) == memory.tokens
    assert usable_horizon(for_turn(profile, tool_free=False)) == tool.tokens


async def test_a_stored_probe_that_confirmed_nothing_keeps_the_horizon_it_had(
    http: httpx.AsyncClient,
) -> None:
    with _double(horizon=0) as double:  # it follows at no size
        provider = OllamaProvider(http, double.url)
        before = dataclasses.replace(
            metadata_profile("ollama", MODEL, TRAINED),
            instruction_horizon=Horizon(5_100, 0.88, "2026-11-30T09:00:00Z"),
            num_ctx=8_192,
        )
        record = await run_probe(provider, MODEL, keep=before, nonce="keep")
    profile = record.profile
    assert profile.provenance["outcome"] == "undecided"
    assert profile.instruction_horizon == before.instruction_horizon  # what it had
    assert profile.num_ctx == 8_192
    assert "undecided" in record.activity.message
    assert METADATA_CONFIDENCE < 0.88


async def test_a_model_that_answers_from_memory_but_follows_the_tool_task_nowhere_is_planned_at_the_memory_size(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    """The real Qwen2.5-Coder 1.5B, idle: the tool task failed at every rung (1,938 down to
    1,413), the memory task followed to 2,746; its declared 32,768 would have planned every
    turn as a large model's (the full prefix, every tool, a whole long history). Its memory
    size is where it is planned, no larger than the largest size the tool task was tried at."""
    with _double(horizon=0, memory=1_500) as double:  # under the tool task's first rung
        provider = OllamaProvider(http, double.url)
        binding = await bind_model(provider, MODEL)
        prefix = TurnRunner(ledger, provider, default_tools()).probe_prefix(binding)
        record = await run_probe(provider, MODEL, prefix=prefix, memory=True, nonce="nowhere")
    profile = record.profile
    memory = profile.memory_horizon
    assert profile.provenance["outcome"] == "undecided" and profile.provenance["rescue"]
    assert memory is not None and memory.tokens < TRAINED
    assert profile.instruction_horizon.tokens == memory.tokens
    assert profile.instruction_horizon.confidence == METADATA_CONFIDENCE  # not a measurement
    assert profile.provenance["horizon_from"] == "memory"
    assert "answered from memory at" in record.activity.message
    assert usable_horizon(for_turn(profile, tool_free=False)) == memory.tokens
    assert is_small(profile)


async def test_a_tool_turn_is_planned_no_larger_than_the_tool_task_was_tried_at(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    """The real 1.5B given the probe's whole budget: the tool task failed from 1,944 tokens
    down, the memory task climbed to 8,086, and a file search planned there sent 5,685–9,542
    tokens (first tokens 67–226 s, one past the turn's 240 s) where 2,211 had answered in
    4–9 s. A tool turn now gets no more than the largest size the tool task was tried at; a
    turn that needs no tool keeps the memory size."""
    with _double(horizon=0, memory=12_000) as double:
        provider = OllamaProvider(http, double.url)
        binding = await bind_model(provider, MODEL)
        prefix = TurnRunner(ledger, provider, default_tools()).probe_prefix(binding)
        record = await run_probe(provider, MODEL, prefix=prefix, memory=True, nonce="tried")
    profile = record.profile
    rungs = record.activity.detail["rungs"]
    tried = max(r["tokens"] for r in rungs if r["followed"] is False)
    assert profile.memory_horizon is not None and profile.memory_horizon.tokens > tried
    assert profile.instruction_horizon == Horizon(
        tried, METADATA_CONFIDENCE, profile.instruction_horizon.last_confirmed
    )
    assert profile.provenance["horizon_from"] == "tried"
    assert "largest size the tool task was tried at" in record.activity.message
    assert usable_horizon(for_turn(profile, tool_free=False)) == tried
    assert usable_horizon(for_turn(profile, tool_free=True)) == profile.memory_horizon.tokens


async def test_a_probe_that_confirmed_neither_task_plans_no_larger_than_it_tried(
    http: httpx.AsyncClient,
) -> None:
    with _double(horizon=0, memory=0) as double:
        record = await run_probe(OllamaProvider(http, double.url), MODEL, memory=True, nonce="no")
    profile = record.profile
    tried = max(r["tokens"] for r in record.activity.detail["rungs"] if r["followed"] is False)
    assert profile.memory_horizon is None
    assert profile.instruction_horizon.tokens == tried < TRAINED
    assert profile.instruction_horizon.confidence == METADATA_CONFIDENCE
    assert profile.provenance["horizon_from"] == "tried"


async def test_a_probe_that_time_left_undecided_everywhere_plans_at_the_declared_window(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    """Slowness is never failure: rungs no sample of which answered in time cap nothing."""
    with _double() as double:
        provider = OllamaProvider(http, double.url)
        record = await run_probe(provider, MODEL, nonce="slow", deadline_s=0.0)
    profile = record.profile
    assert profile.provenance["outcome"] == "undecided"
    assert profile.instruction_horizon.tokens == TRAINED
    assert profile.provenance["horizon_from"] == "declared"


async def test_the_window_the_server_reports_at_bind_beats_a_stored_declared_window(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    """The same model restarted at 8,192 kept planning at the 11,620 it was measured at,
    under its old 16,384-token window: a certain HTTP 400 before the re-plan."""
    ledger = Ledger.open(tmp_path / "ledger.db")
    model = "qwen2.5-coder-1.5b"
    with OpenAIDouble(models=(model,), props_n_ctx=16_384) as wide:
        binding = await bind_model(OpenAICompatibleProvider(http, wide.url), model)
    measured = dataclasses.replace(
        metadata_profile(binding.provider, model, 16_384, now="2026-12-01T08:00:00Z"),
        instruction_horizon=Horizon(11_620, 0.88, "2026-12-01T08:00:00Z"),
        num_ctx=16_384,
        provenance={"source": "probe", "probed_at": "2026-12-01T08:00:00Z"},
    )
    ledger.profiles().record(measured, Activity("capacity_probe", "", {}))
    with OpenAIDouble(models=(model,), props_n_ctx=8_192) as narrow:  # restarted smaller
        binding = await bind_model(OpenAICompatibleProvider(http, narrow.url), model)
    capacity = CapacityService(ledger)
    profile = capacity.profile_for(binding, [], "2026-12-01T09:00:00Z")
    assert profile.declared_window == 8_192
    assert usable_horizon(profile) <= 8_192  # it planned at 11,620 before
    assert binding.num_ctx <= 8_192
    assert key_of(binding)[1] == model
    ledger.close()


@pytest.mark.parametrize(
    ("directive", "tool_free"),
    [
        ("What was the name of the supplier I mentioned last week?", True),
        ("Search my files for the order number QX-1234.", False),
        ("Please call the `grep` tool with the pattern invoice.", False),
    ],
)
def test_a_turn_that_needs_no_tool_is_planned_against_the_larger_confirmed_horizon(
    ledger: Ledger, directive: str, tool_free: bool
) -> None:
    profile = dataclasses.replace(
        metadata_profile("ollama", MODEL, TRAINED),
        instruction_horizon=Horizon(1_358, 0.88, "2026-12-01T08:00:00Z"),
        memory_horizon=Horizon(6_000, 0.88, "2026-12-01T08:00:00Z"),
    )
    session = ledger.create_session().id
    ledger.append(session, Directive(directive, model=MODEL, provider="ollama"))
    index = build_turn_index(ledger.chain_to_root(session))
    tools = tool_surface(default_tools(), "You are Vak.", directive).tools
    projection = plan_turn(
        index,
        profile,
        system="You are Vak.",
        tools=tools,
        tail_context=tail_context_now(),
        pending=True,
    )
    horizon = projection.plan.to_json()["budget"]["horizon"]
    assert horizon == (6_000 if tool_free else 1_358)
    assert projection.profile == profile  # the reserve and ratio are the profile's own


async def test_the_memory_task_past_its_time_target_is_left_for_an_idle_run(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    with _double(horizon=3_000, memory=14_000) as double:
        provider = OllamaProvider(http, double.url)
        binding = await bind_model(provider, MODEL)
        prefix = TurnRunner(ledger, provider, default_tools()).probe_prefix(binding)
        first = await run_probe(
            provider, MODEL, prefix=prefix, memory=True, nonce="target", memory_target_s=0.0
        )
        # the tool task completed; the memory task had no time left and is undecided
        provenance = first.profile.provenance
        assert provenance["outcome"] == "completed" and "stopped" not in provenance
        assert provenance["memory"]["stopped"]["reason"] == "predicted"
        assert first.profile.memory_horizon is None and left_undecided(first.profile)
        assert 0 < provenance["tool_wall_ns"] <= provenance["wall_ns"]
        # a later run (the scheduler's, on an idle machine) continues with the memory task
        sent = sum(is_probe_body(b) for b in double.chat_bodies())
        later = await run_probe(
            provider, MODEL, prefix=prefix, memory=True, resume=resume_from(first.activity)
        )
        bodies = [b for b in double.chat_bodies() if is_probe_body(b)][sent:]
    assert bodies and all(b["messages"][-1]["content"].startswith("What is") for b in bodies)
    assert later.activity.detail["rungs"] == first.activity.detail["rungs"]
    assert later.profile.memory_horizon is not None
    assert 0.85 * 14_000 <= later.profile.memory_horizon.tokens <= 14_000
    assert not left_undecided(later.profile)


def test_a_memory_climb_its_time_target_capped_is_left_for_an_idle_run() -> None:
    """The real 1.5B's probe: the tool task took 47 s, the memory rung at 1,897 tokens passed,
    the next (4,018) did not fit the 90 s target, so the climb was capped at 2,502 and passed
    there — and the probe was stored as finished, the idle retries never continuing it."""
    history = ProbeHistory("cap", memory=True)
    assert history.memory is not None
    tool = HorizonSearch(history, TRAINED, ratio=0.25)
    recall = HorizonSearch(history.for_task(history.memory), TRAINED, ratio=0.25, confirm=False)

    def passed(search: HorizonSearch, turns: int) -> Rung:
        chars = search.history.request_chars(turns)
        samples = (Sample(True, prompt_tokens=chars // 4),) * 2
        return Rung("climb", turns, chars // 4, chars, 8_192, samples)

    tool.record(passed(tool, 20))
    recall.record(passed(recall, 20))
    assert recall.cap(int(recall.tokens(20) * 1.4))  # the next climb rung did not fit in time
    recall.record(passed(recall, recall.turns_for(recall.capped or 0)))
    base = metadata_profile("ollama", MODEL, TRAINED)
    profile = probe_profile(base, tool, now="2026-12-03T16:00:00Z", requests=4, wall_ns=1,
                            memory=recall)  # fmt: skip
    assert profile.memory_horizon is not None  # what it confirmed stands …
    assert profile.provenance["memory"]["budget_ceiling"] == recall.capped
    assert left_undecided(profile)  # … and the climb above it is continued when idle


async def test_a_stored_horizon_an_older_probe_confirmed_nowhere_is_not_trusted(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    """The window's probe stored 466 tokens at confidence 0.0 ("passed": null), smaller than
    Vak's own prefix, and every later turn went behind a reset: read now as undecided."""
    with _double() as double:
        binding = await bind_model(OllamaProvider(http, double.url), MODEL)
    stored = dataclasses.replace(
        metadata_profile("ollama", MODEL, TRAINED, quantisation="Q4_K_M"),
        instruction_horizon=Horizon(466, 0.0, "2026-12-01T08:00:00Z"),
        num_ctx=4_096,
        provenance={
            "source": "probe",
            "probed_at": "2026-12-01T08:00:00Z",
            "rescue": True,
            "outcome": "completed",
            "verdict": {"passed": None, "failed": [0, 2]},
        },
    )
    ledger.profiles().record(stored, Activity("capacity_probe", "", {}))
    profile = CapacityService(ledger).profile_for(binding, [], "2026-12-01T09:00:00Z")
    assert profile.instruction_horizon.tokens == TRAINED  # it planned at 466 before
    assert profile.instruction_horizon.confidence == METADATA_CONFIDENCE
    assert profile.provenance["undecided"] is True
    assert binding.num_ctx != 4_096  # nor the runner window sized on that horizon


async def test_a_tool_task_that_followed_nowhere_beside_a_memory_task_out_of_time_plans_no_larger_than_it_tried(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    """The real 1.5B on efficacy's workspace prefix: the tool task failed at every rung in
    182 s, past the memory task's 90 s target, so the memory task was never sent — and the
    model was planned at its declared 32,768 tokens (every file search ran out of 240 s). The
    probe keeps its time target; the tool turn gets the largest size it was tried at."""
    with _double(horizon=200, memory=3_000) as double:  # 200: under the bare prefix
        provider = OllamaProvider(http, double.url)
        binding = await bind_model(provider, MODEL)
        prefix = TurnRunner(ledger, provider, default_tools()).probe_prefix(binding)
        record = await run_probe(
            provider, MODEL, prefix=prefix, memory=True, nonce="late", memory_target_s=0.0
        )
    profile = record.profile
    tried = max(r["tokens"] for r in record.activity.detail["rungs"])
    assert profile.memory_horizon is None and left_undecided(profile)  # continued when idle
    assert profile.instruction_horizon.tokens == tried < TRAINED
    assert profile.provenance["horizon_from"] == "tried"
