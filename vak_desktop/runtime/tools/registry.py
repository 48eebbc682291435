"""Tools the model can call, and running a step's calls.

A tool declares its schema and runs with a `ToolContext` (the ledger and the session it works
in). Besides its schema a tool may declare, as plain attributes, what the tool surface and the
drift checks need to know about it (spec §5, §7); a tool that declares nothing gets the
defaults of `ToolTraits`:

    always_loaded: bool        its schema is in every request (the core tools)
    serves: Iterable[str]      the domains it serves; loaded when the reading meets one of
                               them (none declared: loaded always, as an undeclared tool)
    observes_now: bool         it reads the world as it is now (a file, a listing, a search),
                               so a success counts as a fresh observation
    pure: bool                 its result depends on its arguments and the conversation's
                               past alone (recall, session_search, find_tools): the same
                               call again in one turn would return the same result
    prompt_section: str        a fixed note for the stable prefix (the skill list, say)
    session_note(ledger, session) -> str
                               a note about one session for its system text (the workspace
                               folders), byte-stable while the session's settings hold

Whatever a tool does, the model gets a result: an unknown tool, bad arguments or an exception
become an error result it can read and repair, never a crashed turn.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from vak_desktop.context.evidence.windows import carry
from vak_desktop.context.payloads import EvidenceBlob, EvidenceBody, ToolCall, ToolResult
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.events import Notice, ToolResultReady

log = logging.getLogger(__name__)
# Every call ends: a tool that runs longer is stopped and the model told (a tool may declare its
# own `time_limit_s`). Generous, for a grep over a large tree or an MCP server starting.
TOOL_TIME_LIMIT_S = 120.0


@dataclass(frozen=True)
class ToolContext:
    ledger: Ledger
    session: str
    # The schemas `find_tools` searches: admitted tools that are not always loaded. The
    # registry fills it in when it runs a step's calls.
    catalogue: tuple[ToolSpec, ...] = ()
    # Where a long-running tool reports how far it is (MCP progress): one line the window and
    # the CLI show as a notice while the call runs. None: nobody is listening.
    progress: Callable[[str], None] | None = None


@dataclass(frozen=True)
class ToolOutput:
    content: str
    is_error: bool = False
    blobs: tuple[EvidenceBlob, ...] = ()  # binary parts (MCP images …), stored as evidence


class ToolFailure(Exception):
    """Raised by a tool to return a clear error result to the model."""


class Tool(Protocol):
    """A callable tool: its schema and its coroutine. The optional declarations the module
    docstring lists are read through `traits_of`."""

    @property
    def spec(self) -> ToolSpec: ...

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput: ...


@dataclass(frozen=True)
class ToolTraits:
    """What a tool declares about itself beyond its schema (see the module docstring)."""

    always_loaded: bool = False
    serves: frozenset[str] = frozenset()
    observes_now: bool = False
    pure: bool = False
    prompt_section: str = ""

    @property
    def undeclared(self) -> bool:
        """Declares no domains: the surface loads it whatever the reading."""
        return not self.serves


def traits_of(tool: Tool) -> ToolTraits:
    """A tool's declarations, with the defaults for whatever it leaves out."""
    serves = getattr(tool, "serves", ())
    if isinstance(serves, str):  # one domain written bare is still one domain, not letters
        serves = (serves,)
    return ToolTraits(
        always_loaded=bool(getattr(tool, "always_loaded", False)),
        serves=frozenset(str(domain) for domain in serves),
        observes_now=bool(getattr(tool, "observes_now", False)),
        pure=bool(getattr(tool, "pure", False)),
        prompt_section=str(getattr(tool, "prompt_section", "") or ""),
    )


def unknown_tool(name: str, tools: Sequence[str]) -> str:
    """The result of a call of a tool nobody has: the real tools, by their exact names (a
    small model invents `write_file` or `search_files`; `call_repair.py` runs what it can)."""
    known = ", ".join(f"`{t}`" for t in tools) or "none"
    return (
        f"error: there is no tool named {name!r}. The tools you can call are {known}: call "
        "one of them by its exact name with its own arguments, or answer in plain words."
    )


