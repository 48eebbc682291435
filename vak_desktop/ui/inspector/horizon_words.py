"""What the window says about a horizon: undecided or measured, evidence above it, a full gauge.

Why its own module (issue #25 item 3: a probe that decided nothing was trusted): three things
the Probe panel and the status bar must never get wrong, read from ledger values only (no Qt,
no I/O), so they are checked on their own:

- `probe_state`: "measured", "undecided" (the probe confirmed no size: the horizon is the one
  the model had, or its declared window at low confidence), "paused", "stopped early", or
  "declared" (never probed);
- `followed_above`: the steps of this chat that called a tool in a request larger than the
  stored horizon — the model followed there, so the Probe panel never says "nothing
  contradicted it" after one;
- `over_horizon`: why a gauge shows more than 100 % (the request was planned before a probe
  lowered the horizon; the prefix alone is larger; the provider counted more than planned).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vak_desktop.context.capacity.feedback import INSTRUCTION_FOLLOWED
from vak_desktop.context.capacity.probe import is_probed
from vak_desktop.context.payloads import Activity, AssistantStep, CapacityProfile, Receipt
from vak_desktop.ledger import Entry

MEASURED, UNDECIDED, PAUSED, STOPPED, DECLARED = (
    "measured",
    "undecided",
    "paused",
    "stopped early",
    "declared",
)


def probe_state(profile: CapacityProfile, detail: dict[str, object] | None = None) -> str:
    """How the profile's horizon was come by, in one word the window shows."""
    if not is_probed(profile):
        return DECLARED
    provenance = profile.provenance
    if provenance.get("undecided") or provenance.get("outcome") == "undecided":
        return UNDECIDED
    stopped = provenance.get("stopped") or (detail or {}).get("stopped")
    if isinstance(stopped, dict) and stopped.get("reason") == "paused":
        return PAUSED
    if provenance.get("outcome") == "timed_out":
        return STOPPED
    return MEASURED


@dataclass(frozen=True)
class Above:
    """A step that called a tool in a request over the stored horizon."""

    when: str
    tokens: int
    horizon: int

    def words(self) -> str:
        return (
            f"the model called a tool in a {self.tokens:,}-token request, above the "
            f"{self.horizon:,}-token horizon: the profile under-measures it"
        )


def followed_above(chain: Sequence[Entry], model: str, since: str, horizon: int) -> list[Above]:
    """Every step of `model` after `since` that called a tool in a request the provider
    counted over `horizon` tokens, and every `instruction_followed` record of one."""
    found: list[Above] = []
    step: AssistantStep | None = None  # the step a Receipt that follows it is the receipt of
    for entry in chain:
        payload = entry.payload
        if isinstance(payload, AssistantStep):
            step = payload
        elif isinstance(payload, Receipt):
            tokens = payload.usage.prompt_tokens()
            called = step is not None and bool(step.tool_calls)
            if entry.created_at > since and payload.model == model and called and tokens > horizon:
                found.append(Above(entry.created_at, tokens, horizon))
            step = None
        elif (
            isinstance(payload, Activity)
            and payload.type == INSTRUCTION_FOLLOWED
            and entry.created_at > since
            and payload.detail.get("model") == model
        ):
            counted = payload.detail.get("request_tokens")
            size = counted if isinstance(counted, int) else 0
            if size > horizon and all(a.tokens != size for a in found):
                found.append(Above(entry.created_at, size, horizon))
    return found


def over_horizon(
    request_tokens: int, horizon: int, planned_horizon: int, prefix_tokens: int
) -> tuple[str, str]:
    """(short, whole) reasons a request is over the horizon the gauge shows; ("", "") when
    it is not over."""
    if horizon <= 0 or request_tokens <= horizon:
        return "", ""
    if planned_horizon > horizon:
        return (
            "planned before the horizon fell",
            f"this request was planned against a {planned_horizon:,}-token horizon; the "
            f"profile since says {horizon:,}, and the next request is planned to it",
        )
    if prefix_tokens > horizon:
        return (
            "the prefix alone is larger",
            f"the system text and tool schemas alone take {prefix_tokens:,} tokens, more than "
            f"the {horizon:,}-token horizon: no history fits, every request is over it",
        )
    return (
        "counted above the plan",
        f"the provider counted {request_tokens:,} tokens where the plan estimated at most "
        f"{horizon:,}: the tokens-per-character ratio learns from this receipt",
    )
