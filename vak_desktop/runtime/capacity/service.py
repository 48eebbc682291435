"""The capacity profile a turn is planned against, read at bind time without ever waiting.

`capacity_profile_for` returns at once the newest (by `provenance.probed_at`) of three
baselines — the profile recorded in the session's chain, the in-process cache a background
probe filled, the profile store `vak probe` and the background probe write — or the
metadata-only profile when none exists, and folds over it every receipt and feedback Activity
the session recorded after it (`context/capacity/feedback.py`). It never runs the ladder.

`CapacityService` is what a `TurnRunner` holds: that read, the ledger catching up with a probe
finished since the session last bound the model, and the hooks by which a turn tells the
`ProbeScheduler` (if there is one) that it is starting (cancel any probe of its model) or has
finished (maybe start one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from vak_desktop.context.capacity.feedback import fold_feedback, followed_activity, reprobe_due
from vak_desktop.context.capacity.probe import probed_at
from vak_desktop.context.capacity.probe_history import ProbePrefix
from vak_desktop.context.capacity.probe_result import distrust_unconfirmed
from vak_desktop.context.capacity.profile import in_current_window, metadata_profile
from vak_desktop.context.payloads import CapacityProfile
from vak_desktop.context.planning.actions import requested_tool
from vak_desktop.context.planning.instructions import unmet_tool_instruction
from vak_desktop.ledger import Entry, Ledger, ProfileStore, StoredProfile
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.capacity.probe import ProbeRecord, probe_window
from vak_desktop.runtime.lexicons import lexicons

ProfileKey = tuple[str, str, str]  # (provider, model, quantisation)
PrefixSource = Callable[[], ProbePrefix]  # the real prefix, built only when a probe starts


def key_of(binding: ModelBinding) -> ProfileKey:
    quantisation = binding.details.quantisation if binding.details else ""
    return (binding.provider, binding.model, quantisation)


def _key(profile: CapacityProfile) -> ProfileKey:
    return (profile.provider, profile.model, profile.quantisation)


class ProfileCache:
    """The in-process cache: the newest probe result per key. Filled when a probe finishes."""

    def __init__(self) -> None:
        self._records: dict[ProfileKey, ProbeRecord] = {}

    def get(self, key: ProfileKey) -> ProbeRecord | None:
        return self._records.get(key)

    def put(self, key: ProfileKey, record: ProbeRecord) -> None:
        held = self._records.get(key)
        if held is None or probed_at(record.profile) >= probed_at(held.profile):
            self._records[key] = record


def newest_outside(
    key: ProfileKey, cache: ProfileCache | None, store: ProfileStore | None
) -> ProbeRecord | None:
    """The newest probe result kept outside any session: the process cache or the store."""
    found: list[ProbeRecord] = []
    if cache is not None and (record := cache.get(key)) is not None:
        found.append(record)
    if store is not None and (stored := store.latest(*key)) is not None:
        found.append(_record(stored))
    return max(found, key=lambda r: probed_at(r.profile), default=None)


def _record(stored: StoredProfile) -> ProbeRecord:
    return ProbeRecord(stored.profile, stored.activity)


def _in_chain(chain: Sequence[Entry], key: ProfileKey) -> tuple[int, CapacityProfile] | None:
    for position in range(len(chain) - 1, -1, -1):
        payload = chain[position].payload
        if isinstance(payload, CapacityProfile) and _key(payload) == key:
            return position, payload
    return None


def capacity_profile_for(
    binding: ModelBinding,
    chain: Sequence[Entry],
    now: str,
    *,
    cache: ProfileCache | None = None,
    store: ProfileStore | None = None,
) -> CapacityProfile:
    """The profile to plan this binding's next request with: the newest baseline, revised by
    the session's feedback recorded after it, within the window the server reported when the
    model was bound (`in_current_window`). Synchronous and cheap; never probes."""
    baseline = _baseline_for(binding, chain, now, cache=cache, store=store)
    return in_current_window(distrust_unconfirmed(baseline), binding.declared_window)


def _baseline_for(
    binding: ModelBinding,
    chain: Sequence[Entry],
    now: str,
    *,
    cache: ProfileCache | None,
    store: ProfileStore | None,
) -> CapacityProfile:
    key = key_of(binding)
    recorded = _in_chain(chain, key)
    outside = newest_outside(key, cache, store)
    if outside is not None and (
        recorded is None or probed_at(outside.profile) > probed_at(recorded[1])
    ):
        since = probed_at(outside.profile)
        later = [e.payload for e in chain if e.created_at > since]
        return fold_feedback(outside.profile, later, now=now)
    if recorded is not None:
        position, profile = recorded
        return fold_feedback(profile, [e.payload for e in chain[position + 1 :]], now=now)
    details = binding.details
    base = metadata_profile(
        binding.provider,
        binding.model,
        binding.declared_window,
        quantisation=details.quantisation if details else "",
        now=now,
    )
    return fold_feedback(base, [e.payload for e in chain], now=now)


def followed_instruction(directive: str, called: Sequence[str]) -> str | None:
    """The explicit instruction a turn followed: a tool the directive told the model to call
    (`unmet_tool_instruction`, spec §1) or an asked-for action on the user's things
    (`requested_tool`), and the turn called it. None when it gave none or it was not met."""
    named = unmet_tool_instruction(directive, called, (), lexicons())
    if named is not None:
        return f"call the `{named}` tool"
    asked = requested_tool(directive, called, lexicons())
    return f"call the `{asked}` tool the request asks for" if asked else None


class ProbeSchedulerLike(Protocol):
    """What `CapacityService` needs of a scheduler (`runtime/capacity/scheduler.py` implements it)."""

    cache: ProfileCache

    def cancel(self, key: ProfileKey) -> bool: ...

    def maybe_start(self, binding: ModelBinding, prefix: PrefixSource | None = None) -> object: ...

    def request_reprobe(self, key: ProfileKey) -> None: ...

    def in_flight(self, key: ProfileKey) -> object | None: ...

    def probe_window(self, binding: ModelBinding) -> int: ...

    async def aclose(self) -> None: ...


class CapacityService:
    """Profiles for a runner's bindings: the bind-time read, catch-up, and probe scheduling.

    Without a scheduler nothing is ever probed in the background (the CLI's `vak chat`, tests);
    profiles still come from the store (`vak probe`) and from the session's own feedback."""

    def __init__(
        self,
        ledger: Ledger,
        *,
        scheduler: ProbeSchedulerLike | None = None,
    ) -> None:
        self.ledger = ledger
        self.store = ledger.profiles()
        self.cache = scheduler.cache if scheduler is not None else ProfileCache()
        self.scheduler = scheduler

    def profile_for(
        self, binding: ModelBinding, chain: Sequence[Entry], now: str
    ) -> CapacityProfile:
        """The profile to plan with; the binding adopts its window (or, unmeasured, the probe's
        window) here, so every request path that reads a profile sends the same num_ctx."""
        profile = capacity_profile_for(binding, chain, now, cache=self.cache, store=self.store)
        if self.scheduler is not None:
            unmeasured = self.scheduler.probe_window(binding)
        else:
            unmeasured = probe_window(binding.declared_window)
        binding.adopt(profile, unmeasured=unmeasured)
        return profile

    def catch_up(self, session: str, binding: ModelBinding) -> bool:
        """Append to `session` a probe result newer than any profile its chain holds for the
        model: the probe Activity, then the CapacityProfile. True if it appended."""
        key = key_of(binding)
        outside = newest_outside(key, self.cache, self.store)
        if outside is None:
            return False
        recorded = _in_chain(self.ledger.chain_to_root(session), key)
        if recorded is not None and probed_at(recorded[1]) >= probed_at(outside.profile):
            return False
        self.ledger.append(session, outside.activity)
        self.ledger.append(session, outside.profile)
        return True

    def probing(self, binding: ModelBinding) -> bool:
        """A background probe of this model runs now (its requests hold the model)."""
        return self.scheduler is not None and self.scheduler.in_flight(key_of(binding)) is not None

    def turn_starting(self, binding: ModelBinding) -> None:
        """A real turn is about to use this model: an in-flight probe of it yields the compute."""
        if self.scheduler is not None:
            self.scheduler.cancel(key_of(binding))

    def turn_finished(self, binding: ModelBinding, prefix: PrefixSource | None = None) -> None:
        """The model is idle now: the scheduler may probe it (never awaited here), with the
        prefix of the real requests `prefix` builds."""
        if self.scheduler is not None:
            self.scheduler.maybe_start(binding, prefix)

    async def aclose(self) -> None:
        """Cancel any background probe (at shutdown)."""
        if self.scheduler is not None:
            await self.scheduler.aclose()

    def instruction_followed(
        self,
        session: str,
        binding: ModelBinding,
        profile: CapacityProfile,
        directive: str,
        called: Sequence[str],
        request_tokens: int,
    ) -> bool:
        """A finished turn's explicit instruction that was followed, in a request of
        `request_tokens`: recorded when that is well above the horizon, and when the session
        keeps showing it (`reprobe_due`) a re-probe is asked for. True if one was."""
        instruction = followed_instruction(directive, called)
        if instruction is None or request_tokens <= 0:
            return False
        activity = followed_activity(instruction, request_tokens, profile, utc_now())
        if activity is None:
            return False
        self.ledger.append(session, activity)
        since = probed_at(profile)
        records = [e.payload for e in self.ledger.chain_to_root(session) if e.created_at > since]
        if not reprobe_due(profile, records):
            return False
        self.reprobe(binding)
        return True

    def reprobe(self, binding: ModelBinding) -> None:
        """Feedback contradicted the profile: probe again at the next idle moment."""
        if self.scheduler is not None:
            self.scheduler.request_reprobe(key_of(binding))
