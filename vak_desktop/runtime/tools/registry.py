"""Tools the model can call, and running a step's calls.

A tool declares its schema and runs with a `ToolContext` (the ledger and the session it works
in). Whatever a tool does, the model gets a result: an unknown tool, bad arguments or an
exception become an error result it can read and repair, never a crashed turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from vak_desktop.context.evidence import carry
from vak_desktop.context.payloads import EvidenceBody, ToolCall, ToolResult
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.events import ToolResultReady

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolContext:
    ledger: Ledger
    session: str


@dataclass(frozen=True)
class ToolOutput:
    content: str
    is_error: bool = False


class ToolFailure(Exception):
    """Raised by a tool to return a clear error result to the model."""


class Tool(Protocol):
    @property
    def spec(self) -> ToolSpec: ...

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput: ...


class ToolRegistry:
    """The tools admitted for a runtime, in a fixed order (the order of their schemas)."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        name = tool.spec.name
        if name in self._tools:
            raise ValueError(f"two tools are named {name!r}")
        self._tools[name] = tool

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(t.spec for t in self._tools.values())

    async def run_one(self, call: ToolCall, context: ToolContext) -> ToolOutput:
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self._tools)) or "none"
            return ToolOutput(f"error: no tool named {call.name!r} (tools: {known})", True)
        try:
            return await tool.run(dict(call.arguments), context)
        except ToolFailure as exc:
            return ToolOutput(f"error: {exc}", True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool bug must reach the model as a result, not end the turn
            log.exception("tool %s raised", call.name)
            return ToolOutput(f"error: {call.name} failed: {type(exc).__name__}: {exc}", True)

    async def aclose(self) -> None:
        """Release what tools hold open (MCP servers a call started); call once at shutdown."""
        for tool in self._tools.values():
            close = getattr(tool, "aclose", None)
            if close is not None:
                await close()

    async def run_all(self, calls: Sequence[ToolCall], context: ToolContext) -> list[ToolOutput]:
        """Run one step's calls concurrently; results come back in call order."""
        return list(await asyncio.gather(*(self.run_one(c, context) for c in calls)))


async def run_tool_calls(
    registry: ToolRegistry, ledger: Ledger, session: str, calls: Sequence[ToolCall]
) -> AsyncIterator[ToolResultReady]:
    """Run a step's calls concurrently, then record each in call order: an EvidenceBody with the
    whole result and a ToolResult with what the request carries (maybe a window of it)."""
    outputs = await registry.run_all(calls, ToolContext(ledger, session))
    for call, output in zip(calls, outputs, strict=True):
        body = ledger.append(
            session,
            EvidenceBody(
                tool_call_id=call.id,
                tool_name=call.name,
                content=output.content,
                chars=len(output.content),
                is_error=output.is_error,
            ),
        )
        carried = carry(output.content, body.id)
        ledger.append(
            session,
            ToolResult(
                tool_call_id=call.id,
                tool_name=call.name,
                content=carried.text,
                evidence=body.id,
                chars=len(output.content),
                is_error=output.is_error,
                windowed=carried.windowed,
            ),
        )
        yield ToolResultReady(
            call.id,
            call.name,
            body.id,
            len(output.content),
            output.is_error,
            carried.windowed,
            carried.text[:2_000],
        )
