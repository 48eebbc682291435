"""The capacity probe ladder against the loopback Ollama double (issue #4, "Must show").

The double follows a tool instruction exactly when the prompt it counts is within its
`instruction_horizon` (tests/doubles/ollama_model.py), so the true horizon is known here.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from tests.doubles.ollama_server import OllamaDouble
from tests.runtime.probe_doubles import SmallWindowServer, TextFormModel
from vak_desktop.context.capacity.probe import (
    RESOLUTION,
    SAMPLE_MAX_TOKENS,
    HorizonSearch,
    Rung,
    ladder_targets,
    probe_ceiling,
)
from vak_desktop.context.capacity.probe_history import PROBE_TOOL, ProbeHistory
from vak_desktop.context.capacity.probe_result import cache_behaviour
from vak_desktop.context.capacity.probe_verdict import (
    Sample,
    sequential_verdict,
    verdict_confidence,
)
from vak_desktop.context.capacity.profile import METADATA_CONFIDENCE, usable_horizon
from vak_desktop.context.evidence.text_calls import text_form_call
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.runtime.capacity.probe import ProbeProgress, ProbeRecord, run_probe

MODEL = "gemma4:e2b"
TRUE_HORIZON = 13_000
TRAINED = 131_072
# The ladder (4k, 8k, 16k), four or five bisection steps and the confirmation of both ends of
# the final bracket, each a sequential test that stops at two agreeing samples.
MAX_CLEAN_REQUESTS = 20


@pytest.fixture(name="http")
async def http_fixture() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def _double(**settings: Any) -> OllamaDouble:
    double = OllamaDouble(instruction_horizon=TRUE_HORIZON, **settings)
    double.add_model(MODEL, trained_window=TRAINED)
    return double


@pytest.fixture(name="double")
def double_fixture() -> Iterator[OllamaDouble]:
    with _double() as double:
        yield double


async def _probe(provider: Any, **options: Any) -> ProbeRecord:
    return await run_probe(provider, MODEL, nonce="test", **options)


def _rungs(record: ProbeRecord) -> list[dict[str, Any]]:
    rungs: list[dict[str, Any]] = record.activity.detail["rungs"]
    return rungs


async def test_probe_finds_the_horizon_within_15_percent_below_and_never_above(
    double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    progress: list[ProbeProgress] = []
    record = await _probe(OllamaProvider(http, double.url), on_sample=progress.append)
    profile = record.profile
    horizon = profile.instruction_horizon
    assert 0.85 * TRUE_HORIZON <= horizon.tokens <= TRUE_HORIZON
    assert horizon.confidence >= 0.9
    bodies = double.chat_bodies()
    assert len(bodies) == profile.provenance["requests"] == len(progress) <= MAX_CLEAN_REQUESTS
    # sizes are the provider's counts, not our estimate
    counted = {double.prompt_tokens(b["messages"], b["tools"]) for b in bodies}
    assert horizon.tokens in counted
    assert all(
        b["options"]["num_ctx"] <= TRAINED and b["options"]["num_predict"] == SAMPLE_MAX_TOKENS
        for b in bodies
    )
    assert profile.num_ctx == 16_384  # one ladder size holding horizon + output reserve
    assert profile.provenance["rungs"][0].keys() == {"tokens", "samples", "followed"}
    assert record.activity.type == "capacity_probe"


async def test_every_sample_extends_the_conversation_the_runner_already_holds(
    double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    await _probe(OllamaProvider(http, double.url))
    bodies = double.chat_bodies()
    histories = [b["messages"][:-1] for b in bodies]  # all but the closing instruction
    for earlier, later in itertools.pairwise(histories):
        shorter, longer = sorted((earlier, later), key=len)
        assert longer[: len(shorter)] == shorter  # appended turns, never a rewritten one
    assert len({b["messages"][-1]["content"] for b in bodies}) == 1
    # num_ctx only steps up during a probe: at most one reload per ladder size
    sizes = [b["options"]["num_ctx"] for b in bodies]
    assert sizes == sorted(sizes)


async def test_the_cache_rung_and_prefill_come_from_the_first_two_identical_requests(
    double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    profile = (await _probe(OllamaProvider(http, double.url))).profile
    assert profile.cache == "prefix_stable"  # Ollama reports no cached tokens: timing says so
    assert profile.prefill_tps.value == pytest.approx(double.prefill_tps, rel=0.02)
    bodies = double.chat_bodies()
    assert bodies[0]["messages"] == bodies[1]["messages"]
    ratio = profile.tokens_per_char.value
    assert 0.25 < ratio < 0.3  # 4 chars per token plus the chat template's per-message tokens


@pytest.mark.parametrize("seed", range(5))
async def test_a_noisy_model_stays_within_one_bisection_step(
    http: httpx.AsyncClient, seed: int
) -> None:
    with _double() as clean_double:
        clean = await _probe(OllamaProvider(http, clean_double.url))
    step = _final_step(clean)
    # within ±10 % of the horizon each sample flips with probability 0.2: a biased coin
    with _double(noise=0.2, seed=seed) as noisy_double:
        noisy = await _probe(OllamaProvider(http, noisy_double.url))
    found = noisy.profile.instruction_horizon.tokens
    assert abs(found - clean.profile.instruction_horizon.tokens) <= step
    assert noisy.profile.provenance["requests"] <= 2 * MAX_CLEAN_REQUESTS


def _final_step(record: ProbeRecord) -> int:
    """The width of the final bracket: the smallest failing size above the horizon, minus it."""
    horizon = record.profile.instruction_horizon.tokens
    above = [r["tokens"] for r in _rungs(record) if not r["followed"] and r["tokens"] > horizon]
    step = min(above) - horizon
    assert 0 < step <= max(RESOLUTION * horizon, 400)
    return step


async def test_a_first_rung_that_fails_bisects_down_toward_the_bare_prefix(
    http: httpx.AsyncClient,
) -> None:
    with _double() as double:
        double.instruction_horizon = 1_500  # under the first rung
        record = await _probe(OllamaProvider(http, double.url))
    horizon = record.profile.instruction_horizon
    assert 1_200 <= horizon.tokens <= 1_500
    assert not record.profile.provenance["rescue"]


async def test_a_model_that_follows_nowhere_is_reported_for_the_rescue(
    http: httpx.AsyncClient,
) -> None:
    with _double() as double:
        double.instruction_horizon = 50  # below even the bare prefix
        record = await _probe(OllamaProvider(http, double.url))
    assert record.profile.provenance["rescue"] is True
    # a probe that confirmed no rung stores no horizon of its own (issue #22): at the metadata
    # confidence, the largest size it was tried at (never ~50 tokens, as it stored before, nor
    # a declared window no sample came near), and it says "undecided"
    horizon = record.profile.instruction_horizon
    tried = max(r["tokens"] for r in _rungs(record))
    assert horizon.tokens == tried < TRAINED and horizon.confidence == METADATA_CONFIDENCE
    assert record.profile.provenance["outcome"] == "undecided"
    assert record.profile.num_ctx == 0  # nor a runner window sized on a horizon it lacks
    assert min(r["turns"] for r in _rungs(record)) == 0  # it went down to the bare prefix


@pytest.mark.parametrize("style", ["json", "call"])
async def test_calls_written_as_text_count_as_followed_and_are_recorded_as_text(
    double: OllamaDouble, http: httpx.AsyncClient, style: str
) -> None:
    record = await _probe(TextFormModel(http, double, style))
    assert 0.85 * TRUE_HORIZON <= record.profile.instruction_horizon.tokens <= TRUE_HORIZON
    samples = [s for r in _rungs(record) for s in r["sample_detail"]]
    followed = [s for s in samples if s["followed"]]
    assert followed and all(s["as_text"] for s in followed)
    assert record.profile.provenance["text_form_calls"] == len(followed)


async def test_a_runner_window_below_the_trained_one_sets_the_verified_window(
    double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    server = SmallWindowServer(http, double, n_ctx=10_000)
    profile = (await _probe(server)).profile
    assert profile.verified_window == 10_000
    assert profile.instruction_horizon.tokens <= 10_000
    assert usable_horizon(profile) <= 10_000


async def test_a_ceiling_stops_the_ladder(double: OllamaDouble, http: httpx.AsyncClient) -> None:
    record = await _probe(OllamaProvider(http, double.url), max_prompt_tokens=6_000)
    assert all(r["tokens"] <= 6_000 for r in _rungs(record))
    assert record.profile.instruction_horizon.tokens <= 6_000


async def test_a_thinking_model_is_probed_with_thinking_off(http: httpx.AsyncClient) -> None:
    with _double() as double:
        double.add_model(
            "qwen3:0.6b", capabilities=("completion", "tools", "thinking"), trained_window=40_960
        )
        record = await run_probe(OllamaProvider(http, double.url), "qwen3:0.6b", nonce="t")
        assert {b.get("think") for b in double.chat_bodies()} == {False}
    assert record.profile.instruction_horizon.tokens <= TRUE_HORIZON


# -- the pure parts ---------------------------------------------------------------------------


def test_the_ladder_doubles_from_2k_and_ends_on_the_ceiling_itself() -> None:
    top = probe_ceiling(131_072)
    assert ladder_targets(top) == (2_048, 4_096, 8_192, 16_384, 32_768, 65_536, top)
    assert ladder_targets(probe_ceiling(131_072, 20_000)) == (2_048, 4_096, 8_192, 16_384, 20_000)
    assert ladder_targets(probe_ceiling(131_072, 16_384)) == (2_048, 4_096, 8_192, 16_384)
    assert ladder_targets(probe_ceiling(2_048)) == (1_843,)


def test_a_rung_verdict_is_sequential_two_agreeing_or_three_of_five() -> None:
    yes, no = Sample(True), Sample(False)
    assert sequential_verdict((yes,)) is None
    assert sequential_verdict((yes, yes)) is True
    assert sequential_verdict((no, no)) is False
    assert sequential_verdict((yes, no)) is None
    assert sequential_verdict((yes, no, no)) is None  # 1–2 of five: not decided yet
    assert sequential_verdict((yes, no, no, no)) is False
    assert sequential_verdict((yes, no, yes, no)) is None
    assert sequential_verdict((yes, no, yes, no, yes)) is True  # five at most
    assert sequential_verdict((Sample(False, overflow=True, rejected=8_192),)) is False
    assert sequential_verdict((no,), votes=1) is False  # one sample a rung (the naive bench)


def test_a_verdicts_confidence_is_the_posterior_of_its_side() -> None:
    yes, no = Sample(True), Sample(False)
    assert verdict_confidence((yes, yes)) == verdict_confidence((no, no)) == 0.875
    assert verdict_confidence((yes,) * 4) == 1 - 1 / 32
    assert round(verdict_confidence((yes, no, yes, no, yes)), 3) == 0.656
    assert verdict_confidence((yes, no, yes, yes)) < verdict_confidence((yes, yes))
    assert verdict_confidence((Sample(False, error="refused"),)) == 1.0


def test_confirmation_moves_the_bracket_back_after_a_wrong_majority() -> None:
    history = ProbeHistory("x")
    search = HorizonSearch(history, 100_000, ratio=0.25)
    truth = 40  # turns: the "model" follows at ≤ 40 filler turns

    def run(turns: int, lie: bool = False) -> Rung:
        ok = (turns <= truth) != lie
        tokens = int(history.request_chars(turns) * 0.25)
        samples = (Sample(ok, prompt_tokens=tokens), Sample(ok, prompt_tokens=tokens))
        return Rung("x", turns, 0, history.request_chars(turns), 8_192, samples)

    lied = False
    while (planned := search.next_rung()) is not None:
        _, turns, _ = planned
        lie = not lied and 40 < turns <= 48  # one wrong majority just above the boundary
        lied = lied or lie
        search.record(run(turns, lie))
    assert lied
    rung = search.horizon_rung
    assert rung is not None and rung.turns <= truth


def test_text_form_calls_are_recognised_and_mentions_are_not() -> None:
    assert text_form_call('{"name": "probe_ack", "arguments": {}}', PROBE_TOOL)
    assert text_form_call('<tool_call>\n{"name": "probe_ack"}\n</tool_call>', PROBE_TOOL)
    assert text_form_call('[{"function": {"name": "probe_ack", "arguments": "{}"}}]', PROBE_TOOL)
    assert text_form_call("Sure: probe_ack()", PROBE_TOOL)
    assert text_form_call("probe_ack({})", PROBE_TOOL)
    assert not text_form_call("I will not call probe_ack today.", PROBE_TOOL)
    assert not text_form_call("probe_ack(", PROBE_TOOL)
    assert not text_form_call('{"name": "lookup"}', PROBE_TOOL)


def test_samples_of_any_size_share_their_prefix() -> None:
    history = ProbeHistory("n")
    small, large = history.messages(3), history.messages(9)
    assert large[: len(small) - 1] == small[:-1]
    assert small[-1] == large[-1]  # the same closing instruction
    assert ProbeHistory("n").messages(9) == large  # deterministic
    assert ProbeHistory("other").messages(1)[0] != small[0]  # a new run is a cache miss


def test_the_cache_rung_reads_reported_tokens_first_then_timing() -> None:
    def first_rung(*samples: Sample) -> list[Rung]:
        return [Rung("climb", 10, 4_096, 12_000, 8_192, samples)]

    miss = Sample(True, prompt_tokens=3_000, prompt_eval_ns=6 * 10**9)
    assert cache_behaviour(first_rung(miss, Sample(True, cached_tokens=2_900))) == (
        "provider_reported"
    )
    assert cache_behaviour(first_rung(miss, Sample(True, prompt_eval_ns=10**9))) == (
        "prefix_stable"
    )
    assert cache_behaviour(first_rung(miss, Sample(True, prompt_eval_ns=3 * 10**9))) == "none"
