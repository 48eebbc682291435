"""The stable prefix's size in tokens: measured once per profile, then kept calibrated (spec §6).

Why it exists: the planner's budget subtracts the prefix (system prompt + tool schemas) from the
horizon. Priced at the conversation's tokens per char it is badly off, because JSON schemas
tokenise nothing like prose; on a small model whose horizon is a few thousand tokens that error
is a turn more or less in the working set. So the runtime sends the prefix alone once, as a
usage-only request (`max_tokens: 1`), and the provider's count becomes `prefix_tokens`. The
request also warms the runner's prefix cache, so the turn after it pays nothing extra.

The measurement is an Activity (`prefix_measured`) folded over the profile like every other
feedback record (`context/capacity/feedback.py`), keyed by the prefix digest it measured: a different
system prompt or tool set is a different prefix and is measured again.

Calibration afterwards. A receipt counts the prefix and the messages together; the messages'
share can only be estimated at tokens per char, and that ratio is itself learned from whole
requests, so "reported minus estimated messages" over a long conversation drifts back to the
chars estimate the measurement replaced. A receipt is therefore used only when its messages are
a small part of it (estimated at most CALIBRATION_SHARE of the prefix, e.g. the first request
of a session): there a 20 % error in the ratio moves the reading by under 5 %. Readings are
folded as an EWMA (α = 0.3) and one that disagrees with the current value by more than a factor
of two is taken as noise, not as the prefix.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from vak_desktop.context.capacity.profile import estimate_tokens, tokens_per_char
from vak_desktop.context.payloads import Activity, CapacityProfile, Ewma, Receipt
from vak_desktop.context.request import ChatRequest, Message, ToolSpec

PREFIX_MEASURED = "prefix_measured"  # Activity: the prefix alone, sent once, counted
CALIBRATION_SHARE = 0.25  # receipts whose messages are ≤ 25 % of the prefix calibrate it
OUTLIER_FACTOR = 2.0


def prefix_chars(system: str, tools: Sequence[ToolSpec]) -> int:
    """Characters of the stable prefix, counted as `ChatRequest.chars()` counts them."""
    return len(system) + sum(t.chars() for t in tools)


def prefix_request(
    model: str,
    system: str,
    tools: Sequence[ToolSpec],
    *,
    num_ctx: int = 0,
    keep_alive: str | int | None = None,
) -> ChatRequest:
    """The usage-only request: the system prompt and the tools, nothing else, one token out."""
    return ChatRequest(
        model=model,
        messages=(Message(role="system", content=system),),
        tools=tuple(tools),
        num_ctx=num_ctx,
        keep_alive=keep_alive,
        max_tokens=1,
    )


def needs_measurement(profile: CapacityProfile, digest: str) -> bool:
    """Whether this profile has no measured size for the prefix with `digest`."""
    return profile.prefix_digest != digest or profile.prefix_tokens.samples == 0


def measurement_activity(
    profile: CapacityProfile,
    *,
    digest: str,
    chars: int,
    tokens: int,
    cached: int = 0,
    wall_ns: int = 0,
) -> Activity:
    """The record of one usage-only request: what the provider counted for the prefix."""
    return Activity(
        type=PREFIX_MEASURED,
        message=f"the stable prefix measured at {tokens:,} tokens ({chars:,} chars)",
        detail={
            "provider": profile.provider,
            "model": profile.model,
            "prefix_digest": digest,
            "prefix_chars": chars,
            "prefix_tokens": tokens,
            "cached_tokens": cached,
            "wall_ns": wall_ns,
        },
    )


def adopt_measurement(profile: CapacityProfile, detail: Mapping[str, Any]) -> CapacityProfile:
    """The profile after a `prefix_measured` record: a direct count replaces any estimate."""
    tokens, chars = _count(detail.get("prefix_tokens")), _count(detail.get("prefix_chars"))
    digest = detail.get("prefix_digest")
    if not tokens or not chars or not isinstance(digest, str):
        return profile
    return dataclasses.replace(
        profile, prefix_tokens=Ewma(float(tokens), 1), prefix_chars=chars, prefix_digest=digest
    )


def calibrate(profile: CapacityProfile, receipt: Receipt) -> CapacityProfile:
    """The profile after one receipt of a request carrying the measured prefix: reported
    prompt tokens minus the messages' estimated size, when the messages are small enough for
    that estimate to be trusted (see the module docstring)."""
    measured = profile.prefix_tokens
    if not measured.samples or receipt.prefix_digest != profile.prefix_digest:
        return profile
    message_chars = receipt.request_chars - profile.prefix_chars
    prompt = receipt.usage.prompt_tokens()
    if message_chars < 0 or prompt <= 0:
        return profile
    messages = message_chars * tokens_per_char(profile)
    if messages > CALIBRATION_SHARE * measured.value:
        return profile
    reading = prompt - messages
    if not measured.value / OUTLIER_FACTOR <= reading <= measured.value * OUTLIER_FACTOR:
        return profile
    return dataclasses.replace(profile, prefix_tokens=measured.update(reading))


def planned_prefix_tokens(profile: CapacityProfile, chars: int, digest: str) -> int:
    """What the planner subtracts for the prefix of `chars` characters and `digest`: the
    measured size when this prefix was measured; a measurement of another prefix scaled by
    chars (its tokens per char is the best guess for more schema and system text); else the
    chars estimate at the profile's ratio."""
    measured = profile.prefix_tokens
    if measured.samples and profile.prefix_chars > 0:
        if profile.prefix_digest == digest:
            return round(measured.value)
        return round(measured.value * chars / profile.prefix_chars)
    return estimate_tokens(chars, tokens_per_char(profile))


def _count(value: object) -> int:
    """A positive whole count, or 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
