"""The capacity probe's decisions, as pure values: the rung ladder and the horizon search
(spec §1). The profile and Activity a finished search yields are in `probe_result.py`.

Why pure: the search is what decides a model's budget for a day, so it must be testable without
a server (noise, overflow, a model that follows nowhere) and replayable from what it recorded.
`runtime/capacity/probe.py` sends the requests; this module only says which to send next and what the
answers mean.

The search, in filler turns of `ProbeHistory` (every size is a prefix of one conversation):

    climb    rungs at 4k, 8k, 16k, 32k … tokens, then the ceiling itself — 0.9 × the
             declared window (or the operator's ceiling) — until one fails
    bisect   between the largest passing and the smallest failing size; when the first rung
             already fails, downward toward the bare prefix (0 filler turns)
    stop     when the bracket is one turn wide or within RESOLUTION of the passing size

A rung's verdict is a sequential test (issue #17): it stops as soon as the first two samples
agree, and otherwise samples on until one side has three of at most five. A sampling model
near its limit follows like a coin with some bias p; the confidence of a verdict is the
posterior probability, under a uniform prior on p, that p is on the verdict's side of one half
(2–0: 0.88, 4–0 pooled over a confirmation run: 0.97, 3–2: 0.66). The horizon's confidence is
the lower of its two ends' — the passing size and the failing one — and is what the profile
records and `vak probe` shows. Samples of one size share their whole prompt, so all but the
first are served from the runner's prefix cache and cost decode time only.

Sizes are the provider's own token counts, never our estimate: the planner converts with the
learned tokens-per-char.

A probe need not finish in one go (issue #22: slowness is never failure): a search can be
seeded with the rungs an earlier run of the same probe decided (`Rung.from_json` over its
Activity), so a paused probe, or one that ran out of time, continues from its next rung.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from vak_desktop.context.capacity.probe_history import ProbeHistory
from vak_desktop.context.capacity.probe_verdict import (
    VOTES,
    Sample,
    sequential_verdict,
    verdict_confidence,
)
from vak_desktop.context.capacity.profile import (
    FALLBACK_TOKENS_PER_CHAR,
    choose_num_ctx,
    usable_horizon,
)
from vak_desktop.context.payloads import CapacityProfile

FIRST_RUNG = 2_048  # a 2-core runner prefills it in ~25 s (decision 0089)
LADDER_FRACTION = 0.9  # the ladder stops at 0.9 × the declared window (spec §1)
RESOLUTION = 1 / 16  # the bisection stops inside this fraction of the passing size
SAMPLE_MAX_TOKENS = 48  # each sample asks for this many output tokens at most (a Qwen text-form
# call in its <tool_call> tags is ~30 tokens)
CAP_STEP = 0.9  # a lower cap of the climb must lie this far below the last one
TTL_LOCAL_S = 24 * 3600
TTL_HOSTED_S = 7 * 24 * 3600
PROBE_ACTIVITY = "capacity_probe"


def probe_ceiling(declared_window: int, max_prompt_tokens: int | None = None) -> int:
    """The largest prompt the ladder tries: 0.9 × declared, or the operator's lower ceiling."""
    ceiling = int(declared_window * LADDER_FRACTION)
    return min(ceiling, max_prompt_tokens) if max_prompt_tokens else ceiling


def ladder_targets(ceiling: int) -> tuple[int, ...]:
    """4k, 8k, 16k … below `ceiling`, then `ceiling` itself: a model that follows at the last
    doubling is tried at the largest size it could be given, not credited with the doubling."""
    targets, size = [], FIRST_RUNG
    while size < ceiling:
        targets.append(size)
        size *= 2
    return (*targets, max(1, ceiling))


