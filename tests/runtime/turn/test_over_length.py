"""Over-length recovery on a real turn (issue #4): a refusal or a silent cut is a contradiction of
the profile — the verified window is set, the turn is re-planned and retried once, never more,
and the next turn is not affected."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.doubles.ollama_server import OllamaDouble, llama_overflow
from tests.runtime.probe_doubles import LegacyOllama
from vak_desktop.context.capacity.feedback import CONTEXT_OVERFLOW, SILENT_TRUNCATION
from vak_desktop.context.capacity.probe import profile_num_ctx
from vak_desktop.context.capacity.profile import metadata_profile
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    Directive,
    Ewma,
    Horizon,
    Receipt,
)
from vak_desktop.context.planning.turn_cards import build_turn_card
from vak_desktop.context.planning.turns import TURN_CLOSED, split_turns
from vak_desktop.ledger import Ledger
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.runtime import TurnRunner, bind_model, default_tools
from vak_desktop.runtime.capacity.service import CapacityService
from vak_desktop.runtime.events import Notice, TurnEvent, TurnFinished

MODEL = "llama3.2"


@pytest.fixture(name="double")
def double_fixture() -> Iterator[OllamaDouble]:
    with OllamaDouble() as double:  # 4 chars per token
        double.add_model(MODEL, trained_window=131_072)
        yield double


@pytest.fixture(name="http")
async def http_fixture() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def _words(n: int, seed: int) -> str:
    return " ".join(f"word{(seed * 7 + i) % 97}" for i in range(n // 7))


def seed_history(
    ledger: Ledger, session: str, turns: int, chars: int, answer_chars: int | None = None
) -> None:
    """Closed turns as the runtime writes them, without receipts (nothing to learn from)."""
    for i in range(turns):
        answer = _words(chars if answer_chars is None else answer_chars, i + 50)
        ledger.append(session, Directive(text=f"Question {i}: {_words(chars, i)}", model=MODEL))
        ledger.append(session, AssistantStep(text=f"Answer {i}: {answer}"))
        turn = split_turns(ledger.chain_to_root(session))[-1]
        ledger.append(session, build_turn_card(turn, "completed", 0.25))
        ledger.append(session, Activity(type=TURN_CLOSED, detail={"outcome": "completed"}))


def _tool_requests(double: OllamaDouble) -> list[dict[str, object]]:
    """The turn's own chat requests (they offer tools); a summariser call offers none."""
    return [b for b in double.chat_bodies() if b.get("tools")]


async def _run(runner: TurnRunner, session: str, binding: object, text: str) -> list[TurnEvent]:
    return [e async for e in runner.run(session, text, binding)]  # type: ignore[arg-type]


async def test_a_400_over_length_sets_the_verified_window_and_the_replanned_retry_fits(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    provider = OllamaProvider(http, double.url)
    binding = await bind_model(provider, MODEL)
    session = ledger.create_session().id
    seed_history(ledger, session, turns=20, chars=2_500)  # ≈ 26k tokens of history
    # A probed profile whose tokens-per-char is far too low: it plans ~3× what fits num_ctx.
    wrong = dataclasses.replace(
        metadata_profile("ollama", MODEL, 131_072, quantisation="Q4_K_M"),
        instruction_horizon=Horizon(14_000, 0.9, utc_now()),
        tokens_per_char=Ewma(0.08, 10),
        provenance={"source": "probe", "probed_at": utc_now()},
    )
    wrong = dataclasses.replace(wrong, num_ctx=profile_num_ctx(wrong))
    assert wrong.num_ctx == 16_384
    ledger.profiles().record(wrong, Activity(type="capacity_probe"))
    runner = TurnRunner(ledger, provider, default_tools())

    events = await _run(runner, session, binding, "What did we settle on?")

    finished = events[-1]
    assert isinstance(finished, TurnFinished) and finished.outcome == "completed"
    requests = _tool_requests(double)
    assert len(requests) == 2  # the refused request and exactly one retry
    assert [r["options"]["num_ctx"] for r in requests] == [16_384, 16_384]  # no reload
    first, retry = (double.prompt_tokens(r["messages"], r["tools"]) for r in requests)
    assert first > 16_384 >= retry
    chain = ledger.chain_to_root(session)
    overflow = [e.payload for e in chain if getattr(e.payload, "type", "") == CONTEXT_OVERFLOW]
    assert len(overflow) == 1
    assert overflow[0].detail["verified_window"] == 16_384  # type: ignore[union-attr]
    assert any(isinstance(e, Notice) for e in events)
    profile = runner.capacity.profile_for(binding, chain, utc_now())
    assert profile.verified_window == 16_384
    assert profile.tokens_per_char.value >= 0.25  # the refusal counted our request exactly
    receipt = next(e.payload for e in reversed(chain) if isinstance(e.payload, Receipt))
    assert receipt.usage.input_tokens == retry

    # never permanent: the next turn plans against the tightened profile and is accepted
    before = len(_tool_requests(double))
    events = await _run(runner, session, binding, "And after that?")
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert len(_tool_requests(double)) == before + 1


async def test_a_second_refusal_in_the_same_turn_fails_it_without_looping(
    double: OllamaDouble, http: httpx.AsyncClient, ledger: Ledger
) -> None:
    provider = OllamaProvider(http, double.url)
    binding = await bind_model(provider, MODEL)
    session = ledger.create_session().id
    double.fail_next(400, llama_overflow(9_000, 8_192))
    double.fail_next(400, llama_overflow(9_000, 8_192))
    runner = TurnRunner(ledger, provider, default_tools())
    events = await _run(runner, session, binding, "hi")
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "failed"
    assert len(double.chat_bodies()) == 2
    events = await _run(runner, session, binding, "hi again")
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"


async def test_a_silent_truncation_is_recorded_and_the_turn_replanned_once(
    http: httpx.AsyncClient, ledger: Ledger
) -> None:
    with OllamaDouble(default_num_ctx=4_096) as double:
        double.add_model(MODEL, trained_window=131_072)
        provider = LegacyOllama(http, double.url)  # ignores truncate and num_ctx: cuts to 4k
        binding = await bind_model(provider, MODEL)
        session = ledger.create_session().id
        # ≈ 10k tokens, over 4k; short questions, so the tail's thread of them stays small
        seed_history(ledger, session, turns=8, chars=120, answer_chars=5_000)
        runner = TurnRunner(ledger, provider, default_tools(), capacity=CapacityService(ledger))
        events = await _run(runner, session, binding, "Summarise where we are.")
        requests = _tool_requests(double)
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    assert len(requests) == 2
    chain = ledger.chain_to_root(session)
    cut = [e.payload for e in chain if getattr(e.payload, "type", "") == SILENT_TRUNCATION]
    assert len(cut) == 1
    detail = cut[0].detail  # type: ignore[union-attr]
    assert detail["counted_tokens"] <= 4_096 < detail["estimated_tokens"]
    assert "text" in detail["discarded"]  # what streamed is kept in the record, verbatim
    steps = [e.payload for e in chain[-6:] if isinstance(e.payload, AssistantStep)]
    assert len(steps) == 1  # only the retry's answer is a step of the turn
    retry = double.prompt_tokens(requests[1]["messages"], requests[1]["tools"])  # type: ignore[arg-type]
    assert retry <= 4_096
