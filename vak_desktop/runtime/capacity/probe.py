"""The capacity probe ladder, run against a provider (spec §1): the async half of the probe.

Why it exists: `context/capacity/probe.py` decides which rung comes next and what the answers mean; this
module runs a probe — its tasks, its budget, what it keeps and continues from — and its
`probe_ladder.Ladder` sends the requests, through the `ChatProvider` and `ModelInspector`
protocols only, and times them. It is used in the foreground by `vak probe` and in the background by the
`ProbeScheduler`; it never touches a session: its result is a `ProbeRecord` (the profile and
the one Activity holding every rung, sample, verdict, timing and request count).

One `num_ctx` serves every rung: `probe_window` (the window the ladder's largest rung needs,
never above the trained window), which is also the window an unmeasured model's turns use, so
the probe and the turns between its runs never make Ollama reload the model. It steps up only
when a refusal shows our own estimate chose too small a window.

Never a hang (issue #17 "Bad input"), and slowness is never failure (issue #22): a sample
that gets no answer within `sample_timeout_s` is undecided, not failed — the probe stops there
(`ProbeStop` "sample_timeout") with what it confirmed, and a later run, on an idle machine,
continues from the rungs it decided (`resume`). The user's Pause (`pause`, an event) stops it
the same way ("paused"), the sample in flight cut. A probe with a time budget (`deadline_s`) keeps it as a promise: it sends no
sample whose time, predicted from the prefill and generation speed of the samples so far
(`ProbeBudget`), would end past the deadline, and cuts a sample still running at the deadline
(its verdict undecided). A climb rung the budget cannot afford gives way to the largest size it
can (`HorizonSearch.cap`). It reports the best bracket decided before the deadline, its outcome
`timed_out` and a `ProbeStop` saying how it stopped (`context/capacity/probe_result.py`:
a probe that confirmed no rung stores no horizon of its own).

With `memory=True` the same conversation is also probed with the answer-from-memory task
after the tool task, until the probe is MEMORY_TARGET_S old (or its budget ends): its samples
up to the tool task's largest size are served from the runner's prefix cache, and what it
leaves undecided a later idle run continues.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from vak_desktop.context.capacity.probe import SAMPLE_MAX_TOKENS, HorizonSearch, probe_ceiling
from vak_desktop.context.capacity.probe_history import ProbeHistory, ProbePrefix
from vak_desktop.context.capacity.probe_result import (
    PAUSED,
    ProbeResume,
    probe_activity,
    probe_profile,
)
from vak_desktop.context.capacity.profile import choose_num_ctx, metadata_profile
from vak_desktop.context.payloads import Activity, CapacityProfile
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers.base import ChatProvider, ModelDetails, ModelInspector
from vak_desktop.runtime.capacity.probe_budget import ProbeBudget
from vak_desktop.runtime.capacity.probe_ladder import (
    NUM_CTX_HEADROOM,
    SAMPLE_TIMEOUT_S,
    Ladder,
    ProbeProgress,
    sample_once,
)

__all__ = [
    "SAMPLE_TIMEOUT_S",
    "ProbeProgress",
    "ProbeRecord",
    "ladder_within",
    "probe_window",
    "run_probe",
    "sample_once",
]

# The answer-from-memory task runs in what is left of this (issue #22: the default probe in
# ≤ 90 s on an idle 2-core machine): estimated on the double at 100 prefill / 12 decode
# tokens/s, the tool task alone takes ≤ 59 s at a 1,358-token horizon, and the memory task
# climbing past it cost another ~100-135 s (decision 0089)
MEMORY_TARGET_S = 90.0


def probe_window(
    declared_window: int | None,
    max_prompt_tokens: int | None = None,
    sample_max_tokens: int = SAMPLE_MAX_TOKENS,
) -> int:
    """The one num_ctx the ladder runs at: its largest rung with headroom, within the window."""
    if not declared_window:
        return choose_num_ctx(0, None)
    ceiling = probe_ceiling(declared_window, max_prompt_tokens)
    return choose_num_ctx(int(ceiling * NUM_CTX_HEADROOM) + sample_max_tokens, declared_window)


def ladder_within(num_ctx: int, sample_max_tokens: int = SAMPLE_MAX_TOKENS) -> int:
    """The largest rung (in prompt tokens) a probe at `num_ctx` can send without stepping up."""
    return max(1, int((num_ctx - sample_max_tokens) / NUM_CTX_HEADROOM))


@dataclass(frozen=True)
class ProbeRecord:
    """What a finished probe measured, and the Activity recording how."""

    profile: CapacityProfile
    activity: Activity

    @property
    def paused(self) -> bool:
        """Whether the user (or a turn) paused it: either task's stop says so."""
        detail = self.activity.detail
        stops = (detail.get("stopped"), detail.get("memory_stopped"))
        return any(isinstance(s, dict) and s.get("reason") == PAUSED for s in stops)


