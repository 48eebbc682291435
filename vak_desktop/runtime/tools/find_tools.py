"""`find_tools`: the full schemas of catalogue tools that match a need, loaded for the turn.

The catalogue in the system prompt names every admitted tool that is not always loaded, one
line each and no schemas. When the model needs one of them it asks here; the answer carries the
matching tools' full schemas, and the surface loads the same tools for the rest of the turn
(`surface.ToolSurface.after` runs `promoted_by` on the same arguments over the same catalogue,
so what the model was told and what the next request carries cannot disagree).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from vak_desktop.context.request import ToolSpec
from vak_desktop.runtime.tools.registry import ToolContext, ToolFailure, ToolOutput


def _set(words: str) -> frozenset[str]:
    """A set of words written as one space-separated string."""
    return frozenset(words.split())


FIND_TOOLS = "find_tools"
MAX_MATCHES = 5  # schemas per answer: enough for a need, few enough for a small model
_TOKEN = re.compile(r"[a-z0-9]+")
_STOP = _set(
    "a an and the to for of or in on with by from at is it i me my we our need want "
    "tool tools use using something that this can do"
)

FIND_TOOLS_SPEC = ToolSpec(
    name=FIND_TOOLS,
    description=(
        'Load tools from the "More tools" list. Give what you need in a few words, or '
        "tool names separated by commas; the matching tools' full schemas come back and "
        "you can call them from your next step on."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "a need in a few words, or tool names"}
        },
        "required": ["query"],
    },
)


def _stem(word: str) -> str:
    """Plural and verb endings off, so "charts" finds a chart tool and "plotting" a plot one."""
    for suffix in ("ing", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _terms(text: str) -> set[str]:
    return {_stem(t) for t in _TOKEN.findall(text.lower()) if t not in _STOP}


def match_tools(query: str, catalogue: Sequence[ToolSpec]) -> tuple[ToolSpec, ...]:
    """The catalogue tools `query` asks for, best first: tools it names exactly (in the order
    named), else tools scored by its words in their names (×3) and descriptions (×1)."""
    by_name = {spec.name.lower(): spec for spec in catalogue}
    asked = dict.fromkeys(re.split(r"[\s,]+", query.strip().lower()))  # ordered, no repeats
    named = [by_name[name] for name in asked if name in by_name]
    if named:
        return tuple(named[:MAX_MATCHES])
    wanted = _terms(query)
    scored = []
    for spec in catalogue:
        name_terms = _terms(spec.name.replace("_", " "))
        text_terms = _terms(spec.description)
        score = sum(3 * (t in name_terms) + (t in text_terms) for t in wanted)
        if score:
            scored.append((-score, spec.name, spec))
    return tuple(spec for _, _, spec in sorted(scored, key=lambda s: s[:2])[:MAX_MATCHES])


def promoted_by(
    arguments: Mapping[str, Any], catalogue: Sequence[ToolSpec]
) -> tuple[ToolSpec, ...]:
    """The tools a `find_tools` call with these arguments loads (none for bad arguments)."""
    query = arguments.get("query")
    if not isinstance(query, str) or not query.strip():
        return ()
    return match_tools(query, catalogue)


class FindToolsTool:
    """The model's way into the catalogue (spec §5). Always loaded."""

    spec = FIND_TOOLS_SPEC
    always_loaded = True
    pure = True  # the same query finds the same tools

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ToolFailure("find_tools needs `query`: what you need in a few words")
        if not context.catalogue:
            raise ToolFailure("there are no more tools to load: every tool is loaded already")
        found = promoted_by(arguments, context.catalogue)
        if not found:
            names = ", ".join(sorted(spec.name for spec in context.catalogue))
            return ToolOutput(
                f"no tool matches {query.strip()!r}. The tools you can load: {names}. "
                "Ask again with other words or with one of these names."
            )
        schemas = [
            {"name": s.name, "description": s.description, "parameters": s.parameters}
            for s in found
        ]
        return ToolOutput(
            json.dumps(
                {"loaded": [s.name for s in found], "tools": schemas},
                ensure_ascii=False,
                indent=1,
            )
        )
