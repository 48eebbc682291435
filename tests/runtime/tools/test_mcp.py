"""The `mcp` tool against a real MCP server from PyPI (`mcp-server-time`), stdio and HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from mcp.types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from tests.runtime.mcp_servers import (
    free_port,
    server_processes,
    time_server,
    time_server_over_http,
)
from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.payloads import Activity, EvidenceBody, ToolCall, ToolResult
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools
from vak_desktop.runtime.events import TurnFinished
from vak_desktop.runtime.settings import McpServer, Settings
from vak_desktop.runtime.tools import ToolContext, ToolRegistry
from vak_desktop.runtime.tools.mcp import MCP_TOOLS_OBSERVED
from vak_desktop.runtime.tools.mcp.results import result_text
from vak_desktop.runtime.tools.mcp.tool import McpTool
from vak_desktop.runtime.tools.recall import RecallTool
from vak_desktop.runtime.turn.prefix_record import PREFIX_SENT

# Windows cannot pause a process (no SIGSTOP): the tests that hold a server mid-call skip there
pauses = pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="no SIGSTOP on this OS")

TOKYO: dict[str, Any] = {
    "server": "time",
    "tool": "get_current_time",
    "arguments": {"timezone": "Asia/Tokyo"},
}


def _observations(ledger: Ledger) -> list[Activity]:
    return [
        e.payload
        for e in ledger.entries_of_kind("activity")
        if isinstance(e.payload, Activity) and e.payload.type == MCP_TOOLS_OBSERVED
    ]


async def _run(tool: McpTool, ledger: Ledger, session: str, arguments: dict[str, Any]) -> str:
    """One call through a registry, as a turn makes it; returns the text, error or not."""
    registry = ToolRegistry([tool])
    output = await registry.run_one(ToolCall("c1", "mcp", arguments), ToolContext(ledger, session))
    return ("ERROR " if output.is_error else "") + output.content


async def _wait_for(condition: Callable[[], bool], what: str, within: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def _tokyo_now_matches(text: str) -> None:
    answer = json.loads(text)
    assert answer["timezone"] == "Asia/Tokyo"
    stamp = datetime.fromisoformat(answer["datetime"])
    assert stamp.utcoffset() == timedelta(hours=9)
    assert abs(stamp - datetime.now(ZoneInfo("Asia/Tokyo"))) < timedelta(minutes=5)


async def test_a_turn_calls_the_time_server_and_the_ledger_holds_the_result(
    ledger: Ledger,
) -> None:
    provider = ScriptedProvider(
        Scripted(
            calls=[
                ("mcp", TOKYO),
                (
                    "mcp",
                    {
                        "server": "time",
                        "tool": "convert_time",
                        "arguments": {
                            "source_timezone": "UTC",
                            "time": "12:00",
                            "target_timezone": "Asia/Kolkata",
                        },
                    },
                ),
            ]
        ),
        Scripted(text="It is evening in Tokyo."),
    )
    tools = default_tools(Settings(mcp_servers=(time_server(),)), ledger)
    runner = TurnRunner(ledger, provider, tools)
    session = ledger.create_session().id
    try:
        events = [
            e
            async for e in runner.run(
                session, "what time is it in Tokyo?", ModelBinding("scripted", "m", None)
            )
        ]
        assert len(server_processes()) == 1  # two concurrent first calls shared one start
    finally:
        await tools.aclose()
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    chain = ledger.chain_to_root(session)
    bodies = [e.payload for e in chain if isinstance(e.payload, EvidenceBody)]
    assert [b.tool_name for b in bodies] == ["mcp", "mcp"] and not any(b.is_error for b in bodies)
    _tokyo_now_matches(bodies[0].content)
    converted = json.loads(bodies[1].content)
    assert converted["target"]["datetime"].endswith("T17:30:00+05:30")
    assert converted["time_difference"] == "+5.5h"
    carried = [e.payload for e in chain if isinstance(e.payload, ToolResult)]
    assert provider.requests[1].messages[-2].content == carried[0].content
    # the description did not change when the server started mid-turn
    first, second = provider.requests
    assert first.tools == second.tools
    assert "time (not used yet" in next(t for t in first.tools if t.name == "mcp").description
    activities = [e.payload.type for e in chain if isinstance(e.payload, Activity)]
    activities = [a for a in activities if a != PREFIX_SENT]  # the step's prefix, recorded
    assert activities[0] == MCP_TOOLS_OBSERVED  # written in the session whose call started it


async def test_a_server_starts_on_first_demand_is_reused_closed_and_named_after_a_restart(
    tmp_path: Path,
) -> None:
    path = tmp_path / "restart.sqlite3"
    ledger = Ledger.open(path)
    session = ledger.create_session().id
    tool = McpTool([time_server()], ledger)
    try:
        assert "time (not used yet: list its tools first)" in tool.spec.description
        assert server_processes() == []  # made, described, admitted: nothing runs

        listing = await _run(tool, ledger, session, {"server": "time"})
        assert "offers 2 tools" in listing and "## get_current_time" in listing
        assert '"timezone"' in listing and "## convert_time" in listing  # schemas come along
        [pid] = server_processes()
        _tokyo_now_matches(await _run(tool, ledger, session, TOKYO))
        assert server_processes() == [pid]  # reused, not restarted
        [seen] = _observations(ledger)
        assert seen.detail["tools"] == ["convert_time", "get_current_time"]
        assert seen.detail["target"].endswith("-m mcp_server_time --local-timezone UTC")
    finally:
        await tool.aclose()
    assert server_processes() == []
    ledger.close()

    reopened = Ledger.open(path)  # a new process, as far as the tool can tell
    try:
        renamed_elsewhere = time_server("clock", "--help-me")  # another target: not observed
        off = McpServer("off", ("true",), enabled=False)
        fresh = McpTool([time_server(), renamed_elsewhere, off], reopened)
        description = fresh.spec.description
        assert "time (tools: convert_time, get_current_time)" in description
        assert "clock (not used yet" in description
        assert "off" not in description.split("Servers:")[1]  # disabled: not admitted
        assert fresh.spec.parameters["properties"]["server"]["enum"] == ["time", "clock"]
        assert server_processes() == []  # named from the ledger alone
        assert McpTool([time_server()], reopened).spec == McpTool([time_server()], reopened).spec
    finally:
        reopened.close()


@pauses
async def test_a_server_killed_mid_call_is_an_error_result_and_the_turn_completes(
    ledger: Ledger,
) -> None:
    tool = McpTool([time_server()], ledger)
    session = ledger.create_session().id
    provider = ScriptedProvider(
        Scripted(calls=[("mcp", TOKYO)]), Scripted(text="The clock is not answering.")
    )
    runner = TurnRunner(ledger, provider, ToolRegistry([RecallTool(), tool]))
    try:
        await _run(tool, ledger, session, {"server": "time"})  # started, listed
        [pid] = server_processes()
        connection = tool.pool.running("time")
        assert connection is not None
        os.kill(pid, signal.SIGSTOP)  # it cannot answer: the call stays in flight

        async def turn() -> list[object]:
            binding = ModelBinding("scripted", "m", None)
            return [e async for e in runner.run(session, "time in Tokyo?", binding)]

        running = asyncio.create_task(turn())
        await _wait_for(lambda: connection.in_flight == 1, "the call to be in flight")
        os.kill(pid, signal.SIGKILL)
        events = await asyncio.wait_for(running, 30)

        finished = events[-1]
        assert isinstance(finished, TurnFinished) and finished.outcome == "completed"
        [result] = [
            e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, ToolResult)
        ]
        assert result.is_error
        assert "the process of MCP server 'time' ended during the call to 'get_current_time'" in (
            result.content
        )
        assert "The next call starts it again" in result.content
        assert provider.requests[1].messages[-1].content == result.content  # the model saw it
        assert tool.pool.running("time") is None

        _tokyo_now_matches(await _run(tool, ledger, session, TOKYO))  # a new process
        assert len(server_processes()) == 1 and server_processes() != [pid]
        assert len(_observations(ledger)) == 1  # same tools again: nothing new to record
    finally:
        await tool.aclose()


async def test_timeouts_tool_errors_and_bad_names_are_results_the_model_reads(
    ledger: Ledger,
) -> None:
    off = McpServer("off", ("true",), enabled=False)
    tool = McpTool([time_server(), off], ledger, call_timeout=0.5)
    session = ledger.create_session().id
    try:
        wrong_zone = {
            "server": "time",
            "tool": "get_current_time",
            "arguments": {"timezone": "Mars/Base"},
        }
        text = await _run(tool, ledger, session, wrong_zone)
        assert text.startswith("ERROR error: time/get_current_time reported an error: ")
        assert "Invalid timezone" in text and "Mars/Base" in text
        [pid] = server_processes()

        text = await _run(tool, ledger, session, {"server": "time", "tool": "get_weekday"})
        assert text == (
            "ERROR error: MCP server 'time' has no tool 'get_weekday' "
            "(its tools: convert_time, get_current_time)"
        )
        text = await _run(tool, ledger, session, {"server": "time", "tool": "get_current_time"})
        assert text.startswith("ERROR ") and "timezone" in text  # the server's own complaint
        text = await _run(tool, ledger, session, {**TOKYO, "arguments": "Asia/Tokyo"})
        assert text == "ERROR error: `arguments` must be an object, got 'Asia/Tokyo'"
        text = await _run(tool, ledger, session, {"server": "sundial"})
        assert text == "ERROR error: there is no MCP server named 'sundial' (servers: time)"
        text = await _run(tool, ledger, session, {"server": "off"})
        assert text == "ERROR error: MCP server 'off' is turned off in the settings"

        if hasattr(signal, "SIGSTOP"):  # Windows cannot pause the server
            os.kill(pid, signal.SIGSTOP)
            try:
                text = await _run(tool, ledger, session, TOKYO)
            finally:
                os.kill(pid, signal.SIGCONT)
            assert text == "ERROR error: time/get_current_time gave no answer within 0.5 s"
        _tokyo_now_matches(await _run(tool, ledger, session, TOKYO))  # kept, still works
        assert server_processes() == [pid]
    finally:
        await tool.aclose()


async def test_a_server_that_cannot_start_is_a_clear_error_result(ledger: Ledger) -> None:
    session = ledger.create_session().id
    missing = McpServer("ghost", ("vak-no-such-mcp-server", "--stdio"))
    broken = McpServer("broken", (sys.executable, "-m", "vak_no_such_module"))
    tool = McpTool([missing, broken], ledger)
    try:
        text = await _run(tool, ledger, session, {"server": "ghost", "tool": "x"})
        assert text == (
            "ERROR error: could not start MCP server 'ghost': "
            "command 'vak-no-such-mcp-server' was not found"
        )
        text = await _run(tool, ledger, session, {"server": "broken"})
        assert text.startswith(
            "ERROR error: MCP server 'broken' closed the connection before it finished starting"
        )
        assert "No module named vak_no_such_module" in text  # its stderr says why
        assert _observations(ledger) == []
    finally:
        await tool.aclose()


async def test_a_server_that_never_answers_times_out_and_a_stopped_start_leaves_nothing(
    ledger: Ledger,
) -> None:
    session = ledger.create_session().id
    mute = McpServer("mute", ("sleep", "41.5"))  # a process that never speaks MCP
    tool = McpTool([mute], ledger, start_timeout=1.0)
    stopped = McpTool([McpServer("mute", ("sleep", "42.5"))], ledger)
    try:
        starting = asyncio.create_task(_run(stopped, ledger, session, {"server": "mute"}))
        text = await _run(tool, ledger, session, {"server": "mute"})
        assert text == "ERROR error: MCP server 'mute' did not answer within 1 s of starting"
        assert server_processes("sleep 41.5") == []  # stopped when the start gave up
        assert server_processes("sleep 42.5") != []
        starting.cancel()  # the turn was stopped while the server started
        await asyncio.gather(starting, return_exceptions=True)
        assert starting.cancelled()
        await _wait_for(lambda: server_processes("sleep 42.5") == [], "the process to end")
        assert stopped.pool.running("mute") is None
    finally:
        await tool.aclose()
        await stopped.aclose()


@pauses
async def test_streamable_http_server_lists_and_calls_and_an_unreachable_url_is_an_error(
    ledger: Ledger,
) -> None:
    session = ledger.create_session().id
    gone = McpServer("gone", url=f"http://127.0.0.1:{free_port()}/mcp")
    with time_server_over_http() as (url, pid):
        tool = McpTool([McpServer("remote-time", url=url), gone], ledger)
        try:
            listing = await _run(tool, ledger, session, {"server": "remote-time"})
            assert "## get_current_time" in listing
            _tokyo_now_matches(
                await _run(tool, ledger, session, {**TOKYO, "server": "remote-time"})
            )
            [seen] = _observations(ledger)
            assert seen.detail["target"] == url
            text = await _run(tool, ledger, session, {"server": "gone"})
            assert text.startswith("ERROR error: could not reach MCP server 'gone' (http://")
            assert "ConnectError" in text

            connection = tool.pool.running("remote-time")
            assert connection is not None
            os.kill(pid, signal.SIGSTOP)
            call = asyncio.create_task(
                _run(tool, ledger, session, {**TOKYO, "server": "remote-time"})
            )
            await _wait_for(lambda: connection.in_flight == 1, "the call to be in flight")
            os.kill(pid, signal.SIGKILL)
            text = await asyncio.wait_for(call, 30)
            assert text == (
                "ERROR error: the connection to MCP server 'remote-time' ended during the call to "
                "'get_current_time'; no result came back. The next call connects to it again."
            )
        finally:
            await tool.aclose()


def test_default_tools_add_mcp_only_when_a_server_is_admitted() -> None:
    def names(settings: Settings | None) -> list[str]:
        return [spec.name for spec in default_tools(settings, cards=False).specs()]

    core = ["recall", "find_tools", "read", "glob", "grep", "session_search"]
    assert names(None) == core
    assert names(Settings()) == core
    off = McpServer("off", ("true",), enabled=False)
    assert names(Settings(mcp_servers=(off,))) == core
    assert names(Settings(mcp_servers=(off, time_server()))) == [*core, "mcp"]
    with pytest.raises(ValueError, match="two MCP servers share the name 'time'"):
        McpTool([time_server(), time_server("time", "--other")])
    assert server_processes() == []


def test_non_text_content_is_described_not_pasted() -> None:
    result = CallToolResult(
        content=[
            TextContent(text="two things:"),
            ImageContent(data="iVBORw0KGgo=", mime_type="image/png"),
            ResourceLink(uri="file:///tmp/a.csv", name="a.csv", description="the rows"),
            EmbeddedResource(resource=TextResourceContents(uri="mem://note", text="hello")),
        ]
    )
    assert result_text(result) == (
        "two things:\n[image image/png, 8 bytes, kept as evidence, not shown]\n"
        "[resource link file:///tmp/a.csv (a.csv) — the rows]\n[resource mem://note]\nhello"
    )
    structured = CallToolResult(content=[], structured_content={"ok": True})
    assert json.loads(result_text(structured)) == {"ok": True}
    assert result_text(CallToolResult(content=[])) == "(the tool returned no content)"