async def run_probe(
    provider: ChatProvider,
    model: str,
    *,
    details: ModelDetails | None = None,
    digest: str = "",
    max_prompt_tokens: int | None = None,
    sample_max_tokens: int = SAMPLE_MAX_TOKENS,
    nonce: str | None = None,
    keep_alive: str | int | None = None,
    on_sample: Callable[[ProbeProgress], None] | None = None,
    clock: Callable[[], str] = utc_now,
    num_ctx: int = 0,
    prefix: ProbePrefix | None = None,
    sample_timeout_s: float | None = SAMPLE_TIMEOUT_S,
    deadline_s: float | None = None,
    memory: bool = False,
    keep: CapacityProfile | None = None,
    resume: ProbeResume | None = None,
    pause: asyncio.Event | None = None,
    memory_target_s: float | None = MEMORY_TARGET_S,
) -> ProbeRecord:
    """Run the whole ladder for `model` and return what it measured, every rung at `num_ctx`
    (0: `probe_window`). `prefix`: the system text and schemas of the model's real requests
    (`TurnRunner.probe_prefix`); without one the synthetic pair is sent. `memory`: probe the
    answer-from-memory task too. `keep`: the profile the model has now (kept when this probe
    confirms no rung). `resume`: an earlier run's decided rungs to continue from. `pause`:
    set it to stop after (cutting) the sample in flight, keeping every decided rung.
    `memory_target_s`: the answer-from-memory task runs only until the probe is this old (its
    rungs left undecided are continued by a later run, on an idle machine).
    Provider errors other than an over-length refusal, a server failure or a timeout at one
    size propagate; a cancelled probe raises CancelledError and records nothing."""
    budget = ProbeBudget(deadline_s)  # the budget covers the whole probe, its `show` too
    if details is None and isinstance(provider, ModelInspector):
        details = await provider.show(model)
    base = metadata_profile(
        provider.name,
        model,
        details.declared_window if details else None,
        quantisation=details.quantisation if details else "",
        model_digest=digest,
        now=clock(),
    )
    declared = base.declared_window
    thinking = details is not None and "thinking" in details.capabilities
    nonce = resume.nonce if resume is not None else nonce or secrets.token_hex(4)
    history = ProbeHistory(nonce, prefix=prefix, memory=memory)
    ceiling = probe_ceiling(declared, max_prompt_tokens)
    search = HorizonSearch(history, ceiling)
    recall = None
    if history.memory is not None:
        recall = HorizonSearch(history.for_task(history.memory), ceiling, confirm=False)
    if resume is not None:  # continue from the rungs an earlier run decided
        for rung in resume.rungs:
            search.record(rung)
        for rung in resume.memory_rungs:
            if recall is not None:
                recall.record(rung)
    ladder = Ladder(
        provider,
        model,
        budget,
        declared,
        num_ctx or probe_window(declared, max_prompt_tokens, sample_max_tokens),
        sample_max_tokens,
        sample_timeout_s,
        False if thinking else None,
        keep_alive,
        on_sample,
        pause,
        requests=resume.requests if resume is not None else 0,
    )
    stop = await ladder.run(search)
    tool_ns = time.perf_counter_ns() - budget.started
    recall_stop = None
    if stop is None and recall is not None:  # within what is left of MEMORY_TARGET_S too
        limits = [d for d in (deadline_s, memory_target_s) if d is not None]
        ladder.budget = dataclasses.replace(budget, deadline_s=min(limits) if limits else None)
        recall_stop = await ladder.run(recall, offset=len(search.rungs))
    wall_ns = time.perf_counter_ns() - budget.started + (resume.wall_ns if resume else 0)
    profile = probe_profile(
        base,
        search,
        now=clock(),
        requests=ladder.requests,
        wall_ns=wall_ns,
        stop=stop,
        keep=keep,
        memory=recall,
        memory_stop=recall_stop,
    )
    profile.provenance["tool_wall_ns"] = tool_ns  # the tool task's part of `wall_ns`
    profile.provenance["budget_s"] = deadline_s  # the time it was given (None: no limit)
    return ProbeRecord(profile, probe_activity(profile, search, stop, recall, recall_stop))
