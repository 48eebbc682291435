"""The ProbeScheduler: when a model's capacity probe runs in the background (spec §1).

Why it exists: the probe is worth its time only while the model would otherwise be idle, and
never at a turn's expense. So a probe starts only after a turn finished (`maybe_start`), only
for an eligible provider (one that runs locally, or any with `[probe] hosted = "full"`), only
when the key's profile is missing, stale (24 h local, 7 d hosted), measured on another model
digest, or flagged by feedback (`request_reprobe`); there is at most one probe per key
(single-flight), and a turn about to use the key cancels it (`cancel`) rather than compete
with it for the runner. The result goes to the process cache and the profile store when the
task finishes; a session's ledger catches up the next time it binds the model.

Nothing here awaits on a turn's behalf: `maybe_start` and `cancel` return at once.

The probe runs at the window the model's turns use, so that it never interleaves a different
`num_ctx` with the user's turns on a loaded model (each change is an Ollama reload): an
unmeasured binding's turns already run at `probe_window`, and a re-probe of a measured model
runs at the binding's own window, its ladder capped to what that window holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from vak_desktop.context.capacity.probe import TTL_HOSTED_S, TTL_LOCAL_S, is_fresh
from vak_desktop.context.capacity.probe_history import ProbePrefix
from vak_desktop.ledger import Ledger, ProfileStore
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers.base import ChatProvider, ModelDigests, is_local
from vak_desktop.providers.errors import ProviderError
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.capacity.probe import (
    ProbeProgress,
    ProbeRecord,
    ladder_within,
    probe_window,
    run_probe,
)
from vak_desktop.runtime.capacity.service import (
    CapacityService,
    PrefixSource,
    ProfileCache,
    ProfileKey,
    key_of,
    newest_outside,
)

log = logging.getLogger(__name__)

ProbeRunner = Callable[..., Awaitable[ProbeRecord]]
DEADLINE_S = 30 * 60.0  # a background probe past half an hour reports what it has
ProbeWatcher = Callable[[ModelBinding, ProbeProgress | None], None]


@dataclass(frozen=True)
class ProbePolicy:
    """The operator's probe settings (the `[probe]` section)."""

    hosted: str = "off"  # "full": run the ladder for hosted providers too (it costs money)
    ttl_local_s: float = TTL_LOCAL_S
    ttl_hosted_s: float = TTL_HOSTED_S
    max_prompt_tokens: int | None = None  # the ladder's ceiling; None: 0.9 × declared
    keep_alive: str | int | None = None
    deadline_s: float | None = DEADLINE_S  # a probe stops climbing past this (never a hang)


