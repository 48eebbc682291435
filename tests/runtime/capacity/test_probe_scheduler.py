"""When the capacity probe runs: after a turn, single-flight, yielding to turns, TTL and digest.

Against the loopback Ollama double; `GatedRunner` holds probe requests until the test lets
them go, so "a turn never waits for a probe" is observable rather than a race.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.doubles.ollama_server import OllamaDouble
from tests.runtime.probe_doubles import GatedRunner, HostedModel, is_probe_body
from vak_desktop.context.capacity.probe import PROBE_ACTIVITY
from vak_desktop.context.capacity.profile import METADATA_CONFIDENCE
from vak_desktop.context.payloads import Activity, CapacityProfile, Receipt
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import ModelBinding, TurnRunner, bind_model, default_tools
from vak_desktop.runtime.capacity.scheduler import ProbePolicy, ProbeScheduler, probing_capacity
from vak_desktop.runtime.capacity.service import CapacityService, capacity_profile_for, key_of
from vak_desktop.runtime.events import TurnFinished

MODEL, OTHER = "llama3.2", "qwen2.5:0.5b"


@pytest.fixture(name="double")
def double_fixture() -> Iterator[OllamaDouble]:
    with OllamaDouble(instruction_horizon=6_000) as double:
        double.add_model(MODEL, trained_window=32_768)
        double.add_model(OTHER, trained_window=32_768, digest="a" * 64)
        yield double


@pytest.fixture(name="http")
async def http_fixture() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


class Clock:
    """A settable UTC clock in the ledger's format."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)

    def __call__(self) -> str:
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _probe_requests(double: OllamaDouble) -> int:
    return sum(1 for body in double.chat_bodies() if is_probe_body(body))


async def _turn(runner: TurnRunner, session: str, binding: ModelBinding, text: str) -> str:
    outcome = ""
    async for event in runner.run(session, text, binding):
        if isinstance(event, TurnFinished):
            outcome = event.outcome
    return outcome


