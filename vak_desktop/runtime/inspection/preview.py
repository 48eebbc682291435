"""Looking at the next request without sending it: what `vak plan`, `vak request` and the
window's inspector show. The same planner and assembler as a real turn, over the same ledger."""

from __future__ import annotations

from dataclasses import dataclass

from vak_desktop.context.capacity.profile import choose_num_ctx, estimate_tokens
from vak_desktop.context.payloads import CapacityProfile, Reset
from vak_desktop.context.planning.assemble import AssembledRequest, assemble
from vak_desktop.context.planning.planner import Plan
from vak_desktop.context.planning.reading import Reading
from vak_desktop.context.planning.turns import TurnIndex, build_turn_index
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.tools import ToolRegistry
from vak_desktop.runtime.tools.surface import fitted_surface
from vak_desktop.runtime.turn.projection import plan_turn, tail_context_now
from vak_desktop.runtime.turn.reset import plan_ahead
from vak_desktop.runtime.turn.runner import DEFAULT_SYSTEM_PROMPT

PENDING_TURN = "pending"  # the id of the not-yet-written turn a preview plans for


@dataclass(frozen=True)
class Preview:
    plan: Plan
    index: TurnIndex  # what was planned from: the session's turns, the pending one last
    request: AssembledRequest
    request_tokens: int
    num_ctx: int
    reading: Reading | None = None  # the directive's reading, when the surface was built here
    reset: Reset | None = None  # the Reset the turn would write before it (`turn/reset.py`)


def preview_next(
    ledger: Ledger,
    session: str,
    profile: CapacityProfile,
    *,
    directive: str,
    system: str,
    tools: ToolRegistry | tuple[ToolSpec, ...],
) -> Preview:
    """Plan and assemble the session's next request as if `directive` were sent now. Given the
    runtime's registry, the request carries what a turn would: the surface fitted to the
    profile (the stable system text with its catalogue and the tools the directive's reading
    loads, or their compact form); given specs, exactly those."""
    reading = None
    if isinstance(tools, ToolRegistry):
        own = system if system != DEFAULT_SYSTEM_PROMPT else ""  # as the runner decides
        surface = fitted_surface(tools, system, directive, profile, own_prompt=own)
        notes = tools.session_notes(ledger, session)  # the workspace folders, as a turn has
        system = "\n\n".join((surface.system, *notes))
        tools, reading = surface.tools, surface.reading
    # a turn that finds no room for any earlier turn writes a Reset first: shown as it will be
    index, reset, planned = plan_ahead(
        build_turn_index(ledger.chain_to_root(session)),
        profile,
        directive,
        system=system,
        tools=tools,
        turn_id=PENDING_TURN,
    )
    pending = index.turns[-1]
    projection = planned or plan_turn(  # planned once: the reset check's plan, if it stands
        index, profile, system=system, tools=tools, tail_context=tail_context_now(), pending=True
    )
    request = assemble(
        index,
        projection.plan,
        pending,
        system=system,
        tools=tools,
        tail=projection.tail,
        ratio=projection.ratio,
    )
    chars = sum(m.chars() for m in request.messages) + sum(t.chars() for t in tools)
    tokens = estimate_tokens(chars, projection.ratio)
    needed = tokens + profile.output_reserve
    num_ctx = profile.num_ctx  # a measured profile's one window, unless this request outgrows it
    if needed > num_ctx:
        num_ctx = choose_num_ctx(needed, profile.declared_window, num_ctx)
    return Preview(projection.plan, index, request, tokens, num_ctx, reading, reset)
