"""Reset-with-handoff: the rescue when even the smallest prefix plus the new turn cannot fit.

A packet is a cache, never a boundary; the one true boundary is a `Reset` entry (spec §4). It
is written when the plan for the turn about to start has no budget left at all for the earlier
turns — the prefix and the current turn alone fill the model's horizon — so that the request
carries a short handoff instead of a packet it cannot afford. The handoff is deterministic
(no model call: the turn must not wait on one): how many turns lie behind it, the last few
asks from their cards, and how to `recall` any of them, which still reaches every turn behind
the reset. The Reset is written *before* the turn's directive, so the turn itself is in front of
it, and an Activity says why, so the cut is never silent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence

from vak_desktop.context.payloads import Activity, CapacityProfile, Directive, Reset
from vak_desktop.context.planning.candidates import candidates
from vak_desktop.context.planning.planner import Fidelity, Plan
from vak_desktop.context.planning.turn_cards import card_of, render_card, turn_numbers
from vak_desktop.context.planning.turns import Turn, TurnIndex, build_turn_index
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Ledger
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.capacity.service import CapacityService
from vak_desktop.runtime.lexicons import lexicons
from vak_desktop.runtime.turn.projection import Projection, plan_turn, tail_context_now

RECALL = "recall"
RESET_WRITTEN = "reset_written"  # Activity: why the session was reset with a handoff
HANDOFF_ASKS = 3  # the newest asks the handoff repeats


def handoff_text(
    turns: Sequence[Turn],
    ratio: float,
    directive: str = "",
    present: Collection[str] | None = None,
) -> str:
    """The deterministic handoff over `turns` (the live turns going behind the reset): the
    card of the turn a refer-back directive points at (its best BM25 match), the newest asks,
    and how to recall any of them. `present`: the tools the request carries (None: any); a
    past call of any other is told in words (`turn_cards.render_card`)."""
    span = turn_numbers(turns)
    asks = [f"turn {t.number}: {card_of(t, ratio).asked}" for t in turns[-HANDOFF_ASKS:]]
    first = turns[0].number
    parts = [
        f"Turns {span} are behind a reset: this model's context cannot hold them. "
        f"The latest were — {'; '.join(asks)}."
    ]
    ranked = candidates(turns, ratio, directive, lexicons())
    if ranked.pinned is not None:
        turn, card = ranked.live[ranked.pinned], ranked.cards[ranked.pinned]
        shown = render_card(card, turn.number, present)
        parts.append(f"The earlier turn closest to the request:\n{shown}")
    parts.append(f'recall({{"turn": {first}}}) returns turn {first} whole (any turn number works).')
    return "\n".join(parts)


def needs_reset(plan: Plan) -> bool:
    """No budget is left for earlier turns, not even their bare packet fits in it, or the
    newest partial batch, carried as cards, would take the request past the horizon (past the
    budget by more than the output reserve it holds back)."""
    live = [t for t in plan.turns if t.fidelity is not Fidelity.BEHIND_RESET]
    if not live:
        return False
    if plan.budget.available == 0:
        return True
    if not plan.partial_batch:
        return plan.over_budget > 0
    return plan.over_budget > plan.budget.output_reserve


def check_reset(
    ledger: Ledger,
    session: str,
    binding: ModelBinding,
    text: str,
    *,
    system: str,
    tools: Sequence[ToolSpec],
    capacity: CapacityService,
    images: tuple[str, ...] = (),
) -> tuple[Reset | None, Projection | None]:
    """Write a Reset with its handoff when the turn about to ask `text` has no budget left for
    any earlier turn (None when the plan fits, or nothing lies in front of a reset), and the plan
    it made of the turn when that plan stands: the turn's own plan, so the turn does not plan
    again (#22 item 6: the plan is computed once per request). None for the plan when a Reset
    was written (the turn plans after it) or nothing was planned."""
    chain = ledger.chain_to_root(session)
    profile = capacity.profile_for(binding, chain, utc_now())
    reset, projection = _reset_check(
        build_turn_index(chain), profile, text, system=system, tools=tools, images=images
    )
    if reset is None:
        return None, projection
    ledger.append(session, Activity(type=RESET_WRITTEN, message=reset.reason))
    ledger.append(session, reset)
    return reset, None


def planned_reset(
    index: TurnIndex,
    profile: CapacityProfile,
    text: str,
    *,
    system: str,
    tools: Sequence[ToolSpec],
) -> Reset | None:
    """The Reset a turn asking `text` would write first (nothing is written here): None when
    its plan leaves budget for the earlier turns, or none lies in front of a reset."""
    return _reset_check(index, profile, text, system=system, tools=tools)[0]


def _reset_check(
    index: TurnIndex,
    profile: CapacityProfile,
    text: str,
    *,
    system: str,
    tools: Sequence[ToolSpec],
    images: tuple[str, ...] = (),
    turn_id: str = "next",
) -> tuple[Reset | None, Projection | None]:
    """The Reset a turn asking `text` would write first, or the plan of that turn when it
    needs none (None when no earlier turn is live: nothing was planned)."""
    live = [t for t in index.turns if not t.behind_reset]
    if not live:
        return None, None
    upcoming = Turn(turn_id, len(index.turns), Directive(text=text, images=images), ())
    ahead = TurnIndex((*index.turns, upcoming), index.packets, index.reset)
    projection = plan_turn(
        ahead, profile, system=system, tools=tools, tail_context=tail_context_now(), pending=True
    )
    budget = projection.plan.budget
    if not needs_reset(projection.plan):
        return None, projection
    spent = budget.prefix_tokens + budget.tail_tokens + budget.current_turn_reserve
    reason = (
        f"the prefix ({budget.prefix_tokens:,} tokens), the tail and the new turn "
        f"({spent - budget.prefix_tokens:,}) with the output reserve "
        f"({budget.output_reserve:,}) fill the horizon of {budget.horizon:,} tokens: "
        f"{_go_behind(live)} a reset with a handoff, still recallable"
    )
    present = {t.name for t in tools} | {RECALL}  # recall: the handoff's own instruction
    return Reset(handoff=handoff_text(live, projection.ratio, text, present), reason=reason), None


def _go_behind(turns: list[Turn]) -> str:
    """ "turn 4 goes behind" or "turns 1–3 go behind": the count and the verb agree."""
    if len(turns) == 1:
        return f"turn {turn_numbers(turns)} goes behind"
    return f"turns {turn_numbers(turns)} go behind"


def index_ahead(
    index: TurnIndex,
    profile: CapacityProfile,
    text: str,
    *,
    system: str,
    tools: Sequence[ToolSpec],
    turn_id: str,
) -> tuple[TurnIndex, Reset | None]:
    """The index a turn asking `text` will be planned from, before anything is written: the
    Reset it would write first (every earlier turn behind it), then the turn itself as the last
    one (`turn_id` stands for its directive's id). Returns that Reset too, if there is one."""
    index, reset, _ = plan_ahead(index, profile, text, system=system, tools=tools, turn_id=turn_id)
    return index, reset


def plan_ahead(
    index: TurnIndex,
    profile: CapacityProfile,
    text: str,
    *,
    system: str,
    tools: Sequence[ToolSpec],
    turn_id: str,
) -> tuple[TurnIndex, Reset | None, Projection | None]:
    """`index_ahead`, and the plan of the turn when the reset check made it (no Reset), so a
    preview plans once."""
    reset, projection = _reset_check(
        index, profile, text, system=system, tools=tools, turn_id=turn_id
    )
    if reset is not None:
        turns = tuple(dataclasses.replace(t, behind_reset=True) for t in index.turns)
        index = TurnIndex(turns, index.packets, reset, reset_before=len(turns))
    pending = Turn(turn_id, len(index.turns), Directive(text=text), ())
    ahead = TurnIndex(
        (*index.turns, pending), index.packets, index.reset, reset_before=index.reset_before
    )
    return ahead, reset, projection


PLAN_OVER_BUDGET = "plan_over_budget"  # Activity: the plan carries more than its budget


def over_budget_activity(plan: Plan) -> Activity | None:
    """The Activity that says why a plan goes past its budget (None when it does not): the
    newest turns that are not yet a whole batch of the packet travel as cards, or the prefix
    and the turn alone exceed the horizon (a model that follows nothing: horizon 0)."""
    budget = plan.budget
    if plan.over_budget <= 0 and budget.available == 0:  # nothing earlier, and still too big
        fixed = budget.prefix_tokens + budget.tail_tokens + budget.current_turn_reserve
        return Activity(
            type=PLAN_OVER_BUDGET,
            message=(
                f"the prefix and this turn alone ({fixed:,} tokens, with an output reserve of "
                f"{budget.output_reserve:,}) exceed the measured horizon of {budget.horizon:,} "
                "tokens: the request is sent as it is; the model may not follow it — re-probe "
                "it or bind a larger model"
            ),
            detail={"over_budget": 0, "horizon": budget.horizon},
        )
    if plan.over_budget <= 0:
        return None
    why = (
        "the newest turns are not yet a whole batch of the packet, so they travel as cards"
        if plan.partial_batch
        else "the packet and handoff alone do not fit"
    )
    return Activity(
        type=PLAN_OVER_BUDGET,
        message=(
            f"the history goes {plan.over_budget:,} tokens past its budget of "
            f"{budget.available:,} (horizon {budget.horizon:,}): {why}"
        ),
        detail={"over_budget": plan.over_budget, "horizon": budget.horizon},
    )
