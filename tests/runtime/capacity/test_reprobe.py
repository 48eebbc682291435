"""Re-probe from receipts (issue #17): explicit instructions followed well above the horizon,
turn after turn, schedule a re-probe; feedback itself never widens the horizon.

The turns run against the loopback Ollama double with `search_requests=True` and no
instruction horizon: it always answers "Search my files for … WORD." with the `grep` call.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.doubles.ollama_server import OllamaDouble
from vak_desktop.context.capacity.feedback import (
    INSTRUCTION_FAILED,
    INSTRUCTION_FOLLOWED,
    REPROBE_EVIDENCE,
    followed_activity,
    reprobe_due,
)
from vak_desktop.context.capacity.probe import PROBE_ACTIVITY
from vak_desktop.context.capacity.profile import metadata_profile
from vak_desktop.context.payloads import Activity, CapacityProfile, Horizon
from vak_desktop.ledger import Ledger
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.runtime import TurnRunner, bind_model, default_tools
from vak_desktop.runtime.capacity.scheduler import ProbeScheduler, probing_capacity
from vak_desktop.runtime.capacity.service import followed_instruction, key_of
from vak_desktop.runtime.events import TurnFinished
from vak_desktop.runtime.settings import Settings

MODEL = "qwen2.5-coder:0.5b"
HORIZON = 600  # far below what the double follows at: an under-measured profile


@pytest.fixture(name="http")
async def http_fixture() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


@pytest.fixture(name="ledger")
def ledger_fixture(tmp_path: Any) -> Iterator[Ledger]:
    ledger = Ledger.open(tmp_path / "ledger.sqlite")
    yield ledger
    ledger.close()


def _measured(horizon: int = HORIZON) -> CapacityProfile:
    now = utc_now()
    return dataclasses.replace(
        metadata_profile("ollama", MODEL, 32_768, now=now),
        instruction_horizon=Horizon(horizon, 0.9, now),
        num_ctx=8_192,
        provenance={"source": "probe", "probed_at": now},
    )


async def _turn(runner: TurnRunner, session: str, binding: Any, text: str) -> None:
    async for event in runner.run(session, text, binding):
        if isinstance(event, TurnFinished):
            return


async def test_instructions_followed_well_above_the_horizon_schedule_one_reprobe(
    http: httpx.AsyncClient, ledger: Ledger, tmp_path: Path
) -> None:
    files = tmp_path / "files"
    files.mkdir()
    for n in range(1, REPROBE_EVIDENCE + 1):  # each search finds its own line: new answers
        (files / f"order{n}.txt").write_text(f"Order AB-{n}: {n * 7} crates.\n")
    tools = default_tools(Settings(workspace=(str(files),)))
    with OllamaDouble(search_requests=True) as double:
        double.add_model(MODEL, trained_window=32_768)
        provider = OllamaProvider(http, double.url)
        binding = await bind_model(provider, MODEL)
        quantisation = binding.details.quantisation if binding.details else ""
        profile = dataclasses.replace(_measured(), quantisation=quantisation)
        activity = Activity(type=PROBE_ACTIVITY, message="probed", detail={})
        ledger.profiles().record(profile, activity)  # fresh: nothing would probe it
        capacity = probing_capacity(ledger, provider)
        scheduler = capacity.scheduler
        assert isinstance(scheduler, ProbeScheduler)
        # a long system prompt of the user's own (kept whole in a small model's compact
        # prefix): each request stays well above the under-measured horizon
        prompt = "You help with the quarterly report on crates and shipping. " * 40
        runner = TurnRunner(ledger, provider, tools, capacity=capacity, system_prompt=prompt)
        session = ledger.create_session().id
        for n in range(1, REPROBE_EVIDENCE + 1):
            await _turn(runner, session, binding, f"Search my files for the code AB-{n}.")
            probe = scheduler.in_flight(key_of(binding))
            if n < REPROBE_EVIDENCE:  # not yet enough evidence: the fresh profile stands
                if probe is not None:
                    assert await asyncio.wait_for(probe, 10) is None
                assert scheduler.probes_run == 0
                continue
            # feedback itself never widens: until the probe lands the horizon is the old one
            chain = ledger.chain_to_root(session)
            held = capacity.profile_for(binding, chain, utc_now())
            assert held.instruction_horizon.tokens == HORIZON
            assert probe is not None
            record = await asyncio.wait_for(probe, 30)
        await scheduler.aclose()
        await tools.aclose()
    failed = [
        e
        for e in ledger.chain_to_root(session)
        if getattr(e.payload, "type", "") == INSTRUCTION_FAILED
    ]
    assert failed == []  # nothing but the evidence asked for this re-probe
    followed = [
        e.payload
        for e in ledger.chain_to_root(session)
        if isinstance(e.payload, Activity) and e.payload.type == INSTRUCTION_FOLLOWED
    ]
    assert len(followed) == REPROBE_EVIDENCE
    assert all(a.detail["request_tokens"] > 1.25 * HORIZON for a in followed)
    assert scheduler.probes_run == 1 and record is not None
    assert record.profile.instruction_horizon.tokens > HORIZON  # only the probe widened it


def _followed(tokens: int, model: str = MODEL) -> Activity:
    activity = followed_activity("call the `grep` tool", tokens, _measured(), utc_now())
    assert activity is not None
    return dataclasses.replace(activity, detail=activity.detail | {"model": model})


def test_reprobe_is_due_after_enough_evidence_and_a_failure_resets_it() -> None:
    profile = _measured()
    assert followed_activity("call the `grep` tool", 700, profile, utc_now()) is None  # ≤ 1.25×
    above = [_followed(2_000) for _ in range(REPROBE_EVIDENCE)]
    assert reprobe_due(profile, above)
    assert not reprobe_due(profile, above[:-1])
    failed = Activity(
        type=INSTRUCTION_FAILED, message="", detail={"provider": "ollama", "model": MODEL}
    )
    assert not reprobe_due(profile, [*above[:-1], failed, above[-1]])
    assert not reprobe_due(profile, [_followed(2_000, "other") for _ in range(5)])


def test_a_followed_instruction_is_an_explicit_one_the_turn_met() -> None:
    assert followed_instruction("Search my files for the code AB-1.", ["grep"]) is not None
    assert followed_instruction("Search my files for the code AB-1.", ["recall"]) is None
    assert followed_instruction("Call the `recall` tool on it.", ["recall"]) is not None
    assert followed_instruction("What is the weather?", ["grep"]) is None
