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


HAND_WRITTEN = """\
# My settings — written by hand, keep these notes.
[general]
ollama_host = "http://10.0.0.5:11434"   # the box under the desk
keep_alive = "2h"
theme = "dark"
future_option = { colour = "teal" }  # a key this version does not know

[probe]
idle = false

# servers I use
[[mcp_servers]]
name = "clock"
command = ["python", "-m", "mcp_server_time"]  # stdio
timeout_hint = 30

[[mcp_servers]]
name = "files"
url = "http://127.0.0.1:9000/mcp"

[plugins.unknown]   # a whole table from a newer version
list = [1, 2, 3]
"""


def test_saving_unchanged_settings_keeps_the_users_file_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_bytes(HAND_WRITTEN.encode())
    save_settings(load_settings(path), path)
    assert path.read_bytes() == HAND_WRITTEN.encode()


def test_a_change_rewrites_only_its_own_line_and_keeps_comments_and_unknown_keys(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.toml"
    path.write_bytes(HAND_WRITTEN.encode())
    settings = load_settings(path)
    clock, _files = settings.mcp_servers
    save_settings(
        settings.replace(
            theme="light",
            mcp_servers=(clock, McpServer("time2", command=("uvx", "mcp-server-time"))),
        ),
        path,
    )
    text = path.read_text()
    expected = HAND_WRITTEN.replace('theme = "dark"', 'theme = "light"')
    expected = expected.replace(
        '[[mcp_servers]]\nname = "files"\nurl = "http://127.0.0.1:9000/mcp"\n\n', ""
    )
    assert text.startswith(expected.split("[plugins.unknown]")[0].rstrip("\n"))
    assert "[plugins.unknown]   # a whole table from a newer version\nlist = [1, 2, 3]" in text
    assert "timeout_hint = 30" in text and "files" not in text
    assert load_settings(path).mcp_servers[1] == McpServer(
        "time2", command=("uvx", "mcp-server-time")
    )


def test_a_path_with_a_control_character_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    odd = "/data/odd\x7fname\x01/model.gguf"
    settings = Settings(workspace=(odd,), embedded_model=odd)
    save_settings(settings, path)
    assert load_settings(path) == settings


def test_a_file_that_is_not_toml_is_not_overwritten_by_a_save(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_bytes(b"[general\ntheme = dark\n")
    with pytest.raises(SettingsError, match="not overwritten"):
        save_settings(Settings(), path)
    assert path.read_bytes() == b"[general\ntheme = dark\n"
