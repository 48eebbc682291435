"""Opening the provider a settings entry names, its API key taken from the keyring.

A `[[providers]]` entry in the settings says which kind of provider it is and where; its key is
in the system keyring under the entry's name (`runtime/providers/secrets.py`). This is the one place the
two meet: the key goes from the keyring straight into the adapter, which puts it only in
request headers. Nothing here logs or returns the key.

A name that is no entry but a provider kind (`--provider openai`) is opened at the kind's
default address with the key stored under the kind's name.
"""

from __future__ import annotations

import dataclasses

import httpx

from vak_desktop.providers import (
    HOSTED_KINDS,
    ChatProvider,
    RetryPolicy,
    known_providers,
    open_provider,
)
from vak_desktop.runtime.providers.secrets import (
    SecretStoreError,
    api_key,
    env_api_key,
    env_var_for,
)
from vak_desktop.runtime.settings import HostedProvider, Settings

KEYED_KINDS = (*HOSTED_KINDS, "openai-compatible")  # a gateway or vLLM may want a key too


class ProviderSetupError(ValueError):
    """The provider cannot be opened as configured; the message says what to change."""


def find_entry(settings: Settings, name: str) -> HostedProvider | None:
    return next((p for p in settings.providers if p.name == name), None)


def provider_names(settings: Settings) -> tuple[str, ...]:
    """What `open_named` accepts: the configured entries, then the kinds."""
    configured = tuple(p.name for p in settings.providers)
    return configured + tuple(k for k in known_providers() if k not in configured)


def open_entry(
    entry: HostedProvider, client: httpx.AsyncClient, *, retry: RetryPolicy | None = None
) -> ChatProvider:
    """The adapter for `entry`, holding the key the keyring has for it. A hosted kind without
    a stored key is refused here, before any request could go out unauthenticated."""
    key = _key_for(entry) if entry.kind in KEYED_KINDS else None
    if key is None and entry.kind in HOSTED_KINDS:
        raise ProviderSetupError(
            f"no API key is stored for provider {entry.name!r} ({entry.kind}); set it in "
            "Settings → Providers (it is kept in the system keyring), or set "
            f"{env_var_for(entry.kind, entry.api_key_env)} in the environment"
        )
    try:
        return open_provider(
            entry.kind,
            client,
            entry.base_url or None,
            api_key=key,
            key_name=entry.name,
            retry=retry,
        )
    except ValueError as exc:  # an unknown kind
        raise ProviderSetupError(f"provider {entry.name!r}: {exc}") from None


def open_named(
    name: str,
    client: httpx.AsyncClient,
    settings: Settings,
    *,
    host: str | None = None,
    retry: RetryPolicy | None = None,
) -> ChatProvider:
    """The provider entry called `name`, else the provider kind `name`; `host` overrides the
    address either way."""
    entry = find_entry(settings, name)
    if entry is None:
        if name not in known_providers():
            known = ", ".join(provider_names(settings))
            raise ProviderSetupError(f"unknown provider {name!r}; known providers: {known}")
        entry = HostedProvider(name=name, kind=name)  # at the kind's default address
    if host:
        entry = dataclasses.replace(entry, base_url=host)
    return open_entry(entry, client, retry=retry)


def _key_for(entry: HostedProvider) -> str | None:
    """The keyring's key for the entry, else its environment variable's."""
    from_env = env_api_key(entry.kind, entry.api_key_env)
    try:
        stored = api_key(entry.name)
    except SecretStoreError as exc:
        if from_env is not None or entry.kind not in HOSTED_KINDS:
            return from_env  # a local server that may take a key works without one
        variable = env_var_for(entry.kind, entry.api_key_env)
        raise SecretStoreError(f"{exc}; or set {variable} in the environment") from exc
    return stored if stored is not None else from_env
