"""Tool calls a small model got almost right: an invented name or argument mapped onto a real one.

Why it exists: measured on Qwen2.5-Coder 0.5B and 1.5B (issue #22), a model offered `read`,
`glob` and `grep` called `read_file`, `search_files` and `list_dir`, and passed `q` or `query`
where the schema says `pattern` — names it learned elsewhere. A call nobody can run costs a
step and teaches nothing; a call that maps *unambiguously* onto a real tool is run as that
tool, and the repair is recorded (an Activity, with both forms), so what ran is never a guess
hidden from the ledger. A name that maps onto no tool, or onto two, is left as written: the
registry's error result names the real tools.

How a name maps, first rule that gives exactly one offered tool wins:

1. the name itself, or the same name once case, a namespace (`functions.read`) and `-` or
   spaces are normalised;
2. its words (split on `_`, `-`, `.` and camelCase, filler words such as "file" dropped)
   contain every word of one real tool's name (`read_file` → `read`, `search_session` →
   `session_search`);
3. its verb, looked up in `VERBS` (`search_files` → `grep`, `list_dir` → `glob`,
   `open_file` → `read`).

An argument maps when the tool's schema lacks its key and either the key normalised, or its
alias in `ARGUMENT_ALIASES` (`q`, `query` → `pattern`; `file_path`, `directory` → `path`), is
a property the call did not already give; then a tool's only required property, if still
missing, takes a lone string argument nothing claimed (`{"name": "notes.md"}` for `read` →
`path`; a card with two required fields is left to its own validation).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vak_desktop.context.payloads import Activity, JsonObject, ToolCall
from vak_desktop.context.request import ToolSpec

TOOL_CALL_REPAIRED = "tool_call_repaired"  # Activity: a call was run as the real tool it meant

FILLER = frozenset(
    [
        "file",
        "files",
        "text",
        "content",
        "contents",
        "tool",
        "tools",
        "the",
        "a",
        "an",
        "in",
        "from",
        "of",
        "for",
        "to",
        "by",
        "my",
        "user",
        "workspace",
        "all",
        "dir",
        "directory",
        "folder",
        "folders",
        "path",
        "paths",
        "data",
    ]
)
# a verb a model uses for a tool, → the real tools that act so, most fitting first
VERBS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        ["read", "open", "cat", "view", "load", "get", "show", "fetch", "print", "head", "tail"],
        ("read",),
    ),
    **dict.fromkeys(["search", "grep", "lookup", "query", "scan", "match", "contains"], ("grep",)),
    **dict.fromkeys(
        ["list", "ls", "glob", "find", "locate", "tree", "browse", "walk", "enumerate"], ("glob",)
    ),
}
ARGUMENT_ALIASES: dict[str, tuple[str, ...]] = {
    "pattern": tuple(
        [
            "q",
            "query",
            "search",
            "search_term",
            "search_query",
            "term",
            "terms",
            "keyword",
            "keywords",
            "regex",
            "regexp",
            "text",
            "string",
            "expression",
            "needle",
            "value",
            "find",
        ]
    ),
    "path": tuple(
        [
            "file",
            "filename",
            "file_name",
            "file_path",
            "filepath",
            "fname",
            "directory",
            "dir",
            "folder",
            "root",
            "location",
            "dir_path",
            "folder_path",
            "directory_path",
            "base_dir",
            "cwd",
            "target",
            "where",
        ]
    ),
    "glob": tuple(["include", "file_pattern", "files_pattern", "filter", "extension"]),
    "ignore_case": tuple(["case_insensitive", "nocase", "insensitive", "icase"]),
    "range": tuple(["lines", "line_range"]),
}
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@dataclass(frozen=True)
class Repaired:
    """One call as the model wrote it and as it runs."""

    written: ToolCall
    call: ToolCall

    @property
    def renamed(self) -> bool:
        return self.written.name != self.call.name


def words_of(name: str) -> list[str]:
    """A tool name's words, lower-cased: `readFile` and `read-file` → ["read", "file"]."""
    return [w.lower() for w in _WORDS.findall(name.replace("-", "_"))]


