"""Globs are linear and every file-tool call ends when told to (issue 24 item 3, F3).

On Python's backtracking `re`, `*a*a*a*a*a*a*a*a*a*a*a*b` against a 100-character name ran past
the 120 s tool limit, and since the worker thread never reached its next stop check, past
Ctrl-C too (a live worker keeps the process from exiting). Globs now run on RE2; grep checks
its stop every 1,024 lines, so a call past its limit frees its worker within a piece of a file.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from pathlib import Path

import pytest

from tests.runtime.tools.helpers import call
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.tools import ToolRegistry, file_tools
from vak_desktop.runtime.tools.files import glob_regex

HOSTILE = "*a*a*a*a*a*a*a*a*a*a*a*b"
NAME = "a" * 100


def test_the_hostile_glob_compiles_to_a_linear_matcher() -> None:
    matcher = glob_regex(HOSTILE)
    assert matcher.fullmatch(NAME) is None
    assert matcher.fullmatch("a" * 11 + "b") is not None
    assert type(matcher).__module__.startswith("re2")


@pytest.fixture
def limited(tmp_path: Path) -> ToolRegistry:
    """The file tools over a folder holding one 100-character name, with a 3 s limit each."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / NAME).write_text("aaaa\n")
    tools = file_tools([str(root)])
    for tool in tools:
        tool.time_limit_s = 3.0  # type: ignore[attr-defined]
    return ToolRegistry(tools)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("tool", ["glob", "grep"])
async def test_a_glob_that_backtracks_ends_in_an_answer_not_the_limit(
    limited: ToolRegistry, ledger: Ledger, tool: str
) -> None:
    session = ledger.create_session().id
    arguments = {"pattern": HOSTILE} if tool == "glob" else {"pattern": "a", "glob": HOSTILE}
    out = await call(limited, ledger, session, tool, **arguments)
    assert "did not finish" not in out.content
    assert "no files match" in out.content or "no line matches" in out.content


@pytest.mark.timeout(60)
async def test_a_grep_past_its_limit_frees_its_worker_within_a_second(
    tmp_path: Path, ledger: Ledger
) -> None:
    """One thread runs file tools here: once a grep over a 9 MB file is stopped by its limit,
    the next job gets that thread within a second, not when the whole file is searched."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "big.txt").write_text("ab\n" * 3_000_000)  # ~9 MB: seconds of lines
    [_read, _glob, grep] = file_tools([str(root)])
    grep.time_limit_s = 0.1  # type: ignore[attr-defined]
    loop = asyncio.get_running_loop()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    loop.set_default_executor(pool)
    session = ledger.create_session().id
    out = await call(ToolRegistry([grep]), ledger, session, "grep", pattern="zzz[0-9]+")
    assert "did not finish" in out.content  # the limit ended the call
    stopped = time.monotonic()
    await asyncio.wait_for(loop.run_in_executor(None, time.monotonic), timeout=1.0)
    assert time.monotonic() - stopped < 1.0
    pool.shutdown()
