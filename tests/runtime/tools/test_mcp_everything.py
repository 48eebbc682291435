"""The `mcp` tool against MCP's own reference server, `@modelcontextprotocol/server-everything`
from npm (code no one here wrote): progress is requested and shown, progress keeps a long call
alive past its timeout up to the user's ceiling, an image is kept as evidence and handed to a
model that can see (only to one), and tools that only run as tasks are not offered.

`.ci/run` installs node's package into `~/.cache/vak-desktop/npm` (pinned; `VAK_NPM_DIR` moves
it). Without node or the package the tests skip and say so. The server's
`trigger-long-running-operation` takes `duration` (seconds) and `steps` and sends one progress
notification per step; timeouts here are seconds, not the default 120 s, so the mechanism is
proven in seconds: a 3 s operation outlives a 1 s timeout by reporting progress.
"""

from __future__ import annotations

import base64
import os
import shutil
from pathlib import Path

import httpx
import pytest

from tests.doubles.ollama_model import Reply
from tests.doubles.ollama_server import OllamaDouble
from vak_desktop.context.payloads import EvidenceBody, ToolCall
from vak_desktop.ledger import Ledger
from vak_desktop.providers import OllamaProvider
from vak_desktop.runtime import TurnRunner, bind_model
from vak_desktop.runtime.events import Notice, ToolResultReady
from vak_desktop.runtime.settings import McpServer
from vak_desktop.runtime.tools import ToolContext, ToolRegistry, run_tool_calls
from vak_desktop.runtime.tools.mcp.errors import RemoteTool
from vak_desktop.runtime.tools.mcp.results import tool_listing
from vak_desktop.runtime.tools.mcp.tool import McpTool

PACKAGE_VERSION = "2026.8.31"  # the version .ci/run installs
NPM_DIR = Path(os.environ.get("VAK_NPM_DIR", Path.home() / ".cache/vak-desktop/npm"))
SERVER = NPM_DIR / "node_modules/.bin/mcp-server-everything"


def _why_absent() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed (.ci/run installs it): server-everything cannot run"
    if not SERVER.exists():
        return (
            f"@modelcontextprotocol/server-everything is not installed in {NPM_DIR} "
            f"(.ci/run: npm install --prefix {NPM_DIR} "
            f"@modelcontextprotocol/server-everything@{PACKAGE_VERSION})"
        )
    return None


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(_why_absent() is not None, reason=_why_absent() or ""),
]


def everything(timeout: float = 1.0, ceiling: float = 30.0) -> McpServer:
    return McpServer(
        "everything", (str(SERVER), "stdio"), call_timeout=timeout, progress_ceiling=ceiling
    )


async def _run(
    tool: McpTool, ledger: Ledger, session: str, arguments: dict[str, object]
) -> tuple[list[str], EvidenceBody, bool]:
    """One call through the registry as a turn makes it: the notices it showed, the evidence."""
    registry = ToolRegistry([tool])
    notices, ready = [], None
    async for event in run_tool_calls(
        registry, ledger, session, [ToolCall("c1", "mcp", arguments)]
    ):
        if isinstance(event, Notice):
            notices.append(event.message)
        elif isinstance(event, ToolResultReady):
            ready = event
    assert ready is not None
    body = next(
        e.payload
        for e in reversed(ledger.chain_to_root(session))
        if isinstance(e.payload, EvidenceBody)
    )
    return notices, body, ready.is_error


async def test_progress_is_shown_and_keeps_a_long_call_alive_past_its_timeout(
    ledger: Ledger,
) -> None:
    tool = McpTool([everything(timeout=1.0, ceiling=30.0)], ledger, start_timeout=60)
    session = ledger.create_session().id
    try:
        long_op = {"server": "everything", "tool": "trigger-long-running-operation"}
        notices, body, failed = await _run(
            tool, ledger, session, {**long_op, "arguments": {"duration": 3, "steps": 6}}
        )
        assert not failed, body.content
        assert "Long running operation completed. Duration: 3 seconds" in body.content
        assert len(notices) == 6  # one per step, as the window and the CLI show them
        assert notices[0] == "everything/trigger-long-running-operation: 1 of 6 (17%)"
        assert notices[-1] == "everything/trigger-long-running-operation: 6 of 6 (100%)"

        # without progress between answers, the same timeout stops a 2 s call at 1 s
        notices, body, failed = await _run(
            tool, ledger, session, {**long_op, "arguments": {"duration": 2, "steps": 1}}
        )
        assert failed and "gave no answer within 1 s" in body.content and not notices
    finally:
        await tool.aclose()


