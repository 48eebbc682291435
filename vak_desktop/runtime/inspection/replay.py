"""The request a past step actually sent, rebuilt from the ledger without planning anything.

The first Receipt of a turn records the plan it followed (`Plan.to_json`) and the tail block;
every entry the assembler read is in the chain before that step. So the request is the same
`assemble` call the runtime made, over the chain as it stood when the step was sent, with the
recorded plan and tail — no planner runs. What cannot be read back is checked instead: the
tool list (not stored) against the receipt's `prefix_digest`, and the whole request against
the receipt's `request_chars` and `request_messages`, so the inspector can say whether the
rebuild is byte-for-byte what went out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vak_desktop.context.capacity.cache_watch import system_digest, tool_digests
from vak_desktop.context.capacity.profile import FALLBACK_TOKENS_PER_CHAR
from vak_desktop.context.payloads import AssistantStep, Directive, Receipt
from vak_desktop.context.planning.assemble import AssembledRequest, assemble
from vak_desktop.context.planning.planner import Budget, Fidelity, Plan, PlannedTurn
from vak_desktop.context.planning.topics import Topic
from vak_desktop.context.planning.turn_cards import leading_sentence
from vak_desktop.context.planning.turns import TurnIndex, build_turn_index
from vak_desktop.context.presentations.library import fence_guide
from vak_desktop.context.request import Message, ToolSpec
from vak_desktop.ledger import Entry, Ledger
from vak_desktop.runtime.presentations import card_library
from vak_desktop.runtime.tools import ToolRegistry
from vak_desktop.runtime.tools.surface import compact_surface, stable_system, tool_surface
from vak_desktop.runtime.turn.prefix_record import RecordedPrefix
from vak_desktop.runtime.turn.runner import DEFAULT_SYSTEM_PROMPT


class NotReplayable(LookupError):
    """The step has no receipt with a plan (it failed before one was written, or predates it)."""


@dataclass(frozen=True)
class SentRequest:
    """A past step's request as rebuilt, with the receipt it is checked against."""

    turn_id: str
    step: int
    request: AssembledRequest
    receipt: Receipt
    plan: Plan
    history_messages: int  # messages between the system prompt and the current turn

    @property
    def chars(self) -> int:
        return sum(m.chars() for m in self.request.messages) + sum(
            t.chars() for t in self.request.tools
        )

    @property
    def prefix_matches(self) -> bool:
        return self.request.prefix_digest == self.receipt.prefix_digest

    @property
    def matches(self) -> bool:
        """Same prefix, same size and message count as the receipt recorded."""
        return (
            self.prefix_matches
            and self.chars == self.receipt.request_chars
            and len(self.request.messages) == self.receipt.request_messages
        )


def plan_from_json(document: dict[str, Any], index: TurnIndex) -> Plan:
    """A Plan from its recorded JSON (`Plan.to_json`); the stored packet is looked up by id."""
    budget = document["budget"]
    packet_id = document.get("packet")
    packet = next((p for p in index.packets if p.entry_id == packet_id), None)
    packet_range = document.get("packet_range")
    return Plan(
        budget=Budget(
            horizon=int(budget["horizon"]),
            prefix_tokens=int(budget["prefix_tokens"]),
            tail_tokens=int(budget["tail_tokens"]),
            output_reserve=int(budget["output_reserve"]),
            current_turn_reserve=int(budget["current_turn_reserve"]),
        ),
        turns=tuple(
            PlannedTurn(
                turn_id=str(t["turn_id"]),
                index=int(t["index"]),
                fidelity=Fidelity(t["fidelity"]),
                tokens=int(t["tokens"]),
                value=float(t["value"]),
            )
            for t in document.get("turns", [])
        ),
        packet_range=(str(packet_range[0]), str(packet_range[1])) if packet_range else None,
        packet=packet,
        packet_tokens=int(document.get("packet_tokens", 0)),
        packet_detailed=bool(document.get("packet_detailed", False)),
        summary_tokens=0,
        framing_tokens=int(document.get("framing_tokens", 0)),
        history_tokens=int(document.get("history_tokens", 0)),
        packet_featured=tuple(str(i) for i in document.get("packet_featured", [])),
        packet_listed=tuple(str(i) for i in document.get("packet_listed", [])),
        packet_topics=tuple(
            Topic(int(t[0]), int(t[1]), str(t[2]), str(t[3]))
            for t in document.get("packet_topics", [])
        ),
        over_budget=int(document.get("over_budget", 0)),
    )


def recorded_plan(receipt: Receipt) -> bool:
    """Whether this receipt carries a plan (the first receipt of a turn, or of a re-plan)."""
    return "budget" in receipt.plan


def turn_receipts(chain: Sequence[Entry], turn_id: str) -> list[tuple[int, Receipt]]:
    """(chain position, receipt) of every receipt of the turn opened by `turn_id`."""
    start = next((i for i, e in enumerate(chain) if e.id == turn_id), None)
    if start is None:
        raise NotReplayable(f"turn {turn_id} is not on this branch")
    out = []
    for position in range(start + 1, len(chain)):
        payload = chain[position].payload
        if isinstance(payload, Directive):
            break
        if isinstance(payload, Receipt):
            out.append((position, payload))
    return out


