"""The capacity profile a turn is planned against, read at bind time without waiting.

Until the probe lands (its own module), a model's profile is the newest one recorded in the
session for it, else the metadata-only profile from what the provider declared; either way its
tokens-per-char is what this session's receipts measured for that model (EWMA, α = 0.3), counting
every prompt token the provider billed, cache tiers included.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from vak_desktop.context.capacity import learn_tokens_per_char, metadata_profile
from vak_desktop.context.payloads import CapacityProfile, Receipt
from vak_desktop.ledger import Entry
from vak_desktop.runtime.binding import ModelBinding


def profile_for(binding: ModelBinding, chain: Sequence[Entry], now: str) -> CapacityProfile:
    """The profile to plan this binding's next request with (never runs a probe)."""
    recorded = [
        e.payload
        for e in chain
        if isinstance(e.payload, CapacityProfile)
        and (e.payload.provider, e.payload.model) == (binding.provider, binding.model)
    ]
    details = binding.details
    profile = (
        recorded[-1]
        if recorded
        else metadata_profile(
            binding.provider,
            binding.model,
            binding.declared_window,
            quantisation=details.quantisation if details else "",
            now=now,
        )
    )
    ratio = profile.tokens_per_char
    for entry in chain:
        receipt = entry.payload
        if isinstance(receipt, Receipt) and receipt.model == binding.model:
            ratio = learn_tokens_per_char(
                dataclasses.replace(profile, tokens_per_char=ratio),
                receipt.usage.prompt_tokens(),
                receipt.request_chars,
            )
    return dataclasses.replace(profile, tokens_per_char=ratio)
