"""Provider adapters behind one seam, opened by name.

Callers outside `providers/` import from here: the error tree, the stream events, the ability
protocols and `open_provider(name, client, host)`. The registry maps a provider's name to a
factory, so nothing else in the app ever asks which provider it holds.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import httpx

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
    ToolCallEvent,
    VersionReporter,
    is_local,
)
from vak_desktop.providers.errors import (
    BadResponse,
    ContextOverflow,
    ModelNotFound,
    ProviderError,
    RateLimited,
    ServerError,
    Unreachable,
)
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.providers.ollama_wire import resolve_host
from vak_desktop.providers.openai_compatible import OpenAICompatibleProvider
from vak_desktop.providers.openai_wire import resolve_host as resolve_openai_host

ProviderFactory = Callable[[httpx.AsyncClient, str], ChatProvider]

# name -> (factory taking an already-resolved host, default host when the caller gives none)
_REGISTRY: dict[str, tuple[ProviderFactory, Callable[[], str]]] = {
    "ollama": (OllamaProvider, lambda: resolve_host(os.environ.get("OLLAMA_HOST"))),
    "openai-compatible": (
        OpenAICompatibleProvider,
        lambda: resolve_openai_host(os.environ.get("VAK_OPENAI_COMPATIBLE_HOST")),
    ),
}


def known_providers() -> tuple[str, ...]:
    """The names `open_provider` accepts."""
    return tuple(sorted(_REGISTRY))


def _entry(name: str) -> tuple[ProviderFactory, Callable[[], str]]:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(known_providers())
        raise ValueError(f"unknown provider {name!r}; known providers: {known}") from None


def default_host(name: str) -> str:
    """Where provider `name` is found when the user has not said (ollama: `OLLAMA_HOST`;
    openai-compatible: `VAK_OPENAI_COMPATIBLE_HOST`, else http://127.0.0.1:8080)."""
    return _entry(name)[1]()


def open_provider(name: str, client: httpx.AsyncClient, host: str | None) -> ChatProvider:
    """An adapter for provider `name` on `host` (None: `default_host(name)`), using `client`."""
    factory, default = _entry(name)
    return factory(client, default() if host is None else host)


__all__ = [
    "BadResponse",
    "ChatProvider",
    "ContextOverflow",
    "Done",
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
    "ProviderError",
    "ProviderFactory",
    "PullProgress",
    "RateLimited",
    "RunsLocally",
    "ServerError",
    "StreamEvent",
    "StreamNotice",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallEvent",
    "Unreachable",
    "VersionReporter",
    "default_host",
    "is_local",
    "known_providers",
    "open_provider",
    "resolve_host",
    "resolve_openai_host",
]
