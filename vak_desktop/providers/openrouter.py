"""The OpenRouter adapter: the chat-completions shape plus `session_id`, and its catalogue.

OpenRouter routes one model name to several upstream providers. `session_id` groups a
session's requests (and `prompt_cache_key` rides along for the upstreams that read it) so they
stay on the provider whose cache is warm; a model that caches only where told (an `anthropic/`
model) also gets `cache_control` on at most four message parts, at the assembler's
breakpoints. Usage is OpenAI's shape with `prompt_tokens_details.cached_tokens` and
`cache_write_tokens`, both parts of `prompt_tokens`. Reasoning streams as `delta.reasoning`.

The metadata rung is the catalogue, `GET /api/v1/models`: each entry's `context_length` (or
its top provider's), its `supported_parameters` and input modalities.
"""

from __future__ import annotations

from typing import Any

from vak_desktop.context.request import ChatRequest
from vak_desktop.providers import openai_wire as wire
from vak_desktop.providers.openai_compatible import OpenAICompatibleProvider

DEFAULT_HOST = "https://openrouter.ai/api"
EXPLICIT_CACHE_PREFIXES = ("anthropic/",)  # upstreams that cache nothing unless told where


class OpenRouterProvider(OpenAICompatibleProvider):
    """`OpenAICompatibleProvider` for OpenRouter: hosted, keyed, routed by session."""

    name = "openrouter"
    server = "OpenRouter"
    start_hint = "check the network connection"
    reads_props = False

    def _runs_locally(self) -> bool:
        return False

    def cache_hints(self, request: ChatRequest, body: dict[str, Any]) -> dict[str, Any]:
        if request.model.startswith(EXPLICIT_CACHE_PREFIXES):
            wire.mark_cache_points(body["messages"], request.cache_breakpoints)
        if not request.session_key:
            return {}
        return {"session_id": request.session_key, "prompt_cache_key": request.session_key}

    def think_fields(self, model: str, think: bool) -> dict[str, Any]:
        """OpenRouter's one reasoning switch, which it maps to each upstream's own."""
        return {"reasoning": {"enabled": think}}

    def capabilities_of(self, entry: dict[str, Any]) -> tuple[str, ...]:
        parameters = entry.get("supported_parameters") or []
        architecture = entry.get("architecture") or {}
        modalities = (
            architecture.get("input_modalities") or [] if isinstance(architecture, dict) else []
        )
        found = ["completion"]
        if "tools" in parameters:
            found.append("tools")
        if "reasoning" in parameters or "include_reasoning" in parameters:
            found.append("thinking")
        if "image" in modalities:
            found.append("vision")
        return tuple(found)

    def _headers(self) -> dict[str, str]:
        return {**super()._headers(), "X-Title": "Vak Desktop"}
