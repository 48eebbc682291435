"""API keys: kept in the operating system's keyring, or read from the provider's environment
variable.

A key is stored under the service `vak-desktop` and the provider entry's name. Where there is no
keyring backend (common on minimal Linux), or nothing is stored, the key is read from the
environment variable the provider's own tools use (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`,
`OPENROUTER_API_KEY`) or the one the entry names (`api_key_env`); it is never written to a file.
Nothing here logs a key, and no other module writes one anywhere: the settings file names the
provider, the ledger records the provider and model, and a key travels only from here to the
request header.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from keyring.errors import KeyringError

# keyring (0.1 s of the window's start on a loaded 2-core machine: jaraco, importlib_metadata,
# its backends) is imported by the first key stored, read or deleted, not at start-up: a window
# with no hosted provider never asks for a key (python -X importtime)

SERVICE = "vak-desktop"
ENV_VARS = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
}


def keyring_available() -> bool:
    """Whether a keyring backend can store keys here (False: the 'fail' backend, or a chain
    with no backend in it)."""
    import keyring
    from keyring.backends import chainer, fail

    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring):
        return False
    return not (isinstance(backend, chainer.ChainerBackend) and not backend.backends)


def env_var_for(kind: str, named: str = "") -> str:
    """The environment variable a key of `kind` is read from ('' when the kind has none)."""
    return named or ENV_VARS.get(kind, "")


def env_api_key(kind: str, named: str = "") -> str | None:
    """The key in the provider's environment variable, or None when it is unset or empty."""
    name = env_var_for(kind, named)
    value = os.environ.get(name, "").strip() if name else ""
    return value or None


class SecretStoreError(RuntimeError):
    """The keyring could not be used; the message says what to do, never the key."""


def store_api_key(provider: str, key: str) -> None:
    if not key.strip():
        raise ValueError("an API key cannot be empty")
    keyring, errors = _keyring()
    try:
        keyring.set_password(SERVICE, provider, key.strip())
    except errors.KeyringError as exc:
        raise SecretStoreError(_unavailable(provider, exc)) from exc


def api_key(provider: str) -> str | None:
    """The stored key for `provider`, or None when none is stored."""
    keyring, errors = _keyring()
    try:
        password: str | None = keyring.get_password(SERVICE, provider)
        return password
    except errors.KeyringError as exc:
        raise SecretStoreError(_unavailable(provider, exc)) from exc


def delete_api_key(provider: str) -> bool:
    """Forget `provider`'s key; False when there was none."""
    keyring, errors = _keyring()
    try:
        keyring.delete_password(SERVICE, provider)
    except errors.PasswordDeleteError:
        return False
    except errors.KeyringError as exc:
        raise SecretStoreError(_unavailable(provider, exc)) from exc
    return True


def _keyring() -> tuple[Any, Any]:
    import keyring
    import keyring.errors

    return keyring, keyring.errors


def _unavailable(provider: str, exc: KeyringError) -> str:
    return (
        f"the system keyring is not available for {provider!r} ({type(exc).__name__}); "
        "install and unlock a keyring service (GNOME Keyring, KWallet, macOS Keychain or "
        "Windows Credential Manager)"
    )