@dataclass(frozen=True)
class Rung:
    """One size of the search and its samples."""

    phase: str  # "climb" | "bisect"
    turns: int  # filler turns in the history
    target: int  # tokens aimed at (our estimate)
    chars: int  # what `ChatRequest.chars()` counts for it
    num_ctx: int
    samples: tuple[Sample, ...] = ()
    votes: int = VOTES

    @property
    def tokens(self) -> int:
        """The size the provider counted (our estimate when it reported none)."""
        return max((s.prompt_tokens for s in self.samples), default=0) or self.target

    @property
    def followed(self) -> bool:
        return sequential_verdict(self.samples, self.votes) is True

    def to_json(self, full: bool = False) -> dict[str, Any]:
        """The contract's rung shape; `full` adds everything the Activity keeps."""
        out: dict[str, Any] = {
            "tokens": self.tokens,
            "samples": [s.followed for s in self.samples],
            "followed": self.followed,
        }
        if full:
            out |= {"phase": self.phase, "turns": self.turns, "target": self.target}
            out |= {"chars": self.chars, "num_ctx": self.num_ctx}
            out["sample_detail"] = [dataclasses.asdict(s) for s in self.samples]
        return out

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> Rung:
        """A rung back from its full JSON (`to_json(full=True)`, as the Activity keeps it)."""
        known = {f.name for f in dataclasses.fields(Sample)}
        samples = tuple(
            Sample(**{k: v for k, v in s.items() if k in known})
            for s in document.get("sample_detail") or ()
        )
        return cls(
            str(document.get("phase", "climb")),
            int(document.get("turns", 0)),
            int(document.get("target", 0)),
            int(document.get("chars", 0)),
            int(document.get("num_ctx", 0)),
            samples,
        )


class HorizonSearch:
    """Which rung to run next, from the rungs run so far. Feed it with `record`.

    A size's verdict is the majority of its runs (each run a sequential test). The
    answer is confirmed before it is reported: once the bracket is narrow, its passing and its
    failing end each get a second run, and a third when the two disagree. A lone wrong majority
    near the boundary (a sampling model flips a coin there) then moves the bracket back
    instead of becoming the horizon for a day. An over-length refusal is final at once.
    """

    def __init__(
        self,
        history: ProbeHistory,
        ceiling: int,
        *,
        ratio: float = FALLBACK_TOKENS_PER_CHAR,
        votes: int = VOTES,
        confirm: bool = True,
    ) -> None:
        self.history, self.ceiling, self.votes, self.confirm = history, ceiling, votes, confirm
        self.rungs: list[Rung] = []
        self._targets = list(ladder_targets(ceiling))
        self._climbing = True
        self._ratio = ratio
        self.capped: int | None = None  # the climb's ceiling the time budget set, in tokens

    @property
    def ratio(self) -> float:
        """Tokens per request char, from the newest measured rung (else the starting guess)."""
        measured = [r for r in self.rungs if any(s.prompt_tokens for s in r.samples)]
        return measured[-1].tokens / measured[-1].chars if measured else self._ratio

    def estimate(self, turns: int) -> int:
        return int(self.history.request_chars(turns) * self.ratio) + 1

    def turns_for(self, target: int) -> int:
        return self.history.turns_within(int(target / self.ratio))

    def _runs(self, turns: int) -> list[Rung]:
        return [r for r in self.rungs if r.turns == turns]

    def verdict(self, turns: int) -> bool | None:
        """A size's verdict over its runs; None when untried or its runs are tied."""
        runs = self._runs(turns)
        if any(s.final for r in runs for s in r.samples):
            return False
        yes = sum(r.followed for r in runs)
        return None if yes * 2 == len(runs) else yes * 2 > len(runs)

    def _settled(self, turns: int) -> bool:
        runs = self._runs(turns)
        return not self.confirm or len(runs) >= 2 or any(s.final for r in runs for s in r.samples)

    def bracket(self) -> tuple[int | None, int | None]:
        """(largest passing size below the smallest failing one, smallest failing size)."""
        tried = {r.turns for r in self.rungs}
        fails = [t for t in tried if self.verdict(t) is False]
        hi = min(fails) if fails else None
        passes = [t for t in tried if self.verdict(t) is True and (hi is None or t < hi)]
        return (max(passes) if passes else None), hi

    def next_rung(self) -> tuple[str, int, int] | None:
        """(phase, filler turns, target tokens) of the next rung, or None when done."""
        lo, hi = self.bracket()
        while self._climbing and self._targets:
            target = self._targets.pop(0)
            turns = self.turns_for(target)
            if lo is None or turns > lo:
                return "climb", turns, target
        self._climbing = False
        floor = -1 if lo is None else lo
        tied = sorted(
            t
            for t in {r.turns for r in self.rungs}
            if floor < t and (hi is None or t < hi) and self.verdict(t) is None
        )
        if tied:
            return "confirm", tied[0], self.estimate(tied[0])
        if hi is not None and hi - floor > 1:
            gap = self.tokens(hi) - self.tokens(lo) if lo is not None else None
            if gap is None or gap > RESOLUTION * self.tokens(lo or 0):
                mid = (floor + hi) // 2
                return "bisect", mid, self.estimate(mid)
        for end in (lo, hi):
            if end is not None and not self._settled(end):
                return "confirm", end, self.estimate(end)
        return None

    def cap(self, tokens: int) -> bool:
        """Climb no higher than `tokens` — the largest rung the time budget still affords —
        trying that size itself next. False (nothing changes) when it adds nothing above the
        largest passing size, or does not lie well below an earlier cap."""
        lo, _ = self.bracket()
        turns = self.turns_for(tokens)
        if not self._climbing or (lo is not None and turns <= lo):
            return False
        if lo is not None and tokens <= self.tokens(lo) * (1 + RESOLUTION):
            return False
        if self.capped is not None and tokens > self.capped * CAP_STEP:
            return False
        self.capped, self._targets = tokens, [tokens]
        return True

    def tokens(self, turns: int) -> int:
        runs = self._runs(turns)
        return runs[-1].tokens if runs else self.estimate(turns)

    def record(self, rung: Rung) -> None:
        self.rungs.append(rung)
        if not rung.followed:
            self._climbing = False

    @property
    def horizon_rung(self) -> Rung | None:
        lo, _ = self.bracket()
        return self._runs(lo)[-1] if lo is not None else None

    @property
    def limited(self) -> bool:
        """Whether the time budget capped the climb before any size failed: more is left."""
        return self.capped is not None and self.bracket()[1] is None

    @property
    def boundary_rung(self) -> Rung | None:
        _, hi = self.bracket()
        return self._runs(hi)[-1] if hi is not None else None

    def tally(self, turns: int | None) -> list[int] | None:
        """[followed, samples] over every run at this size (None for an untried size)."""
        if turns is None:
            return None
        samples = [s for r in self._runs(turns) for s in r.samples]
        return [sum(s.followed for s in samples), len(samples)]

    def confidence(self, turns: int | None) -> float:
        """How sure every sample at this size is of its verdict (1.0 for an untried size)."""
        if turns is None:
            return 1.0
        return verdict_confidence([s for r in self._runs(turns) for s in r.samples])

    @property
    def verified_window(self) -> int | None:
        sizes = [s.rejected for r in self.rungs for s in r.samples if s.overflow and s.rejected]
        return min(sizes) if sizes else None


