"""The user's settings: one TOML file beside the ledger, read whole and written whole.

Nothing secret is ever in it: API keys live in the OS keyring (`runtime.secrets`), and a
provider entry here names only where the provider is and which keyring entry holds its key.
An unreadable or malformed file is an error naming the file and the line, never a silent reset
to defaults that would lose the user's folders and servers on the next save.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vak_desktop.ledger.location import data_dir
from vak_desktop.runtime.settings_schema import check_settings_table

SETTINGS_FILE = "settings.toml"
THEMES = ("system", "light", "dark")
PROVIDER_KINDS = ("ollama", "openai-compatible", "openai", "anthropic", "openrouter")

# Ollama's keep_alive: a whole number of seconds, or a Go duration ("30m", "1h30m", "-1h");
# negative means keep loaded for ever, 0 means unload after the request.
_KEEP_ALIVE = re.compile(r"[-+]?(\d+|(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)")


class SettingsError(ValueError):
    """The settings file cannot be read as settings; the message names the file and the fault."""


@dataclass(frozen=True)
class McpServer:
    """A user-configured MCP server: a stdio command, or a streamable-HTTP `url`."""

    name: str
    command: tuple[str, ...] = ()
    url: str = ""
    env: dict[str, str] = field(default_factory=dict)
    enabled: bool = True

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"


@dataclass(frozen=True)
class HostedProvider:
    """A provider besides the local Ollama: its kind, where it is, and nothing secret."""

    name: str
    kind: str
    base_url: str = ""


@dataclass(frozen=True)
class Settings:
    ollama_host: str = "http://127.0.0.1:11434"
    keep_alive: str = "30m"
    probe_idle: bool = True  # probe idle local models in the background
    probe_hosted: bool = False  # probing a hosted model costs money: opt in
    workspace: tuple[str, ...] = ()  # folders the file tools may read, for every session
    mcp_servers: tuple[McpServer, ...] = ()
    providers: tuple[HostedProvider, ...] = ()
    theme: str = "system"
    # keep_alive per model, overriding `keep_alive`; keys are full names ("llama3.2:latest")
    model_keep_alive: dict[str, str] = field(default_factory=dict)
    # the GGUF file last run in the embedded engine ("" for none): offered again at the next
    # start, and started when its model is picked (`[embedded] model`)
    embedded_model: str = ""

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def keep_alive_for(self, model: str) -> str:
        """The keep_alive every request for `model` carries: its own, else the default."""
        return self.model_keep_alive.get(full_model_name(model), self.keep_alive)


def full_model_name(model: str) -> str:
    """A model name with Ollama's default tag: "llama3.2" → "llama3.2:latest"."""
    model = model.strip()
    return model if ":" in model.rsplit("/", 1)[-1] else model + ":latest"


def check_keep_alive(value: str) -> str:
    """`value` stripped, if Ollama accepts it as a keep_alive; else ValueError saying why."""
    text = value.strip()
    if not _KEEP_ALIVE.fullmatch(text):
        raise ValueError(
            f"keep_alive {value!r} is not a duration: use seconds (300), a number with a "
            'unit ("30m", "2h", "1h30m"), -1 to keep the model loaded, or 0 to unload it'
        )
    return text


def settings_path(directory: str | os.PathLike[str] | None = None) -> Path:
    return data_dir(directory) / SETTINGS_FILE


