"""Capacity numbers the request is shaped by. The foundation holds only what every request
needs before any probe has run: the runner's `num_ctx`, picked from a small fixed ladder.

Changing `num_ctx` between requests makes Ollama reload the model, so it is chosen from a few
fixed sizes and only ever steps up within a binding, never wobbling per request.
"""

from __future__ import annotations

NUM_CTX_SIZES = (4_096, 8_192, 16_384, 32_768, 65_536, 131_072, 262_144)
DEFAULT_OUTPUT_RESERVE = 2_048  # metadata-only reserve until a profile has observed completions
FALLBACK_TOKENS_PER_CHAR = 1 / 3  # before any receipt: a cautious ratio, over-counts English


def choose_num_ctx(needed_tokens: int, declared_window: int | None, current: int = 0) -> int:
    """The smallest ladder size that holds `needed_tokens`, never below `current` (no reload to
    shrink), never above the model's trained window."""
    size = next((s for s in NUM_CTX_SIZES if s >= needed_tokens), NUM_CTX_SIZES[-1])
    size = max(size, current, NUM_CTX_SIZES[1])
    if declared_window:
        size = min(size, declared_window)
    return size


def estimate_tokens(chars: int, tokens_per_char: float | None) -> int:
    """Tokens for `chars` characters at the learned ratio (or the cautious fallback)."""
    ratio = tokens_per_char if tokens_per_char and tokens_per_char > 0 else FALLBACK_TOKENS_PER_CHAR
    return int(chars * ratio) + 1
