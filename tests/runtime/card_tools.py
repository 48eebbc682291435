"""Generic tools and helpers for the card and drift tests (no real service is named)."""

from __future__ import annotations

import json
from typing import Any

from tests.runtime.scripted import ScriptedProvider
from vak_desktop.context.payloads import EvidenceBody, Nudge, Presentation, ToolResult
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Entry, Ledger
from vak_desktop.runtime import ModelBinding, ToolOutput, ToolRegistry, TurnRunner, add_card_tools
from vak_desktop.runtime.events import TurnEvent, TurnFinished
from vak_desktop.runtime.tools import ToolContext
from vak_desktop.runtime.tools.recall import RecallTool


class SearchTool:
    """A retrieval: reads the world as it is now, answers with search hits about `topic`."""

    observes_now = True
    spec = ToolSpec(
        "search",
        "Search the web.",
        {"type": "object", "properties": {"query": {"type": "string"}}},
    )

    def __init__(self, hits: list[dict[str, str]]) -> None:
        self.hits = hits

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        return ToolOutput(json.dumps({"query": arguments.get("query", ""), "results": self.hits}))


HARBOUR_HITS = [
    {
        "title": "Harbour water temperature at noon",
        "url": "https://example.org/harbour",
        "content": "The harbour water temperature measured 19.0 degrees at noon.",
    }
]
COMPILER_HITS = [
    {
        "title": "Compiler release adds incremental linking",
        "url": "https://example.org/compiler",
        "content": "The new compiler release adds incremental linking and faster builds.",
    }
]
OLD_CARD = {"title": "Harbour water temperature", "value": 21.5, "unit": "degrees"}


def tools(*extra: Any) -> ToolRegistry:
    return add_card_tools(ToolRegistry([RecallTool(), *extra]))


def binding() -> ModelBinding:
    return ModelBinding(provider="scripted", model="m", details=None)


async def run_turn(
    ledger: Ledger, session: str, provider: ScriptedProvider, text: str, registry: ToolRegistry
) -> list[TurnEvent]:
    runner = TurnRunner(ledger, provider, registry)
    return [e async for e in runner.run(session, text, binding())]


def finished(events: list[TurnEvent]) -> TurnFinished:
    last = events[-1]
    assert isinstance(last, TurnFinished)
    return last


def last_turn(ledger: Ledger, session: str) -> list[Entry]:
    chain = ledger.chain_to_root(session)
    start = max(i for i, e in enumerate(chain) if e.kind == "directive")
    return chain[start:]


def presentations(entries: list[Entry]) -> list[Entry]:
    return [e for e in entries if isinstance(e.payload, Presentation)]


def results(entries: list[Entry]) -> list[ToolResult]:
    return [e.payload for e in entries if isinstance(e.payload, ToolResult)]


def nudges(entries: list[Entry]) -> list[Nudge]:
    return [e.payload for e in entries if isinstance(e.payload, Nudge)]


def evidence_ids(entries: list[Entry], tool: str) -> list[str]:
    return [
        e.id for e in entries if isinstance(e.payload, EvidenceBody) and e.payload.tool_name == tool
    ]
