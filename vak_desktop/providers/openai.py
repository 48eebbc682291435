"""The OpenAI adapter: chat completions on api.openai.com, with the session as the cache key.

The wire format is the one `openai_compatible.py` already speaks; what differs is what a hosted
API needs. OpenAI caches prompt prefixes on its own, but spreads requests over machines: the
`prompt_cache_key` (the session) keeps one session's requests together so its repeated prefix
is read from the cache (usage `prompt_tokens_details.cached_tokens`, part of `prompt_tokens`).
Output is capped with `max_completion_tokens` (the reasoning models refuse `max_tokens`).

The metadata rung is `GET /v1/models/{model}`: it says whether the key can use the model, but
OpenAI lists no window there, so a small catalogue of the families' published windows stands
in. It is a claim like any declared window: the planner treats it at metadata confidence and an
over-length answer (`context_length_exceeded`, which states the real limit) corrects it.
"""

from __future__ import annotations

from typing import Any

from vak_desktop.context.request import ChatRequest
from vak_desktop.providers import openai_wire as wire
from vak_desktop.providers.base import ModelDetails
from vak_desktop.providers.openai_compatible import OpenAICompatibleProvider

DEFAULT_HOST = "https://api.openai.com"

# Published context windows by model-name prefix, longest prefix first (checked 2026-11).
KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-5", 400_000),
    ("gpt-3.5-turbo", 16_385),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
)


# The reasoning models: they take `reasoning_effort` and refuse `temperature`.
REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def reasons(model: str) -> bool:
    """Whether `model` is one of OpenAI's reasoning models."""
    return model.startswith(REASONING_PREFIXES) and not model.startswith("gpt-5-chat")


def known_window(model: str) -> int | None:
    """The catalogue's window for `model`, or None when no family matches."""
    return next((w for prefix, w in KNOWN_WINDOWS if model.startswith(prefix)), None)


class OpenAIProvider(OpenAICompatibleProvider):
    """`OpenAICompatibleProvider` for the OpenAI API: hosted, keyed, cached by session."""

    name = "openai"
    server = "the OpenAI API"
    start_hint = "check the network connection"
    token_limit_field = "max_completion_tokens"
    reads_props = False

    def _runs_locally(self) -> bool:
        return False  # a hosted API: probing it costs money, whatever the address

    def cache_hints(self, request: ChatRequest, body: dict[str, Any]) -> dict[str, Any]:
        return {"prompt_cache_key": request.session_key} if request.session_key else {}

    def accepts_sampling(self, model: str) -> bool:
        return not reasons(model)

    def think_fields(self, model: str, think: bool) -> dict[str, Any]:
        """`reasoning_effort` on a reasoning model ("low" is the least every one of them
        accepts; gpt-5's "minimal" is refused by the o-series); nothing on the others."""
        if not reasons(model):
            return {}
        return {"reasoning_effort": "high" if think else "low"}

    async def show(self, model: str) -> ModelDetails:
        # `vak models` asks about every listed model: the fresh list answers, not one GET each
        entry = self._listed(model) or await self._get_json(f"/v1/models/{model}", model)
        declared = wire.declared_window(entry) if isinstance(entry, dict) else None
        return ModelDetails(
            name=model,
            declared_window=declared or known_window(model),
            capabilities=("completion", "tools", "thinking")
            if reasons(model)
            else ("completion", "tools"),
        )
