"""read, glob and grep over real folders: what they return, and what they refuse."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.runtime.scripted import Scripted, ScriptedProvider
from tests.runtime.tools.helpers import SECRET, Tree, call, make_tree
from vak_desktop.context.payloads import Activity, EvidenceBody, ToolResult
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools
from vak_desktop.runtime.events import TurnFinished
from vak_desktop.runtime.settings import Settings
from vak_desktop.runtime.tools import (
    WORKSPACE_ADDED,
    ToolRegistry,
    WorkspaceError,
    add_workspace_folder,
    file_tools,
)
from vak_desktop.runtime.tools.files import GLOB_LIMIT, GREP_LIMIT, READ_LIMIT, glob_regex
from vak_desktop.runtime.tools.recall import RecallTool


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return make_tree(tmp_path)


@pytest.fixture
def tools(tree: Tree) -> ToolRegistry:
    return ToolRegistry(file_tools([str(tree.root)]))


@pytest.fixture
def session(ledger: Ledger) -> str:
    return ledger.create_session().id


async def test_read_returns_the_file_and_a_line_range(
    tools: ToolRegistry, ledger: Ledger, session: str
) -> None:
    whole = await call(tools, ledger, session, "read", path="notes.md")
    assert whole.content == "# Notes\nbuy milk\nTODO: call the plumber\n" and not whole.is_error
    part = await call(tools, ledger, session, "read", path="notes.md", range=[2, 3])
    assert part.content == "buy milk\nTODO: call the plumber\n[lines 2–3 of 3 of notes.md]"
    past = await call(tools, ledger, session, "read", path="notes.md", range=[9, 12])
    assert past.is_error and "has 3 lines" in past.content
    bad = await call(tools, ledger, session, "read", path="notes.md", range=[3, 1])
    assert bad.is_error and "`range` must be [first_line, last_line]" in bad.content


async def test_read_says_what_is_wrong_with_a_path(
    tools: ToolRegistry, ledger: Ledger, session: str, tree: Tree
) -> None:
    missing = await call(tools, ledger, session, "read", path="src/nope.py")
    assert missing.is_error and "no such file: 'src/nope.py'" in missing.content
    assert str(tree.root) in missing.content
    # a small model reads a folder as a file: it gets the folder's files, not a dead end
    folder = await call(tools, ledger, session, "read", path="src")
    assert not folder.is_error and folder.content.splitlines()[1:] == ["src/app.py", "src/util.py"]
    assert folder.content.splitlines()[0].endswith(
        "src is a folder, not a file; the files in it (read one by its path):"
    )
    empty = await call(tools, ledger, session, "read", path="")
    assert empty.is_error and "read needs `path`" in empty.content


async def test_bytes_that_are_not_utf8_are_marked_and_binary_files_refused(
    tools: ToolRegistry, ledger: Ledger, session: str, tree: Tree
) -> None:
    (tree.root / "latin.txt").write_bytes(b"caf\xe9 au lait\nline two\n")
    latin = await call(tools, ledger, session, "read", path="latin.txt")
    assert not latin.is_error
    assert latin.content.startswith("caf\ufffd au lait\nline two\n")
    assert "not valid UTF-8 from byte 3" in latin.content.splitlines()[-1]
    (tree.root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    binary = await call(tools, ledger, session, "read", path="image.png")
    assert binary.is_error and "binary file (80 bytes)" in binary.content
    ranged = await call(tools, ledger, session, "read", path="image.png", range=[1, 2])
    assert ranged.is_error and "binary" in ranged.content
    (tree.root / "bom16.txt").write_bytes("hello wide".encode("utf-16"))
    wide = await call(tools, ledger, session, "read", path="bom16.txt")
    assert wide.content == "hello wide"


async def test_a_file_over_the_read_limit_asks_for_a_range(
    tools: ToolRegistry, ledger: Ledger, session: str, tree: Tree
) -> None:
    line = "x" * 99 + "\n"
    (tree.root / "huge.log").write_text(line * (READ_LIMIT // 100 + 10))
    whole = await call(tools, ledger, session, "read", path="huge.log")
    assert whole.is_error and "ask for part of it with `range`" in whole.content
    part = await call(tools, ledger, session, "read", path="huge.log", range=[5, 6])
    assert part.content.startswith(line + line.rstrip("\n") + "\n[lines 5–6 of 20010")


async def test_a_long_file_reaches_the_model_through_the_evidence_window(
    ledger: Ledger, session: str, tree: Tree
) -> None:
    text = "\n".join(f"entry {i}: {'data ' * 8}" for i in range(3_000))  # ~150k chars
    (tree.root / "long.txt").write_text(text)
    provider = ScriptedProvider(Scripted(calls=[("read", {"path": "long.txt"})]), Scripted("ok"))
    tools = default_tools(Settings(workspace=(str(tree.root),)))
    binding = ModelBinding(provider="scripted", model="m", details=None)
    events = [e async for e in TurnRunner(ledger, provider, tools).run(session, "read it", binding)]
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    chain = ledger.chain_to_root(session)
    body = next(e.payload for e in chain if isinstance(e.payload, EvidenceBody))
    carried = next(e.payload for e in chain if isinstance(e.payload, ToolResult))
    assert body.content == text  # stored whole
    assert carried.windowed and len(carried.content) <= 30_100
    assert "recall(" in carried.content and "entry 2999" in carried.content
    assert provider.requests[1].messages[-1].content == carried.content


async def test_glob_lists_files_by_pattern(
    tools: ToolRegistry, ledger: Ledger, session: str
) -> None:
    py = await call(tools, ledger, session, "glob", pattern="**/*.py")
    assert py.content.splitlines() == ["src/app.py", "src/util.py"]
    anywhere = await call(tools, ledger, session, "glob", pattern="*.md")
    assert anywhere.content.splitlines()[:3] == ["docs/deep/guide.md", "link_in.md", "notes.md"]
    top = await call(tools, ledger, session, "glob", pattern="src/*")
    assert top.content.splitlines() == ["src/app.py", "src/util.py"]
    narrowed = await call(tools, ledger, session, "glob", pattern="*.md", path="docs")
    assert narrowed.content.splitlines() == ["docs/deep/guide.md"]
    on_file = await call(tools, ledger, session, "glob", pattern="*", path="notes.md")
    assert on_file.is_error and "notes.md is a file" in on_file.content
    none = await call(tools, ledger, session, "glob", pattern="*.rs")
    assert not none.is_error and none.content.startswith("no files match '*.rs'")


def test_glob_patterns_keep_to_one_folder_unless_double_starred() -> None:
    assert glob_regex("src/*.py").fullmatch("src/app.py")
    assert not glob_regex("src/*.py").fullmatch("src/sub/app.py")
    assert glob_regex("src/**/*.py").fullmatch("src/app.py")
    assert glob_regex("src/**/*.py").fullmatch("src/a/b/app.py")
    assert glob_regex("docs/**").fullmatch("docs/a/b.md")
    assert glob_regex("*.[ch]").fullmatch("lib/x.h")
    assert not glob_regex("*.[!ch]").fullmatch("x.c")
    assert glob_regex("file?.txt").fullmatch("file1.txt")
    assert not glob_regex("file?.txt").fullmatch("file12.txt")


async def test_glob_and_grep_say_how_much_they_left_out(
    tools: ToolRegistry, ledger: Ledger, session: str, tree: Tree
) -> None:
    many = tree.root / "many"
    many.mkdir()
    for i in range(GLOB_LIMIT + 20):
        (many / f"f{i:04}.txt").write_text("needle\n" * 2)
    listed = await call(tools, ledger, session, "glob", pattern="many/*.txt")
    lines = listed.content.splitlines()
    assert len(lines) == GLOB_LIMIT + 1 and lines[-1].startswith("[… and 20 more files")
    found = await call(tools, ledger, session, "grep", pattern="needle")
    lines = found.content.splitlines()
    assert lines[0] == f"{2 * (GLOB_LIMIT + 20):,} matching lines in {GLOB_LIMIT + 20} files:"
    assert len(lines) == 1 + GREP_LIMIT + 2
    assert lines[1] == "many/f0000.txt:1: needle"
    assert lines[-2].startswith(f"[… and {2 * (GLOB_LIMIT + 20) - GREP_LIMIT:,} more")
    assert lines[-1] == "[1 linked files pointing outside the workspace left out]"


async def test_grep_finds_lines_by_regex(
    tools: ToolRegistry, ledger: Ledger, session: str, tree: Tree
) -> None:
    found = await call(tools, ledger, session, "grep", pattern=r"TODO\b", glob="*.md")
    assert found.content.splitlines() == [
        "3 matching lines in 3 files:",
        "docs/deep/guide.md:2: TODO: write it",
        "link_in.md:3: TODO: call the plumber",
        "notes.md:3: TODO: call the plumber",
    ]
    one = await call(
        tools, ledger, session, "grep", pattern="todo", path="src/app.py", ignore_case=True
    )
    assert one.content.splitlines()[1] == "src/app.py:2:     return 1  # TODO tidy"
    (tree.root / "wide.txt").write_text("a" * 1_000 + "needle" + "b" * 1_000 + "\n")
    wide = await call(tools, ledger, session, "grep", pattern="needle", path="wide.txt")
    assert "[… 1,606 more characters: read wide.txt with range [1, 1]]" in wide.content
    broken = await call(tools, ledger, session, "grep", pattern="(unclosed")
    assert broken.is_error and "not a valid regular expression" in broken.content


ESCAPES = [
    ("read", {"path": "../outside/secret.txt"}, "'..' leads out"),
    ("read", {"path": "src/../../outside/secret.txt"}, "'..' leads out"),
    ("read", {"path": "{outside}/secret.txt"}, "is not inside a workspace folder"),
    ("read", {"path": "link_out.txt"}, "symbolic link"),
    ("read", {"path": "linkdir/secret.txt"}, "symbolic link"),
    ("glob", {"pattern": "../outside/*"}, "'..' leads out"),
    ("glob", {"pattern": "*.txt", "path": ".."}, "'..' leads out"),
    ("glob", {"pattern": "{outside}/*.txt"}, "is not inside a workspace folder"),
    ("glob", {"pattern": "*", "path": "linkdir"}, "symbolic link"),
    ("grep", {"pattern": "SECRET", "path": "../outside"}, "'..' leads out"),
    ("grep", {"pattern": "SECRET", "path": "{outside}"}, "is not inside a workspace folder"),
    ("grep", {"pattern": "SECRET", "path": "link_out.txt"}, "symbolic link"),
    ("grep", {"pattern": "SECRET", "path": "linkdir"}, "symbolic link"),
]


@pytest.mark.allow_log_warnings  # every refusal is logged at WARNING, as it should be
@pytest.mark.parametrize(("tool", "arguments", "why"), ESCAPES)
async def test_a_path_out_of_the_workspace_is_refused_named_and_logged(
    tools: ToolRegistry,
    ledger: Ledger,
    session: str,
    tree: Tree,
    caplog: pytest.LogCaptureFixture,
    tool: str,
    arguments: dict[str, str],
    why: str,
) -> None:
    arguments = {k: v.format(outside=tree.outside) for k, v in arguments.items()}
    raw = arguments.get("path") or arguments["pattern"]  # what the refusal is about
    with caplog.at_level(logging.WARNING):
        out = await call(tools, ledger, session, tool, **arguments)
    assert out.is_error
    assert out.content.startswith(f"error: refused: the path {raw!r} is outside the workspace")
    assert why in out.content
    assert f"{tool} can only reach these folders: {tree.root}" in out.content
    assert SECRET not in out.content
    refusals = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(refusals) == 1 and repr(raw) in refusals[0].getMessage()


async def test_listing_and_searching_leave_out_links_that_point_outside(
    tools: ToolRegistry, ledger: Ledger, session: str
) -> None:
    listed = await call(tools, ledger, session, "glob", pattern="*.txt")
    assert "link_out.txt" not in listed.content and SECRET not in listed.content
    assert "[1 linked files pointing outside the workspace left out]" in listed.content
    searched = await call(tools, ledger, session, "grep", pattern="password|SECRET")
    assert searched.content.startswith("no line matches") and SECRET not in searched.content
    inside = await call(tools, ledger, session, "read", path="link_in.md")  # a link inside: fine
    assert inside.content.startswith("# Notes")


async def test_folders_added_to_a_session_are_read_from_its_chain(
    ledger: Ledger, tree: Tree, tmp_path: Path
) -> None:
    tools = ToolRegistry(file_tools())  # no folders in the settings
    first, second = ledger.create_session().id, ledger.create_session().id
    nothing = await call(tools, ledger, first, "read", path="notes.md")
    assert nothing.is_error and "there are no workspace folders" in nothing.content
    add_workspace_folder(ledger, first, tree.root)
    added = [e.payload for e in ledger.chain_to_root(first) if isinstance(e.payload, Activity)]
    assert added[-1].type == WORKSPACE_ADDED and added[-1].detail == {"path": str(tree.root)}
    read = await call(tools, ledger, first, "read", path="notes.md")
    assert read.content.startswith("# Notes")
    other = await call(tools, ledger, second, "read", path=str(tree.root / "notes.md"))
    assert other.is_error  # the other session never added it
    add_workspace_folder(ledger, first, tree.outside)  # two folders: results name whole paths
    both = await call(tools, ledger, first, "glob", pattern="*.txt")
    assert str(tree.outside / "secret.txt") in both.content.splitlines()
    with pytest.raises(WorkspaceError, match="not an existing folder"):
        add_workspace_folder(ledger, first, tmp_path / "missing")
    with pytest.raises(WorkspaceError, match="not an absolute path"):
        add_workspace_folder(ledger, first, "relative/dir")


@pytest.mark.allow_log_warnings  # the refusal is logged
async def test_a_refusal_reaches_the_model_as_a_result_and_the_turn_completes(
    ledger: Ledger, session: str, tree: Tree, caplog: pytest.LogCaptureFixture
) -> None:
    provider = ScriptedProvider(
        Scripted(
            calls=[("read", {"path": "../outside/secret.txt"}), ("read", {"path": "notes.md"})]
        ),
        Scripted(text="I may only read the workspace."),
    )
    tools = ToolRegistry([RecallTool(), *file_tools([str(tree.root)])])
    binding = ModelBinding(provider="scripted", model="m", details=None)
    events = [e async for e in TurnRunner(ledger, provider, tools).run(session, "go", binding)]
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    sent = provider.requests[1].messages[-2:]
    assert [m.tool_name for m in sent] == ["read", "read"]
    assert sent[0].content.startswith("error: refused: the path '../outside/secret.txt'")
    assert sent[1].content.startswith("# Notes")
    assert any("../outside/secret.txt" in r.getMessage() for r in caplog.records)
    assert all(SECRET not in m.content for m in provider.requests[1].messages)
