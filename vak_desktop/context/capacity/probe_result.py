"""What a capacity probe yields: the CapacityProfile and the one Activity recording how (spec §1).

Why its own module: `probe.py` decides which rung comes next; this module says what the rungs
decided mean for the profile a model is planned against for a day — and, as issue #22 asks,
never lets slowness pass for failure:

    completed   the search ended on its own: the horizon is its bracket's passing end
    timed_out   it stopped (`ProbeStop`) at its time budget, at a sample unanswered within its
                limit, or was paused, after confirming a passing rung: that rung is the
                horizon, and the rungs it left undecided are retried when the machine is idle
    undecided   no rung was confirmed to pass (a slow machine, or a model that followed at no
                size tried): the probe stores no horizon of its own — the profile keeps the
                one it had (`keep`), else, at the metadata confidence, the size the
                answer-from-memory task confirmed (the only size the model was seen to follow
                at: the real 1.5B failed the tool task at every rung while answering from
                memory at 2,746 tokens, and its declared 32,768 would have planned it as a
                large model), else its declared window — either no larger than the largest
                size the tool task was seen to fail at (`_largest_failed`: above it nothing
                is known but the cost; a rung left undecided by time never caps it); and the
                runner window it had. `provenance.horizon_from` says which: "probe",
                "kept", "memory", "tried" or "declared"

A probe that also ran the answer-from-memory task (`ProbeHistory(memory=True)`) records that
search's confirmed horizon as `memory_horizon` beside the tool horizon, each with its
confidence; a tool-free turn is planned against the larger (`profile.for_turn`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from vak_desktop.context.capacity.probe import (
    PROBE_ACTIVITY,
    HorizonSearch,
    Rung,
    profile_num_ctx,
)
from vak_desktop.context.capacity.probe_verdict import AGREE, Sample
from vak_desktop.context.capacity.profile import METADATA_CONFIDENCE
from vak_desktop.context.payloads import Activity, CapacityProfile, Ewma, Horizon

CACHE_SPEEDUP = 5  # a repeated request whose prefill is ≥ 5× faster: the prefix is cached
PAUSED, SAMPLE_TIMEOUT = "paused", "sample_timeout"  # ProbeStop reasons beside the budget's


@dataclass(frozen=True)
class ProbeStop:
    """Why a probe ended before its search did, and what it left undecided. `reason`
    "predicted": the next sample's predicted time would have ended past the deadline, so it
    was not sent; "cancelled": a sample still running at the deadline was cut;
    "sample_timeout": a sample got no answer within its own limit (undecided, never failed);
    "paused": the user paused it. `rung` is the rung in progress (its answered samples, no
    verdict)."""

    reason: str
    elapsed_s: float
    deadline_s: float
    predicted_s: float = 0.0  # the next sample's (or rung's) predicted seconds, when predicted
    rung: Rung | None = None
    cut: Sample | None = None

    def to_json(self, full: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "reason": self.reason,
            "elapsed_s": round(self.elapsed_s, 3),
            "deadline_s": self.deadline_s,
        }
        if self.reason == "predicted":
            out["predicted_s"] = round(self.predicted_s, 3)
        if self.rung is not None:  # the undecided rung
            out["undecided"] = self.rung.to_json(full=full) | {"followed": None}
        if self.cut is not None:
            out["cut_after_s"] = round(self.cut.wall_ns / 1e9, 3)
        return out


@dataclass(frozen=True)
class ProbeResume:
    """What a probe left to continue from: its conversation's nonce, the rungs it decided of
    each task, and what it had spent."""

    nonce: str
    rungs: tuple[Rung, ...]
    memory_rungs: tuple[Rung, ...] = ()
    requests: int = 0
    wall_ns: int = 0


def resume_from(activity: Activity | None) -> ProbeResume | None:
    """The decided rungs of a probe that left some undecided (None when there is nothing to
    continue: no Activity, no nonce recorded, no rung decided)."""
    if activity is None:
        return None
    detail = activity.detail
    nonce = str(detail.get("nonce") or "")
    rungs = tuple(Rung.from_json(r) for r in detail.get("rungs") or ())
    memory = tuple(Rung.from_json(r) for r in detail.get("memory_rungs") or ())
    if not nonce or not (rungs or memory):
        return None
    requests, wall = int(detail.get("requests") or 0), int(detail.get("wall_ns") or 0)
    return ProbeResume(nonce, rungs, memory, requests, wall)


def distrust_unconfirmed(profile: CapacityProfile) -> CapacityProfile:
    """A profile an older probe stored from no confirmed rung (its horizon at confidence 0.0,
    no passing tally: the 466 and 2,387 tokens of issue #22/#25) read as this module would
    store it now: undecided, the declared window at the metadata confidence, no runner window."""
    provenance = profile.provenance
    verdict = provenance.get("verdict")
    passed = verdict.get("passed") if isinstance(verdict, dict) else None
    if provenance.get("source") != "probe" or provenance.get("undecided") is not None:
        return profile
    if profile.instruction_horizon.confidence > 0.0 or passed is not None:
        return profile
    horizon = Horizon(
        profile.declared_window, METADATA_CONFIDENCE, profile.instruction_horizon.last_confirmed
    )
    marked = provenance | {"undecided": True, "outcome": "undecided"}
    return dataclasses.replace(profile, instruction_horizon=horizon, num_ctx=0, provenance=marked)


def cache_behaviour(rungs: list[Rung]) -> str:
    """The cache rung: the first rung's first two samples are identical requests back to back.
    `provider_reported` when the provider counted cached tokens; `prefix_stable` when the
    second prefilled ≥ CACHE_SPEEDUP× faster (Ollama reports no cached tokens); else `none`."""
    if not rungs or len(rungs[0].samples) < 2:
        return "none"
    first, second = rungs[0].samples[:2]
    if first.final or second.final:
        return "none"
    if second.cached_tokens > 0:
        return "provider_reported"
    if first.prompt_eval_ns > 0 and second.prompt_eval_ns * CACHE_SPEEDUP <= first.prompt_eval_ns:
        return "prefix_stable"
    return "none"


def _confirmed(search: HorizonSearch, now: str) -> Horizon | None:
    """The horizon a search confirmed: its bracket's passing end, at the lower confidence of
    its two ends; None when no rung passed."""
    passed = search.horizon_rung
    if passed is None:
        return None
    lo, hi = search.bracket()
    confidence = round(min(search.confidence(lo), search.confidence(hi)), 2)
    return Horizon(passed.tokens, confidence, now)


def _largest_failed(search: HorizonSearch) -> int | None:
    """The largest size the tool task was seen to fail at (decided by its samples, never by
    time), or None. A probe that confirmed no size plans a turn no larger than this: above it
    nothing is known but the cost (the real 1.5B failed the tool task from 1,944 tokens down,
    was planned at its memory size, 8,086, and its file searches sent 5,685–9,542 tokens with
    first tokens of 67–226 s where 2,211 had answered in 4–9 s)."""
    failed = [
        search.tokens(t) for t in {r.turns for r in search.rungs} if search.verdict(t) is False
    ]
    return max(failed) if failed else None


def probe_profile(
    base: CapacityProfile,
    search: HorizonSearch,
    *,
    now: str,
    requests: int,
    wall_ns: int,
    stop: ProbeStop | None = None,
    keep: CapacityProfile | None = None,
    memory: HorizonSearch | None = None,
    memory_stop: ProbeStop | None = None,
) -> CapacityProfile:
    """The profile a search measured, on top of the metadata-only `base` (module docstring
    for its outcomes). `keep`: the profile the model had before (its horizon stays when this
    probe confirmed none); `memory`: the answer-from-memory search, when one ran."""
    confirmed = _confirmed(search, now)
    outcome = "timed_out" if stop is not None or search.limited else "completed"
    if confirmed is None:
        outcome = "undecided"
    rungs = [*search.rungs, *(memory.rungs if memory else ())]
    samples = [(s, r) for r in rungs for s in r.samples if not s.final]
    ratio = Ewma(0.0)
    for sample, rung in samples:
        if sample.prompt_tokens and rung.chars:
            ratio = ratio.update(sample.prompt_tokens / rung.chars)
    prefill = Ewma(0.0)
    for sample, _ in samples:
        if sample.miss and sample.prompt_eval_ns > 0 and sample.prompt_tokens:
            prefill = prefill.update(sample.prompt_tokens / (sample.prompt_eval_ns / 1e9))
    before = keep if keep is not None else base
    recalled = _confirmed(memory, now) if memory is not None else None
    fallback, source = before.instruction_horizon, "kept" if keep is not None else "declared"
    if confirmed is None and fallback.confidence <= METADATA_CONFIDENCE:
        if recalled is not None:  # the one size it followed at
            fallback, source = Horizon(recalled.tokens, METADATA_CONFIDENCE, now), "memory"
        tried = _largest_failed(search)
        if tried is not None and tried < fallback.tokens:
            fallback, source = Horizon(tried, METADATA_CONFIDENCE, now), "tried"
    profile = dataclasses.replace(
        base,
        verified_window=search.verified_window or before.verified_window,
        instruction_horizon=confirmed or fallback,
        memory_horizon=recalled or before.memory_horizon,
        tokens_per_char=ratio if ratio.samples else before.tokens_per_char,
        prefill_tps=prefill if prefill.samples else before.prefill_tps,
        cache=cache_behaviour(search.rungs),
        provenance={
            "source": "probe",
            "probed_at": now,
            "rungs": [r.to_json() for r in search.rungs],
            "requests": requests,
            "prompt_tokens": sum(s.prompt_tokens for r in rungs for s in r.samples),
            "wall_ns": wall_ns,
            "ceiling": search.ceiling,
            "text_form_calls": sum(s.as_text for r in search.rungs for s in r.samples),
            # every decided rung failed, down to the bare prefix: the model followed nowhere
            "rescue": bool(search.rungs) and confirmed is None and stop is None,
            "outcome": outcome,
            "undecided": confirmed is None,
            "horizon_from": "probe" if confirmed is not None else source,
            **({"stopped": stop.to_json()} if stop is not None else {}),
            **({"budget_ceiling": search.capped} if search.capped is not None else {}),
            "verdict": {
                "test": "sequential",
                "agree": AGREE,
                "max_samples": search.votes,
                "passed": search.tally(search.bracket()[0]),  # [followed, samples] at the horizon
                "failed": search.tally(search.bracket()[1]),  # … at the size above it
                "failed_tokens": search.boundary_rung.tokens if search.boundary_rung else None,
            },
            "task": search.history.task.directive,
            **({"memory": _memory_json(memory, memory_stop)} if memory is not None else {}),
        },
    )
    if confirmed is None:  # no horizon of its own: nor a window sized on one
        return dataclasses.replace(profile, num_ctx=before.num_ctx)
    return dataclasses.replace(profile, num_ctx=profile_num_ctx(profile))


def _memory_json(memory: HorizonSearch, stop: ProbeStop | None) -> dict[str, Any]:
    lo, hi = memory.bracket()
    return {
        "task": memory.history.task.directive,
        "rungs": [r.to_json() for r in memory.rungs],
        "passed": memory.tally(lo),
        "failed": memory.tally(hi),
        "undecided": memory.horizon_rung is None,
        **({"stopped": stop.to_json()} if stop is not None else {}),
        **({"budget_ceiling": memory.capped} if memory.limited else {}),
    }


# how an undecided probe's horizon was chosen (`provenance.horizon_from`), in the words the
# Activity, `vak probe` and the Probe tab say it; "kept" and "declared" have no words of their own
HORIZON_FROM = {
    "memory": "the size it answered from memory at",
    "tried": "the largest size the tool task was tried at",
}


def probe_activity(
    profile: CapacityProfile,
    search: HorizonSearch,
    stop: ProbeStop | None = None,
    memory: HorizonSearch | None = None,
    memory_stop: ProbeStop | None = None,
) -> Activity:
    """The probe as one ledger Activity: every rung, sample, verdict, timing and request —
    and, when it stopped early, how it stopped and the rung it left undecided, with the
    conversation's nonce so a later run continues it (`resume_from`)."""
    horizon = profile.instruction_horizon
    provenance = profile.provenance
    outcome = str(provenance.get("outcome") or "completed")
    if outcome == "undecided":
        source = str(provenance.get("horizon_from"))
        message = (
            f"probed {profile.model}: undecided — no size was confirmed in "
            f"{provenance.get('requests', 0)} requests; the horizon stays "
            f"{horizon.tokens:,} tokens (confidence {horizon.confidence:.2f})"
            + (f", {HORIZON_FROM[source]}" if source in HORIZON_FROM else "")
        )
    else:
        message = (
            f"probed {profile.model}: instruction horizon {horizon.tokens:,} tokens "
            f"(confidence {horizon.confidence:.2f}) in {provenance.get('requests', 0)} requests"
        )
    if provenance.get("rescue"):
        message += "; it followed at no size tried, not even the bare prefix"
    if memory_stop is not None and memory_stop.reason == PAUSED:
        message += "; paused in the answer-from-memory task, it continues from its next rung"
    elif memory_stop is not None:
        message += "; the answer-from-memory task is continued when the machine is idle"
    if stop is not None and stop.reason == PAUSED:
        message += "; paused, it continues from its next rung"
    elif outcome != "completed" and (stop is not None or outcome == "timed_out"):
        message += "; stopped before it finished, it is retried when the machine is idle"
        if stop is not None and stop.rung is not None:
            message += f" (the rung at {stop.rung.tokens:,} tokens is undecided)"
    if profile.memory_horizon is not None and memory is not None:
        recalled = profile.memory_horizon
        message += (
            f"; answered from memory up to {recalled.tokens:,} tokens "
            f"(confidence {recalled.confidence:.2f})"
        )
    return Activity(
        type=PROBE_ACTIVITY,
        message=message,
        detail={
            "provider": profile.provider,
            "model": profile.model,
            "quantisation": profile.quantisation,
            "model_digest": profile.model_digest,
            "outcome": outcome,
            "probed_at": provenance.get("probed_at", ""),
            "ceiling": search.ceiling,
            "requests": provenance.get("requests", 0),
            "prompt_tokens": provenance.get("prompt_tokens", 0),
            "wall_ns": provenance.get("wall_ns", 0),
            "horizon": horizon.tokens,
            "undecided": bool(provenance.get("undecided")),
            "verified_window": profile.verified_window,
            "cache": profile.cache,
            "rescue": provenance.get("rescue", False),
            "nonce": search.history.nonce,
            "rungs": [r.to_json(full=True) for r in search.rungs],
            **({"stopped": stop.to_json(full=True)} if stop is not None else {}),
            **(
                {
                    **({"memory_stopped": memory_stop.to_json(full=True)} if memory_stop else {}),
                    "memory_rungs": [r.to_json(full=True) for r in memory.rungs],
                    "memory_horizon": (
                        profile.memory_horizon.tokens if profile.memory_horizon else None
                    ),
                }
                if memory is not None
                else {}
            ),
        },
    )
