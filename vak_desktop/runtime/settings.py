"""The user's settings: one TOML file beside the ledger, read whole and edited in place.

Nothing secret is ever in it: API keys live in the OS keyring (`runtime.secrets`), and a
provider entry here names only where the provider is and which keyring entry holds its key.
An unreadable or malformed file is an error naming the file and the line, never a silent reset
to defaults that would lose the user's folders and servers on the next save.

Saving edits the file the user may also have written by hand (through tomlkit): only the keys
whose value changed are rewritten, so comments, key order, blank lines and keys or tables this
version does not know survive byte-for-byte; MCP servers and providers are matched by name, so
an entry's own comments and unknown keys survive too. A rendering that would not load back is
refused before anything is written.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import AoT, Table
from tomlkit.toml_document import TOMLDocument

from vak_desktop.ledger.location import data_dir
from vak_desktop.runtime.settings_file import (
    SettingsFileError,
    read_settings_bytes,
    write_settings_bytes,
)
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
    # seconds a call may go without an answer or a progress report, and the most that progress
    # reports may stretch one call to (`timeout`, `progress_ceiling` in the file)
    call_timeout: float = 120.0
    progress_ceiling: float = 3600.0

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"


@dataclass(frozen=True)
class HostedProvider:
    """A provider besides the local Ollama: its kind, where it is, and nothing secret."""

    name: str
    kind: str
    base_url: str = ""
    api_key_env: str = ""  # the environment variable its key is read from, if not the kind's


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
    # the update check (runtime/updates.py): off unless the user turns it on; the feed is a
    # URL answering {"version": …, "url": …} (`[updates] check`, `[updates] feed`)
    update_check: bool = False
    update_feed: str = ""

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
        raw = read_settings_bytes(path)
    except SettingsFileError as exc:
        raise SettingsError(str(exc)) from None
    if raw is None:
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
    """Write the settings into the file as it stands (to a temporary file, then renamed over the
    old one), changing only what changed. SettingsError if the file there is not TOML (saving
    would lose it) or the result would not load back."""
    path = path or settings_path()
    try:
        raw = read_settings_bytes(path)
        existing = None if raw is None else raw.decode("utf-8")
    except SettingsFileError as exc:
        raise SettingsError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path}: not UTF-8, so it was not overwritten: {exc}") from exc
    try:
        text = render_settings(settings, existing)
    except tomlkit.exceptions.ParseError as exc:
        raise SettingsError(f"{path}: not valid TOML, so it was not overwritten: {exc}") from exc
    try:
        _from_table(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, TypeError, ValueError) as exc:
        raise SettingsError(f"{path}: these settings would not load back ({exc})") from exc
    try:
        write_settings_bytes(path, text.encode("utf-8"))
    except SettingsFileError as exc:
        raise SettingsError(str(exc)) from None
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
    updates = _section(table, "updates")
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
        update_check=bool(updates.get("check", False)),
        update_feed=str(updates.get("feed", "")),
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
    timeout = float(entry.get("timeout", McpServer.call_timeout))
    ceiling = float(entry.get("progress_ceiling", McpServer.progress_ceiling))
    if timeout <= 0 or ceiling < timeout:
        raise ValueError(
            f"MCP server {name!r}: timeout must be above 0 and progress_ceiling at least timeout"
        )
    return McpServer(name, command, url, env, bool(entry.get("enabled", True)), timeout, ceiling)


def _provider(entry: dict[str, Any]) -> HostedProvider:
    name = str(entry.get("name", "")).strip()
    kind = str(entry.get("kind", ""))
    if not name:
        raise ValueError("a [[providers]] entry has no name")
    if kind not in PROVIDER_KINDS:
        raise ValueError(f"provider {name!r}: kind must be one of {', '.join(PROVIDER_KINDS)}")
    return HostedProvider(
        name, kind, str(entry.get("base_url", "")), str(entry.get("api_key_env", ""))
    )


_HEADER = "# Vak Desktop settings. API keys are not here: they are in the system keyring.\n"


def render_settings(settings: Settings, existing: str | None = None) -> str:
    """The settings file for `settings`: `existing` (the file's text) with only the changed
    keys rewritten, or a fresh file holding only what differs from the defaults: a value the
    user never changed (the default Ollama host, say) is never written, so a later change of
    the default, or an `OLLAMA_HOST` set in the environment, is not shadowed by a stale copy."""
    doc = tomlkit.parse(_HEADER if existing is None else existing)
    s, default = settings, Settings()
    general = {
        "ollama_host": (s.ollama_host, default.ollama_host),
        "keep_alive": (s.keep_alive, default.keep_alive),
        "theme": (s.theme, default.theme),
        "workspace": (list(s.workspace), []),
    }
    for key, (value, usual) in general.items():
        _put(doc, "general", key, value, usual)
    _put(doc, "probe", "idle", s.probe_idle, default.probe_idle)
    _put(doc, "probe", "hosted", s.probe_hosted, default.probe_hosted)
    _put_mapping(doc, "model_keep_alive", dict(sorted(s.model_keep_alive.items())))
    _put(doc, "embedded", "model", s.embedded_model, "", drop_when_default=True)
    _put(doc, "updates", "check", s.update_check, default.update_check)
    _put(doc, "updates", "feed", s.update_feed, "", drop_when_default=True)
    servers = [_server_fields(server) for server in s.mcp_servers]
    server_defaults: dict[str, Any] = {"enabled": True, "timeout": McpServer.call_timeout}
    server_defaults["progress_ceiling"] = McpServer.progress_ceiling
    _put_entries(doc, "mcp_servers", servers, defaults=server_defaults)
    _put_entries(doc, "providers", [_provider_fields(p) for p in s.providers])
    return doc.as_string()


def _server_fields(server: McpServer) -> dict[str, Any]:
    fields: dict[str, Any] = {"name": server.name}
    fields |= {"url": server.url} if server.url else {"command": list(server.command)}
    fields["enabled"] = server.enabled
    fields["env"] = dict(sorted(server.env.items())) if server.env else None
    fields["timeout"] = server.call_timeout
    fields["progress_ceiling"] = server.progress_ceiling
    return fields


def _provider_fields(provider: HostedProvider) -> dict[str, Any]:
    return {
        "name": provider.name,
        "kind": provider.kind,
        "base_url": provider.base_url or None,
        "api_key_env": provider.api_key_env or None,
    }


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


def _section_of(doc: TOMLDocument, name: str) -> Table | None:
    section = doc.get(name)
    return section if isinstance(section, Table) else None


def _put(
    doc: TOMLDocument,
    section: str,
    key: str,
    value: Any,
    usual: Any,
    *,
    drop_when_default: bool = False,
) -> None:
    """Set `[section] key` if its value changed; a key the file lacks is added only when the
    value is not the default; `drop_when_default` removes it instead."""
    table = _section_of(doc, section)
    if table is not None and key in table:
        if drop_when_default and value == usual:
            del table[key]
        elif _plain(table[key]) != value:
            table[key] = value
        return
    if value == usual:
        return
    if table is None:
        table = tomlkit.table()
        doc[section] = table
    table[key] = value


def _put_mapping(doc: TOMLDocument, section: str, values: Mapping[str, str]) -> None:
    """`[section]` holds exactly `values`: changed keys rewritten, others kept as written."""
    table = _section_of(doc, section)
    if table is None:
        if values:
            doc[section] = tomlkit.table()
            for key, value in values.items():
                _put(doc, section, key, value, None)
        return
    for key in [k for k in table if k not in values]:
        del table[key]
    for key, value in values.items():
        _put(doc, section, key, value, None)


def _put_entries(
    doc: TOMLDocument,
    name: str,
    entries: Sequence[Mapping[str, Any]],
    defaults: Mapping[str, Any] | None = None,
) -> None:
    """`[[name]]` holds `entries`, matched to the file's by `name`: a kept entry is edited in
    place (its comments and unknown keys stay; a key it lacks is added only when not at its
    default), a new one is appended whole, a removed one dropped."""
    defaults = defaults or {}
    held = doc.get(name)
    aot = held if isinstance(held, AoT) else None
    wanted = {str(entry["name"]): entry for entry in entries}
    if aot is not None:
        for position in range(len(aot) - 1, -1, -1):
            if str(_plain(aot[position].get("name", ""))) not in wanted:
                del aot[position]
    present = {str(_plain(t.get("name", ""))): t for t in aot or ()}
    for entry_name, entry in wanted.items():
        table = present.get(entry_name)
        created = table is None
        if table is None:
            table = tomlkit.table()
            if aot is None:
                aot = tomlkit.aot()
                doc[name] = aot
            aot.append(table)
            table = aot[-1]
        for key, value in entry.items():
            if value is None:
                if key in table:
                    del table[key]
            elif key not in table and not created and defaults.get(key, None) == value:
                continue
            elif key not in table or _plain(table[key]) != value:
                table[key] = _inline(value) if isinstance(value, dict) else value
        if "url" in entry and "command" in table:
            del table["command"]
        if "command" in entry and "url" in table:
            del table["url"]
    if aot is not None and not entries:
        del doc[name]


def _inline(values: Mapping[str, str]) -> Any:
    table = tomlkit.inline_table()
    table.update(values)
    return table
