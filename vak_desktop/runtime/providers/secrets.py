"""API keys, kept only in the operating system's keyring.

A key is stored under the service `vak-desktop` and the provider entry's name. Nothing here
logs a key, and no other module writes one anywhere: the settings file names the provider, the
ledger records the provider and model, and a key travels only from here to the request header.
"""

from __future__ import annotations

import keyring
from keyring.errors import KeyringError, PasswordDeleteError

SERVICE = "vak-desktop"


class SecretStoreError(RuntimeError):
    """The keyring could not be used; the message says what to do, never the key."""


def store_api_key(provider: str, key: str) -> None:
    if not key.strip():
        raise ValueError("an API key cannot be empty")
    try:
        keyring.set_password(SERVICE, provider, key.strip())
    except KeyringError as exc:
        raise SecretStoreError(_unavailable(provider, exc)) from exc


def api_key(provider: str) -> str | None:
    """The stored key for `provider`, or None when none is stored."""
    try:
        return keyring.get_password(SERVICE, provider)
    except KeyringError as exc:
        raise SecretStoreError(_unavailable(provider, exc)) from exc


def delete_api_key(provider: str) -> bool:
    """Forget `provider`'s key; False when there was none."""
    try:
        keyring.delete_password(SERVICE, provider)
    except PasswordDeleteError:
        return False
    except KeyringError as exc:
        raise SecretStoreError(_unavailable(provider, exc)) from exc
    return True


def _unavailable(provider: str, exc: KeyringError) -> str:
    return (
        f"the system keyring is not available for {provider!r} ({type(exc).__name__}); "
        "install and unlock a keyring service (GNOME Keyring, KWallet, macOS Keychain or "
        "Windows Credential Manager)"
    )
