"""Capacity: how much of a conversation a bound model can really use, as plain numbers.

The `CapacityProfile` value (in `payloads.py`) is the only input the planner budgets against.
Before any probe has run, a model gets the *metadata-only* profile: its declared window as the
instruction horizon at low confidence, and the provider's output limit as the reserve. The probe
and every turn's receipt then replace those guesses with measurements.

The runner's `num_ctx` is picked from a small fixed ladder and only ever steps up within a
binding: changing `num_ctx` between requests makes Ollama reload the model.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Any

from vak_desktop.context.payloads import CapacityProfile, Ewma, Horizon

NUM_CTX_SIZES = (4_096, 8_192, 16_384, 32_768, 65_536, 131_072, 262_144)
# The output reserve until this model's completions were observed (spec §1: the provider's
# maximum output when it declares one, else the largest completion observed, EWMA). Small: a
# constant 2,048 alone exceeded the whole horizon of a 0.5B model.
DEFAULT_OUTPUT_RESERVE = 512
OUTPUT_ALPHA = 0.3  # how fast the reserve decays toward smaller completions (it rises at once)
DECLARED_OUTPUT = "output_declared"  # provenance key: the reserve is the provider's maximum
FALLBACK_TOKENS_PER_CHAR = 1 / 3  # before any receipt: a cautious ratio, over-counts English
METADATA_CONFIDENCE = 0.3  # a declared window is a claim, not a measurement
UNKNOWN_WINDOW = 8_192  # a provider that declares no window at all: assume little
# Below this usable horizon a model is *small*: it gets the compact prefix, only the tools an
# asked-for action needs, and a tail in plain sentences (measured on Qwen2.5-Coder-0.5B: the
# tagged tail was copied back as the answer, and look-alike tools drew the call; decision 0076)
SMALL_HORIZON = 8_192


def metadata_profile(
    provider: str,
    model: str,
    declared_window: int | None,
    *,
    output_reserve: int | None = None,
    quantisation: str = "",
    model_digest: str = "",
    now: str = "",
) -> CapacityProfile:
    """The profile a model has before anything was measured about it."""
    window = declared_window or UNKNOWN_WINDOW
    declared = output_reserve is not None
    reserve = output_reserve if output_reserve is not None else DEFAULT_OUTPUT_RESERVE
    return CapacityProfile(
        provider=provider,
        model=model,
        declared_window=window,
        instruction_horizon=Horizon(window, METADATA_CONFIDENCE, now),
        output_reserve=min(reserve, window // 4),
        quantisation=quantisation,
        model_digest=model_digest,
        provenance={"source": "metadata", "probed_at": now, DECLARED_OUTPUT: declared},
    )


def usable_horizon(profile: CapacityProfile, *, tool_free: bool = False) -> int:
    """The largest request the planner may build: the horizon, never past what the provider
    accepted or declared. A `tool_free` turn (one that asks for no tool) is planned against
    the larger of the tool horizon and the confirmed answer-from-memory horizon."""
    horizon = profile.instruction_horizon.tokens
    if tool_free and profile.memory_horizon is not None:
        horizon = max(horizon, profile.memory_horizon.tokens)
    limits = [horizon, profile.declared_window]
    if profile.verified_window:
        limits.append(profile.verified_window)
    return max(0, min(limits))


def in_current_window(profile: CapacityProfile, current: int | None) -> CapacityProfile:
    """`profile` for the model as it is served now: the window the server reports at bind
    (Ollama `/api/show`, llama.cpp `/props`) beats the declared window a stored profile kept
    from when it was measured — a model restarted at 8,192 tokens must not be planned at the
    11,620 it was measured at (a certain HTTP 400) — and the runner window never exceeds it."""
    if not current or current == profile.declared_window:
        return profile
    num_ctx = min(profile.num_ctx, current) if profile.num_ctx else 0
    return dataclasses.replace(profile, declared_window=current, num_ctx=num_ctx)


def is_small(profile: CapacityProfile) -> bool:
    """Whether the profile's usable horizon makes the model a small one (see SMALL_HORIZON)."""
    return usable_horizon(profile) < SMALL_HORIZON


def tokens_per_char(profile: CapacityProfile) -> float:
    """The learned ratio, or the cautious fallback before any receipt taught one."""
    ratio = profile.tokens_per_char
    return ratio.value if ratio.samples and ratio.value > 0 else FALLBACK_TOKENS_PER_CHAR


_FIXED_BITS = 32  # a ratio as a whole number of 2**-32 tokens per character


def fixed_ratio(ratio: float | None) -> int:
    """`ratio` (or the cautious fallback) in the integer units `estimate_tokens` counts in,
    rounded up: never fewer tokens than the float would give."""
    ratio = ratio if ratio and ratio > 0 else FALLBACK_TOKENS_PER_CHAR
    return math.ceil(ratio * (1 << _FIXED_BITS))  # exact: a power-of-two scaling


def estimate_tokens(chars: int, ratio: float | None) -> int:
    """Tokens for `chars` characters at `ratio` (or the cautious fallback), in integer
    arithmetic, so parts priced apart never add up to less than their whole: for any split,
    estimate(a) + estimate(b) >= estimate(a + b). (With the float product, a part rounding
    down from just under a whole token let a plan price its history one token under the
    request it made, #22 item 6.)"""
    return (chars * fixed_ratio(ratio) >> _FIXED_BITS) + 1


