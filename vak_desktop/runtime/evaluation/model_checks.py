"""The checks of `vak eval` that need a model (spec "Verification"); each works in a temporary
ledger, so the user's sessions are never written to.

- `two_model_replay`: the fixture session planned under a small profile needs a packet, which
  the bound model writes as the summariser; re-planned under a large profile every packeted turn
  is back whole with no `<context_summary>`; under the small profile again the stored packet is
  reused (no summariser call, no new Compaction) and the projection is byte-identical.
- `cache_test`: two consecutive turns on a fresh session share a prefix digest, and the second
  turn's first request read at least the stable prefix from the cache — as the provider
  reports cached tokens, or, for a runner that reports none (Ollama), as inferred from prefill
  time: the first turn is a true miss (a nonce opens its system text), which gives the prefill
  rate; the second's prefill time at that rate says how many tokens it really processed.
- `probe_harness`: the model's measured (stored) profile and the fixture's plan under it; the
  plan never exceeds the horizon and never splits a turn.
"""

from __future__ import annotations

import contextlib
import secrets
import tempfile
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

from vak_desktop.context.capacity.profile import profile_to_json, tokens_per_char, usable_horizon
from vak_desktop.context.invariants import NO_SPLIT, WITHIN_HORIZON, request_findings
from vak_desktop.context.payloads import CapacityProfile, Compaction, Receipt
from vak_desktop.context.planning.planner import Fidelity
from vak_desktop.context.planning.turn_cards import full_record
from vak_desktop.context.planning.turns import build_turn_index, split_turns
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.ledger import LEDGER_FILENAME, Ledger
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers.base import ChatProvider, StreamEvent
from vak_desktop.providers.errors import ProviderError
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.capacity.service import CapacityService, capacity_profile_for, key_of
from vak_desktop.runtime.evaluation.checks import Check
from vak_desktop.runtime.evaluation.fixture import (
    ASK,
    LARGE_HORIZON,
    SMALL_HORIZON,
    fixture_profile,
    write_fixture,
)
from vak_desktop.runtime.inspection.preview import preview_next
from vak_desktop.runtime.tools import ToolRegistry
from vak_desktop.runtime.tools.surface import tool_surface
from vak_desktop.runtime.turn.compaction import project_summarised
from vak_desktop.runtime.turn.projection import Projection, step_request
from vak_desktop.runtime.turn.runner import TurnRunner

CACHE_SHARE = 0.9  # of the stable prefix the second turn must read from the cache (estimates)
CACHE_ASKS = ("Name one colour of the rainbow, in one word.", "Name a second colour, in one word.")


class CountingProvider:
    """The bound provider, keeping every request it was asked to stream (the summariser calls a
    check must count, the requests whose prefix a check measures)."""

    def __init__(self, provider: ChatProvider) -> None:
        self.inner = provider
        self.name = provider.name
        self.host = provider.host
        self.requests: list[ChatRequest] = []

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        self.requests.append(request)
        async with contextlib.aclosing(self.inner.stream(request)) as events:
            async for event in events:
                yield event


@contextlib.contextmanager
def scratch_ledger() -> Iterator[Ledger]:
    """A ledger in a temporary directory, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="vak-eval-") as folder:
        ledger = Ledger.open(Path(folder) / LEDGER_FILENAME)
        try:
            yield ledger
        finally:
            ledger.close()


def _profiles(binding: ModelBinding) -> tuple[CapacityProfile, CapacityProfile]:
    provider, model, quantisation = key_of(binding)
    small = fixture_profile(provider, model, quantisation, SMALL_HORIZON, output_reserve=1_024)
    large = fixture_profile(provider, model, quantisation, LARGE_HORIZON, output_reserve=8_192)
    return small, large


async def _project(
    ledger: Ledger,
    session: str,
    provider: ChatProvider,
    binding: ModelBinding,
    registry: ToolRegistry,
    system: str,
    keep_alive: str | int | None,
) -> tuple[Projection, ChatRequest]:
    """What the runtime does before a turn's first step: plan against the profile the chain
    gives (summarising first when the plan wants a packet no stored one covers), then build the
    step's request."""
    surface = tool_surface(registry, system, ASK)
    projection = await project_summarised(
        ledger,
        session,
        provider,
        binding,
        system=surface.system,
        tools=surface.prefix,
        keep_alive=keep_alive,
        capacity=CapacityService(ledger),
    )
    request = step_request(
        ledger,
        session,
        binding,
        projection,
        system=surface.system,
        tools=surface.tools,
        keep_alive=keep_alive,
        think=None,
    )
    return projection, request


