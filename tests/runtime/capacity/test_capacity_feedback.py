"""Feedback from every receipt (issue #4): tokens per char over every prompt token the provider
counted, prefill speed from cache misses only, the horizon lowered by a failed explicit
instruction near it — and never widened by anything but a probe."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import AsyncGenerator

from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.capacity.feedback import (
    CONTEXT_OVERFLOW,
    INSTRUCTION_FAILED,
    fold_feedback,
)
from vak_desktop.context.capacity.profile import metadata_profile
from vak_desktop.context.payloads import (
    Activity,
    CapacityProfile,
    Ewma,
    Horizon,
    Receipt,
    Timings,
    Usage,
)
from vak_desktop.context.request import ChatRequest
from vak_desktop.ledger import Ledger
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers.base import Done, StreamEvent, TextDelta
from vak_desktop.runtime import ModelBinding, ToolRegistry, TurnRunner, default_tools
from vak_desktop.runtime.capacity.service import CapacityService, ProfileCache, ProfileKey, key_of
from vak_desktop.runtime.events import TurnFinished
from vak_desktop.runtime.tools import RecallTool

TRUE_RATIO = 0.25  # the loopback double's 4 chars per token
NOW = "2026-11-30T09:00:00.000000Z"


class CachingProvider:
    """A hosted-style provider: it bills `TRUE_RATIO` tokens per char sent, and reports more of
    them as cache reads each turn (input_tokens → 0 as the cache hit rate → 95 %)."""

    name = "cached"
    host = "cached://"

    def __init__(self) -> None:
        self.turn = 0

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        self.turn += 1
        total = math.ceil(request.chars() * TRUE_RATIO * (1.06 if self.turn % 2 else 0.94))
        hit = min(0.95, 0.1 * self.turn)
        cached = int(total * hit)
        yield TextDelta(f"answer {self.turn}: " + "text " * 40)
        usage = Usage(input_tokens=total - cached, output_tokens=20, cache_read_tokens=cached)
        yield Done("stop", usage, Timings(prompt_eval_ns=10**9))


async def test_tokens_per_char_converges_to_the_true_ratio_as_cache_hits_grow(
    ledger: Ledger,
) -> None:
    provider = CachingProvider()
    runner = TurnRunner(ledger, provider, default_tools())
    binding = ModelBinding(provider="cached", model="m", details=None)
    session = ledger.create_session().id
    ratios, naive = [], Ewma(0.0)
    for i in range(12):
        async for event in runner.run(session, f"question {i}: " + "words " * 200, binding):
            assert not isinstance(event, TurnFinished) or event.outcome == "completed"
        chain = ledger.chain_to_root(session)
        ratios.append(runner.capacity.profile_for(binding, chain, NOW).tokens_per_char.value)
        receipt = next(e.payload for e in reversed(chain) if isinstance(e.payload, Receipt))
        naive = naive.update(receipt.usage.input_tokens / receipt.request_chars)
    assert abs(ratios[-1] - TRUE_RATIO) <= 0.02 * TRUE_RATIO  # converged
    assert min(ratios) >= 0.9 * TRUE_RATIO  # and never collapsed on the way
    # what counting input_tokens alone would have learned: a ratio collapsing with the hit rate
    assert naive.value < 0.2 * TRUE_RATIO


def _receipt(**fields: object) -> Receipt:
    values: dict[str, object] = {
        "provider": "ollama",
        "model": "m",
        "usage": Usage(input_tokens=4_000),
        "timings": Timings(prompt_eval_ns=4 * 10**9),
        "request_chars": 16_000,
        "num_ctx": 8_192,
        "prefix_digest": "b3:a",
    }
    values.update(fields)
    return Receipt(**values)  # type: ignore[arg-type]


def _profile(horizon: int = 10_000) -> CapacityProfile:
    base = metadata_profile("ollama", "m", 131_072)
    return dataclasses.replace(base, instruction_horizon=Horizon(horizon, 0.9, NOW))


def test_prefill_speed_is_learned_from_cache_misses_only() -> None:
    cold = _receipt()  # the model's first request here: nothing could be cached
    warm = _receipt(timings=Timings(prompt_eval_ns=10**7))  # same window, same prefix: a hit
    reloaded = _receipt(num_ctx=16_384, timings=Timings(prompt_eval_ns=8 * 10**9))
    profile = fold_feedback(_profile(), [cold, warm, warm, reloaded], now=NOW)
    assert profile.prefill_tps.samples == 2
    assert 500 <= profile.prefill_tps.value <= 1_000
    assert profile.tokens_per_char.samples == 4  # every receipt teaches the ratio


def _failure(tokens: int, model: str = "m") -> Activity:
    detail = {"provider": "ollama", "model": model, "request_tokens": tokens}
    return Activity(type=INSTRUCTION_FAILED, detail=detail)


def test_a_failed_instruction_above_80_percent_of_the_horizon_lowers_it() -> None:
    assert (
        fold_feedback(_profile(), [_failure(7_000)], now=NOW).instruction_horizon.tokens == 10_000
    )
    lowered = fold_feedback(_profile(), [_failure(9_000)], now=NOW).instruction_horizon
    assert (lowered.tokens, lowered.confidence) == (9_000, 0.6)
    assert fold_feedback(_profile(), [_failure(9_000, "other")], now=NOW) == _profile()


def test_feedback_never_widens() -> None:
    tight = dataclasses.replace(_profile(), verified_window=8_000)
    overflow = Activity(
        type=CONTEXT_OVERFLOW,
        detail={"provider": "ollama", "model": "m", "verified_window": 30_000},
    )
    after = fold_feedback(tight, [overflow, _failure(50_000)], now=NOW)
    assert after.verified_window == 8_000
    assert after.instruction_horizon.tokens == 10_000


class RecordingScheduler:
    """Stands in for the ProbeScheduler: records what the turn asked of it."""

    def __init__(self) -> None:
        self.cache = ProfileCache()
        self.reprobes: list[ProfileKey] = []
        self.cancelled: list[ProfileKey] = []
        self.started: list[ProfileKey] = []

    def cancel(self, key: ProfileKey) -> bool:
        self.cancelled.append(key)
        return False

    def maybe_start(self, binding: ModelBinding, prefix: object = None) -> object:
        self.started.append(key_of(binding))
        return None

    def request_reprobe(self, key: ProfileKey) -> None:
        self.reprobes.append(key)

    def probe_window(self, binding: ModelBinding) -> int:
        return 8_192

    async def aclose(self) -> None:
        pass


async def _instructed_turn(ledger: Ledger, horizon: int) -> tuple[CapacityProfile, list[str]]:
    """A turn told to call `recall` whose model answers in prose instead (~1.25k-token request:
    the scripted provider counts a token per 4 chars)."""
    scheduler = RecordingScheduler()
    capacity = CapacityService(ledger, scheduler=scheduler)
    binding = ModelBinding(provider="scripted", model="m", details=None)
    session = ledger.create_session().id
    profile = dataclasses.replace(
        metadata_profile("scripted", "m", 131_072),
        instruction_horizon=Horizon(horizon, 0.9, NOW),
        provenance={"source": "probe", "probed_at": utc_now()},
    )
    ledger.append(session, profile)
    provider = ScriptedProvider(Scripted(text="I looked it up in my memory instead."))
    tools = ToolRegistry([RecallTool()])  # the ~1.25k-token request the horizons are set by
    runner = TurnRunner(ledger, provider, tools, capacity=capacity)
    directive = "Call the `recall` tool on turn 1 first. " + "Then compare it. " * 230
    async for _ in runner.run(session, directive, binding):
        pass
    assert scheduler.cancelled == scheduler.started == [key_of(binding)]
    chain = ledger.chain_to_root(session)
    failures = [e.payload for e in chain if getattr(e.payload, "type", "") == INSTRUCTION_FAILED]
    assert len(failures) == 1  # recorded whatever the size
    return capacity.profile_for(binding, chain, NOW), [str(k) for k in scheduler.reprobes]


async def test_a_turn_that_skips_a_required_tool_near_the_horizon_tightens_it(
    ledger: Ledger,
) -> None:
    profile, reprobes = await _instructed_turn(ledger, horizon=1_400)
    assert profile.instruction_horizon.confidence == 0.6
    assert 0.8 * 1_400 < profile.instruction_horizon.tokens < 1_400
    assert len(reprobes) == 1


async def test_the_same_failure_far_below_the_horizon_says_nothing_about_size(
    ledger: Ledger,
) -> None:
    profile, reprobes = await _instructed_turn(ledger, horizon=50_000)
    assert profile.instruction_horizon.tokens == 50_000 and not reprobes
