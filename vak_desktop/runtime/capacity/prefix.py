"""Measuring the stable prefix: the one usage-only request per profile (spec §6).

Why it exists: `context/capacity/prefix.py` says what the measurement means and how the planner uses
it; this module sends it. Before a turn is planned, `PrefixMeter.ensure` asks whether the
profile the turn will plan with has a count for this exact prefix (system prompt + tool
schemas, by digest); if not, it sends the prefix alone with `max_tokens: 1` (Ollama's
`num_predict: 1`) and appends the count to the session as a `prefix_measured` Activity, which
the profile read folds in from then on. The request warms the runner's prefix cache, so the
turn's first request reuses what it cost.

A measurement that fails (the server is down, the provider refuses) is recorded as
`prefix_measure_failed` and the turn goes on with the chars estimate: measuring is an
improvement, never a reason for a turn not to run.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence

from vak_desktop.context.capacity.prefix import (
    measurement_activity,
    needs_measurement,
    prefix_chars,
    prefix_request,
)
from vak_desktop.context.capacity.profile import tokens_per_char
from vak_desktop.context.payloads import Activity, CapacityProfile
from vak_desktop.context.planning.assemble import prefix_digest
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers.base import ChatProvider, Done
from vak_desktop.providers.errors import ProviderError
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.capacity.service import CapacityService

PREFIX_MEASURE_FAILED = "prefix_measure_failed"


async def measure_prefix(
    provider: ChatProvider,
    binding: ModelBinding,
    profile: CapacityProfile,
    system: str,
    tools: Sequence[ToolSpec],
    *,
    keep_alive: str | int | None = None,
) -> Activity:
    """Send the prefix alone and return the `prefix_measured` record of what the provider
    counted. Raises ProviderError as the provider does, or when it reports no usage."""
    chars = prefix_chars(system, tools)
    num_ctx = binding.num_ctx_for(chars, tokens_per_char(profile))
    request = prefix_request(binding.model, system, tools, num_ctx=num_ctx, keep_alive=keep_alive)
    started = time.perf_counter_ns()
    done: Done | None = None
    async with contextlib.aclosing(provider.stream(request)) as stream:
        async for event in stream:
            if isinstance(event, Done):
                done = event
    tokens = done.usage.prompt_tokens() if done is not None else 0
    if tokens <= 0:
        raise ProviderError(f"{provider.name} reported no prompt tokens for the prefix request")
    assert done is not None
    return measurement_activity(
        profile,
        digest=prefix_digest(system, tools),
        chars=chars,
        tokens=tokens,
        cached=done.usage.cache_read_tokens,
        wall_ns=time.perf_counter_ns() - started,
    )


class PrefixMeter:
    """Measures a session's prefix once per profile and prefix digest, into the ledger."""

    def __init__(self, ledger: Ledger, provider: ChatProvider, capacity: CapacityService) -> None:
        self.ledger = ledger
        self.provider = provider
        self.capacity = capacity

    async def ensure(
        self,
        session: str,
        binding: ModelBinding,
        *,
        system: str,
        tools: Sequence[ToolSpec],
        keep_alive: str | int | None = None,
    ) -> Activity | None:
        """Measure the prefix if the profile this session would plan with has no count for
        it; returns the Activity appended (measured or failed), or None if none was due."""
        chain = self.ledger.chain_to_root(session)
        profile = self.capacity.profile_for(binding, chain, utc_now())
        if not needs_measurement(profile, prefix_digest(system, tools)):
            return None
        try:
            activity = await measure_prefix(
                self.provider, binding, profile, system, tools, keep_alive=keep_alive
            )
        except ProviderError as exc:
            activity = Activity(
                type=PREFIX_MEASURE_FAILED,
                message=f"could not measure the prompt prefix: {exc}",
                detail={"provider": binding.provider, "model": binding.model},
            )
        self.ledger.append(session, activity)
        return activity
