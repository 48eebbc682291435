"""The `emit_<type>_card` tools: one per card definition, each taking that card's payload.

A call is validated against the card's JSON Schema (every problem listed, so the model can
repair it in one go), passes the drift gate, and is written as a Presentation entry; the model
gets the short ack `{"presentation": "<id>", "ok": true}`, never its payload echoed back (the
payload is already in its own tool call for the rest of the turn). A card identical to one
already written in the turn is a no-op ack (`"repeat": true`).
"""

from __future__ import annotations

from typing import Any

from vak_desktop.context.payloads import AssistantStep
from vak_desktop.context.presentations.digest import payload_digest
from vak_desktop.context.presentations.library import CardDefinition, CardLibrary
from vak_desktop.context.request import ToolSpec
from vak_desktop.runtime.presentations import (
    Observes,
    ack,
    card_library,
    current_turn,
    gate,
    present,
    written,
)
from vak_desktop.runtime.tools.registry import ToolContext, ToolFailure, ToolOutput, ToolRegistry


class CardTool:
    """`emit_<type>_card` for one card definition."""

    observes_now = False
    always_loaded = False

    def __init__(self, definition: CardDefinition, library: CardLibrary, observes: Observes):
        self.definition = definition
        self.library = library
        self.observes = observes
        self.serves = ("presentation",)
        self.spec = ToolSpec(
            name=definition.tool_name,
            description=(
                f"Show the user {_article(definition.type)} {definition.type} card: "
                f"{definition.description} The card is "
                "the answer as the user sees it; call it once, with the whole payload."
            ),
            parameters=dict(definition.schema),
        )

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        problems = self.definition.errors(arguments)
        if problems:
            raise ToolFailure(
                f"the {self.definition.type} card is not valid, nothing was shown. Fix these "
                "and call again:\n" + "\n".join(f"- {p}" for p in problems)
            )
        chain = context.ledger.chain_to_root(context.session)
        turn = current_turn(chain)
        already = written(turn).get(payload_digest(arguments))
        if already is not None:
            return ToolOutput(ack(already, repeat=True))
        stop = gate(turn, self.definition, arguments, self.observes)
        if stop:
            raise ToolFailure(stop)
        card = present(
            context.ledger,
            context.session,
            turn,
            self.library,
            self.definition,
            arguments,
            {"tool_call": _call_id(turn.entries, self.spec.name, arguments)},
        )
        return ToolOutput(ack(card.id, repeat=not card.new))


def _call_id(entries: Any, name: str, arguments: dict[str, Any]) -> str:
    """The id of the call being run: the latest step's call of this tool with these arguments
    (two identical calls in one step are one card, so the first id is the right one)."""
    for entry in reversed(entries):
        step = entry.payload
        if isinstance(step, AssistantStep):
            for call in step.tool_calls:
                if call.name == name and dict(call.arguments) == arguments:
                    return call.id
            break
    return ""


def card_tools(library: CardLibrary, observes: Observes) -> list[CardTool]:
    """One emit tool per card type, in the library's type order."""
    return [CardTool(library.cards[t], library, observes) for t in library.types()]


def add_card_tools(registry: ToolRegistry, library: CardLibrary | None = None) -> ToolRegistry:
    """Add every card's emit tool to `registry`; the gate asks the registry which tools
    observe the world now."""
    for tool in card_tools(library or card_library(), registry.observes_now):
        registry.add(tool)
    return registry


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"
