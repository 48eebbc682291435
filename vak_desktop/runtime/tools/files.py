"""`read`, `glob` and `grep`: the user's files, inside the session's workspace only.

Every path goes through `Workspace.resolve`, so `..`, absolute paths elsewhere and symbolic links
pointing out are refused the same way by all three. Listing and searching walk the folders
without following linked folders, and leave out linked files that point outside (saying how
many). The work runs in a thread, so parallel calls of one step really run at once and the
event loop never waits on a disk.

A file comes back whole and, when it is long, the turn's usual evidence window carries it (the
whole text stays in the ledger, one `recall` away). Bytes that are not UTF-8 are shown as U+FFFD
with a note saying from which byte; a binary file is an error result that says it is binary.

Over 400 lines on purpose: the three tools share one walk, one decoder, one clip rule and the
file-type checks of `file_safety`; split per tool, those private helpers would become an API.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vak_desktop.context.planning.reading import FILES
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.tools.contained import Outside, folders_under, open_inside, read_inside
from vak_desktop.runtime.tools.file_safety import (
    CURRENT_STOP,
    KINDS,
    Matcher,
    Searcher,
    Stop,
    check_stop,
    glob_matcher,
    line_range,
    linear_regex,
)
from vak_desktop.runtime.tools.registry import ToolContext, ToolFailure, ToolOutput
from vak_desktop.runtime.tools.workspace import NO_FOLDERS, Workspace


def _set(words: str) -> frozenset[str]:
    """A set of words written as one space-separated string."""
    return frozenset(words.split())


READ_LIMIT = 2_000_000  # bytes read returns whole; beyond it the model asks for a line range
SEARCH_FILE_LIMIT = 10_000_000  # bytes: grep passes over larger files and says so
GLOB_LIMIT = 500  # paths listed; the rest are counted
GREP_LIMIT = 200  # matching lines shown; the rest are counted
GREP_LINE = 400  # characters of one matching line shown, then a note how to read the rest
WALK_LIMIT = 50_000  # files visited by one listing or search
SNIFF = 8_192  # bytes looked at for NUL to tell a binary file
SKIPPED_DIRS = _set(
    ".git .hg .svn node_modules __pycache__ .venv venv .mypy_cache .ruff_cache .pytest_cache .tox"
)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode(data: bytes, shown: str) -> tuple[str, str]:
    """`data` as text and a note ("" when it was clean UTF-8). A binary file is refused."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data.decode(encoding, errors="replace"), ""
    if b"\x00" in data[:SNIFF]:
        raise ToolFailure(f"{shown} is a binary file ({len(data):,} bytes): read shows text only")
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        note = (
            f"{shown} is not valid UTF-8 from byte {exc.start} on; bytes that are not UTF-8 "
            "are shown as \ufffd"
        )
        return data.decode("utf-8", errors="replace"), note


def _pair(value: Any) -> tuple[int, int]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        or value[0] < 1
        or value[1] < value[0]
    ):
        raise ToolFailure(f"`range` must be [first_line, last_line], 1-based, got {value!r}")
    return value[0], value[1]


def glob_regex(pattern: str) -> Matcher:
    """A glob as a regex over `/`-separated relative paths: `*` and `?` stay inside one folder,
    `**` spans any number of folders, `[…]` is a class. Without a `/` the pattern matches a
    file's name at any depth (as .gitignore and ripgrep read it). Compiled on RE2, linear in
    the name: on Python's `re`, `*a*a*a*a*a*a*a*a*a*a*a*b` over a 100-character name ran past
    the tool limit and Ctrl-C (issue 24 F3)."""
    parts = pattern.strip("/").split("/")
    out = [] if "/" in pattern.strip("/") else ["(?:.*/)?"]
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        out.append(_segment(part) + ("" if last else "/"))
    return glob_matcher("".join(out), pattern)


def _segment(part: str) -> str:
    out, i = [], 0
    while i < len(part):
        c = part[i]
        close = part.find("]", i + 2) if c == "[" else -1
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif close != -1:
            body = part[i + 1 : close]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = close
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@dataclass
class Walk:
    """Files found under some folders, and what was left out on the way."""

    files: list[Path] = field(default_factory=list)
    links_out: int = 0
    stopped: bool = False

    def notes(self) -> list[str]:
        notes = []
        if self.links_out:
            notes.append(f"{self.links_out} linked files pointing outside the workspace left out")
        if self.stopped:
            notes.append(f"stopped after {WALK_LIMIT:,} files: narrow it with `path`")
        return notes


