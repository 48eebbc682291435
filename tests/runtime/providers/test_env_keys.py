"""Without a keyring backend, a hosted provider's key comes from its environment variable (the
kind's usual one, or the one the entry names) and reaches only the request header; it is never
written to a file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import keyring
import pytest
from keyring.backends import fail

from tests.doubles.openai_server import OpenAIDouble
from vak_desktop.providers import NO_RETRY
from vak_desktop.runtime.providers.entries import ProviderSetupError, open_entry
from vak_desktop.runtime.providers.secrets import (
    SecretStoreError,
    env_var_for,
    keyring_available,
    store_api_key,
)
from vak_desktop.runtime.settings import HostedProvider, Settings, load_settings, save_settings

KEY = "sk-env-0123456789abcdef"
MODEL = "gpt-test"


@pytest.fixture
def no_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


async def test_without_a_keyring_the_kinds_env_var_is_the_key(
    no_keyring: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert not keyring_available()
    with pytest.raises(SecretStoreError, match="keyring is not available"):
        store_api_key("work", KEY)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIDouble(models=(MODEL,), api_key=KEY) as server:
        entry = HostedProvider("work", "openai", base_url=server.url + "/v1")
        async with httpx.AsyncClient() as client:
            with pytest.raises(SecretStoreError, match="or set OPENAI_API_KEY"):
                open_entry(entry, client, retry=NO_RETRY)
            monkeypatch.setenv("OPENAI_API_KEY", KEY)
            provider = open_entry(entry, client, retry=NO_RETRY)
            models = await provider.list_models()  # type: ignore[attr-defined]
            assert [m.name for m in models] == [MODEL]
        assert server.requests[-1][2]["authorization"] == f"Bearer {KEY}"
        path = save_settings(Settings(providers=(entry,)), tmp_path / "settings.toml")
        assert KEY not in path.read_text(encoding="utf-8")


async def test_an_entry_can_name_its_own_variable_and_it_round_trips_in_the_settings(
    no_keyring: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WORK_GATEWAY_KEY", KEY)
    entry = HostedProvider("gw", "openrouter", api_key_env="WORK_GATEWAY_KEY")
    assert env_var_for("openrouter", entry.api_key_env) == "WORK_GATEWAY_KEY"
    assert env_var_for("anthropic") == "ANTHROPIC_API_KEY"
    path = save_settings(Settings(providers=(entry,)), tmp_path / "settings.toml")
    assert load_settings(path).providers == (entry,)
    async with httpx.AsyncClient() as client:
        assert open_entry(entry, client, retry=NO_RETRY) is not None
    monkeypatch.delenv("WORK_GATEWAY_KEY")
    async with httpx.AsyncClient() as client:
        with pytest.raises((ProviderSetupError, SecretStoreError), match="WORK_GATEWAY_KEY"):
            open_entry(entry, client, retry=NO_RETRY)