async def test_a_turn_never_waits_for_a_probe_and_cancels_the_one_on_its_model(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    provider = GatedRunner(http, double)
    capacity = probing_capacity(ledger, provider)
    scheduler = capacity.scheduler
    assert isinstance(scheduler, ProbeScheduler)
    runner = TurnRunner(ledger, provider, default_tools(), capacity=capacity)
    model, other = await bind_model(provider, MODEL), await bind_model(provider, OTHER)
    probe = scheduler.maybe_start(model)
    assert probe is not None
    await asyncio.wait_for(provider.probe_waiting.wait(), 5)  # the probe holds the runner

    # a turn on another model runs to the end while the probe is held: it never waits
    session = ledger.create_session().id
    assert await asyncio.wait_for(_turn(runner, session, other, "hello"), 5) == "completed"
    assert not probe.done()

    # a turn on the probed model stops the probe instead of competing with it (its decided
    # rungs kept for the next start: none here, the gate held its first sample)
    assert await asyncio.wait_for(_turn(runner, session, model, "and you?"), 5) == "completed"
    assert await asyncio.wait_for(probe, 5) is None
    assert capacity.cache.get(key_of(model)) is None and ledger.profiles().count() == 0
    provider.gate.set()
    await scheduler.aclose()


async def test_two_triggers_start_one_probe_and_its_result_reaches_the_session_at_next_bind(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    provider = GatedRunner(http, double)
    provider.gate.set()
    capacity = probing_capacity(ledger, provider)
    scheduler = capacity.scheduler
    assert isinstance(scheduler, ProbeScheduler)
    binding = await bind_model(provider, MODEL)
    first, second = scheduler.maybe_start(binding), scheduler.maybe_start(binding)
    assert first is not None and second is None
    record = await first
    assert record is not None and scheduler.probes_run == 1
    requests = _probe_requests(double)
    assert requests == record.profile.provenance["requests"]
    assert ledger.profiles().latest(*key_of(binding)) is not None

    # the ledger catches up when a session next binds the model, before its directive
    runner = TurnRunner(ledger, provider, default_tools(), capacity=capacity)
    session = ledger.create_session().id
    assert await _turn(runner, session, binding, "hi") == "completed"
    payloads = [e.payload for e in ledger.chain_to_root(session)]
    assert isinstance(payloads[0], Activity) and payloads[0].type == PROBE_ACTIVITY
    assert payloads[1] == record.profile
    receipt = next(p for p in payloads if isinstance(p, Receipt))
    assert receipt.plan["budget"]["horizon"] == record.profile.instruction_horizon.tokens
    assert receipt.num_ctx == record.profile.num_ctx  # the profile's one window
    await asyncio.sleep(0)
    # the finished turn asked for a probe; the profile is fresh, so none ran
    await scheduler.aclose()
    assert _probe_requests(double) == requests and scheduler.probes_run == 1


async def _probe_once(scheduler: ProbeScheduler, binding: ModelBinding) -> bool:
    """Trigger and wait; True if a ladder ran."""
    before = scheduler.probes_run
    task = scheduler.maybe_start(binding)
    assert task is not None
    await task
    return scheduler.probes_run > before


@pytest.mark.parametrize(
    ("change", "reprobed"),
    [
        (lambda c, d: c.__setattr__("now", c.now + timedelta(hours=23)), False),
        (lambda c, d: c.__setattr__("now", c.now + timedelta(hours=25)), True),
        (lambda c, d: d.add_model(OTHER, trained_window=32_768, digest="b" * 64), True),
    ],
    ids=["fresh", "stale after 24 h", "digest changed"],
)
async def test_a_stale_or_digest_changed_profile_is_reprobed_and_a_fresh_one_is_not(
    double: OllamaDouble,
    http: httpx.AsyncClient,
    ledger: Ledger,
    change: Callable[[Clock, OllamaDouble], None],
    reprobed: bool,
) -> None:
    clock = Clock()
    scheduler = ProbeScheduler(
        GatedRunner(http, double), store=ledger.profiles(), clock=clock, policy=ProbePolicy()
    )
    scheduler.provider.gate.set()  # type: ignore[attr-defined]
    binding = await bind_model(scheduler.provider, OTHER)
    assert await _probe_once(scheduler, binding)
    assert ledger.profiles().latest(*key_of(binding)).profile.model_digest == "a" * 64  # type: ignore[union-attr]
    change(clock, double)
    assert await _probe_once(scheduler, binding) is reprobed


async def test_feedback_can_ask_for_a_reprobe_of_a_fresh_profile(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    provider = GatedRunner(http, double)
    provider.gate.set()
    scheduler = ProbeScheduler(provider)
    binding = await bind_model(provider, MODEL)
    assert await _probe_once(scheduler, binding)
    assert not await _probe_once(scheduler, binding)
    scheduler.request_reprobe(key_of(binding))
    assert await _probe_once(scheduler, binding)


async def test_a_hosted_provider_is_probed_only_when_the_operator_opts_in(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    provider = HostedModel(http, double)
    binding = await bind_model(provider, MODEL)
    assert ProbeScheduler(provider).maybe_start(binding) is None
    assert _probe_requests(double) == 0
    profile = capacity_profile_for(binding, [], "2026-11-30T09:00:00Z")
    assert profile.instruction_horizon.tokens == 32_768  # declared, until feedback tightens it
    assert profile.instruction_horizon.confidence == METADATA_CONFIDENCE == 0.3
    opted_in = ProbeScheduler(provider, policy=ProbePolicy(hosted="full"))
    task = opted_in.maybe_start(binding)
    assert task is not None and (await task) is not None


async def test_the_newer_of_the_session_and_the_cache_wins(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    provider = GatedRunner(http, double)
    provider.gate.set()
    scheduler = ProbeScheduler(provider)
    capacity = CapacityService(ledger, scheduler=scheduler)
    binding = await bind_model(provider, MODEL)
    assert await _probe_once(scheduler, binding)
    cached = capacity.cache.get(key_of(binding))
    assert cached is not None
    session = ledger.create_session().id
    older = dataclasses.replace(
        cached.profile,
        instruction_horizon=dataclasses.replace(cached.profile.instruction_horizon, tokens=100),
        provenance={**cached.profile.provenance, "probed_at": "2026-01-01T00:00:00.000000Z"},
    )
    ledger.append(session, older)
    chain = ledger.chain_to_root(session)
    assert capacity.profile_for(binding, chain, "2026-11-30T09:00:00Z") == cached.profile
    assert capacity.catch_up(session, binding)
    assert not capacity.catch_up(session, binding)  # once
    assert isinstance(ledger.chain_to_root(session)[-1].payload, CapacityProfile)


async def test_a_bare_model_name_finds_the_digest_of_its_latest_tag(
    double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    provider = GatedRunner(http, double)
    tagged = double.models["llama3.2:latest"].digest
    assert await provider.inner.digest("llama3.2") == tagged
    assert await provider.inner.digest("qwen2.5:0.5b") == "a" * 64
    assert await provider.inner.digest("missing") == ""


async def test_a_watcher_hears_every_sample_then_the_end_and_a_paused_probe_ends_too(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    provider = GatedRunner(http, double)
    provider.gate.set()
    heard: list[tuple[str, int | None]] = []
    capacity = probing_capacity(
        ledger, provider, on_progress=lambda b, p: heard.append((b.model, p and p.rung))
    )
    scheduler = capacity.scheduler
    assert isinstance(scheduler, ProbeScheduler)
    binding = await bind_model(provider, MODEL)
    record = await scheduler.maybe_start(binding)  # type: ignore[misc]
    assert record is not None
    assert heard[0] == (binding.model, 1) and heard[-1] == (binding.model, None)
    assert all(rung for _, rung in heard[:-1])

    heard.clear()
    provider.gate.clear()
    provider.probe_waiting.clear()
    scheduler.request_reprobe(key_of(binding))
    task = scheduler.maybe_start(binding)
    assert task is not None
    await asyncio.wait_for(provider.probe_waiting.wait(), 5)
    assert scheduler.cancel_model(binding.model)
    await asyncio.gather(task, return_exceptions=True)
    assert heard[-1] == (binding.model, None)
    await scheduler.aclose()