async def test_progress_extends_a_call_only_up_to_the_users_ceiling(ledger: Ledger) -> None:
    tool = McpTool([everything(timeout=1.0, ceiling=2.0)], ledger, start_timeout=60)
    session = ledger.create_session().id
    try:
        notices, body, failed = await _run(
            tool,
            ledger,
            session,
            {
                "server": "everything",
                "tool": "trigger-long-running-operation",
                "arguments": {"duration": 5, "steps": 10},
            },
        )
        assert failed and "2 s ceiling" in body.content and "progress_ceiling" in body.content
        assert 2 <= len(notices) <= 5
    finally:
        await tool.aclose()


async def test_an_image_is_kept_as_evidence_and_task_only_tools_are_not_offered(
    ledger: Ledger,
) -> None:
    tool = McpTool([everything()], ledger, start_timeout=60)
    session = ledger.create_session().id
    try:
        _, body, failed = await _run(
            tool, ledger, session, {"server": "everything", "tool": "get-tiny-image"}
        )
        assert not failed
        assert "[image image/png" in body.content and "kept as evidence" in body.content
        (blob,) = body.blobs
        assert blob.mime == "image/png"
        assert base64.b64decode(blob.data_base64).startswith(b"\x89PNG\r\n\x1a\n")

        listing = await tool.run({"server": "everything"}, ToolContext(ledger, session))
        assert "trigger-long-running-operation" in listing.content
        # its research tool declares `execution.taskSupport: "required"`: named as task-only,
        # not offered, and a call to it is refused with the reason instead of failing later
        assert "## simulate-research-query" not in listing.content
        assert "simulate-research-query run only as MCP tasks" in listing.content
        _, body, failed = await _run(
            tool,
            ledger,
            session,
            {"server": "everything", "tool": "simulate-research-query", "arguments": {}},
        )
        assert failed and "runs only as an MCP task" in body.content
    finally:
        await tool.aclose()


def test_a_tool_that_requires_tasks_is_listed_apart_and_not_offered() -> None:
    tools = (
        RemoteTool("echo", "Echoes", {"type": "object"}),
        RemoteTool("research", "A task", {"type": "object"}, task_support="required"),
        RemoteTool("maybe", "Either", {"type": "object"}, task_support="optional"),
    )
    text = tool_listing("s", tools)
    assert "offers 2 tools" in text and "## echo" in text and "## maybe" in text
    assert "## research" not in text and "research run only as MCP tasks" in text


@pytest.mark.parametrize(("model", "sees"), [("llava", True), ("llama3.2", False)])
async def test_a_tool_image_reaches_a_model_that_sees_and_no_other(
    ledger: Ledger, model: str, sees: bool
) -> None:
    capabilities = ("completion", "tools", "vision") if sees else ("completion", "tools")
    with OllamaDouble() as double:
        double.add_model(model, capabilities=capabilities)
        call = {"server": "everything", "tool": "get-tiny-image"}
        double.enqueue(Reply(tool_calls=[("mcp", call)]), Reply(text="A tiny picture."))
        tool = McpTool([everything()], ledger, start_timeout=60)
        try:
            async with httpx.AsyncClient() as http:
                provider = OllamaProvider(http, double.url)
                binding = await bind_model(provider, model)
                runner = TurnRunner(ledger, provider, ToolRegistry([tool]))
                session = ledger.create_session().id
                async for _ in runner.run(session, "Show me the tiny image.", binding):
                    pass
        finally:
            await tool.aclose()
        second = double.chat_bodies()[-1]["messages"]
        answer = next(m for m in second if m["role"] == "tool")
        if sees:
            assert base64.b64decode(answer["images"][0]).startswith(b"\x89PNG")
        else:
            assert "images" not in answer
