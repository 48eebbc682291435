"""A presentation payload's canonical form and its digest: the one identity of a card.

Two emits of the same card — through a tool call or an inline fence, in any key order — have
the same canonical text and so the same digest; that is what the duplicate rule (one entry per
digest per turn) and the repeated-card rule (a card identical to one already shown) compare.
"""

from __future__ import annotations

import json
from typing import Any

import blake3

DIGEST_PREFIX = "b3:"


def canonical_payload(payload: Any) -> str:
    """Key-sorted compact JSON of a payload (the text that is hashed and stored)."""
    return json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def payload_digest(payload: Any) -> str:
    """`b3:` + blake3 of the canonical payload text."""
    return DIGEST_PREFIX + blake3.blake3(canonical_payload(payload).encode("utf-8")).hexdigest()
