"""Provider adapters behind one seam, opened by name.

Callers outside `providers/` import from here: the error tree, the stream events, the ability
protocols and `open_provider(kind, client, host, api_key=...)`. The registry maps a provider
kind to a factory, so nothing else in the app ever asks which provider it holds. Kinds:
`ollama` (native), `openai-compatible` (llama.cpp server, LM Studio, vLLM …), and the hosted
`openai`, `anthropic`, `openrouter`, which take an API key (from the keyring, by the caller:
`runtime/providers/entries.py`).
"""

from __future__ import annotations

# isort: off
import vak_desktop.providers.httpx_import  # noqa: F401  (first: httpx without its CLI)

# isort: on
import os
from collections.abc import Callable

import httpx

from vak_desktop.providers.anthropic import AnthropicProvider
from vak_desktop.providers.anthropic_wire import DEFAULT_HOST as ANTHROPIC_HOST
from vak_desktop.providers.base import (
    ChatProvider,
    Done,
    LoadedModel,
    LoadedModels,
    ModelCatalog,
    ModelDetails,
    ModelDigests,
    ModelInspector,
    ModelPuller,
    ModelRemover,
    ModelSummary,
    ModelUnloader,
    PullProgress,
    RunsLocally,
    StreamEvent,
    StreamNotice,
    TextDelta,
    ThinkingDelta,
    ThinkingSigned,
    ToolCallEvent,
    VersionReporter,
    is_local,
)
from vak_desktop.providers.client import USER_AGENT, app_headers, http_client
from vak_desktop.providers.errors import (
    BadResponse,
    ContextOverflow,
    KeyRefused,
    ModelNotFound,
    ProviderError,
    RateLimited,
    ServerError,
    Unreachable,
)
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.providers.ollama_wire import resolve_host
from vak_desktop.providers.openai import DEFAULT_HOST as OPENAI_HOST
from vak_desktop.providers.openai import OpenAIProvider
from vak_desktop.providers.openai_compatible import OpenAICompatibleProvider
from vak_desktop.providers.openai_wire import resolve_host as resolve_openai_host
from vak_desktop.providers.openrouter import DEFAULT_HOST as OPENROUTER_HOST
from vak_desktop.providers.openrouter import OpenRouterProvider
from vak_desktop.providers.retry import NO_RETRY, RetryPolicy

ProviderFactory = Callable[..., ChatProvider]  # (client, host, *, api_key, key_name, retry)


def _ollama(client: httpx.AsyncClient, host: str, **_: object) -> ChatProvider:
    return OllamaProvider(client, host)  # a local runner: it takes no key


# kind -> (factory taking an already-resolved host, default host when the caller gives none)
_REGISTRY: dict[str, tuple[ProviderFactory, Callable[[], str]]] = {
    "ollama": (_ollama, lambda: resolve_host(os.environ.get("OLLAMA_HOST"))),
    "openai-compatible": (
        OpenAICompatibleProvider,
        lambda: resolve_openai_host(os.environ.get("VAK_OPENAI_COMPATIBLE_HOST")),
    ),
    "openai": (OpenAIProvider, lambda: OPENAI_HOST),
    "anthropic": (AnthropicProvider, lambda: ANTHROPIC_HOST),
    "openrouter": (OpenRouterProvider, lambda: OPENROUTER_HOST),
}
HOSTED_KINDS = ("openai", "anthropic", "openrouter")  # they need an API key to answer at all


def known_providers() -> tuple[str, ...]:
    """The kinds `open_provider` accepts."""
    return tuple(sorted(_REGISTRY))


def _entry(kind: str) -> tuple[ProviderFactory, Callable[[], str]]:
    try:
        return _REGISTRY[kind]
    except KeyError:
        known = ", ".join(known_providers())
        raise ValueError(f"unknown provider {kind!r}; known providers: {known}") from None


def default_host(kind: str) -> str:
    """Where provider `kind` is found when the user has not said (ollama: `OLLAMA_HOST`;
    openai-compatible: `VAK_OPENAI_COMPATIBLE_HOST`, else http://127.0.0.1:8080; the hosted
    kinds: their public API)."""
    return _entry(kind)[1]()


def open_provider(
    kind: str,
    client: httpx.AsyncClient,
    host: str | None,
    *,
    api_key: str | None = None,
    key_name: str | None = None,
    retry: RetryPolicy | None = None,
) -> ChatProvider:
    """An adapter for provider `kind` on `host` (None: `default_host(kind)`), using `client`.
    `api_key` goes only into request headers; `key_name` is the provider entry the key
    belongs to, which a refused-key error names; `retry` overrides the backoff policy."""
    factory, default = _entry(kind)
    return factory(
        client,
        default() if host is None else host,
        api_key=api_key,
        key_name=key_name,
        retry=retry,
    )


__all__ = [
    "HOSTED_KINDS",
    "NO_RETRY",
    "USER_AGENT",
    "AnthropicProvider",
    "BadResponse",
    "ChatProvider",
    "ContextOverflow",
    "Done",
    "KeyRefused",
    "LoadedModel",
    "LoadedModels",
    "ModelCatalog",
    "ModelDetails",
    "ModelDigests",
    "ModelInspector",
    "ModelNotFound",
    "ModelPuller",
    "ModelRemover",
    "ModelSummary",
    "ModelUnloader",
    "OllamaProvider",
    "OpenAICompatibleProvider",
    "OpenAIProvider",
    "OpenRouterProvider",
    "ProviderError",
    "ProviderFactory",
    "PullProgress",
    "RateLimited",
    "RetryPolicy",
    "RunsLocally",
    "ServerError",
    "StreamEvent",
    "StreamNotice",
    "TextDelta",
    "ThinkingDelta",
    "ThinkingSigned",
    "ToolCallEvent",
    "Unreachable",
    "VersionReporter",
    "app_headers",
    "default_host",
    "http_client",
    "is_local",
    "known_providers",
    "open_provider",
    "resolve_host",
    "resolve_openai_host",
]
