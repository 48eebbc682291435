"""Prefill while the user types: the draft's whole request reaches the model's cache first.

On a laptop CPU a small model prefills ~100–200 tokens a second, so the history a turn carries
costs seconds before its first token — unless the server's prompt cache already holds it. Once
a turn has run, the next one mostly hits that cache; the first turn on an imported or reopened
session does not. So while the user types (the window asks after a pause in typing), the runner
plans the request the next turn would send for the draft — the same surface, plan, handoff and
num_ctx, with nothing written to the ledger — and sends all of it, its tail too (the time, the
passages the draft recalled, the draft), for one output token. The turn then prefills only
from where its request parts from the draft's: nothing when the draft was sent as it stood,
its tail when the user typed on (decision 0077).

A warm request is an optimisation: only for a model the user hosts (it costs time, not money),
only when nothing else runs on that model, one at a time. A turn that starts while one is in
flight waits for it (it prefills exactly what the turn needs), at most `WAIT_S`. A failure is
logged, never shown: the turn simply prefills its own request.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from dataclasses import dataclass

from vak_desktop.context.payloads import CapacityProfile
from vak_desktop.context.planning.turns import TurnIndex
from vak_desktop.context.request import ChatRequest
from vak_desktop.providers.base import ChatProvider, Done
from vak_desktop.providers.errors import ProviderError
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.tools.surface import ToolSurface
from vak_desktop.runtime.turn.projection import plan_turn, request_from, tail_context_now
from vak_desktop.runtime.turn.reset import index_ahead

log = logging.getLogger(__name__)

WAIT_S = 30.0  # how long a turn waits for a warm request in flight before it cancels it
DRAFT_TURN = "draft"  # the id of the not-yet-written turn a warm request plans for


@dataclass(frozen=True)
class Warmed:
    """What one warm request did: the tokens it sent, how many the cache already held, and
    how long the server took."""

    prompt_tokens: int
    cached_tokens: int
    seconds: float


def draft_request(
    index: TurnIndex,
    session: str,
    binding: ModelBinding,
    profile: CapacityProfile,
    draft: str,
    *,
    surface: ToolSurface,
    keep_alive: str | int | None,
    think: bool | None,
) -> ChatRequest:
    """The request the session's next turn would send if `draft` were sent now: the Reset it
    would write first (`reset.index_ahead`), its plan and its tail, as `step_request` builds
    a running turn's — the same bytes, the same num_ctx."""
    ahead, _reset = index_ahead(
        index, profile, draft, system=surface.system, tools=surface.prefix, turn_id=DRAFT_TURN
    )
    projection = plan_turn(
        ahead,
        profile,
        system=surface.system,
        tools=surface.prefix,
        tail_context=tail_context_now(),
        pending=True,
    )
    return request_from(
        ahead,
        session,
        binding,
        projection,
        system=surface.system,
        tools=surface.tools,
        keep_alive=keep_alive,
        think=think,
    )


def warm_part(request: ChatRequest) -> ChatRequest:
    """What a warm request sends of `request`: all of it, for one output token, under the same
    num_ctx (Ollama reloads a model whose num_ctx changes)."""
    return dataclasses.replace(request, max_tokens=1)


async def prefill(provider: ChatProvider, request: ChatRequest) -> Warmed | None:
    """Send the warm request and drain it; None when the provider refused it (logged)."""
    start = time.monotonic()
    done: Done | None = None
    try:
        async with contextlib.aclosing(provider.stream(request)) as events:
            async for event in events:
                if isinstance(event, Done):
                    done = event
    except ProviderError as exc:
        log.info("warm request refused: %s", exc)
        return None
    if done is None:
        return None
    usage = done.usage
    warmed = Warmed(usage.prompt_tokens(), usage.cache_read_tokens, time.monotonic() - start)
    log.info(
        "warm request: %d prompt tokens, %d already cached, %.1f s",
        warmed.prompt_tokens,
        warmed.cached_tokens,
        warmed.seconds,
    )
    return warmed


class Warmer:
    """A runner's warm request in flight, at most one (the model serves one prompt at a time)."""

    def __init__(self) -> None:
        self._task: asyncio.Task[Warmed | None] | None = None

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self, provider: ChatProvider, request: ChatRequest) -> asyncio.Task[Warmed | None]:
        """Send `request` (a `warm_part`) in the background."""
        assert not self.busy
        self._task = asyncio.create_task(prefill(provider, request), name="warm-request")
        return self._task

    async def wait(self) -> None:
        """Let the warm request in flight finish (a turn about to start): it prefills what the
        turn will send. Past `WAIT_S` it is cancelled; its outcome never reaches the turn."""
        task = self._task
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), WAIT_S)
        except TimeoutError:
            task.cancel()
        except Exception:  # an optimisation's failure never fails the turn
            log.exception("warm request failed")

    async def aclose(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
