"""Feedback: how every turn's usage keeps a CapacityProfile true between probes (spec §1).

Why it exists: a probe runs at most once a day per model; the turns in between are measurements
too. The runtime records what it saw (Receipts, and Activities for an over-length rejection, a
silent truncation, a failed explicit instruction) and this module folds those records over the
profile they were planned against, in ledger order. Folding from the ledger instead of mutating
a cache means the profile of any past request can be rebuilt from the chain alone.

    tokens_per_char  ← EWMA(α = 0.3) of every prompt token the provider counted, cache tiers
                       included, over the chars we sent (a full cache hit reports
                       input_tokens == 0 on some providers: counting only those would collapse
                       the ratio toward zero for a request that was not remotely empty)
    prefill_tps      ← EWMA of prompt tokens / prefill seconds, on cache-miss requests only
    verified_window  ← lowered to the size a provider refused or silently cut to; a refusal
                       that counted our request also raises tokens_per_char to that count
    horizon          ← lowered (confidence 0.6) when a request above 0.8 × horizon failed an
                       explicit instruction; then a re-probe is due
    output_reserve   ← the provider's declared maximum output, else the EWMA of the largest
                       completion (up at once, down slowly, twice a completion cut at the limit)
    prefix_tokens    ← a `prefix_measured` count, then EWMA of receipts whose messages are
                       small beside the prefix (`context/capacity/prefix.py`)

Feedback never widens: only a probe can raise a horizon or a window. But it can ask for one:
when receipts keep showing explicit instructions followed well above the horizon (an
`instruction_followed` Activity per turn whose request was over REPROBE_MARGIN × horizon;
REPROBE_EVIDENCE of them since the profile was measured and since the last failure), the
horizon is probably an under-measurement and `reprobe_due` says a re-probe should run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from vak_desktop.context.capacity.prefix import PREFIX_MEASURED
from vak_desktop.context.capacity.prefix import adopt_measurement as adopt_prefix_measurement
from vak_desktop.context.capacity.prefix import calibrate as calibrate_prefix
from vak_desktop.context.capacity.profile import learn_output_reserve, learn_tokens_per_char
from vak_desktop.context.payloads import (
    Activity,
    CapacityProfile,
    Ewma,
    Horizon,
    Payload,
    Receipt,
)

INSTRUCTION_MARGIN = 0.8  # a failure counts against the horizon only above 0.8 × horizon
TIGHTENED_CONFIDENCE = 0.6
TRUNCATION_FACTOR = 0.5  # prompt_eval_count under half of our estimate: the server cut it

CONTEXT_OVERFLOW = "context_overflow"  # Activity: the provider refused a request as too long
SILENT_TRUNCATION = "silent_truncation"  # Activity: the provider counted far less than we sent
INSTRUCTION_FAILED = "instruction_failed"  # Activity: the model did not do what it was told
INSTRUCTION_FOLLOWED = "instruction_followed"  # Activity: it did, in a request over the horizon
OUTPUT_LIMIT = "output_limit"  # Activity: an answer stopped at the max output we sent (said)
REPROBE_MARGIN = 1.25  # "well above the horizon": a followed request over 1.25 × horizon
REPROBE_EVIDENCE = 3  # … this many of them (none failed since) schedule a re-probe


def overflow_window(requested: int | None, limit: int | None, sent_num_ctx: int) -> int:
    """The size an over-length rejection proves too large: the limit the provider named, else
    the size it counted, else the window we asked for."""
    return limit or requested or sent_num_ctx


def silently_truncated(prompt_tokens: int, chars: int, ratio: float) -> bool:
    """Whether a provider's prompt count is far below our own estimate of what we sent (an
    older Ollama that ignores `truncate` drops the oldest messages without a word)."""
    return 0 < prompt_tokens < TRUNCATION_FACTOR * chars * ratio


def tighten_window(profile: CapacityProfile, size: int) -> CapacityProfile:
    if size <= 0:
        return profile
    current = profile.verified_window
    return dataclasses.replace(profile, verified_window=min(size, current) if current else size)


def tighten_horizon(profile: CapacityProfile, request_tokens: int, now: str) -> CapacityProfile:
    """After a failed explicit instruction: the horizon drops to the request's size when that
    request was above INSTRUCTION_MARGIN × horizon; below it, the failure says nothing about
    the size."""
    horizon = profile.instruction_horizon
    if request_tokens <= INSTRUCTION_MARGIN * horizon.tokens:
        return profile
    lowered = Horizon(min(horizon.tokens, request_tokens), TIGHTENED_CONFIDENCE, now)
    return dataclasses.replace(profile, instruction_horizon=lowered)


def _cache_miss(receipt: Receipt, previous: Receipt | None, profile: CapacityProfile) -> bool:
    """Whether nothing of this request can have come from the prefix cache: the provider reports
    cache tiers and counted none, or (runners that report none, e.g. Ollama) it is the model's
    first request here, its `num_ctx` changed (the runner reloaded) or its prefix bytes did."""
    usage = receipt.usage
    if usage.cache_read_tokens or usage.cache_write_tokens:
        return usage.cache_read_tokens == 0
    if profile.cache == "provider_reported":
        return True
    if previous is None:
        return True
    return previous.num_ctx != receipt.num_ctx or previous.prefix_digest != receipt.prefix_digest


def learn_from_receipt(
    profile: CapacityProfile, receipt: Receipt, previous: Receipt | None
) -> CapacityProfile:
    profile = calibrate_prefix(profile, receipt)  # at the ratio before this receipt
    prompt = receipt.usage.prompt_tokens()
    ratio = learn_tokens_per_char(profile, prompt, receipt.request_chars)
    prefill = profile.prefill_tps
    seconds = receipt.timings.prompt_eval_ns / 1e9
    if prompt and seconds > 0 and _cache_miss(receipt, previous, profile):
        prefill = prefill.update(prompt / seconds)
    reserve = learn_output_reserve(
        profile, receipt.usage.output_tokens, receipt.done_reason == "length"
    )
    return dataclasses.replace(
        profile, tokens_per_char=ratio, prefill_tps=prefill, output_reserve=reserve
    )


def fold_feedback(
    profile: CapacityProfile, records: Iterable[Payload], *, now: str
) -> CapacityProfile:
    """`profile` revised by `records` (ledger payloads after it, in order). Receipts and
    Activities of other models are skipped; everything else is ignored. `now` stamps a lowered
    horizon only when its record does not say when the failure happened."""
    previous: Receipt | None = None
    for record in records:
        if isinstance(record, Receipt):
            if (record.provider, record.model) != (profile.provider, profile.model):
                continue
            profile = learn_from_receipt(profile, record, previous)
            previous = record
        elif isinstance(record, Activity):
            detail = record.detail
            if (detail.get("provider"), detail.get("model")) != (profile.provider, profile.model):
                continue
            if record.type in (CONTEXT_OVERFLOW, SILENT_TRUNCATION):
                tokens, chars = _int(detail.get("prompt_tokens")), _int(detail.get("chars"))
                if record.type == CONTEXT_OVERFLOW and tokens and chars:
                    profile = _refused_ratio(profile, tokens / chars)
                profile = tighten_window(profile, _int(detail.get("verified_window")))
            elif record.type == PREFIX_MEASURED:
                profile = adopt_prefix_measurement(profile, detail)
            elif record.type == INSTRUCTION_FAILED:
                at = str(detail.get("at") or now)  # when it failed, so a re-read is identical
                profile = tighten_horizon(profile, _int(detail.get("request_tokens")), at)
    return profile


def _refused_ratio(profile: CapacityProfile, measured: float) -> CapacityProfile:
    """A refusal counted our request exactly: the ratio is at least what it measured. An EWMA
    step alone would leave a badly low ratio low enough to plan a request that is refused
    again; the ratio only rises here, so the re-planned request is never larger."""
    ratio = profile.tokens_per_char
    value = max(ratio.value, measured) if ratio.samples else measured
    return dataclasses.replace(profile, tokens_per_char=Ewma(value, ratio.samples + 1))


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def followed_activity(
    instruction: str, request_tokens: int, profile: CapacityProfile, now: str
) -> Activity | None:
    """The record of an explicit instruction followed in a request over REPROBE_MARGIN × the
    horizon (evidence the horizon is too low), or None for a request within it."""
    horizon = profile.instruction_horizon.tokens
    if request_tokens <= REPROBE_MARGIN * horizon:
        return None
    return Activity(
        type=INSTRUCTION_FOLLOWED,
        message=(
            f"the model did {instruction} in a {request_tokens:,}-token request, above its "
            f"{horizon:,}-token horizon (evidence for a re-probe; feedback never widens)"
        ),
        detail={
            "provider": profile.provider,
            "model": profile.model,
            "instruction": instruction,
            "request_tokens": request_tokens,
            "horizon": horizon,
            "at": now,
        },
    )


def reprobe_due(profile: CapacityProfile, records: Iterable[Payload]) -> bool:
    """Whether `records` (ledger payloads since `profile` was measured, in order) hold
    REPROBE_EVIDENCE instructions this model followed over REPROBE_MARGIN × its horizon, with
    no failed explicit instruction after the first of them."""
    followed = 0
    for record in records:
        if not isinstance(record, Activity):
            continue
        detail = record.detail
        if (detail.get("provider"), detail.get("model")) != (profile.provider, profile.model):
            continue
        if record.type == INSTRUCTION_FAILED:
            followed = 0
        elif record.type == INSTRUCTION_FOLLOWED:
            size = _int(detail.get("request_tokens"))
            followed += size > REPROBE_MARGIN * profile.instruction_horizon.tokens
    return followed >= REPROBE_EVIDENCE