def walk(workspace: Workspace, roots: Sequence[Path], match: Matcher) -> Walk:
    """Files under `roots` whose path relative to their root matches, in path order. Linked
    folders are not entered; linked files count only when they point inside the workspace."""
    found = Walk()
    visited = 0
    for root in roots:
        start = len(found.files)
        for dirpath, dirnames, filenames in folders_under(workspace, root):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
            check_stop()
            for name in sorted(filenames):
                visited += 1
                if visited > WALK_LIMIT:
                    found.stopped = True
                    return found
                path = Path(dirpath, name)
                if not match.fullmatch(path.relative_to(root).as_posix()):
                    continue
                if path.is_symlink() and workspace.root_of(path.resolve()) is None:
                    found.links_out += 1
                    continue
                found.files.append(path)
        found.files[start:] = sorted(found.files[start:], key=lambda p: p.relative_to(root).parts)
    return found


class _FileTool:
    """What the three share: the workspace they run in, and the declarations."""

    always_loaded = True
    serves = (FILES,)
    observes_now = True  # a file read now is the file as it is now
    spec: ToolSpec

    def __init__(self, folders: Sequence[str] = ()) -> None:
        self.folders = tuple(folders)  # Settings.workspace; the session adds its own

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        workspace = Workspace.of(self.folders, context.ledger, context.session)
        stop = Stop()
        token = CURRENT_STOP.set(stop)  # the worker thread gets a copy of this context
        try:
            return await asyncio.to_thread(self.work, arguments, workspace)
        finally:
            stop.set()  # cancelled or timed out: the walk stops at its next file
            CURRENT_STOP.reset(token)

    def work(self, arguments: dict[str, Any], workspace: Workspace) -> ToolOutput:
        raise NotImplementedError

    def text_argument(self, arguments: dict[str, Any], name: str) -> str:
        value = arguments.get(name)
        if not isinstance(value, str) or not value.strip():
            raise ToolFailure(f"{self.spec.name} needs `{name}` (a string), got {value!r}")
        return value

    def session_note(self, ledger: Ledger, session: str) -> str:
        """What the system text says about the session's workspace folders."""
        return Workspace.of(self.folders, ledger, session).note()

    def fallback(self, arguments: dict[str, Any], workspace: Workspace) -> list[str]:
        """The note of a call whose `path` names nothing anywhere: the whole workspace was
        searched instead (a small model invents folders: issue #22)."""
        raw = arguments.get("path")
        if not isinstance(raw, str) or not raw.strip() or not workspace.missing(raw):
            return []
        return [f"there is no folder {raw!r}: searched every workspace folder instead"]

    def folder(self, arguments: dict[str, Any], workspace: Workspace) -> list[Path]:
        """The folder the call narrows to with `path`, else every workspace folder (also when
        `path` names nothing anywhere: `fallback` says so)."""
        if arguments.get("path") in (None, "") or self.fallback(arguments, workspace):
            if not workspace.folders:
                raise ToolFailure(NO_FOLDERS)
            return list(workspace.folders)
        path = workspace.resolve(self.text_argument(arguments, "path"), self.spec.name)
        if not path.exists():
            raise ToolFailure(f"no such folder or file: {arguments['path']!r}")
        return [path]