def real_name(name: str, tools: Sequence[ToolSpec]) -> str | None:
    """The offered tool `name` means, if exactly one (see the module docstring), else None."""
    offered = [t.name for t in tools]
    if name in offered:
        return name
    flat = name.strip().rsplit(".", 1)[-1].lower().replace("-", "_").replace(" ", "_")
    by_flat = [t for t in offered if t.lower() == flat]
    if len(by_flat) == 1:
        return by_flat[0]
    said = [w for w in words_of(name.rsplit(".", 1)[-1]) if w not in FILLER]
    if not said:
        return None
    by_words = [t for t in offered if set(words_of(t)) <= set(said)]
    if len(by_words) > 1:  # `session_search` and `search` both fit: the longest name is meant
        longest = max(len(words_of(t)) for t in by_words)
        by_words = [t for t in by_words if len(words_of(t)) == longest]
    if by_words:
        return by_words[0] if len(by_words) == 1 else None
    meant = {tool for word in said for tool in VERBS.get(word, ())[:1] if tool in offered}
    return meant.pop() if len(meant) == 1 else None


def repaired_arguments(arguments: JsonObject, schema: JsonObject) -> JsonObject:
    """`arguments` with keys the schema lacks moved onto the properties they stand for."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return arguments
    out: dict[str, Any] = dict(arguments)
    for key in list(arguments):
        if key in properties:
            continue
        flat = re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")
        target = flat if flat in properties else None
        if target is None:
            target = next(
                (
                    p
                    for p, aliases in ARGUMENT_ALIASES.items()
                    if p in properties and flat in aliases
                ),
                None,
            )
        if target is not None and target not in out:
            out[target] = out.pop(key)
    required = [r for r in schema.get("required", ()) if isinstance(r, str)]
    unknown = [k for k in out if k not in properties and isinstance(out[k], str)]
    if len(required) == 1 and required[0] not in out and len(unknown) == 1:
        out[required[0]] = out.pop(unknown[0])  # the tool's one required property
    return out


def repair_call(call: ToolCall, tools: Sequence[ToolSpec]) -> Repaired | None:
    """The call as it runs when its name or arguments map onto a real tool's; None when it is
    right as written, or maps onto nothing unambiguously (then it runs as written and fails
    with the registry's list of real tools)."""
    name = real_name(call.name, tools)
    if name is None:
        return None
    spec = next(t for t in tools if t.name == name)
    arguments = repaired_arguments(call.arguments, spec.parameters)
    if name == call.name and arguments == call.arguments:
        return None
    return Repaired(call, ToolCall(call.id, name, arguments))


def repair_calls(
    calls: Sequence[ToolCall], tools: Sequence[ToolSpec], *, step: int
) -> tuple[list[ToolCall], Activity | None]:
    """A step's calls with every repairable one repaired, and the Activity recording the
    repairs (None when none was needed)."""
    out: list[ToolCall] = []
    done: list[Repaired] = []
    for call in calls:
        fixed = repair_call(call, tools)
        out.append(fixed.call if fixed is not None else call)
        if fixed is not None:
            done.append(fixed)
    if not done:
        return out, None
    said = "; ".join(f"{_shown(r.written)} ran as {_shown(r.call)}" for r in done)
    activity = Activity(
        type=TOOL_CALL_REPAIRED,
        message=f"repaired {len(done)} tool call(s) the model got almost right: {said}",
        detail={
            "step": step,
            "repairs": [
                {
                    "id": r.call.id,
                    "written": {"name": r.written.name, "arguments": r.written.arguments},
                    "ran": {"name": r.call.name, "arguments": r.call.arguments},
                }
                for r in done
            ],
        },
    )
    return out, activity


def _shown(call: ToolCall) -> str:
    arguments = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
    return f"{call.name} {arguments if len(arguments) <= 80 else arguments[:77] + '...'}"
