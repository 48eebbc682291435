"""The probe measures what real requests will see (issue #17): the real prefix, turn-shaped
history, a natural request, a sequential verdict, the ceiling rung, and never a hang.

Against the loopback Ollama double with `search_requests=True`: it answers "Search my files for
… WORD." with a `grep` call carrying WORD exactly when the prompt it counts is within its
`instruction_horizon` (tests/doubles/ollama_model.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.doubles.ollama_server import OllamaDouble
from tests.runtime.probe_doubles import GatedRunner, is_probe_body
from vak_desktop.context.capacity.probe_history import PROBE_REQUEST
from vak_desktop.context.capacity.probe_verdict import (
    AGREE,
    VOTES,
    Sample,
    sequential_verdict,
    verdict_confidence,
)
from vak_desktop.context.capacity.profile import METADATA_CONFIDENCE
from vak_desktop.ledger import Ledger
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.runtime import DEFAULT_SYSTEM_PROMPT, TurnRunner, bind_model, default_tools
from vak_desktop.runtime.capacity.probe import ProbeRecord, run_probe
from vak_desktop.runtime.capacity.scheduler import ProbePolicy, ProbeScheduler, probing_capacity
from vak_desktop.runtime.capacity.service import key_of
from vak_desktop.runtime.events import TurnFinished
from vak_desktop.runtime.tools import tool_surface

MODEL = "qwen2.5-coder:0.5b"
TRUE_HORIZON = 9_000
TRAINED = 32_768


@pytest.fixture(name="http")
async def http_fixture() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


@pytest.fixture(name="double")
def double_fixture() -> Iterator[OllamaDouble]:
    with OllamaDouble(instruction_horizon=TRUE_HORIZON, search_requests=True) as double:
        double.add_model(MODEL, trained_window=TRAINED)
        yield double


@pytest.fixture(name="ledger")
def ledger_fixture(tmp_path: Any) -> Iterator[Ledger]:
    ledger = Ledger.open(tmp_path / "ledger.sqlite")
    yield ledger
    ledger.close()


async def _probe_with_real_prefix(
    ledger: Ledger, provider: Any, **options: Any
) -> tuple[ProbeRecord, Any]:
    tools = default_tools()
    binding = await bind_model(provider, MODEL)
    prefix = TurnRunner(ledger, provider, tools).probe_prefix(binding)
    record = await run_probe(provider, MODEL, nonce="shape", prefix=prefix, **options)
    return record, prefix


async def test_the_ladder_sends_the_real_prefix_turn_shaped_history_and_a_natural_request(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    provider = OllamaProvider(http, double.url)
    record, _ = await _probe_with_real_prefix(ledger, provider)
    # what a real turn of this model carries, built here by the engine's own surface
    real = tool_surface(default_tools(), DEFAULT_SYSTEM_PROMPT, PROBE_REQUEST.format(token="x"))
    bodies = double.chat_bodies()
    assert bodies and all(is_probe_body(b) for b in bodies)
    for body in bodies:
        system, *history, ask = body["messages"]
        assert system["content"] == f"[probe shape] {real.system}"  # the catalogue included
        assert [t["function"]["name"] for t in body["tools"]] == [s.name for s in real.tools]
        assert ask["role"] == "user" and ask["content"].startswith("Search my files for the")
        start = 0  # whole turns: directive, call, result, answer — or directive, answer
        while start < len(history):
            directive, reply = history[start : start + 2]
            assert directive["role"] == "user" and reply["role"] == "assistant"
            if not reply.get("tool_calls"):
                start += 2  # a chat turn
                continue
            result, answer = history[start + 2 : start + 4]
            (made,) = reply["tool_calls"]
            assert made["function"]["name"] in ("grep", "glob", "read")
            assert result["role"] == "tool" and "[evidence:" in result["content"]
            assert answer["role"] == "assistant" and answer["content"]
            start += 4
    names = {
        call["function"]["name"]
        for m in bodies[-1]["messages"]
        for call in m.get("tool_calls") or []
    }
    assert names == {"grep", "glob", "read"}  # the filler turns take turns with the file tools
    chats = [
        m
        for m, after in zip(bodies[-1]["messages"][1:], bodies[-1]["messages"][2:], strict=False)
        if m["role"] == "user" and after["role"] == "assistant" and not after.get("tool_calls")
    ]
    assert len(chats) >= 2  # and with chat turns answered without a tool, as sessions have
    horizon = record.profile.instruction_horizon
    assert 0.85 * TRUE_HORIZON <= horizon.tokens <= TRUE_HORIZON
    assert record.profile.provenance["task"].startswith("Search my files for the order number")


async def test_a_background_probe_after_a_turn_is_shaped_on_that_sessions_prefix(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    provider = OllamaProvider(http, double.url)
    capacity = probing_capacity(ledger, provider)
    scheduler = capacity.scheduler
    assert isinstance(scheduler, ProbeScheduler)
    runner = TurnRunner(ledger, provider, default_tools(), capacity=capacity)
    binding = await bind_model(provider, MODEL)
    session = ledger.create_session().id
    async for event in runner.run(session, "hello", binding):
        if isinstance(event, TurnFinished):
            break
    probe = scheduler.in_flight(key_of(binding))
    assert probe is not None
    record = await asyncio.wait_for(probe, 30)
    assert record is not None
    turn_system = double.chat_bodies()[0]["messages"][0]["content"]  # the turn's own request
    probes = [b for b in double.chat_bodies() if is_probe_body(b)]
    assert probes and all(b["messages"][0]["content"].endswith(turn_system) for b in probes)
    assert 0.85 * TRUE_HORIZON <= record.profile.instruction_horizon.tokens <= TRUE_HORIZON
    await scheduler.aclose()


async def test_a_noisy_model_gets_sequential_verdicts_and_the_profile_says_how_sure(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    with OllamaDouble(
        instruction_horizon=TRUE_HORIZON, search_requests=True, noise=0.45, seed=3
    ) as double:
        double.add_model(MODEL, trained_window=TRAINED)
        record, _ = await _probe_with_real_prefix(ledger, OllamaProvider(http, double.url))
        bodies = double.chat_bodies()
    rungs = record.activity.detail["rungs"]
    for rung in rungs:
        votes = tuple(Sample(v) for v in rung["samples"])
        assert 2 <= len(votes) <= VOTES
        assert sequential_verdict(votes) is rung["followed"]  # decided at its last sample …
        assert sequential_verdict(votes[:-1]) is None  # … and not one sample earlier
        if len(set(rung["samples"][:AGREE])) == 1:
            assert len(votes) == AGREE  # the first two agreed: it stopped there
    assert any(len(r["samples"]) > AGREE for r in rungs)  # the noise split some rung
    # the samples of one rung are one prompt: the runner's prefix cache serves all but the first
    position = 0
    for rung in rungs:
        sent = bodies[position : position + len(rung["samples"])]
        assert all(b["messages"] == sent[0]["messages"] for b in sent)
        position += len(rung["samples"])
    # the horizon's confidence is the lower of its two ends' posteriors, and it is recorded
    profile = record.profile
    verdict = profile.provenance["verdict"]
    ends = [verdict["passed"], verdict["failed"]]
    expected = min(
        verdict_confidence([Sample(True)] * yes + [Sample(False)] * (n - yes)) for yes, n in ends
    )
    assert profile.instruction_horizon.confidence == round(expected, 2)
    assert 0.5 < profile.instruction_horizon.confidence < 1.0


async def test_the_ceiling_rung_is_tried_when_the_climb_stops_between_rungs(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    with OllamaDouble(instruction_horizon=100_000, search_requests=True) as double:
        double.add_model(MODEL, trained_window=20_000)  # ceiling 18,000: 4k, 8k, 16k, 18k
        record, _ = await _probe_with_real_prefix(ledger, OllamaProvider(http, double.url))
    tokens = [r["tokens"] for r in record.activity.detail["rungs"]]
    assert max(tokens) > 16_384 and record.profile.instruction_horizon.tokens == max(tokens)
    assert record.profile.instruction_horizon.tokens >= 0.95 * 18_000


async def test_a_model_that_never_follows_gets_a_rescue_profile_with_a_clear_message(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    with OllamaDouble(instruction_horizon=0, search_requests=True) as double:
        double.add_model(MODEL, trained_window=TRAINED)
        record, _ = await asyncio.wait_for(
            _probe_with_real_prefix(ledger, OllamaProvider(http, double.url)), 30
        )
    profile = record.profile
    assert profile.provenance["rescue"] is True
    # undecided: at the metadata confidence, the largest size it was tried at — never a
    # horizon at the bare prefix (the window's probe stored 466 tokens, smaller than Vak's own
    # prefix), nor a declared window no sample came near
    rungs = record.activity.detail["rungs"]
    bare = max(r["tokens"] for r in rungs if r["turns"] == 0)
    assert profile.instruction_horizon.confidence == METADATA_CONFIDENCE
    assert bare < profile.instruction_horizon.tokens == max(r["tokens"] for r in rungs) < TRAINED
    assert profile.provenance["outcome"] == "undecided"
    assert "followed at no size tried" in record.activity.message
    assert "undecided" in record.activity.message
    assert min(r["turns"] for r in record.activity.detail["rungs"]) == 0  # down to the bare prefix


async def test_a_probe_whose_samples_never_answer_times_out_instead_of_hanging(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    provider = GatedRunner(http, double)  # the gate never opens: every sample hangs
    record, _ = await asyncio.wait_for(
        _probe_with_real_prefix(ledger, provider, sample_timeout_s=0.05), 30
    )
    # a sample that runs out of time is undecided, not failed (it failed every size before,
    # and the probe stored the smallest as a horizon at confidence 0.0)
    assert record.activity.detail["rungs"] == []  # no verdict made up
    stopped = record.activity.detail["stopped"]
    assert stopped["reason"] == "sample_timeout"
    assert stopped["undecided"]["followed"] is None
    profile = record.profile
    assert profile.provenance["outcome"] == "undecided" and not profile.provenance["rescue"]
    assert profile.instruction_horizon.tokens == TRAINED
    assert profile.instruction_horizon.confidence == METADATA_CONFIDENCE


async def test_a_probe_past_its_deadline_reports_what_it_measured(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    slow = {"realtime": True, "prefill_tps": 40_000.0, "decode_tps": 2_000.0}
    with OllamaDouble(instruction_horizon=TRUE_HORIZON, search_requests=True, **slow) as double:
        double.add_model(MODEL, trained_window=TRAINED)
        provider = OllamaProvider(http, double.url)
        record, _ = await asyncio.wait_for(
            _probe_with_real_prefix(ledger, provider, deadline_s=0.2), 30
        )
    outcome = record.profile.provenance["outcome"]
    assert outcome == ("undecided" if record.profile.provenance["undecided"] else "timed_out")
    assert record.activity.detail["outcome"] == outcome
    assert "stopped before it finished" in record.activity.message
    assert record.profile.provenance["requests"] < 8


async def test_a_background_probe_out_of_time_before_any_verdict_stores_nothing(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    provider = OllamaProvider(http, double.url)
    scheduler = ProbeScheduler(
        provider, store=ledger.profiles(), policy=ProbePolicy(deadline_s=0.0)
    )
    binding = await bind_model(provider, MODEL)
    task = scheduler.maybe_start(binding)
    assert task is not None and await asyncio.wait_for(task, 10) is None
    assert ledger.profiles().count() == 0 and scheduler.cache.get(key_of(binding)) is None
    assert "stopped before it finished" in scheduler.last_error[key_of(binding)]
    assert scheduler.needs_probe(key_of(binding), "")  # the next idle moment tries again