def _sent_prefix(
    base: str, registry: ToolRegistry, receipt: Receipt, notes: Sequence[str] = ()
) -> tuple[str, tuple[ToolSpec, ...]]:
    """The system text and tools a step sent, from the runner's registry: the system text is
    whichever of the forms a turn can send has the receipt's system digest (the stable text with
    its catalogue of the tools not loaded at its first step; its compact form for a small or
    crowded model, with the session's own prompt or the short one; either followed by the tools'
    notes about the session (its workspace folders); the card-fence guide for a model without
    tools; the bare prompt), and each tool is the receipt's tool by name, in its order, as
    whichever form (full, or the compact first-sentence description) has the digest it recorded.
    Anything the registry no longer has shows as a mismatch against the receipt, never as a
    guess passed off as what was sent."""
    names = [d.split("=", 1)[0] for d in receipt.tool_digests]
    own = base if base != DEFAULT_SYSTEM_PROMPT else ""
    floor = tool_surface(registry, base, "")
    # the catalogue names the tools the turn did not start with: those loaded at its first
    # step are some leading run of the receipt's tools (find_tools appends the rest)
    stable = (
        *(stable_system(base, registry, names[:k]) for k in range(len(names), -1, -1)),
        compact_surface(floor, registry, own_prompt=own).system,
    )
    forms: tuple[str, ...] = (
        *(("\n\n".join((form, *notes)) for form in stable) if notes else ()),
        *stable,
        f"{base.rstrip()}\n\n{fence_guide(card_library())}",
        base,
    )
    system = next((f for f in forms if system_digest(f) == receipt.system_digest), forms[0])
    specs = {spec.name: spec for spec in registry.specs()}
    sent = []
    for recorded in receipt.tool_digests:
        spec = specs.get(recorded.split("=", 1)[0])
        if spec is None:
            continue
        short = dataclasses.replace(spec, description=leading_sentence(spec.description))
        sent.append(next((s for s in (spec, short) if tool_digests([s])[0] == recorded), spec))
    return system, tuple(sent)


def sent_request(
    ledger: Ledger,
    session: str,
    turn_id: str,
    step: int = 0,
    *,
    system: str,
    tools: ToolRegistry | Sequence[ToolSpec],
    chain: Sequence[Entry] | None = None,
) -> SentRequest:
    """Rebuild the request step `step` of the turn `turn_id` sent. `system` is the base prompt,
    used only when the directive does not record its own. `tools` is the runner's registry (the
    step's system text and tools are then read back through the receipt's digests) or the exact
    specs the step had."""
    chain = list(chain) if chain is not None else ledger.chain_to_root(session)
    receipts = turn_receipts(chain, turn_id)
    chosen = [(p, r) for p, r in receipts if r.step == step]
    if not chosen:
        raise NotReplayable(f"step {step} of turn {turn_id} has no receipt")
    position, receipt = chosen[-1]
    planned = [(p, r) for p, r in receipts if p <= position and recorded_plan(r)]
    if not planned:
        raise NotReplayable(f"turn {turn_id} recorded no plan")
    plan_receipt = planned[-1][1]
    # The request went out before this step's AssistantStep was written: cut the chain there.
    cut = position
    while cut > 0 and not isinstance(chain[cut].payload, AssistantStep):
        cut -= 1
    index = build_turn_index(chain[:cut])
    current = index.turns[-1]
    directive = current.directive
    system_prompt = directive.system or system
    if isinstance(tools, ToolRegistry):
        recorded = RecordedPrefix.of(chain).sent(receipt.system_digest, receipt.tool_digests)
        if recorded is not None:  # the prefix the step recorded: exact, whatever changed since
            system_prompt, tools = recorded
        else:  # a step from before the record: the forms its prefix may have had
            notes = tools.session_notes(ledger, session)
            system_prompt, tools = _sent_prefix(system_prompt, tools, receipt, notes)
    plan = plan_from_json(plan_receipt.plan, index)
    request = assemble(
        index,
        plan,
        current,
        system=system_prompt,
        tools=tools,
        tail=plan_receipt.tail,
        ratio=FALLBACK_TOKENS_PER_CHAR,  # only a card the ledger lacks would depend on it
    )
    if len(request.messages) != receipt.request_messages:  # sent before decision 0129?
        older = _tail_in_directive(request, plan_receipt.tail)
        request = older if len(older.messages) == receipt.request_messages else request
    history = len(request.messages) - 1 - _current_messages(request, plan_receipt.tail)
    return SentRequest(turn_id, step, request, receipt, plan, history)


def _tail_in_directive(request: AssembledRequest, tail: str) -> AssembledRequest:
    """`request` as a step sent it before decision 0129 made the tail a message of its own:
    the tail opened the directive's message, a blank line before the user's words. (A request
    of either form is otherwise the same, so the receipt's message count tells them apart.)"""
    messages = request.messages
    found = (i for i in range(len(messages) - 2, 0, -1) if messages[i] == Message("user", tail))
    at = next(found, None) if tail else None
    if at is None:
        return request
    directive = messages[at + 1]
    joined = dataclasses.replace(directive, content=f"{tail}\n\n{directive.content}")
    kept = (*messages[:at], joined, *messages[at + 2 :])
    breakpoints = tuple(b - 1 if b > at else b for b in request.cache_breakpoints)
    return dataclasses.replace(request, messages=kept, cache_breakpoints=breakpoints)


def _current_messages(request: AssembledRequest, tail: str) -> int:
    """How many trailing messages belong to the current turn (from its tail's message on, or
    from its directive's, which the tail opened before decision 0129)."""
    for back, message in enumerate(reversed(request.messages), start=1):
        if message.role == "user" and (not tail or message.content.startswith(tail)):
            return back
    return 0
