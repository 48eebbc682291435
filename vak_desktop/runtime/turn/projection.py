"""Projecting the ledger onto one request: the plan for the turn, then each step's request.

A turn is planned once, at its first step, against the bound model's profile: which earlier
turns go whole, as cards or into the packet, and the tail block. If the plan wants a packet no
stored one covers exactly, the request carries the deterministic packet (no model call); the
summary is a background job for later requests. Every later step of the turn reuses that plan and tail, so request k+1 is request k plus
the new steps: the prefix cache hits and nothing already sent changes shape.

A turn that asks for no tool (no asked-for action, no explicit "call the X tool") is planned
against the larger of the profile's two confirmed horizons, the tool one and the
answer-from-memory one (`profile.for_turn`, issue #22 item 5); every other turn against the
tool horizon.

`TurnIndexes` keeps each session's latest TurnIndex for the runner, so each request advances it
over the entries written since (and carries its card index on) instead of rebuilding it.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from vak_desktop.context.capacity.profile import for_turn, is_small, tokens_per_char
from vak_desktop.context.payloads import CapacityProfile
from vak_desktop.context.planning.actions import requested_tools
from vak_desktop.context.planning.assemble import TailContext, assemble, plan_request
from vak_desktop.context.planning.instructions import unmet_tool_instruction
from vak_desktop.context.planning.planner import Plan
from vak_desktop.context.planning.reading import reading_for
from vak_desktop.context.planning.turns import (
    EMPTY_INDEX,
    EntryLike,
    TurnIndex,
    advance_turn_index,
    build_turn_index,
)
from vak_desktop.context.request import ChatRequest, ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.capacity.service import CapacityService
from vak_desktop.runtime.lexicons import lexicons


@dataclass(frozen=True)
class Projection:
    """What a turn is planned with: the profile, the plan and the tail, fixed for the turn."""

    profile: CapacityProfile
    plan: Plan
    tail: str

    @property
    def ratio(self) -> float:
        return tokens_per_char(self.profile)


class TurnIndexes:
    """The latest TurnIndex of the sessions a runner worked on lately (one ledger). A chain that
    does not continue a session's index — another branch after an edit — is indexed anew by
    `advance_turn_index` itself, and the card index is keyed inside it, so a stale one is never
    used; the least recently asked session is dropped past `keep`."""

    def __init__(self, keep: int = 8) -> None:
        self.keep = keep
        self._latest: OrderedDict[str, TurnIndex] = OrderedDict()

    def index_of(self, session: str, chain: Sequence[EntryLike]) -> TurnIndex:
        index = advance_turn_index(self._latest.pop(session, EMPTY_INDEX), chain)
        self._latest[session] = index
        while len(self._latest) > self.keep:
            self._latest.popitem(last=False)
        return index


def _index_of(indexes: TurnIndexes | None, session: str, chain: Sequence[EntryLike]) -> TurnIndex:
    return indexes.index_of(session, chain) if indexes is not None else build_turn_index(chain)


def tail_context_now() -> TailContext:
    """The tail's time facts, read from the clock here so that the engine never reads it; to
    the minute, so a typing warm-up's tail is the turn's within the same minute (read to the
    second, the two always parted at the clock: 229 of 1,471 tokens prefilled again on the
    real 0.5B after a warm-up of the same draft)."""
    utc = datetime.now(UTC)
    local = utc.astimezone()
    offset = local.strftime("%z")
    return TailContext(
        utc=utc.strftime("%Y-%m-%dT%H:%MZ"),
        local=local.strftime("%Y-%m-%d %H:%M (%A)"),
        timezone=f"{local.tzname()} (UTC{offset[:3]}:{offset[3:]})",
    )


def plan_turn(
    index: TurnIndex,
    profile: CapacityProfile,
    *,
    system: str,
    tools: Sequence[ToolSpec],
    tail_context: TailContext,
    pending: bool,
) -> Projection:
    """Plan the next request of a session; `pending` when its last turn is the one running."""
    current = index.turns[-1] if pending and index.turns else None
    reading = reading_for(current.directive.text, lexicons()) if current else None
    tool_free = current is not None and not asks_for_a_tool(current.directive.text, tools)
    plan, tail = plan_request(
        index,
        for_turn(profile, tool_free=tool_free),
        current,
        system=system,
        tools=tools,
        tail_context=tail_context,
        lexicons=lexicons(),
        reading_terms=reading.terms if reading else (),
        reading=reading,
        small=is_small(profile),  # by the tool horizon, whichever horizon plans the turn
    )
    return Projection(profile, plan, tail)


FILE_TOOLS = ("grep", "glob", "read")


def asks_for_a_tool(directive: str, tools: Sequence[ToolSpec]) -> bool:
    """Whether a directive needs a tool: an asked-for action on the user's things, or an
    explicit instruction to call one of `tools`."""
    offered = [spec.name for spec in tools]
    # the file tools too, loaded or not: "search my files …" needs one even from the catalogue
    offered += [name for name in FILE_TOOLS if name not in offered]
    if requested_tools(directive, offered, lexicons()):
        return True
    return unmet_tool_instruction(directive, offered, (), lexicons()) is not None


def project_turn(
    ledger: Ledger,
    session: str,
    binding: ModelBinding,
    *,
    system: str,
    tools: Sequence[ToolSpec],
    capacity: CapacityService,
    indexes: TurnIndexes | None = None,
) -> Projection:
    """Plan the running turn. It never waits on a model-written summary: a packet no stored
    one covers exactly goes as the deterministic packet built from the covered turns' cards,
    and the summary is written later, in the background, while the model is idle
    (`compaction.compact_session` through the runner's look-ahead). The profile is read from
    the ledger as it stands, so a re-plan after feedback (an over-length refusal) sees it."""
    chain = ledger.chain_to_root(session)
    index = _index_of(indexes, session, chain)
    profile = capacity.profile_for(binding, chain, utc_now())
    return plan_turn(
        index, profile, system=system, tools=tools, tail_context=tail_context_now(), pending=True
    )


def step_request(
    ledger: Ledger,
    session: str,
    binding: ModelBinding,
    projection: Projection,
    *,
    system: str,
    tools: Sequence[ToolSpec],
    keep_alive: str | int | None,
    think: bool | None,
    indexes: TurnIndexes | None = None,
) -> ChatRequest:
    """The request for the running turn's next step, under the turn's fixed plan and tail."""
    index = _index_of(indexes, session, ledger.chain_to_root(session))
    return request_from(
        index,
        session,
        binding,
        projection,
        system=system,
        tools=tools,
        keep_alive=keep_alive,
        think=think,
    )


def request_from(
    index: TurnIndex,
    session: str,
    binding: ModelBinding,
    projection: Projection,
    *,
    system: str,
    tools: Sequence[ToolSpec],
    keep_alive: str | int | None,
    think: bool | None,
) -> ChatRequest:
    """The request for the last turn of `index` (the running one, or one about to run)."""
    assembled = assemble(
        index,
        projection.plan,
        index.turns[-1],
        system=system,
        tools=tools,
        tail=projection.tail,
        ratio=projection.ratio,
    )
    request = ChatRequest(
        model=binding.model,
        messages=assembled.messages,
        tools=assembled.tools,
        keep_alive=keep_alive,
        think=think,
        # a max output on every turn request (num_predict / max_tokens): the reserve the plan
        # kept, so a model stuck repeating itself cannot fill the window
        max_tokens=projection.profile.output_reserve,
        session_key=session,
        cache_breakpoints=assembled.cache_breakpoints,
    )
    if "vision" not in binding.capabilities:  # a tool's images go only to a model that sees
        request = dataclasses.replace(
            request,
            messages=tuple(
                dataclasses.replace(m, images=()) if m.role == "tool" and m.images else m
                for m in request.messages
            ),
        )
    num_ctx = binding.num_ctx_for(request.chars(), projection.ratio)
    return dataclasses.replace(request, num_ctx=num_ctx)
