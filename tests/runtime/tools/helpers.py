"""Real folders for the file tools: a workspace, a folder beside it holding a secret, and
symbolic links from the one to the other (all under pytest's tmp_path)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vak_desktop.context.payloads import ToolCall
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.tools import ToolContext, ToolOutput, ToolRegistry

SECRET = "SECRET-7f3a"  # only ever in the folder outside the workspace


@dataclass(frozen=True)
class Tree:
    root: Path  # the workspace folder
    outside: Path  # a folder beside it, never to be reached


def make_tree(tmp_path: Path) -> Tree:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    (root / "docs" / "deep").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text(f"password line {SECRET}\n")
    (root / "notes.md").write_text("# Notes\nbuy milk\nTODO: call the plumber\n")
    (root / "src" / "app.py").write_text("def main():\n    return 1  # TODO tidy\n")
    (root / "src" / "util.py").write_text("VALUE = 2\n")
    (root / "docs" / "deep" / "guide.md").write_text("deep guide\nTODO: write it\n")
    (root / "link_out.txt").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    (root / "link_in.md").symlink_to(root / "notes.md")
    return Tree(root, outside)


async def call(
    registry: ToolRegistry, ledger: Ledger, session: str, tool_name: str, /, **arguments: Any
) -> ToolOutput:
    """One call through the registry, as a step runs it."""
    [output] = await registry.run_all(
        [ToolCall(f"c_{tool_name}", tool_name, arguments)], ToolContext(ledger, session)
    )
    return output
