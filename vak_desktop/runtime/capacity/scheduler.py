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

A probe is never thrown away half done (issue #22, #25): a turn's `cancel` and the user's Pause
(`pause_model`) stop it at once, the sample in flight cut, and keep every rung it decided; the
next start continues from its next rung (`resume_from`), and a user's Pause waits for Resume
(`resume_model`). A probe that left rungs undecided — out of time, a sample unanswered in its
limit — is retried from its decided rungs, and that retry waits until the machine is idle
(`runtime/capacity/idle.py`, polled every IDLE_POLL_S) so it measures the model, not the load.

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

from vak_desktop.context.capacity.probe import TTL_HOSTED_S, TTL_LOCAL_S, is_fresh, left_undecided
from vak_desktop.context.capacity.probe_history import ProbePrefix
from vak_desktop.context.capacity.probe_result import ProbeResume, resume_from
from vak_desktop.ledger import Ledger, ProfileStore
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers.base import ChatProvider, ModelDigests, is_local
from vak_desktop.providers.errors import ProviderError
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.capacity.idle import IDLE_POLL_S, is_idle
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
DEADLINE_S = 30 * 60.0  # a probe past half an hour reports what it has (`vak probe` too)
ProbeWatcher = Callable[[ModelBinding, ProbeProgress | None], None]
IdleCheck = Callable[[], Awaitable[bool | None]]  # None: the load cannot be read (try anyway)


@dataclass(frozen=True)
class PausedProbe:
    """A probe stopped before its search ended (a turn needed the runner, or the user paused
    it): what it decided, to continue from."""

    binding: ModelBinding
    record: ProbeRecord
    prefix: ProbePrefix | None


@dataclass(frozen=True)
class ProbePolicy:
    """The operator's probe settings (the `[probe]` section)."""

    hosted: str = "off"  # "full": run the ladder for hosted providers too (it costs money)
    ttl_local_s: float = TTL_LOCAL_S
    ttl_hosted_s: float = TTL_HOSTED_S
    max_prompt_tokens: int | None = None  # the ladder's ceiling; None: 0.9 × declared
    keep_alive: str | int | None = None
    deadline_s: float | None = DEADLINE_S  # a probe stops climbing past this (never a hang)
    memory: bool = True  # probe the answer-from-memory task too (a tool-free turn's horizon)


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
        idle: IdleCheck = is_idle,
        idle_poll_s: float = IDLE_POLL_S,
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
        self._stops: dict[ProfileKey, asyncio.Event] = {}  # set: the probe stops, keeping rungs
        self._partial: dict[ProfileKey, PausedProbe] = {}  # stopped early: continues from here
        self._held: set[ProfileKey] = set()  # paused by the user: waits for `resume_model`
        self._idle, self.idle_poll_s = idle, idle_poll_s
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
        if not self.eligible or key in self._tasks or key in self._held:
            return None
        shape = prefix() if prefix is not None else None
        return self._start(binding, key, shape, wait_idle=True)

    def _start(
        self, binding: ModelBinding, key: ProfileKey, prefix: ProbePrefix | None, *, wait_idle: bool
    ) -> asyncio.Task[ProbeRecord | None]:
        self._stops[key] = asyncio.Event()
        task = asyncio.get_running_loop().create_task(
            self._run(binding, key, prefix, wait_idle=wait_idle), name=f"probe {key}"
        )
        self._tasks[key] = task
        task.add_done_callback(lambda done: self._forget(key, done))
        return task

    def _forget(self, key: ProfileKey, task: asyncio.Task[ProbeRecord | None]) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]
            self._stops.pop(key, None)

    def cancel(self, key: ProfileKey) -> bool:
        """Stop an in-flight probe of `key` now (a turn needs the runner): the sample in
        flight is cut and the rungs decided are kept for the next start. Returns at once."""
        task, stop = self._tasks.get(key), self._stops.get(key)
        if task is None or task.done() or stop is None:
            return False
        stop.set()
        return True

    def pause_model(self, model: str) -> bool:
        """The user paused every probe of `model`: each stops now, keeps its decided rungs,
        and waits for `resume_model` (no turn restarts it). Returns at once."""
        keys = [key for key in self._tasks if key[1] == model]
        self._held.update(keys)
        return any([self.cancel(key) for key in keys])

    cancel_model = pause_model  # the name the window's Pause used when it was a cancel

    def paused(self, model: str) -> PausedProbe | None:
        """The probe of `model` the user paused, once it has stopped (None: none is paused)."""
        return next(
            (p for key, p in self._partial.items() if key[1] == model and key in self._held),
            None,
        )

    def resume_model(self, model: str) -> asyncio.Task[ProbeRecord | None] | None:
        """Continue the paused probe of `model` from its next rung, at once (no idle wait)."""
        for key in [k for k in self._held if k[1] == model]:
            self._held.discard(key)
            partial = self._partial.get(key)
            if partial is not None and key not in self._tasks:
                return self._start(partial.binding, key, partial.prefix, wait_idle=False)
        return None

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

    async def _until_idle(self, stop: asyncio.Event) -> bool:
        """Wait until the machine is idle (True), or the probe is stopped first (False)."""
        while not stop.is_set():
            if await self._idle() is not False:
                return True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.idle_poll_s)
        return False

    def _resume_point(self, key: ProfileKey, digest: str) -> tuple[bool, ProbeResume | None]:
        """(probe now, what to continue from): a probe stopped early continues; a stored one
        that left rungs undecided is retried from its decided rungs; a stale one starts anew."""
        partial = self._partial.get(key)
        if partial is not None:
            return True, resume_from(partial.record.activity)
        if not self.needs_probe(key, digest):
            return False, None
        current = newest_outside(key, self.cache, self.store)
        if key in self._reprobe or current is None or not left_undecided(current.profile):
            return True, None
        if digest and current.profile.model_digest and digest != current.profile.model_digest:
            return True, None
        return True, resume_from(current.activity)

    async def _run(
        self,
        binding: ModelBinding,
        key: ProfileKey,
        prefix: ProbePrefix | None = None,
        *,
        wait_idle: bool = True,
    ) -> ProbeRecord | None:
        stop = self._stops[key]
        try:
            digest = ""
            if isinstance(self.provider, ModelDigests):
                digest = await self.provider.digest(binding.model)
            due, resume = self._resume_point(key, digest)
            if not due:
                return None
            partial = self._partial.pop(key, None)
            prefix = prefix or (partial.prefix if partial is not None else None)
            # a retry of rungs left undecided by slowness waits for an idle machine; a probe
            # a turn interrupted continues at the next idle moment between turns, as before
            slow = resume is not None and partial is None
            if slow and wait_idle and not await self._until_idle(stop):
                return None
            self._reprobe.discard(key)
            self.probes_run += 1
            current = newest_outside(key, self.cache, self.store)
            num_ctx = binding.num_ctx or self.probe_window(binding)
            ceiling = self.policy.max_prompt_tokens
            ceiling = min(ceiling, ladder_within(num_ctx)) if ceiling else ladder_within(num_ctx)
            watcher = self.on_progress
            options: dict[str, Any] = {}
            if watcher is not None:
                options["on_sample"] = lambda progress: watcher(binding, progress)
            if resume is not None:
                options["resume"] = resume
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
                    memory=self.policy.memory,
                    keep=current.profile if current is not None else None,
                    pause=stop,
                    **options,
                )
                if record.paused:  # a turn or the user stopped it: continue later
                    self._partial[key] = PausedProbe(binding, record, prefix)
                    return None
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
