"""What a turn records when a request contradicts the model's profile, so feedback can fold it.

Why it exists: the turn loop (`turn.py`) decides *when* to recover — an over-length refusal or
a silent truncation re-plans and retries the step once, a failed explicit instruction tightens
the horizon — and this module says *what* is written: one Activity per event, carrying the
provider and model it is about and the sizes `context/capacity/feedback.py` folds into the profile
(`verified_window`, the provider's own count, the request's chars). A truncated answer the turn
throws away is kept here, in the Activity, verbatim: nothing that streamed is lost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from vak_desktop.context.capacity.feedback import (
    CONTEXT_OVERFLOW,
    INSTRUCTION_FAILED,
    INSTRUCTION_MARGIN,
    SILENT_TRUNCATION,
    overflow_window,
    silently_truncated,
)
from vak_desktop.context.capacity.profile import estimate_tokens
from vak_desktop.context.codec import to_json_value
from vak_desktop.context.payloads import Activity, CapacityProfile, ToolCall
from vak_desktop.context.planning.instructions import required_card, unmet_tool_instruction
from vak_desktop.context.presentations.library import tool_name
from vak_desktop.context.request import ChatRequest
from vak_desktop.providers.base import Done
from vak_desktop.providers.errors import ContextOverflow
from vak_desktop.runtime.lexicons import lexicons
from vak_desktop.runtime.presentations import card_library

# A classifier of explicit-instruction failures: (directive, tools offered, tools called) →
# the instruction that was not followed, or None. More kinds (a stop-policy block) plug in here
# as the runtime learns to detect them.
InstructionCheck = Callable[[str, Sequence[str], Sequence[str]], str | None]


def required_tool_check(
    directive: str, offered: Sequence[str], called: Sequence[str]
) -> str | None:
    """The directive told the model to call a tool it was offered, and the turn never did."""
    tool = unmet_tool_instruction(directive, offered, called, lexicons())
    return f"call the `{tool}` tool" if tool else None


def required_card_check(
    directive: str, offered: Sequence[str], called: Sequence[str]
) -> str | None:
    """The directive asked for a card type whose emit tool was offered, and the turn wrote no
    card of that type (by tool call or by fence: the runner lists both in `called`)."""
    kind = required_card(directive, card_library().types(), lexicons())
    if kind is None or tool_name(kind) not in offered or tool_name(kind) in called:
        return None
    return f"emit a {kind} card (`{tool_name(kind)}`)"


DEFAULT_INSTRUCTION_CHECKS: tuple[InstructionCheck, ...] = (
    required_tool_check,
    required_card_check,
)


def overflow_activity(
    exc: ContextOverflow, request: ChatRequest, profile: CapacityProfile, ratio: float, step: int
) -> Activity:
    window = overflow_window(exc.requested, exc.limit, request.num_ctx)
    chars = request.chars()
    return Activity(
        type=CONTEXT_OVERFLOW,
        message=(
            f"the provider refused a {exc.requested or '?'}-token request (limit "
            f"{exc.limit or '?'}); verified window set to {window:,}, re-planning once"
        ),
        detail={
            "provider": profile.provider,
            "model": profile.model,
            "step": step,
            "requested": exc.requested,
            "limit": exc.limit,
            "num_ctx": request.num_ctx,
            "chars": chars,
            "prompt_tokens": exc.requested or 0,
            "estimated_tokens": estimate_tokens(chars, ratio),
            "verified_window": window,
            "error": str(exc),
        },
    )


def truncated(done: Done, request: ChatRequest, ratio: float) -> bool:
    return silently_truncated(done.usage.prompt_tokens(), request.chars(), ratio)


def truncation_activity(
    done: Done,
    request: ChatRequest,
    profile: CapacityProfile,
    ratio: float,
    step: int,
    *,
    text: str,
    thinking: str,
    calls: Sequence[ToolCall],
) -> Activity:
    counted = done.usage.prompt_tokens()
    chars = request.chars()
    estimate = estimate_tokens(chars, ratio)
    return Activity(
        type=SILENT_TRUNCATION,
        message=(
            f"the provider counted {counted:,} prompt tokens for a request we estimate at "
            f"{estimate:,}: it cut the prompt without saying so; re-planning once"
        ),
        detail={
            "provider": profile.provider,
            "model": profile.model,
            "step": step,
            "num_ctx": request.num_ctx,
            "chars": chars,
            "counted_tokens": counted,
            "estimated_tokens": estimate,
            "verified_window": counted,
            "usage": to_json_value(done.usage),
            "timings": to_json_value(done.timings),
            "discarded": {
                "text": text,
                "thinking": thinking,
                "tool_calls": to_json_value(list(calls)),
            },
        },
    )


def instruction_activity(
    instruction: str, request_tokens: int, profile: CapacityProfile, now: str
) -> tuple[Activity, bool]:
    """The record of a failed explicit instruction, and whether it tightens the horizon (the
    request was above INSTRUCTION_MARGIN × horizon)."""
    horizon = profile.instruction_horizon.tokens
    tightens = request_tokens > INSTRUCTION_MARGIN * horizon
    verdict = "lowering the horizon to it" if tightens else "below 0.8 × horizon: not a size signal"
    return (
        Activity(
            type=INSTRUCTION_FAILED,
            message=f"the model did not {instruction} in a {request_tokens:,}-token request; "
            f"{verdict}",
            detail={
                "provider": profile.provider,
                "model": profile.model,
                "instruction": instruction,
                "request_tokens": request_tokens,
                "horizon": horizon,
                "tightens": tightens,
                "at": now,
            },
        ),
        tightens,
    )
