"""`session_search`: earlier conversations found by their TurnCards (BM25, every session).

The search itself is `runtime.session_search.search_sessions`; this tool is how the model asks
it and how the hits read: which conversation, which turn, what was asked and answered. A hit in
the current conversation says so, since `recall({turn})` reaches only this one.
"""

from __future__ import annotations

from typing import Any

from vak_desktop.context.planning.reading import MEMORY
from vak_desktop.context.request import ToolSpec
from vak_desktop.runtime.sessions.search import search_sessions
from vak_desktop.runtime.tools.registry import ToolContext, ToolFailure, ToolOutput

DEFAULT_HITS = 8
MAX_HITS = 30
NARRATION_CHARS = 300  # of each hit's answer shown; the rest is in that conversation

SESSION_SEARCH_SPEC = ToolSpec(
    name="session_search",
    description=(
        "Search every earlier conversation with the user (this one included) by what was "
        "asked and answered. Returns the best-matching turns, best first, with their "
        "conversation's title."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "words to look for"},
            "limit": {"type": "integer", "description": f"hits, at most {MAX_HITS}"},
        },
        "required": ["query"],
    },
)


class SessionSearchTool:
    spec = SESSION_SEARCH_SPEC
    always_loaded = True
    serves = (MEMORY,)
    pure = True

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ToolFailure("session_search needs `query`: the words to look for")
        limit = arguments.get("limit", DEFAULT_HITS)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ToolFailure(f"`limit` must be a positive whole number, got {limit!r}")
        hits = search_sessions(context.ledger, query, limit=min(limit, MAX_HITS))
        if not hits:
            return ToolOutput(f"no earlier turn matches {query.strip()!r}")
        lines = [f"{len(hits)} turns match {query.strip()!r}, best first:"]
        for n, hit in enumerate(hits, start=1):
            where = "this conversation" if hit.session == context.session else "conversation"
            title = hit.title or "untitled"
            flags = ", archived" if hit.archived else ""
            answer = hit.narration
            if len(answer) > NARRATION_CHARS:
                answer = f"{answer[:NARRATION_CHARS]} […{len(answer) - NARRATION_CHARS:,} more]"
            lines.append(
                f"{n}. {where} {title!r} ({hit.session[:8]}{flags}), score {hit.score:.2f}\n"
                f"   asked: {hit.asked}\n   answered: {answer or '(no prose: see its card)'}"
            )
        return ToolOutput("\n".join(lines))