class ReadTool(_FileTool):
    spec = ToolSpec(
        name="read",
        description=(
            "Read a text file in the user's workspace folders. `path` is relative to a "
            "workspace folder or absolute inside one; `range` [first_line, last_line] "
            "(1-based, inclusive) reads part of it. A long file comes back as a window with "
            "the recall call for the rest. A folder comes back as the list of its files."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "the file"},
                "range": {
                    "type": "array",
                    "items": {"type": "integer"},
                    "minItems": 2,
                    "maxItems": 2,
                },
            },
            "required": ["path"],
        },
    )

    def work(self, arguments: dict[str, Any], workspace: Workspace) -> ToolOutput:
        raw = self.text_argument(arguments, "path")
        if workspace.missing(raw):  # nothing there, in the workspace or out: where it may be
            raise _no_such_file(workspace, raw)
        path = workspace.resolve(raw, "read")
        shown = workspace.shown(path)
        if path.is_dir():  # a small model reads the workspace folder itself: show what is in it
            return ToolOutput("\n".join(listing(workspace, [path], "*", what="read")))
        try:  # judged by the opened file, not the name (`contained.py`)
            fd, info = open_inside(workspace, path)
        except FileNotFoundError:
            raise _no_such_file(workspace, raw) from None
        except Outside:
            raise workspace.refusal(raw, path, "read") from None
        with os.fdopen(fd, "rb") as handle:
            return self._opened(handle, info, shown, arguments)

    def _opened(
        self, handle: Any, info: os.stat_result, shown: str, arguments: dict[str, Any]
    ) -> ToolOutput:
        if stat.S_ISDIR(info.st_mode):
            raise ToolFailure(f"{shown} is a folder: glob lists the files in it")
        kind = next((name for test, name in KINDS if test(info.st_mode)), "")
        if kind:
            raise ToolFailure(f"{shown} is {kind}, not a regular file: read reads files only")
        size = info.st_size
        if "range" in arguments:
            return ToolOutput(self._lines(handle, shown, *_pair(arguments["range"])))
        if size > READ_LIMIT:
            raise ToolFailure(
                f"{shown} is {size:,} bytes, more than read returns whole ({READ_LIMIT:,}): "
                "ask for part of it with `range` [first_line, last_line]"
            )
        text, note = decode(handle.read(READ_LIMIT + 1), shown)
        if not text:
            return ToolOutput(f"({shown} is empty)")
        return ToolOutput(f"{text}\n[{note}]" if note else text)

    def _lines(self, handle: Any, shown: str, first: int, last: int) -> str:
        head = handle.read(SNIFF)
        handle.seek(0)
        decode(head, shown)  # a binary file is refused before any line is read
        picked, total, cut = line_range(handle, first, last, READ_LIMIT)
        if first > total:
            raise ToolFailure(f"{shown} has {total} lines; range {[first, last]} starts after")
        text, note = decode(b"".join(picked), shown)
        end = min(last, total)
        notes = [f"lines {first}–{end} of {total} of {shown}", *([note] if note else [])]
        if cut:
            notes.append(
                f"stopped at {READ_LIMIT:,} bytes, what read returns at most: ask for a "
                "narrower range"
            )
        return text.removesuffix("\n") + "\n[" + "; ".join(notes) + "]"


class GlobTool(_FileTool):
    spec = ToolSpec(
        name="glob",
        description=(
            "List the files in the user's workspace folders whose path matches a glob. "
            "`*` and `?` stay inside one folder, `**` spans folders, a pattern without `/` "
            "matches file names at any depth; `path` narrows it to one folder. .git, "
            "node_modules, __pycache__ and virtualenv folders are skipped."
        ),
        parameters={
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "e.g. **/*.md or *.py"},
                "path": {"type": "string", "description": "a folder to list in (optional)"},
            },
            "required": ["pattern"],
        },
    )

    def work(self, arguments: dict[str, Any], workspace: Workspace) -> ToolOutput:
        pattern = self.text_argument(arguments, "pattern").strip()
        roots = self.folder(arguments, workspace)
        if roots[0].is_file():
            raise ToolFailure(
                f"{workspace.shown(roots[0])} is a file: give glob a folder as `path`"
            )
        if ".." in pattern.split("/"):
            raise workspace.refusal(pattern, roots[0] / pattern, "glob")
        if Path(pattern).is_absolute():  # fine inside a folder: listed from that folder
            root = workspace.root_of(Path(os.path.normpath(pattern)))
            if root is None:
                raise workspace.refusal(pattern, Path(pattern), "glob")
            pattern, roots = Path(pattern).relative_to(root).as_posix(), [root]
        lines = listing(workspace, roots, pattern)
        lines += [f"[{note}]" for note in self.fallback(arguments, workspace)]
        return ToolOutput("\n".join(lines))


def listing(
    workspace: Workspace, roots: Sequence[Path], pattern: str, *, what: str = ""
) -> list[str]:
    """The files under `roots` matching `pattern`, a line each (at most GLOB_LIMIT), then what
    the walk left out. `what`: the tool given a folder where it wanted a file (`read`), so the
    listing opens by saying so."""
    found = walk(workspace, roots, glob_regex(pattern))
    where = ", ".join(workspace.shown(r) for r in roots)
    lines = (
        [f"{where} is a folder, not a file; the files in it ({what} one by its path):"]
        if what
        else []
    )
    if not found.files:
        lines.append(f"no files in {where}" if what else f"no files match {pattern!r} in {where}")
    else:
        lines += [workspace.shown(p) for p in found.files[:GLOB_LIMIT]]
        if len(found.files) > GLOB_LIMIT:
            more = len(found.files) - GLOB_LIMIT
            least = "at least " if found.stopped else ""  # the walk stopped counting
            lines.append(f"[… and {least}{more:,} more files: narrow the pattern or give `path`]")
    return lines + [f"[{note}]" for note in found.notes()]