def _whole_in(messages: tuple[Message, ...], record: list[Message]) -> bool:
    starts = [i for i, m in enumerate(messages) if m == record[0]]
    return any(messages[i : i + len(record)] == tuple(record) for i in starts)


def _summaries(request: ChatRequest) -> int:
    return sum(m.content.startswith("<context_summary") for m in request.messages)


async def two_model_replay(
    provider: ChatProvider,
    binding: ModelBinding,
    registry: ToolRegistry,
    system: str,
    keep_alive: str | int | None,
) -> Check:
    name = "two_model_replay"
    counting = CountingProvider(provider)
    small, large = _profiles(binding)
    with scratch_ledger() as ledger:
        session = write_fixture(ledger, model=small.model)  # its turns ran on the small one
        ledger.append(session, small)
        first, sent = await _project(
            ledger, session, counting, binding, registry, system, keep_alive
        )

        def packets() -> list[Compaction]:
            chain = ledger.chain_to_root(session)
            return [e.payload for e in chain if isinstance(e.payload, Compaction)]

        calls = len(counting.requests)
        if first.plan.packet is None or len(packets()) != 1 or calls == 0:
            return Check(
                name,
                False,
                f"under the small profile ({SMALL_HORIZON:,} tokens) the plan did not get one "
                f"stored packet ({len(packets())} written, {calls} summariser calls)",
            )
        packeted = [t for t in first.plan.turns if t.fidelity is Fidelity.PACKET]
        if _summaries(sent) != 1:
            return Check(name, False, "the small profile's request carries no single packet")

        ledger.append(session, large)
        whole, wide = await _project(
            ledger, session, counting, binding, registry, system, keep_alive
        )
        index = build_turn_index(ledger.chain_to_root(session))
        missing = [
            t.index + 1
            for t in packeted
            if not _whole_in(wide.messages, full_record(index.turns[t.index]))
        ]
        fidelities = {t.fidelity for t in whole.plan.turns}
        if whole.plan.packet_range is not None or fidelities != {Fidelity.FULL} or missing:
            return Check(
                name,
                False,
                f"under the large profile the packeted turns are not all back whole "
                f"(fidelities {sorted(fidelities)}, turns not whole: {missing})",
            )
        if _summaries(wide) or len(counting.requests) != calls:
            return Check(name, False, "the large profile's request still carries the packet")

        ledger.append(session, small)
        again, resent = await _project(
            ledger, session, counting, binding, registry, system, keep_alive
        )
        if len(counting.requests) != calls or len(packets()) != 1:
            return Check(name, False, "re-planned under the small profile, it summarised again")
        if again.plan != first.plan:
            return Check(name, False, "re-planned under the small profile, the plan changed")
        untimed = (first.tail.split("\n", 1)[-1], again.tail.split("\n", 1)[-1])
        tails = (sent.messages[-2].content, resent.messages[-2].content)  # then the user's words
        if (
            resent.messages[:-2] != sent.messages[:-2]
            or resent.messages[-1] != sent.messages[-1]
            or tails != (first.tail, again.tail)
            or untimed[0] != untimed[1]
        ):
            return Check(name, False, "the small profile's projection is not byte-identical")
    return Check(
        name,
        True,
        f"{len(packeted)} turns packeted under {SMALL_HORIZON:,} tokens ({calls} summariser "
        f"call(s) by {binding.model}), all back whole under {LARGE_HORIZON:,}, the stored "
        "packet reused with a byte-identical projection (the clock line aside)",
    )


def _first_receipts(ledger: Ledger, session: str) -> list[Receipt]:
    return [
        e.payload
        for t in split_turns(ledger.chain_to_root(session))
        for e in t.entries
        if isinstance(e.payload, Receipt) and e.payload.step == 0
    ]


async def _drain(events: AsyncIterator[object]) -> None:
    async for _ in events:
        pass