class ToolRegistry:
    """The tools admitted for a runtime, in a fixed order (the order of their schemas)."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._traits: dict[str, ToolTraits] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        name = tool.spec.name
        if name in self._tools:
            raise ValueError(f"two tools are named {name!r}")
        self._tools[name] = tool
        self._traits[name] = traits_of(tool)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def specs(self) -> tuple[ToolSpec, ...]:
        """Every admitted tool's schema, in the order the tools were added."""
        return tuple(t.spec for t in self._tools.values())

    def observes_now(self, name: str) -> bool:
        """Whether the admitted tool `name` reads the world as it is now (drift checks ask)."""
        return self.traits(name).observes_now

    def traits(self, name: str) -> ToolTraits:
        """What the admitted tool `name` declares (the defaults for a tool not admitted)."""
        return self._traits.get(name, ToolTraits())

    def catalogue(self) -> tuple[ToolSpec, ...]:
        """The admitted tools that are not always loaded: what "More tools" lists and
        `find_tools` searches. A function of the admitted set alone."""
        return tuple(
            t.spec for name, t in self._tools.items() if not self._traits[name].always_loaded
        )

    def session_notes(self, ledger: Ledger, session: str) -> tuple[str, ...]:
        """What tools say about one session in its system text (the file tools: the
        workspace folders), each note once, in the tools' order. A tool declares it as a
        method `session_note(ledger, session) -> str`."""
        notes: list[str] = []
        for tool in self._tools.values():
            note = getattr(tool, "session_note", None)
            text = str(note(ledger, session) or "") if callable(note) else ""
            if text and text not in notes:
                notes.append(text)
        return tuple(notes)

    def prompt_sections(self) -> tuple[str, ...]:
        """The tools' notes for the stable prefix, in the tools' order."""
        return tuple(t.prompt_section for t in self._traits.values() if t.prompt_section)

    async def run_one(self, call: ToolCall, context: ToolContext) -> ToolOutput:
        tool = self._tools.get(call.name)
        if tool is None:
            return ToolOutput(unknown_tool(call.name, list(self._tools)), True)
        context = dataclasses.replace(context, catalogue=self.catalogue())
        limit = getattr(tool, "time_limit_s", TOOL_TIME_LIMIT_S)
        deadline = asyncio.timeout(limit)
        try:
            async with deadline:
                return await tool.run(dict(call.arguments), context)
        except TimeoutError:
            if not deadline.expired():  # the tool's own, not our limit
                log.exception("tool %s raised", call.name)
                return ToolOutput(f"error: {call.name} failed: TimeoutError", True)
            return ToolOutput(
                f"error: {call.name} did not finish within {limit:g} s and was stopped", True
            )
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
) -> AsyncIterator[ToolResultReady | Notice]:
    """Run a step's calls concurrently (a `Notice` for each progress report while they run),
    then record each (`record_results`)."""
    reports: asyncio.Queue[str] = asyncio.Queue()
    running = asyncio.ensure_future(
        registry.run_all(calls, ToolContext(ledger, session, progress=reports.put_nowait))
    )
    report: asyncio.Future[str] | None = None
    try:
        while not running.done():
            report = asyncio.ensure_future(reports.get())
            await asyncio.wait({running, report}, return_when=asyncio.FIRST_COMPLETED)
            if report.done():
                yield Notice(report.result())
            report.cancel()
        while not reports.empty():
            yield Notice(reports.get_nowait())
        outputs = running.result()
    finally:
        running.cancel()  # the turn stopped while its calls ran: they stop with it
        if report is not None:
            report.cancel()
    for ready in record_results(ledger, session, calls, outputs):
        yield ready


def record_results(
    ledger: Ledger, session: str, calls: Sequence[ToolCall], outputs: Sequence[ToolOutput]
) -> Iterator[ToolResultReady]:
    """Record each call's output in call order: an EvidenceBody with the whole output, and a
    ToolResult with what the request carries (maybe a window of it)."""
    for call, output in zip(calls, outputs, strict=True):
        body = ledger.append(
            session,
            EvidenceBody(
                tool_call_id=call.id,
                tool_name=call.name,
                content=output.content,
                chars=len(output.content),
                is_error=output.is_error,
                blobs=output.blobs,
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
                images=tuple(b.data_base64 for b in output.blobs if b.mime.startswith("image/")),
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