def estimate_all(chars: Iterable[int], ratio: float | None) -> list[int]:
    """`estimate_tokens` of each size in `chars`, the ratio converted once."""
    fixed = fixed_ratio(ratio)
    return [(c * fixed >> _FIXED_BITS) + 1 for c in chars]


def choose_num_ctx(needed_tokens: int, declared_window: int | None, current: int = 0) -> int:
    """The smallest ladder size that holds `needed_tokens`, never below `current` (no reload to
    shrink), never above the model's trained window."""
    size = next((s for s in NUM_CTX_SIZES if s >= needed_tokens), NUM_CTX_SIZES[-1])
    size = max(size, current, NUM_CTX_SIZES[1])
    if declared_window:
        size = min(size, declared_window)
    return size


def learn_output_reserve(profile: CapacityProfile, completion: int, stopped_at_limit: bool) -> int:
    """The reserve after one completion: the provider's declared maximum stays; otherwise the
    EWMA of the largest completion — up at once to a larger one (twice it when the completion
    stopped at the limit we sent: it wanted more), down by OUTPUT_ALPHA toward a smaller one,
    never below the starting value."""
    reserve = profile.output_reserve
    if profile.provenance.get(DECLARED_OUTPUT) or completion <= 0:
        return reserve
    target = 2 * completion if stopped_at_limit else completion
    decayed = round(reserve + OUTPUT_ALPHA * (target - reserve))
    learned = target if target >= reserve else decayed
    return max(DEFAULT_OUTPUT_RESERVE, min(learned, profile.declared_window // 2))


def learn_tokens_per_char(profile: CapacityProfile, prompt_tokens: int, chars: int) -> Ewma:
    """The ratio after one receipt: every prompt token billed (all cache tiers) per char sent."""
    if prompt_tokens <= 0 or chars <= 0:
        return profile.tokens_per_char
    return profile.tokens_per_char.update(prompt_tokens / chars)


def profile_to_json(profile: CapacityProfile) -> dict[str, Any]:
    """The profile in the `vak probe/profile` JSON shape (the CLI contract)."""
    horizon, prefix = profile.instruction_horizon, profile.prefix_tokens
    return {
        "provider": profile.provider,
        "model": profile.model,
        "declared_window": profile.declared_window,
        "verified_window": profile.verified_window,
        "instruction_horizon": {
            "tokens": horizon.tokens,
            "confidence": horizon.confidence,
            "last_confirmed": horizon.last_confirmed,
        },
        "tokens_per_char": profile.tokens_per_char.value,
        "prefill_tps": profile.prefill_tps.value,
        "cache": profile.cache,
        "output_reserve": profile.output_reserve,
        "num_ctx": profile.num_ctx,
        "prefix_tokens": round(prefix.value) if prefix.samples else None,
        "memory_horizon": _horizon_json(profile.memory_horizon),
        "provenance": profile.provenance,
    }


def _horizon_json(horizon: Horizon | None) -> dict[str, Any] | None:
    if horizon is None:
        return None
    return {
        "tokens": horizon.tokens,
        "confidence": horizon.confidence,
        "last_confirmed": horizon.last_confirmed,
    }


def for_turn(profile: CapacityProfile, *, tool_free: bool) -> CapacityProfile:
    """The profile a turn is planned with: a tool-free turn's horizon is `usable_horizon`'s
    tool-free choice (the planner reads `instruction_horizon`); any other turn, unchanged."""
    if not tool_free or profile.memory_horizon is None:
        return profile
    memory = profile.memory_horizon
    if memory.tokens <= profile.instruction_horizon.tokens:
        return profile
    return dataclasses.replace(profile, instruction_horizon=memory)


def profile_from_json(document: Any, base: CapacityProfile) -> CapacityProfile:
    """A profile from the contract's JSON shape; fields left out keep `base`'s values (the
    metadata-only defaults). Raises ValueError naming a field of the wrong type."""
    if not isinstance(document, dict):
        raise ValueError("a profile must be a JSON object")

    def number(key: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"profile field {key!r} must be a number, got {value!r}")
        return value

    changes: dict[str, Any] = {}
    for key in ("declared_window", "output_reserve", "num_ctx"):
        if key in document:
            changes[key] = int(number(key, document[key]))
    if document.get("verified_window") is not None:
        changes["verified_window"] = int(number("verified_window", document["verified_window"]))
    for field in ("instruction_horizon", "memory_horizon"):
        horizon = document.get(field)
        if horizon is None:
            continue
        if not isinstance(horizon, dict) or "tokens" not in horizon:
            raise ValueError(f"profile field {field!r} needs {{tokens, confidence}}")
        changes[field] = Horizon(
            int(number(f"{field}.tokens", horizon["tokens"])),
            float(number(f"{field}.confidence", horizon.get("confidence", 1.0))),
            str(horizon.get("last_confirmed", "")),
        )
    for key in ("tokens_per_char", "prefill_tps"):
        value = document.get(key)
        if isinstance(value, dict):  # as the ledger stores it: {"value", "samples"}
            samples = int(number(f"{key}.samples", value.get("samples", 1)))
            changes[key] = Ewma(float(number(f"{key}.value", value.get("value"))), samples)
        elif value is not None:
            changes[key] = Ewma(float(number(key, value)), 1)
    if "cache" in document:
        changes["cache"] = str(document["cache"])
    if isinstance(document.get("provenance"), dict):
        changes["provenance"] = document["provenance"]
    return dataclasses.replace(base, **changes)
