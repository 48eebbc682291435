"""A probe rung's samples and their verdict: a sequential test with a stated confidence.

Why its own module: the verdict is the part of the probe that decides how many requests a
rung costs and how sure the horizon is, and it is checked on its own (tests feed it sample
sequences). A sampling model near its limit follows like a coin with some bias p, so a rung
stops as soon as its first AGREE samples agree and otherwise samples on until one side has a
majority of VOTES. The confidence of a verdict is the posterior probability, under a uniform
prior on p, that p is on the verdict's side of one half: 2–0 gives 0.88, 4–0 (a confirmation
run pooled with the first) 0.97, 3–2 0.66.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

VOTES = 5  # a rung samples at most this many times (the first side to 3 wins)
AGREE = 2  # … and stops at once when its first AGREE samples agree
REPLY_CHARS = 160  # how much of a sample's reply its record keeps (never sent to a model)


@dataclass(frozen=True)
class Sample:
    """One request of a rung and what came back."""

    followed: bool  # the model called probe_ack (natively or as text)
    as_text: bool = False  # the call came written in the message text
    called: str = ""  # the tool it called instead, if any
    prompt_tokens: int = 0  # the provider's count of the whole prompt
    cached_tokens: int = 0  # cache-read tokens, when the provider reports them
    prompt_eval_ns: int = 0
    eval_ns: int = 0  # the server's generation time, when it reports one
    load_ns: int = 0
    wall_ns: int = 0
    miss: bool = False  # nothing of it could have been cached (first request, or a reload)
    overflow: bool = False  # the provider refused it as longer than the window
    rejected: int = 0  # on overflow: the window it named, else the size it counted
    error: str = ""
    reply: str = ""  # the start of what the model wrote (REPLY_CHARS), to read a miss by
    cancelled: bool = False  # cut (deadline, pause, its own time limit): no verdict, never counted
    undecided: str = ""  # why a cancelled sample has no verdict, when not the probe's deadline

    @property
    def final(self) -> bool:
        """A deterministic refusal: sampling again would not change it."""
        return self.overflow or bool(self.error)


def sequential_verdict(samples: tuple[Sample, ...], votes: int = VOTES) -> bool | None:
    """The verdict of a rung's samples, or None while more are needed: the first AGREE
    agreeing decide, else the first side to a majority of `votes`. A refusal is final."""
    if any(s.final for s in samples):
        return False
    yes = sum(s.followed for s in samples)
    no = len(samples) - yes
    if len(samples) >= min(AGREE, votes) and (yes == 0 or no == 0):
        return yes > no
    need = votes // 2 + 1
    if yes >= need or no >= need or len(samples) >= votes:
        return yes > no
    return None


def follow_confidence(followed: int, missed: int) -> float:
    """P(p > 1/2 | `followed` of `followed + missed` samples) under a uniform prior on the
    model's follow rate p: 1 − I½(followed + 1, missed + 1), exact for whole counts."""
    n = followed + missed + 1
    below: float = sum(math.comb(n, j) for j in range(followed + 1, n + 1)) / float(2**n)
    return 1.0 - below


def verdict_confidence(samples: Sequence[Sample]) -> float:
    """How sure the samples of one size are of their verdict (a refusal: certain)."""
    if any(s.final for s in samples):
        return 1.0
    yes = sum(s.followed for s in samples)
    no = len(samples) - yes
    above = follow_confidence(yes, no)
    return above if yes > no else 1.0 - above