def profile_num_ctx(profile: CapacityProfile) -> int:
    """The one runner window for a bound profile: a ladder size holding the usable horizon
    plus the output reserve, never above the trained window."""
    return choose_num_ctx(usable_horizon(profile) + profile.output_reserve, profile.declared_window)


def probed_at(profile: CapacityProfile) -> str:
    return str(profile.provenance.get("probed_at") or "")


def is_probed(profile: CapacityProfile) -> bool:
    return profile.provenance.get("source") == "probe"


def left_undecided(profile: CapacityProfile) -> bool:
    """Whether the probe that measured `profile` stopped with rungs it never decided (out of
    time, a sample unanswered in its time, paused, a climb its time capped before any size
    failed): it is retried when the machine is idle."""
    provenance = profile.provenance
    memory = provenance.get("memory")
    recall_stopped = isinstance(memory, dict) and bool(
        memory.get("stopped") or memory.get("budget_ceiling")
    )
    return is_probed(profile) and (
        bool(provenance.get("stopped"))
        or recall_stopped
        or provenance.get("outcome") == "timed_out"
    )


def is_fresh(profile: CapacityProfile, now: str, *, ttl_s: float, digest: str = "") -> bool:
    """Whether a probed profile still stands: younger than `ttl_s`, its probe not left
    undecided, and, when the model's current digest is known, measured on that same digest."""
    if not is_probed(profile) or not probed_at(profile) or left_undecided(profile):
        return False
    if digest and profile.model_digest and digest != profile.model_digest:
        return False
    age = _instant(now) - _instant(probed_at(profile))
    return age.total_seconds() < ttl_s


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
