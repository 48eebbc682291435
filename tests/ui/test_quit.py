"""Quitting the window with MCP servers running: the app's own quit path (`run_window`, in
process, on the app's loop) over real `mcp-server-time` servers from PyPI, started by the
calls a turn makes. Closing the window returns within half a second (the SDK alone waits up
to 2 s a stdio server, one after another's wrapper), and no server process is left."""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
import time
from pathlib import Path

import pytest

from tests.runtime.mcp_servers import TIME_MODULE, server_processes, time_server
from tests.ui.harness import until
from vak_desktop.app import run_window
from vak_desktop.context.payloads import ToolCall
from vak_desktop.runtime.settings import McpServer, Settings
from vak_desktop.runtime.tools import ToolContext
from vak_desktop.ui.settings.settings_controller import SettingsController
from vak_desktop.ui.shell.main_window import MainWindow

QUIT_WITHIN_S = 0.5

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups, /proc")


def _wrapped_time_server(name: str) -> McpServer:
    """`mcp-server-time` behind a shell that lingers after the server ends, as an `npx` or
    `uvx` launcher's leader can: the SDK waits 2 s for the leader before it signals anything."""
    server = " ".join(shlex.quote(p) for p in time_server(name).command)
    return McpServer(name, ("/bin/sh", "-c", f"{server}; sleep 30"))


async def _quit_time(tmp_path: Path, servers: tuple[McpServer, ...]) -> float:
    data = tmp_path / "data"
    data.mkdir()
    controller = SettingsController(data / "settings.toml")
    controller.save(Settings(mcp_servers=servers))
    args = argparse.Namespace(data_dir=str(data), host="http://127.0.0.1:9")
    shown: list[MainWindow] = []
    running = asyncio.ensure_future(run_window_quietly(args, controller, shown))
    try:
        await until(lambda: bool(shown), "the window to show", within=30)
        window = shown[0]
        session = window.ledger.create_session("quit").id
        context = ToolContext(window.ledger, session)
        for i, server in enumerate(servers):  # each started by a call, as a turn starts it
            call = ToolCall(
                f"c{i}",
                "mcp",
                {
                    "server": server.name,
                    "tool": "get_current_time",
                    "arguments": {"timezone": "UTC"},
                },
            )
            output = await window.service.tools.run_one(call, context)
            assert not output.is_error, output.content
        groups = server_processes(TIME_MODULE)  # each server leads its own process group
        assert len(groups) == len(servers)
        began = time.monotonic()
        window.close()  # the last window: run_window stops everything and returns
        await asyncio.wait_for(asyncio.shield(running), 20)
        took = time.monotonic() - began
    finally:
        if not running.done():
            running.cancel()
    assert [g for g in groups if _group_alive(g)] == []
    return took


def _group_alive(pgid: int) -> bool:
    """Whether a process of group `pgid` still runs (a zombie no one reaps does not: in a
    container whose PID 1 reaps nothing, a server orphaned by its launcher stays one)."""
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                stat = (proc / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()  # state, ppid, pgrp, ...
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


async def run_window_quietly(
    args: argparse.Namespace, controller: SettingsController, shown: list[MainWindow]
) -> None:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)  # as the app's _run sets it: run_window ends the loop
    try:
        await run_window(app, args, controller, on_shown=shown.append)
    finally:
        app.setQuitOnLastWindowClosed(True)


async def test_quit_with_two_mcp_servers_running_takes_half_a_second(tmp_path: Path) -> None:
    took = await _quit_time(tmp_path, (time_server("one"), time_server("two")))
    assert took < QUIT_WITHIN_S, f"quitting took {took:.2f} s"


async def test_a_server_whose_launcher_lingers_does_not_hold_the_quit(tmp_path: Path) -> None:
    took = await _quit_time(tmp_path, (_wrapped_time_server("one"), _wrapped_time_server("two")))
    assert took < QUIT_WITHIN_S, f"quitting took {took:.2f} s"
