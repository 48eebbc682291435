"""`vak --provider NAME` opens a `[[providers]]` entry of the settings (its key from the
keyring) or a provider kind at `--host`, for every command that talks to a provider."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.doubles.anthropic_server import AnthropicDouble
from tests.doubles.keyring import MemoryKeyring
from tests.doubles.openai_server import OpenAIDouble
from vak_desktop.cli import main
from vak_desktop.runtime.providers.secrets import store_api_key
from vak_desktop.runtime.settings import HostedProvider, Settings, save_settings

KEY = "sk-ant-api03-cli-0123456789"


def vak(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(name="claude")
def claude_fixture(memory_keyring: MemoryKeyring) -> Iterator[AnthropicDouble]:
    with AnthropicDouble(models={"claude-sonnet-4-5": 200_000}, api_key=KEY) as double:
        entry = HostedProvider("claude", "anthropic", base_url=double.url)
        save_settings(
            Settings(providers=(entry,)), Path(os.environ["VAK_DATA_DIR"]) / "settings.toml"
        )
        yield double


def test_a_configured_entry_lists_and_chats_with_its_keyring_key(
    claude: AnthropicDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    store_api_key("claude", KEY)
    code, out, err = vak(capsys, "models", "--provider", "claude", "--json")
    assert code == 0, err
    (model,) = json.loads(out)
    assert model["name"] == "claude-sonnet-4-5" and model["declared_window"] == 200_000
    code, out, err = vak(
        capsys, "chat", "claude-sonnet-4-5", "hi", "--provider", "claude", "--json"
    )
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    assert "".join(e["text"] for e in events if e["event"] == "text") == claude.default_text
    assert events[-1]["event"] == "done" and events[-1]["outcome"] == "completed"
    assert all(r[2]["x-api-key"] == KEY for r in claude.requests)
    assert KEY not in out + err


def test_missing_and_refused_keys_are_one_line_reasons(
    claude: AnthropicDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = vak(capsys, "models", "--provider", "claude")
    assert code == 2 and "no API key is stored for provider 'claude'" in err
    assert claude.requests == []  # refused before anything went out
    store_api_key("claude", "sk-ant-wrong-000000")
    code, _, err = vak(capsys, "chat", "claude-sonnet-4-5", "hi", "--provider", "claude")
    assert code != 0 and "API key for provider 'claude' was refused" in err
    assert "sk-ant-wrong" not in err
    code, _, err = vak(capsys, "models", "--provider", "nope")
    assert code == 2 and "unknown provider 'nope'" in err and "claude" in err


def test_a_kind_by_name_at_a_host(
    memory_keyring: MemoryKeyring, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIDouble(models=("gpt-4o-mini",), api_key="sk-openai-cli-1234") as server:
        store_api_key("openai", "sk-openai-cli-1234")
        code, _, err = vak(
            capsys,
            "chat",
            "gpt-4o-mini",
            "hi",
            "--provider",
            "openai",
            "--host",
            server.url,
            "--json",
        )
        assert code == 0, err
        assert server.requests[-1][3]["prompt_cache_key"]  # the new session's id
