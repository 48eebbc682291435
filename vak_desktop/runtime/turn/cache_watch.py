"""The turn's cache watch: each receipt checked against the request before it.

One `CacheWatch` lives for one turn. After each step's receipt is written the runner hands it
the request that was sent; the watch returns the Activities to write: a step that was not an
append of the previous one, a first step whose stable prefix changed since the previous turn,
and — where the provider reports cached tokens — a cache read short of what the append allowed.
"""

from __future__ import annotations

from collections.abc import Sequence

from vak_desktop.context.capacity.cache_watch import cache_shortfall, prefix_change, step_break
from vak_desktop.context.capacity.prefix import planned_prefix_tokens
from vak_desktop.context.capacity.profile import estimate_tokens
from vak_desktop.context.payloads import Activity, CapacityProfile, Directive, Receipt
from vak_desktop.context.request import ChatRequest
from vak_desktop.ledger import Entry

PROVIDER_REPORTED = "provider_reported"


def previous_turn_receipt(chain: Sequence[Entry]) -> Receipt | None:
    """The first receipt of the turn before the running one (the running turn's Directive is
    the last Directive in `chain`)."""
    directives = [i for i, e in enumerate(chain) if isinstance(e.payload, Directive)]
    if len(directives) < 2:
        return None
    start, end = directives[-2], directives[-1]
    for entry in chain[start:end]:
        if isinstance(entry.payload, Receipt) and entry.payload.step == 0:
            return entry.payload
    return None


class CacheWatch:
    """Checks one turn's requests for appends and its receipts for cache reads."""

    def __init__(self, previous_turn: Receipt | None) -> None:
        self.previous_turn = previous_turn
        self._request: ChatRequest | None = None
        self._receipt: Receipt | None = None
        self._tail = ""  # the turn's tail block, carried by the first receipt

    def observe(
        self,
        request: ChatRequest,
        receipt: Receipt,
        profile: CapacityProfile,
        ratio: float,
    ) -> list[Activity]:
        found: list[Activity | None] = []
        reported = profile.cache == PROVIDER_REPORTED
        if self._request is None:
            self._tail = receipt.tail
            if self.previous_turn is not None:
                change = prefix_change(self.previous_turn, receipt)
                found.append(change)
                if change is None and reported:
                    prefix = planned_prefix_tokens(
                        profile, _prefix_chars(request), receipt.prefix_digest
                    )
                    found.append(cache_shortfall(prefix, receipt, "the unchanged stable prefix"))
        else:
            broken = step_break(self._request, request, receipt.step)
            found.append(broken)
            if broken is None and reported and self._receipt is not None:
                tail = estimate_tokens(len(self._tail), ratio) if self._tail else 0
                expected = self._receipt.usage.prompt_tokens() - tail
                found.append(cache_shortfall(expected, receipt, "the previous step's request"))
        self._request, self._receipt = request, receipt
        return [a for a in found if a is not None]


def _prefix_chars(request: ChatRequest) -> int:
    """The stable prefix's size: the system text and the tool schemas."""
    system = request.messages[0].content if request.messages else ""
    return len(system) + sum(t.chars() for t in request.tools)
