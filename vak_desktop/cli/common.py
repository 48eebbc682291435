"""What every `vak` command shares: the error that means "could not start", JSON output,
opening the ledger and the provider, binding a model with a clear message when it fails."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, NoReturn, TypeVar

from vak_desktop.ledger import LEDGER_FILENAME, Ledger, data_dir
from vak_desktop.providers import (
    ChatProvider,
    ModelNotFound,
    ProviderError,
    Unreachable,
    http_client,
)
from vak_desktop.runtime import ModelBinding, ToolRegistry, bind_model, default_tools
from vak_desktop.runtime.providers.entries import ProviderSetupError, open_named
from vak_desktop.runtime.providers.secrets import SecretStoreError
from vak_desktop.runtime.settings import Settings, SettingsError, load_settings, settings_path

T = TypeVar("T")


class CliError(Exception):
    """Could not start: printed as one line on stderr, exit code 2."""


def fail(message: str, code: int = 2) -> NoReturn:
    print(f"vak: {message}", file=sys.stderr)
    raise SystemExit(code)


def checked_text(text: str, where: str) -> str:
    """`text` if it is valid Unicode, else CliError naming where and at which character: bytes
    that are not UTF-8 on argv or stdin arrive as lone surrogates, which no entry can hold (it
    was a 43-line CanonicalFormError after an empty session was made, issue 24 F4)."""
    for index, char in enumerate(text):
        if "\ud800" <= char <= "\udfff":
            code = ord(char)
            what = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "a lone surrogate"
            raise CliError(
                f"{where} is not valid UTF-8 text: {what} at character {index + 1}; nothing was"
                " written"
            )
    return text


def emit(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def open_ledger(args: argparse.Namespace) -> Ledger:
    return Ledger.open(data_dir(args.data_dir) / LEDGER_FILENAME)


def settings_for(args: argparse.Namespace) -> Settings:
    """The settings in the data directory (a bad file is a clear one-line error)."""
    try:
        return load_settings(settings_path(args.data_dir))
    except SettingsError as exc:
        raise CliError(str(exc)) from None


def tools_for(args: argparse.Namespace, ledger: Ledger) -> ToolRegistry:
    """The tools a turn has: the core ones, the workspace folders, MCP servers and skills of
    the settings in the data directory."""
    settings = settings_for(args)
    return default_tools(settings, ledger, data_directory=data_dir(args.data_dir))


def unreachable_hint(exc: Unreachable) -> str:
    return f"{exc} (or point --host / OLLAMA_HOST at the server)"


async def with_provider(args: argparse.Namespace, work: Any) -> Any:
    """Run `work(provider)` with `--provider`: a `[[providers]]` entry of the settings by its
    name (its API key from the keyring), or a provider kind at `--host` or its default."""
    try:
        settings = load_settings(settings_path(args.data_dir))
    except SettingsError as exc:
        raise CliError(str(exc)) from None
    async with http_client() as client:
        try:
            provider = open_named(args.provider, client, settings, host=args.host)
        except (ProviderSetupError, SecretStoreError) as exc:
            raise CliError(str(exc)) from None
        return await work(provider)


async def bind(provider: ChatProvider, model: str) -> ModelBinding:
    try:
        return await bind_model(provider, model)
    except Unreachable as exc:
        raise CliError(unreachable_hint(exc)) from None
    except ModelNotFound as exc:
        raise CliError(f"{exc} at {provider.host} (see `vak models`)") from None
    except ProviderError as exc:  # e.g. HTTP 404: not the server we expected; nothing started
        raise CliError(f"cannot use {provider.host}: {exc}") from None


# -- commands ----------------------------------------------------------------------------