def load_settings(path: Path | None = None) -> Settings:
    """The settings in `path` (default: the data directory's); defaults when there is no file."""
    path = path or settings_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Settings()
    try:
        table = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from exc
    try:
        check_settings_table(table)
        return _from_table(table)
    except (TypeError, ValueError) as exc:
        raise SettingsError(f"{path}: {exc}") from exc


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write the settings whole (to a temporary file, then renamed over the old one)."""
    path = path or settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(_to_toml(settings), encoding="utf-8")
    tmp.replace(path)
    return path


def _from_table(table: dict[str, Any]) -> Settings:
    general = _section(table, "general")
    probe = _section(table, "probe")
    theme = str(general.get("theme", "system"))
    if theme not in THEMES:
        raise ValueError(f"[general] theme must be one of {', '.join(THEMES)}, not {theme!r}")
    servers = tuple(_mcp_server(entry) for entry in _list(table, "mcp_servers"))
    providers = tuple(_provider(entry) for entry in _list(table, "providers"))
    per_model = _section(table, "model_keep_alive")
    embedded = _section(table, "embedded")
    return Settings(
        ollama_host=str(general.get("ollama_host", Settings.ollama_host)),
        keep_alive=check_keep_alive(str(general.get("keep_alive", Settings.keep_alive))),
        probe_idle=bool(probe.get("idle", True)),
        probe_hosted=bool(probe.get("hosted", False)),
        workspace=tuple(str(p) for p in general.get("workspace", ())),
        mcp_servers=servers,
        providers=providers,
        theme=theme,
        model_keep_alive={
            full_model_name(str(k)): check_keep_alive(str(v)) for k, v in per_model.items()
        },
        embedded_model=str(embedded.get("model", "")),
    )


def _section(table: dict[str, Any], name: str) -> dict[str, Any]:
    value = table.get(name, {})
    if not isinstance(value, dict):
        raise ValueError(f"[{name}] must be a table")
    return value


def _list(table: dict[str, Any], name: str) -> list[dict[str, Any]]:
    value = table.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ValueError(f"[[{name}]] must be an array of tables")
    return value


def _mcp_server(entry: dict[str, Any]) -> McpServer:
    name = str(entry.get("name", "")).strip()
    command = tuple(str(c) for c in entry.get("command", ()))
    url = str(entry.get("url", ""))
    if not name:
        raise ValueError("an [[mcp_servers]] entry has no name")
    if bool(command) == bool(url):
        raise ValueError(f"MCP server {name!r} needs exactly one of `command` or `url`")
    env = {str(k): str(v) for k, v in dict(entry.get("env", {})).items()}
    return McpServer(name, command, url, env, bool(entry.get("enabled", True)))


def _provider(entry: dict[str, Any]) -> HostedProvider:
    name = str(entry.get("name", "")).strip()
    kind = str(entry.get("kind", ""))
    if not name:
        raise ValueError("a [[providers]] entry has no name")
    if kind not in PROVIDER_KINDS:
        raise ValueError(f"provider {name!r}: kind must be one of {', '.join(PROVIDER_KINDS)}")
    return HostedProvider(name, kind, str(entry.get("base_url", "")))


def _to_toml(s: Settings) -> str:
    lines = [
        "# Vak Desktop settings. API keys are not here: they are in the system keyring.",
        "[general]",
        f"ollama_host = {_str(s.ollama_host)}",
        f"keep_alive = {_str(s.keep_alive)}",
        f"theme = {_str(s.theme)}",
        f"workspace = [{', '.join(_str(p) for p in s.workspace)}]",
        "",
        "[probe]",
        f"idle = {_bool(s.probe_idle)}",
        f"hosted = {_bool(s.probe_hosted)}",
    ]
    if s.model_keep_alive:
        lines += ["", "[model_keep_alive]"]
        lines += [f"{_str(k)} = {_str(v)}" for k, v in sorted(s.model_keep_alive.items())]
    if s.embedded_model:
        lines += ["", "[embedded]", f"model = {_str(s.embedded_model)}"]
    for server in s.mcp_servers:
        lines += ["", "[[mcp_servers]]", f"name = {_str(server.name)}"]
        if server.url:
            lines.append(f"url = {_str(server.url)}")
        else:
            lines.append(f"command = [{', '.join(_str(c) for c in server.command)}]")
        lines.append(f"enabled = {_bool(server.enabled)}")
        if server.env:
            pairs = ", ".join(f"{_str(k)} = {_str(v)}" for k, v in sorted(server.env.items()))
            lines.append(f"env = {{ {pairs} }}")
    for provider in s.providers:
        lines += ["", "[[providers]]", f"name = {_str(provider.name)}"]
        lines.append(f"kind = {_str(provider.kind)}")
        if provider.base_url:
            lines.append(f"base_url = {_str(provider.base_url)}")
    return "\n".join(lines) + "\n"


def _str(value: str) -> str:
    """A TOML basic string (JSON's escapes are a subset TOML accepts)."""
    return json.dumps(value, ensure_ascii=False)


def _bool(value: bool) -> str:
    return "true" if value else "false"
