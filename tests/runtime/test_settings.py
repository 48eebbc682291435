"""Settings round-trip through a real file, and a broken file is an error, not a reset."""

from __future__ import annotations

from pathlib import Path

import pytest

from vak_desktop.runtime.settings import (
    HostedProvider,
    McpServer,
    Settings,
    SettingsError,
    load_settings,
    save_settings,
)


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    assert load_settings(tmp_path / "settings.toml") == Settings()


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    settings = Settings(
        ollama_host="http://10.0.0.5:11434",
        keep_alive="2h",
        probe_idle=False,
        probe_hosted=True,
        workspace=("/home/a/notes", 'C:\\Users\\b "quoted"'),
        mcp_servers=(
            McpServer("clock", command=("python", "-m", "mcp_server_time"), env={"TZ": "UTC"}),
            McpServer("remote", url="http://127.0.0.1:9000/mcp", enabled=False),
        ),
        providers=(
            HostedProvider("claude", "anthropic"),
            HostedProvider("lan", "openai-compatible", "http://box:8080"),
        ),
        theme="dark",
        embedded_model='/models/Qwen2.5 "coder" 0.5B/q4_k_m.gguf',
    )
    path = save_settings(settings, tmp_path / "settings.toml")
    assert load_settings(path) == settings


def test_the_embedded_model_is_optional_and_kept_in_its_own_table(tmp_path: Path) -> None:
    path = save_settings(Settings(), tmp_path / "settings.toml")
    assert "[embedded]" not in path.read_text(encoding="utf-8")
    assert load_settings(path).embedded_model == ""
    path.write_text('[embedded]\nmodel = "C:\\\\models\\\\qwen.gguf"\n', encoding="utf-8")
    assert load_settings(path).embedded_model == "C:\\models\\qwen.gguf"
    chosen = Settings(embedded_model="/data/models/qwen.gguf")
    assert load_settings(save_settings(chosen, path)) == chosen


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("[general\n", "not valid TOML"),
        ('[general]\ntheme = "purple"\n', "theme must be one of"),
        ('[[mcp_servers]]\nname = "x"\n', "exactly one of `command` or `url`"),
        ('[[providers]]\nname = "p"\nkind = "mystery"\n', "kind must be one of"),
        (b"\xff\xfe".decode("latin-1"), "not valid TOML"),
    ],
)
def test_a_broken_file_names_itself_and_the_fault(tmp_path: Path, text: str, fault: str) -> None:
    path = tmp_path / "settings.toml"
    path.write_bytes(text.encode("latin-1") if text.startswith("ÿ") else text.encode())
    with pytest.raises(SettingsError, match=fault) as caught:
        load_settings(path)
    assert str(path) in str(caught.value)