class GrepTool(_FileTool):
    spec = ToolSpec(
        name="grep",
        description=(
            "Search the text files in the user's workspace folders for a regular expression "
            "(Python syntax); each match comes back as path:line: text. `path` narrows it to "
            "a folder or file, `glob` to file names (e.g. *.py), `ignore_case` ignores case."
        ),
        parameters={
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "a regular expression"},
                "path": {"type": "string", "description": "a folder or file (optional)"},
                "glob": {"type": "string", "description": "which files, e.g. *.md (optional)"},
                "ignore_case": {"type": "boolean"},
            },
            "required": ["pattern"],
        },
    )

    def work(self, arguments: dict[str, Any], workspace: Workspace) -> ToolOutput:
        pattern = self.text_argument(arguments, "pattern")
        regex = linear_regex(pattern, arguments.get("ignore_case") is True)
        roots = self.folder(arguments, workspace)
        files_glob = arguments.get("glob") or "**"
        if not isinstance(files_glob, str) or ".." in files_glob.split("/"):
            raise ToolFailure(f"`glob` must be a file pattern like *.py, got {files_glob!r}")
        if roots[0].is_file():
            found = Walk(files=roots)
        else:
            found = walk(workspace, roots, glob_regex(files_glob))
        shown, total, files_with, passed = self._search(workspace, found.files, regex)
        if not total:
            lines = [f"no line matches {pattern!r} ({len(found.files):,} files searched)"]
        else:
            lines = [f"{total:,} matching lines in {files_with:,} files:", *shown]
            if total > len(shown):
                lines.append(
                    f"[… and {total - len(shown):,} more: narrow the pattern, `path` or `glob`]"
                )
        notes = found.notes() + (
            [f"{passed} binary, very large or special (FIFO, device) files not searched"]
            if passed
            else []
        )
        notes += self.fallback(arguments, workspace)
        lines += [f"[{note}]" for note in notes]
        return ToolOutput("\n".join(lines))

    def _search(
        self, workspace: Workspace, files: list[Path], regex: Searcher
    ) -> tuple[list[str], int, int, int]:
        shown: list[str] = []
        total = files_with = passed = 0
        for path in files:
            check_stop()
            try:  # judged by the opened file, not the name (`contained.py`)
                data = read_inside(workspace, path, SEARCH_FILE_LIMIT)
            except OSError:  # gone, unreadable, or swapped for a link out since the walk
                data = None
            if data is None or b"\x00" in data[:SNIFF]:
                passed += 1
                continue
            name = workspace.shown(path)
            hits = 0
            for number, line in _lines(data):
                if not number % 1024:
                    check_stop()  # a 10 MB file is ~1 s of lines: stop within one piece of it
                if not regex.search(line):
                    continue
                hits += 1
                if len(shown) < GREP_LIMIT:
                    shown.append(f"{name}:{number}: {_clip(line, name, number)}")
            total += hits
            files_with += hits > 0
        return shown, total, files_with, passed


def _no_such_file(workspace: Workspace, raw: str) -> ToolFailure:
    """The error for a missing `raw`, saying where files of its name are in the workspace (a
    small model guesses the folder: "invoices/manifest.txt", "C:\\Users\\me\\manifest.txt")."""
    said = f"no such file: {raw!r} (workspace folders: {workspace.describe()})"
    name = Path(raw.strip().replace("\\", "/")).name
    if not name:
        return ToolFailure(said)
    found = walk(workspace, list(workspace.folders), glob_regex(glob_escape(name))).files[:5]
    if not found:
        return ToolFailure(f"{said}; no file named {name!r} anywhere in the workspace")
    where = ", ".join(map(workspace.shown, found))
    return ToolFailure(f"{said}; files named {name!r} in the workspace: {where}")


def glob_escape(name: str) -> str:
    """`name` as a glob that matches only itself."""
    return re.sub(r"([*?\[])", r"[\1]", name)


def _lines(data: bytes) -> Iterator[tuple[int, str]]:
    text = data.decode("utf-8", errors="replace")
    return enumerate(text.splitlines(), start=1)


def _clip(line: str, name: str, number: int) -> str:
    """A matching line as shown: whole up to `GREP_LINE`, else its start and how to read it."""
    if len(line) <= GREP_LINE:
        return line
    rest = len(line) - GREP_LINE
    return (
        f"{line[:GREP_LINE]} [… {rest:,} more characters: read {name} with range "
        f"[{number}, {number}]]"
    )


def file_tools(folders: Sequence[str] = ()) -> list[_FileTool]:
    """read, glob and grep over `folders` (Settings.workspace) and each session's own folders."""
    return [ReadTool(folders), GlobTool(folders), GrepTool(folders)]
