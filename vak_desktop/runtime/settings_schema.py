"""The settings file's schema: every known key's type, checked before any value is read.

A wrong type is an error naming the key, never coerced: `workspace = "/x"` (a string where a
list belongs) used to be iterated per character and made `/` a workspace folder; `idle = "false"`
was true. Paths the tools trust (workspace folders, the embedded model) must be absolute (or
start with `~`): a relative one would resolve against whatever directory the app started in.
Unknown keys are left alone, so a file written by a newer build still loads.

Kept apart from `settings.py` (which reads and writes the file) so the two change separately.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

Check = Callable[[Any], str]  # "" when the value fits, else what it should be


def _string(value: Any) -> str:
    return "" if isinstance(value, str) else "a string"


def _boolean(value: Any) -> str:
    return "" if isinstance(value, bool) else "true or false"


def _strings(value: Any) -> str:
    ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    return "" if ok else "a list of strings"


def _absolute(value: Any) -> bool:
    # a Windows path is absolute on Windows; the file may be shared between machines
    return isinstance(value, str) and (
        value.startswith("~")
        or PurePosixPath(value).is_absolute()
        or PureWindowsPath(value).is_absolute()
    )


def _folders(value: Any) -> str:
    if _strings(value):
        return 'a list of absolute folder paths, e.g. ["/home/me/notes"]'
    relative = [v for v in value if not _absolute(v)]
    return f"absolute paths ({relative[0]!r} is relative)" if relative else ""


def _file_path(value: Any) -> str:
    if _string(value):
        return "a string"
    return "" if value == "" or _absolute(value) else f"an absolute path ({value!r} is relative)"


def _web_address(value: Any) -> str:
    if _string(value):
        return "a string"
    ok = value == "" or value.startswith(("https://", "http://"))
    return "" if ok else f"an http(s) address ({value!r} is not)"


def _string_table(value: Any) -> str:
    ok = isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    return "" if ok else "a table of strings"


def _keep_alive(value: Any) -> str:
    ok = isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
    return "" if ok else 'a duration ("30m") or a number of seconds'


SECTIONS: dict[str, dict[str, Check]] = {
    "general": {
        "ollama_host": _string,
        "keep_alive": _keep_alive,
        "theme": _string,
        "workspace": _folders,
    },
    "probe": {"idle": _boolean, "hosted": _boolean},
    "embedded": {"model": _file_path},
    "updates": {"check": _boolean, "feed": _web_address},
}
ENTRIES: dict[str, dict[str, Check]] = {
    "mcp_servers": {
        "name": _string,
        "command": _strings,
        "url": _string,
        "env": _string_table,
        "enabled": _boolean,
    },
    "providers": {"name": _string, "kind": _string, "base_url": _string},
}


def check_settings_table(table: dict[str, Any]) -> None:
    """Raise ValueError naming the first key whose value has the wrong type or form."""
    for section, keys in SECTIONS.items():
        value = table.get(section, {})
        if not isinstance(value, dict):
            raise ValueError(f"[{section}] must be a table, not {_shown(value)}")
        _check_keys(f"[{section}]", value, keys)
    per_model = table.get("model_keep_alive", {})
    if not isinstance(per_model, dict):
        raise ValueError(f"[model_keep_alive] must be a table, not {_shown(per_model)}")
    _check_keys("[model_keep_alive]", per_model, dict.fromkeys(per_model, _keep_alive))
    for name, keys in ENTRIES.items():
        entries = table.get(name, [])
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise ValueError(f"[[{name}]] must be an array of tables, not {_shown(entries)}")
        for index, entry in enumerate(entries):
            _check_keys(f"[[{name}]] entry {index + 1}", entry, keys)


def _check_keys(where: str, values: dict[str, Any], keys: dict[str, Check]) -> None:
    for key, check in keys.items():
        if key in values:
            wanted = check(values[key])
            if wanted:
                raise ValueError(f"{where} {key} must be {wanted}, not {_shown(values[key])}")


def _shown(value: Any) -> str:
    kind = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{kind.get(type(value), type(value).__name__)} {text}"