async def cache_test(
    provider: ChatProvider,
    binding: ModelBinding,
    registry: ToolRegistry,
    system: str,
    keep_alive: str | int | None,
    store_of: Ledger,
) -> Check:
    name = "cache_test"
    counting = CountingProvider(provider)
    nonce = f"\n\n(Session check {secrets.token_hex(6)}.)"  # the first turn is a true miss
    with scratch_ledger() as ledger:
        stored = store_of.profiles().latest(*key_of(binding))
        if stored is not None:  # plan as a real chat would: the measured profile, its num_ctx
            ledger.profiles().record(stored.profile, stored.activity)
        runner = TurnRunner(
            ledger, counting, registry, keep_alive=keep_alive, system_prompt=system + nonce
        )
        session = ledger.create_session(title="vak eval cache test").id
        for ask in CACHE_ASKS:
            await _drain(runner.run(session, ask, binding))
        receipts = _first_receipts(ledger, session)
    if len(receipts) != 2:
        return Check(name, False, f"expected two answered turns, got {len(receipts)} receipts")
    one, two = receipts
    if one.prefix_digest != two.prefix_digest:
        return Check(name, False, f"the prefix digest changed: {one.prefix_digest} → {two.prefix_digest}")  # fmt: skip
    second = next(r for r in reversed(counting.requests) if r.messages[-1].content.endswith(CACHE_ASKS[1]))  # fmt: skip
    prefix_chars = second.messages[0].chars() + sum(t.chars() for t in second.tools)
    ratio = one.usage.prompt_tokens() / max(1, one.request_chars)
    prefix = int(prefix_chars * ratio)
    prompt = two.usage.prompt_tokens()
    if two.usage.cache_read_tokens > 0:
        cached, how = two.usage.cache_read_tokens, "reported by the provider"
    elif one.timings.prompt_eval_ns > 0 and two.timings.prompt_eval_ns > 0:
        rate = one.usage.prompt_tokens() / one.timings.prompt_eval_ns  # tokens per ns, a miss
        cached = prompt - round(two.timings.prompt_eval_ns * rate)
        how = "inferred from prefill time at the first turn's rate"
    else:
        return Check(name, False, "the provider reports neither cached tokens nor prefill time")
    detail = (
        f"prefix {one.prefix_digest[:15]}… shared; the second turn read {cached:,} of "
        f"{prompt:,} prompt tokens from the cache ({how}); the stable prefix is ≈{prefix:,}"
    )
    return Check(name, cached >= CACHE_SHARE * prefix, detail)


async def probe_harness(
    binding: ModelBinding, registry: ToolRegistry, system: str, store_of: Ledger
) -> Check:
    name = "probe_harness"
    profile = capacity_profile_for(binding, [], utc_now(), store=store_of.profiles())
    source = profile.provenance.get("source", "")
    measured = (
        f"probed {profile.provenance.get('probed_at', '')}"
        if source == "probe"
        else "not probed: the metadata profile (run `vak probe`)"
    )
    with scratch_ledger() as ledger:
        session = write_fixture(ledger, pending="", model=profile.model)  # as if its own
        preview = preview_next(
            ledger, session, profile, directive=ASK, system=system, tools=registry
        )
    index = preview.index
    pending = index.turns[-1]
    findings = [
        f
        for f in request_findings(index, preview.plan, preview.request, pending, tokens_per_char(profile))
        if f.invariant in (NO_SPLIT, WITHIN_HORIZON)
    ]  # fmt: skip
    counts = {f: sum(t.fidelity is f for t in preview.plan.turns) for f in Fidelity}
    horizon = usable_horizon(profile)
    detail = (
        f"{binding.model}: horizon {profile.instruction_horizon.tokens:,} tokens (confidence "
        f"{profile.instruction_horizon.confidence:.1f}, {measured}), "
        f"{tokens_per_char(profile):.3f} tokens/char, cache {profile.cache}; the fixture's plan: "
        f"{counts[Fidelity.FULL]} whole, {counts[Fidelity.CARD]} cards, "
        f"{counts[Fidelity.PACKET]} packeted, request ≈{preview.request_tokens:,} of "
        f"{horizon:,} tokens"
    )
    if preview.reset is not None:  # the turn would write a Reset first: said, as it would be
        detail += f", {counts[Fidelity.BEHIND_RESET]} behind a reset ({preview.reset.reason})"
    if findings:
        detail += "; " + "; ".join(str(f) for f in findings[:5])
    data = {"profile": profile_to_json(profile), "plan": preview.plan.to_json()}
    return Check(name, not findings, detail, data=data)


async def model_checks(
    provider: ChatProvider,
    binding: ModelBinding,
    registry: ToolRegistry,
    system: str,
    keep_alive: str | int | None,
    ledger: Ledger,
) -> list[Check]:
    """Every check that needs the bound model; a provider failure fails that check only."""
    runs: tuple[tuple[str, Callable[[], Awaitable[Check]]], ...] = (
        ("probe_harness", lambda: probe_harness(binding, registry, system, ledger)),
        ("two_model_replay", lambda: two_model_replay(provider, binding, registry, system, keep_alive)),
        ("cache_test", lambda: cache_test(provider, binding, registry, system, keep_alive, ledger)),
    )  # fmt: skip
    checks = []
    for name, run in runs:
        try:
            checks.append(await run())
        except ProviderError as exc:
            checks.append(Check(name, False, f"the model failed: {exc}"))
    return checks