class ProbeScheduler:
    """Single-flight background probes per (provider, model, quantisation)."""

    def __init__(
        self,
        provider: ChatProvider,
        *,
        cache: ProfileCache | None = None,
        store: ProfileStore | None = None,
        policy: ProbePolicy | None = None,
        clock: Callable[[], str] = utc_now,
        probe: ProbeRunner = run_probe,
        on_progress: ProbeWatcher | None = None,
    ) -> None:
        self.provider = provider
        # told of every sample of a probe this scheduler runs, then None when it ends (the
        # window's status bar says "measuring MODEL… rung k" and re-reads the profile)
        self.on_progress = on_progress
        self.cache = cache if cache is not None else ProfileCache()
        self.store = store
        self.policy = policy or ProbePolicy()
        self.clock = clock
        self._probe = probe
        self._tasks: dict[ProfileKey, asyncio.Task[ProbeRecord | None]] = {}
        self._reprobe: set[ProfileKey] = set()
        self.probes_run = 0  # ladders actually run (not skipped as fresh)
        self.last_error: dict[ProfileKey, str] = {}

    @property
    def eligible(self) -> bool:
        return is_local(self.provider) or self.policy.hosted == "full"

    @property
    def ttl_s(self) -> float:
        return self.policy.ttl_local_s if is_local(self.provider) else self.policy.ttl_hosted_s

    def in_flight(self, key: ProfileKey) -> asyncio.Task[ProbeRecord | None] | None:
        return self._tasks.get(key)

    def maybe_start(
        self, binding: ModelBinding, prefix: PrefixSource | None = None
    ) -> asyncio.Task[ProbeRecord | None] | None:
        """Start a background probe for `binding`'s model if it is eligible and none is in
        flight for it; the task itself decides (after one catalogue read for the digest)
        whether the profile it has is still fresh. `prefix` builds the real requests' prefix
        the ladder is shaped on (the synthetic pair without it). Returns the new task, or None."""
        key = key_of(binding)
        if not self.eligible or key in self._tasks:
            return None
        shape = prefix() if prefix is not None else None
        task = asyncio.get_running_loop().create_task(
            self._run(binding, key, shape), name=f"probe {key}"
        )
        self._tasks[key] = task
        task.add_done_callback(lambda done: self._forget(key, done))
        return task

    def _forget(self, key: ProfileKey, task: asyncio.Task[ProbeRecord | None]) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]

    def cancel(self, key: ProfileKey) -> bool:
        """Cancel an in-flight probe of `key` (a turn needs the runner). Returns at once."""
        task = self._tasks.get(key)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    def cancel_model(self, model: str) -> bool:
        """Cancel every in-flight probe of `model` (the user paused it). Returns at once."""
        return any([self.cancel(key) for key in list(self._tasks) if key[1] == model])

    def request_reprobe(self, key: ProfileKey) -> None:
        """Probe `key` at the next opportunity even if its profile is fresh."""
        self._reprobe.add(key)

    def probe_window(self, binding: ModelBinding) -> int:
        """The window an unmeasured model's turns and its probe share (the ladder's top rung)."""
        return probe_window(binding.declared_window, self.policy.max_prompt_tokens)

    def needs_probe(self, key: ProfileKey, digest: str) -> bool:
        if key in self._reprobe:
            return True
        current = newest_outside(key, self.cache, self.store)
        if current is None:
            return True
        return not is_fresh(current.profile, self.clock(), ttl_s=self.ttl_s, digest=digest)

    async def _run(
        self, binding: ModelBinding, key: ProfileKey, prefix: ProbePrefix | None = None
    ) -> ProbeRecord | None:
        try:
            digest = ""
            if isinstance(self.provider, ModelDigests):
                digest = await self.provider.digest(binding.model)
            if not self.needs_probe(key, digest):
                return None
            self._reprobe.discard(key)
            self.probes_run += 1
            num_ctx = binding.num_ctx or self.probe_window(binding)
            ceiling = self.policy.max_prompt_tokens
            ceiling = min(ceiling, ladder_within(num_ctx)) if ceiling else ladder_within(num_ctx)
            watcher = self.on_progress
            options: dict[str, Any] = {}
            if watcher is not None:
                options["on_sample"] = lambda progress: watcher(binding, progress)
            try:
                record = await self._probe(
                    self.provider,
                    binding.model,
                    details=binding.details,
                    digest=digest,
                    max_prompt_tokens=ceiling,
                    keep_alive=self.policy.keep_alive,
                    clock=self.clock,
                    num_ctx=num_ctx,
                    prefix=prefix,
                    deadline_s=self.policy.deadline_s,
                    **options,
                )
                if not record.activity.detail.get("rungs"):  # out of time, nothing measured
                    self.last_error[key] = record.activity.message
                    return None  # the next finished turn tries again
                self.cache.put(key, record)
                if self.store is not None:
                    self.store.record(record.profile, record.activity)
            finally:
                if watcher is not None:
                    watcher(binding, None)
        except ProviderError as exc:  # the next finished turn tries again
            self.last_error[key] = str(exc)
            log.info("capacity probe of %s failed: %s", binding.model, exc)
            return None
        return record

    async def aclose(self) -> None:
        """Cancel every in-flight probe and wait for them to end (at shutdown)."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


def probing_capacity(
    ledger: Ledger, provider: ChatProvider, policy: ProbePolicy | None = None, **options: Any
) -> CapacityService:
    """A CapacityService whose scheduler probes in the background, sharing the ledger's store."""
    scheduler = ProbeScheduler(provider, store=ledger.profiles(), policy=policy, **options)
    return CapacityService(ledger, scheduler=scheduler)
