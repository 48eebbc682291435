"""The session's workspace: the folders the file tools may touch, and the check that keeps them in.

A session's workspace is the folders of `Settings.workspace` (every session) plus the folders the
user added to that session, each recorded in its chain as a `workspace_added` Activity — so the
workspace is read from the ledger like everything else, and a replayed session has the folders
it had. A path the model gives is resolved (`..` collapsed, symbolic links followed) and must
land inside one of the folders; anything else — `../` out, an absolute path elsewhere, a link
pointing out — is refused with a result that names the path and the allowed folders, and the
refusal is logged.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from vak_desktop.context.payloads import Activity
from vak_desktop.ledger import Entry, Ledger
from vak_desktop.runtime.tools.registry import ToolFailure

log = logging.getLogger(__name__)

WORKSPACE_ADDED = "workspace_added"
NO_FOLDERS = (
    "there are no workspace folders: the user chooses them (Settings → Workspace, or adding a "
    "folder to this conversation); nothing outside them can be read"
)


class WorkspaceError(ValueError):
    """A folder that cannot join a workspace (missing, not a folder, not absolute)."""


class PathRefused(ToolFailure):
    """A path outside the workspace. Its message is the result the model reads."""


def add_workspace_folder(ledger: Ledger, session: str, folder: str | os.PathLike[str]) -> Entry:
    """Add `folder` to `session`'s workspace: a `workspace_added` Activity in its chain."""
    path = Path(folder).expanduser()
    if not path.is_absolute():
        raise WorkspaceError(f"{str(folder)!r} is not an absolute path")
    resolved = path.resolve()
    if not resolved.is_dir():
        raise WorkspaceError(f"{str(folder)!r} is not an existing folder")
    return ledger.append(
        session,
        Activity(
            type=WORKSPACE_ADDED,
            message=f"added {resolved} to this conversation's workspace",
            detail={"path": str(resolved)},
        ),
    )


def session_folders(entries: Iterable[Entry]) -> list[str]:
    """The folders a chain added to its session's workspace, in the order they were added."""
    return [
        str(e.payload.detail["path"])
        for e in entries
        if isinstance(e.payload, Activity)
        and e.payload.type == WORKSPACE_ADDED
        and isinstance(e.payload.detail.get("path"), str)
    ]


@dataclass(frozen=True)
class Workspace:
    """The folders one call may touch (each resolved: links followed, `..` collapsed)."""

    folders: tuple[Path, ...]

    @classmethod
    def of(cls, configured: Sequence[str], ledger: Ledger, session: str) -> Workspace:
        """The configured folders plus the session's own, without repeats."""
        added = session_folders(ledger.chain_to_root(session))
        folders = (Path(f).expanduser().resolve() for f in [*configured, *added])
        return cls(tuple(dict.fromkeys(folders)))

    def describe(self) -> str:
        return ", ".join(str(f) for f in self.folders) or "(none)"

    def note(self) -> str:
        """The line the system text carries about these folders ("" without any): a model
        that is not told where the files are invents folders ("invoices", "my files",
        "path/to/your/files" — measured on Qwen2.5-Coder 0.5B and 1.5B, issue #22)."""
        if not self.folders:
            return ""
        return (
            f"The user's files are in the workspace folder{'s' if len(self.folders) > 1 else ''} "
            f"{self.describe()}: read, glob and grep reach only these. Give a path relative to "
            "a workspace folder, or leave `path` out to search all of them."
        )

    def missing(self, raw: str) -> bool:
        """Whether `raw` names nothing at all, inside the workspace or out (nothing there to
        refuse or protect: the file tools then search the whole workspace and say so)."""
        given = Path(raw.strip()).expanduser()
        candidates = [given] if given.is_absolute() else [f / given for f in self.folders]
        return bool(self.folders) and not any(os.path.lexists(c) for c in candidates)

    def root_of(self, real: Path) -> Path | None:
        """The workspace folder `real` (already resolved) lies in, if any."""
        return next((f for f in self.folders if real == f or real.is_relative_to(f)), None)

    def resolve(self, raw: str, tool: str) -> Path:
        """The real path `raw` names inside the workspace; `PathRefused` if it lies outside.
        A relative path is tried against each folder in order: the first that has it wins,
        else the first inside the workspace (so "no such file" names a path the model may use).
        """
        if not self.folders:
            raise ToolFailure(NO_FOLDERS)
        if not raw.strip() or "\x00" in raw:
            raise ToolFailure(f"{tool} needs a path, got {raw!r}")
        given = Path(raw.strip()).expanduser()
        candidates = [given] if given.is_absolute() else [f / given for f in self.folders]
        inside: list[Path] = []
        for candidate in candidates:
            real = candidate.resolve()
            if self.root_of(real) is None:
                continue
            if real.exists():
                return real
            inside.append(real)
        if inside:
            return inside[0]
        raise self.refusal(raw, candidates[0], tool)

    def refusal(self, raw: str, candidate: Path, tool: str) -> PathRefused:
        """The refusal of `raw` (tried as `candidate`), logged, saying why it lies outside."""
        real = candidate.resolve()
        lexical = Path(os.path.normpath(candidate))
        if self.root_of(lexical) is not None:
            why = f"it goes through a symbolic link to {real}"
        elif ".." in Path(raw).parts:
            why = f"'..' leads out of the workspace, to {real}"
        else:
            why = f"{real} is not inside a workspace folder"
        log.warning("%s refused the path %r outside the workspace: %s", tool, raw, why)
        return PathRefused(
            f"refused: the path {raw!r} is outside the workspace ({why}). "
            f"{tool} can only reach these folders: {self.describe()}"
        )

    def shown(self, path: Path) -> str:
        """How a result names `path`: relative to the folder when there is one folder, else
        absolute (a relative name would be ambiguous between folders)."""
        root = self.root_of(path)
        if len(self.folders) == 1 and root is not None:
            return path.relative_to(root).as_posix() or "."
        return str(path)
