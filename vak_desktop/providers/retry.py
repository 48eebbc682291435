"""Retrying what a provider asked us to retry: rate limits (429) and server failures (5xx,
Anthropic's 529 "overloaded"), with exponential backoff and jitter, honouring `Retry-After`.

A server that answers 503 because its model is still loading (the llama.cpp server) is asked
again every second for up to `max_loading`, with one `Waiting` notice, outside the retry count.

A stream is retried only while nothing of it has reached the caller: once one event was
yielded, the caller has shown it (and the turn may have recorded it), so a later failure is
raised as it is instead of being papered over by a second answer. Everything else (an
over-length request, a refused key, an unknown model) is raised at once: asking again would
get the same answer.

The sleep and the jitter are injectable so tests run the whole schedule in no time and can
read the delays it chose.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from vak_desktop.providers.base import StreamEvent, Waiting
from vak_desktop.providers.errors import ProviderError, RateLimited, ServerError

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait. `attempts` counts every try, the first included."""

    attempts: int = 4
    base_delay: float = 1.0  # seconds before the first retry; doubled for each one after
    max_delay: float = 30.0
    # A server that asks for a longer pause than this is not waited for: the user sees the
    # rate limit (with its Retry-After) instead of a turn that hangs for minutes.
    max_retry_after: float = 120.0
    max_loading: float = 300.0  # how long a server that says its model is loading is waited for
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, repr=False)
    jitter: Callable[[], float] = field(default=random.random, repr=False)  # in [0, 1)

    def delay(self, retry: int, error: ProviderError) -> float | None:
        """Seconds to wait before retry number `retry` (0-based) after `error`, or None when
        it is not to be retried."""
        if retry + 1 >= self.attempts or not retryable(error):
            return None
        asked = error.retry_after if isinstance(error, RateLimited) else None
        if asked is not None:
            return asked if asked <= self.max_retry_after else None
        backoff = min(self.max_delay, self.base_delay * 2.0**retry)
        # "equal jitter": at least half the backoff, so retries never bunch up at zero
        return backoff / 2 + backoff / 2 * self.jitter()


NO_RETRY = RetryPolicy(attempts=1)
LOADING_POLL = 1.0  # seconds between two asks of a server still loading its model
_LOADING = ("loading model", "model is loading", "model is still loading")


def still_loading(error: ProviderError) -> bool:
    """A 503 that says the model is still loading (the llama.cpp server's "Loading model"):
    asked again every `LOADING_POLL` s for up to `max_loading`, outside the retry count."""
    status = getattr(error, "status", None)
    text = str(error).lower()
    return (isinstance(error, RateLimited) or status == 503) and any(m in text for m in _LOADING)


def retryable(error: ProviderError) -> bool:
    """Rate limits and server-side failures; a ServerError without a status is a failure the
    server reported inside an otherwise good stream (e.g. Anthropic's `overloaded_error`)."""
    if isinstance(error, RateLimited):
        return True
    return isinstance(error, ServerError) and (error.status is None or error.status >= 500)


async def stream_with_retry(
    open_stream: Callable[[], AsyncGenerator[StreamEvent, None]], policy: RetryPolicy, who: str
) -> AsyncGenerator[StreamEvent, None]:
    """The events of `open_stream()`, opened again after a retryable failure as long as no
    event has been yielded yet."""
    retry, loading, told = 0, 0.0, False
    while True:
        yielded = False
        try:
            async with contextlib.aclosing(open_stream()) as events:
                async for event in events:
                    if isinstance(event, Waiting):
                        if told:  # one notice a request, however many attempts it takes
                            continue
                        told = True
                    else:
                        yielded = True
                    yield event
            return
        except ProviderError as exc:
            if not yielded and still_loading(exc) and loading < policy.max_loading:
                pause = min(LOADING_POLL, policy.max_loading - loading)
                loading += pause
                if not told:  # the llama.cpp server answers 503 "Loading model" meanwhile
                    told = True
                    yield Waiting(
                        f"waiting for the model to load: {who} says it is loading it ({exc})"
                    )
                await policy.sleep(pause)
                continue
            wait = None if yielded else policy.delay(retry, exc)
            if wait is None:
                raise
            log.info("%s: %s; retrying in %.1f s (retry %d)", who, exc, wait, retry + 1)
            await policy.sleep(wait)
            retry += 1


async def call_with_retry(call: Callable[[], Awaitable[T]], policy: RetryPolicy, who: str) -> T:
    """`await call()`, tried again after a retryable failure."""
    retry = 0
    while True:
        try:
            return await call()
        except ProviderError as exc:
            wait = policy.delay(retry, exc)
            if wait is None:
                raise
            log.info("%s: %s; retrying in %.1f s (retry %d)", who, exc, wait, retry + 1)
            await policy.sleep(wait)
            retry += 1
