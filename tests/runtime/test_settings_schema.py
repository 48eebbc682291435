"""Settings are checked against a schema: a wrong type is an error naming the key and the file,
never coerced (issue 13 items 3 and 13)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vak_desktop.runtime.settings import SettingsError, load_settings


@pytest.mark.parametrize(
    ("toml", "named"),
    [
        ('[general]\nworkspace = "/any/folder"\n', "[general] workspace must be a list"),
        ("[general]\nworkspace = 5\n", "[general] workspace must be a list"),
        ('[general]\nworkspace = ["notes"]\n', "[general] workspace must be absolute paths"),
        ('[general]\nworkspace = ["/ok", 3]\n', "[general] workspace must be a list"),
        ('[probe]\nidle = "false"\n', "[probe] idle must be true or false, not a string"),
        ("[probe]\nhosted = 1\n", "[probe] hosted must be true or false, not a number"),
        ("[general]\nollama_host = 11434\n", "[general] ollama_host must be a string"),
        ('[embedded]\nmodel = "models/x.gguf"\n', "[embedded] model must be an absolute path"),
        (
            '[[mcp_servers]]\nname = "t"\ncommand = "uvx mcp-server-time"\n',
            "command must be a list",
        ),
        ('[[mcp_servers]]\nname = "t"\nurl = "http://x"\nenabled = "no"\n', "enabled must be true"),
        (
            '[[providers]]\nname = "gpt"\nkind = "openai"\nbase_url = 5\n',
            "base_url must be a string",
        ),
        ('[model_keep_alive]\n"llama3.2" = true\n', "[model_keep_alive] llama3.2 must be"),
        ("general = 5\n", "[general] must be a table"),
    ],
)
def test_a_wrong_type_is_an_error_naming_the_key_and_the_file(
    tmp_path: Path, toml: str, named: str
) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(toml)
    with pytest.raises(SettingsError) as caught:
        load_settings(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert named in str(caught.value)


def test_a_well_typed_file_loads_and_unknown_keys_are_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(
        '[general]\nworkspace = ["/srv/notes", "~/code"]\nkeep_alive = 300\nfuture = 1\n'
        "[probe]\nidle = false\n"
    )
    settings = load_settings(path)
    assert settings.workspace == ("/srv/notes", "~/code")
    assert settings.probe_idle is False and settings.keep_alive == "300"
