"""The capacity probe's time budget (issue #17: the deadline is a promise, never overrun).

Why its own module: what a probe may still send depends on a small model of the runner's speed,
learned from the probe's own samples, and that model is checked on its own (tests feed it
samples). `run_probe` asks it before every sample and cuts the sample still running at the
deadline; this module only predicts.

A sample's time is its prefill — the prompt tokens beyond what the runner's cache holds (the
last prompt sent, which every sample shares up to its own turns) — plus its generation. A
prompt token costs more the later it sits (attention reads the whole prefix before it), so
prefill is priced in position-weighted tokens: the tokens from position c to n cost
k · ((n − c) · ATTENTION_TOKENS + (n² − c²) / 2), k learned from the newest prefill measured
(the server's own prefill timing when it reports one, else the wall time less the
generation). Measured on Qwen2.5-Coder 0.5B (embedded llama.cpp, 2 shared cores): fresh
prompts of 1.2k, 2.4k, 4.9k and 9.7k tokens prefilled at 79, 88, 88 and 39 tokens/s — the
tokens past 4.9k cost 3.5× those before, so a rung twice as long as the last is far more than
twice its price. Generation is priced at the longest one measured: the server's generation
timing, or a repeated prompt's wall time (what recurs on every sample), never the unexplained
rest of a new prompt's wall time (a fresh engine's warm-up).

When the next climb rung is beyond the budget, `largest_affordable` says which size still is:
the search climbs to that size instead (`HorizonSearch.cap`), so the budget buys the best
bracket it can rather than ending the probe early.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass

from vak_desktop.context.capacity.probe import Rung
from vak_desktop.context.capacity.probe_result import ProbeStop
from vak_desktop.context.capacity.probe_verdict import Sample

ATTENTION_TOKENS = 1_024  # at this position a token's attention costs about its other layers
MIN_FRESH_TOKENS = 64  # fewer new prompt tokens than this: the sample measures generation only


def position_weighted(cached: int, tokens: int) -> float:
    """The prefill work of the prompt tokens from position `cached` to `tokens`."""
    if tokens <= cached:
        return 0.0
    return (tokens - cached) * ATTENTION_TOKENS + (tokens * tokens - cached * cached) / 2


@dataclass
class ProbeBudget:
    """The probe's time: `deadline_s` seconds from `started` (None: no limit)."""

    deadline_s: float | None
    started: int = dataclasses.field(default_factory=time.perf_counter_ns)
    prefill_k: float = 0.0  # seconds per position-weighted token, from the newest prefill
    decode_s: float = 0.0  # the longest a sample took beyond its prefill
    cached: int = 0  # prompt tokens of the last sample: what the runner's cache holds

    def elapsed_s(self) -> float:
        return (time.perf_counter_ns() - self.started) / 1e9

    def remaining_s(self) -> float | None:
        """Seconds left (None without a deadline): the longest a sample may still run."""
        return None if self.deadline_s is None else max(0.0, self.deadline_s - self.elapsed_s())

    def overdue(self) -> bool:
        return self.deadline_s is not None and self.elapsed_s() >= self.deadline_s

    def predict_s(self, tokens: int, samples: int = 1) -> float:
        """Seconds `samples` samples of a `tokens`-token prompt would take: the first prefills
        what the cache lacks, every one generates."""
        return self.prefill_k * position_weighted(self.cached, tokens) + samples * self.decode_s

    def affords(self, tokens: int, samples: int = 1) -> bool:
        """Whether `samples` samples of about `tokens` prompt tokens would end within the
        budget. Before anything is measured the first sample may start (and is cut at the
        deadline if it runs that long)."""
        if self.deadline_s is None:
            return True
        if self.overdue():
            return False
        return self.elapsed_s() + self.predict_s(tokens, samples) <= self.deadline_s

    def largest_affordable(self, samples: int) -> int | None:
        """The largest prompt whose `samples` samples would still end within the budget
        (None without a deadline or a measured prefill)."""
        remaining = self.remaining_s()
        if remaining is None or self.prefill_k <= 0:
            return None
        work = (remaining - samples * self.decode_s) / self.prefill_k
        if work <= 0:
            return self.cached
        c, p = self.cached, ATTENTION_TOKENS  # solve position_weighted(c, n) = work for n
        return int(-p + math.sqrt(p * p + 2 * work + c * c + 2 * p * c))

    def observe(self, sample: Sample) -> None:
        """Learn the runner's speed from one answered sample."""
        if sample.final or sample.cancelled or not sample.prompt_tokens or sample.wall_ns <= 0:
            return
        wall = max(0, sample.wall_ns - sample.load_ns) / 1e9
        shared = sample.cached_tokens or min(self.cached, sample.prompt_tokens)
        work = position_weighted(shared, sample.prompt_tokens)
        fresh = sample.prompt_tokens - shared
        if sample.prompt_eval_ns > 0:  # the server timed its prefill (and its generation)
            prefill = sample.prompt_eval_ns / 1e9
            # a new prompt's wall time beyond both timings is not generation: a fresh engine's
            # first request spent 47 s there once (its repeat then took ~1 s)
            generation = sample.eval_ns / 1e9 if sample.eval_ns > 0 else wall - prefill
            if fresh < MIN_FRESH_TOKENS:
                generation = wall - prefill  # a repeat: everything but prefill recurs
            self.decode_s = max(self.decode_s, generation)
            if fresh >= MIN_FRESH_TOKENS:
                self.prefill_k = max(prefill, 1e-3) / work
        elif fresh < MIN_FRESH_TOKENS:  # (nearly) the same prompt again: generation only
            self.decode_s = max(self.decode_s, wall)
        else:  # a new prompt: prefill plus the generation measured so far
            self.prefill_k = max(wall - self.decode_s, 1e-3) / work
        self.cached = sample.prompt_tokens

    def stop(
        self,
        reason: str,
        rung: Rung | None = None,
        *,
        predicted_s: float = 0.0,
        cut: Sample | None = None,
    ) -> ProbeStop:
        """The record of the probe ending at its budget now."""
        return ProbeStop(reason, self.elapsed_s(), self.deadline_s or 0.0, predicted_s, rung, cut)
