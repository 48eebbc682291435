"""One num_ctx per bound model: a first session with background probing reloads Ollama at most
once for a num_ctx change.

Against the loopback Ollama double, whose reload counter follows Ollama's scheduler (a loaded
runner asked for another `num_ctx` is reloaded). The session interleaves the background probe
with the user's turns the way the window does: each finished turn starts the probe, the next
turn cancels it mid-ladder, until one idle pause lets it finish.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.doubles.ollama_server import OllamaDouble
from tests.runtime.probe_doubles import is_probe_body
from vak_desktop.context.capacity.probe import PROBE_ACTIVITY
from vak_desktop.context.capacity.profile import tokens_per_char, usable_horizon
from vak_desktop.context.planning.turns import build_turn_index
from vak_desktop.ledger import Ledger
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers import OllamaProvider
from vak_desktop.runtime import ModelBinding, TurnRunner, bind_model, default_tools
from vak_desktop.runtime.capacity.scheduler import ProbeScheduler, probing_capacity
from vak_desktop.runtime.capacity.service import CapacityService, key_of
from vak_desktop.runtime.events import TurnFinished
from vak_desktop.runtime.turn.summariser import summarise_range

MODEL = "llama3.2"


@pytest.fixture(name="double")
def double_fixture() -> Iterator[OllamaDouble]:
    # Ollama's own default window (4096) differs from anything we choose: a request without
    # num_ctx would show up as a reload. A small horizon makes turn 8 need a summary packet.
    with OllamaDouble(instruction_horizon=2_500, default_num_ctx=4_096) as double:
        double.add_model(MODEL, trained_window=32_768)
        yield double


@pytest.fixture(name="http")
async def http_fixture() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def _is_probe(body: dict[str, Any]) -> bool:
    return is_probe_body(body)


async def _turn(runner: TurnRunner, session: str, binding: ModelBinding, text: str) -> None:
    async for event in runner.run(session, text, binding):
        if isinstance(event, TurnFinished):
            assert event.outcome == "completed", event
            return
    raise AssertionError("the turn never finished")


async def _let_the_probe_send(double: OllamaDouble, count: int) -> None:
    """Wait (bounded) until the double has seen `count` more probe requests."""
    start = sum(_is_probe(b) for b in double.chat_bodies())
    for _ in range(500):
        if sum(_is_probe(b) for b in double.chat_bodies()) >= start + count:
            return
        await asyncio.sleep(0.01)


async def test_a_first_ten_turn_session_with_probing_reloads_at_most_once_for_num_ctx(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    provider = OllamaProvider(http, double.url)
    capacity = probing_capacity(ledger, provider)
    scheduler = capacity.scheduler
    assert isinstance(scheduler, ProbeScheduler)
    runner = TurnRunner(ledger, provider, default_tools(), capacity=capacity, measure_prefix=True)
    binding = await bind_model(provider, MODEL)
    session = ledger.create_session().id
    filler = "The ledger keeps every turn; the planner decides what travels. " * 60
    for number in range(1, 11):
        # the double echoes the end of the message: a different end, so no answer repeats one
        await _turn(runner, session, binding, f"turn {number}: {filler} That was turn {number}.")
        if number == 8:  # the summariser's request path, on the bound model
            # (a turn itself never calls the summariser: its packet is written in the background)
            index = build_turn_index(ledger.chain_to_root(session))
            profile = capacity.profile_for(binding, ledger.chain_to_root(session), utc_now())
            packet = await summarise_range(
                provider,
                binding,
                index,
                (index.turns[0].turn_id, index.turns[-1].turn_id),
                max_tokens=200,
                ratio=tokens_per_char(profile),
                keep_alive="30m",
                window=usable_horizon(profile),
            )
            assert packet.summary  # the summariser did send its request
        probe = scheduler.in_flight(key_of(binding))
        if number < 5:  # the next turn cancels the probe a couple of rungs in
            await _let_the_probe_send(double, 2)
        elif number == 5 and probe is not None:  # an idle pause: the probe finishes
            await asyncio.wait_for(probe, 30)
    await scheduler.aclose()

    bodies = double.chat_bodies()
    assert sum(_is_probe(b) for b in bodies) > 0  # the probe did run between turns
    assert all("num_ctx" in (b.get("options") or {}) for b in bodies)  # never Ollama's default
    assert any(
        e.payload.type == PROBE_ACTIVITY
        for e in ledger.chain_to_root(session)
        if hasattr(e.payload, "type")
    )  # the measured profile reached the session, so its window was adopted
    reloads = double.reloads("num_ctx")
    assert len(reloads) <= 1, [(r.previous_num_ctx, r.num_ctx) for r in reloads]
    assert len(double.reloads("cold")) == 1  # loaded once, then kept (keep_alive)


async def test_an_unmeasured_binding_sends_the_probe_window_on_its_first_side_request(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    """The summariser, on a model no probe has measured yet, sends the window the turns use:
    not Ollama's default (the 8192 → 4096 → 8192 reloads `vak eval` showed)."""
    provider = OllamaProvider(http, double.url)
    capacity = CapacityService(ledger)
    binding = await bind_model(provider, MODEL)
    session = ledger.create_session().id
    runner = TurnRunner(ledger, provider, default_tools(), capacity=capacity)
    await _turn(runner, session, binding, "hello")
    window = binding.num_ctx
    assert window == 32_768  # the probe's window for a 32k model: its top rung fits
    fresh = await bind_model(provider, MODEL)
    capacity.profile_for(fresh, ledger.chain_to_root(session), "2026-12-01T10:00:00Z")
    assert fresh.num_ctx == window  # chosen once from the profile, before any request
