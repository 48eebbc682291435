"""The file tools cannot hang or swallow memory (issue 13 items 7, 9 and 13): a FIFO, a
runaway regular expression, a 50 MB one-line file read by range, a tool that never returns."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.tools.helpers import call, make_tree
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.tools import ToolRegistry, file_tools
from vak_desktop.runtime.tools.files import READ_LIMIT
from vak_desktop.runtime.tools.registry import ToolContext, ToolOutput

try:
    import resource
except ImportError:  # Windows: no getrusage
    resource = None  # type: ignore[assignment]
# Windows has no named pipes in the file system, nor getrusage: those tests skip there
fifos = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this OS")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = make_tree(tmp_path).root
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "pipe")
    return root


@pytest.fixture
def tools(root: Path) -> ToolRegistry:
    return ToolRegistry(file_tools([str(root)]))


@pytest.fixture
def session(ledger: Ledger) -> str:
    return ledger.create_session().id


async def _bounded(work: Any) -> ToolOutput:
    """A call that must finish by itself: the old code blocked on the FIFO for ever."""
    result: ToolOutput = await asyncio.wait_for(work, timeout=20)
    return result


@fifos
async def test_read_refuses_a_fifo_by_name(
    tools: ToolRegistry, ledger: Ledger, session: str
) -> None:
    out = await _bounded(call(tools, ledger, session, "read", path="pipe"))
    assert out.is_error and "pipe is a named pipe (FIFO), not a regular file" in out.content
    ranged = await _bounded(call(tools, ledger, session, "read", path="pipe", range=[1, 2]))
    assert ranged.is_error and "FIFO" in ranged.content


@fifos
async def test_grep_passes_over_a_fifo_and_says_so(
    tools: ToolRegistry, ledger: Ledger, session: str
) -> None:
    out = await _bounded(call(tools, ledger, session, "grep", pattern="TODO"))
    assert not out.is_error and "matching lines" in out.content
    assert "special (FIFO, device) files not searched" in out.content


async def test_a_runaway_pattern_runs_in_linear_time(
    tools: ToolRegistry, ledger: Ledger, session: str, root: Path
) -> None:
    (root / "line.txt").write_text("a" * 33 + "b\n")
    started = time.monotonic()
    out = await _bounded(call(tools, ledger, session, "grep", pattern="(a+)+$", path="line.txt"))
    assert time.monotonic() - started < 5  # Python's re: 988 s
    assert not out.is_error and "no line matches" in out.content
    refused = await call(tools, ledger, session, "grep", pattern=r"(a)\1")
    assert refused.is_error and "RE2" in refused.content


def _one_line_file(path: Path, megabytes: int) -> None:
    with path.open("wb") as out:
        for _ in range(megabytes):
            out.write(b"x" * 1_000_000)


@pytest.mark.slow
@pytest.mark.skipif(resource is None, reason="no getrusage on this OS")
async def test_a_line_range_of_a_huge_one_line_file_holds_the_cap(
    tools: ToolRegistry, ledger: Ledger, session: str, root: Path
) -> None:
    _one_line_file(root / "huge.txt", 50)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = await call(tools, ledger, session, "read", path="huge.txt", range=[1, 1])
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert not out.is_error
    assert len(out.content) < READ_LIMIT + 500
    assert f"stopped at {READ_LIMIT:,} bytes" in out.content
    assert grown_kb < 30_000  # the old read held the 50 MB line (491 MB RSS in the report)


class _Sleeper:
    """A tool that never returns, with a short limit of its own."""

    always_loaded = True
    time_limit_s = 0.2

    def __init__(self) -> None:
        from vak_desktop.context.request import ToolSpec

        self.spec = ToolSpec("sleeper", "waits for ever", {"type": "object", "properties": {}})
        self.cancelled = False

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        raise AssertionError("unreachable")


async def test_every_tool_runs_under_a_time_limit(ledger: Ledger, session: str) -> None:
    sleeper = _Sleeper()
    registry = ToolRegistry([sleeper])  # type: ignore[list-item]
    out = await _bounded(call(registry, ledger, session, "sleeper"))
    assert out.is_error and "did not finish within 0.2 s and was stopped" in out.content
    assert sleeper.cancelled


async def test_glob_says_at_least_when_the_walk_stopped_counting(
    ledger: Ledger, session: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vak_desktop.runtime.tools import files

    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(30):
        (folder / f"f{i:02}.txt").write_text("x")
    monkeypatch.setattr(files, "WALK_LIMIT", 20)
    monkeypatch.setattr(files, "GLOB_LIMIT", 5)
    registry = ToolRegistry(file_tools([str(folder)]))
    out = await call(registry, ledger, session, "glob", pattern="*.txt")
    assert "and at least 15 more files" in out.content


async def test_a_stopped_turn_stops_a_grep_walking_in_its_thread(
    ledger: Ledger, session: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 7's Ctrl-C: stopping the turn cancels its calls, and a walk running in a worker
    thread (which a cancel cannot interrupt) stops at its next file instead of running on."""
    from vak_desktop.runtime.tools import files

    folder = tmp_path / "tree"
    folder.mkdir()
    for i in range(300):
        (folder / f"f{i:03}.txt").write_text("needle\n")
    searched: list[int] = []  # one per file searched
    real_lines = files._lines

    def slow_lines(data: bytes) -> Any:
        searched.append(len(data))
        time.sleep(0.01)  # 3 s for the whole tree
        return real_lines(data)

    monkeypatch.setattr(files, "_lines", slow_lines)
    registry = ToolRegistry(file_tools([str(folder)]))
    running = asyncio.create_task(call(registry, ledger, session, "grep", pattern="needle"))
    for _ in range(200):
        if len(searched) >= 5:
            break
        await asyncio.sleep(0.01)
    running.cancel()  # what Ctrl-C does to the turn
    with pytest.raises(asyncio.CancelledError):
        await _bounded(running)
    await asyncio.sleep(0.3)  # the walk, had it gone on, would search ~30 more files
    at_stop = len(searched)
    await asyncio.sleep(0.3)
    assert len(searched) == at_stop < 300
