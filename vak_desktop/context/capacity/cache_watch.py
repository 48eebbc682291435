"""Watching the prefix cache: what changed when a request is not the append the cache needs.

Within a turn, request k+1 must be request k plus the new steps (same tools in the same order,
new ones only after them; the same messages, new ones only after them); across turns, the
stable prefix (system text and tool schemas) must keep its digest. Each check here returns an
Activity naming exactly what changed, or None; the runtime writes it into the ledger so a cache
regression shows in the session rather than in the bill or the prefill time.

Where the provider reports cached tokens, the counts are checked too: a later step of a turn
must read from the cache at least what the previous step sent minus the tail, and a new turn at
least the stable prefix.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import blake3

from vak_desktop.context.payloads import Activity, JsonObject, Receipt
from vak_desktop.context.request import ChatRequest, Message, ToolSpec

CACHE_BREAK = "cache_break"  # a within-turn request that is not an append of the previous one
PREFIX_CHANGED = "prefix_changed"  # a turn whose stable prefix differs from the previous turn's
CACHE_MISS = "cache_miss"  # the provider reported fewer cached tokens than the append allows
_SHOWN = 80  # characters of a changed message quoted in the Activity


def _digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return blake3.blake3(text.encode("utf-8")).hexdigest()[:16]


def system_digest(system: str) -> str:
    return _digest(system)


def tool_digests(tools: Sequence[ToolSpec]) -> tuple[str, ...]:
    """`name=digest` of each tool's schema, in request order (a tuple: the order matters)."""
    return tuple(f"{t.name}={_digest([t.name, t.description, t.parameters])}" for t in tools)


def _by_name(digests: Sequence[str]) -> dict[str, str]:
    return dict(d.split("=", 1) for d in digests)


def _message_key(message: Message) -> object:
    calls = [[c.id, c.name, c.arguments] for c in message.tool_calls]
    return [message.role, message.content, message.thinking, list(message.images), calls,
            message.tool_call_id]  # fmt: skip


def _quote(text: str) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= _SHOWN else one_line[: _SHOWN - 1] + "…"


def step_break(previous: ChatRequest, current: ChatRequest, step: int) -> Activity | None:
    """Request `step` against the turn's previous request: None when it is a pure append."""
    before = [t.name for t in previous.tools]
    after = [t.name for t in current.tools]
    if after[: len(before)] != before:
        removed = [n for n in before if n not in after]
        what = f"the tool list was reordered or cut (removed: {', '.join(removed) or 'none'})"
        return _break(step, what, {"tools_before": before, "tools_after": after})
    changed_tools = [
        t.name
        for t, u in zip(previous.tools, current.tools, strict=False)
        if (t.description, t.parameters) != (u.description, u.parameters)
    ]
    if changed_tools:
        what = f"the schema of {', '.join(changed_tools)} changed"
        return _break(step, what, {"tools_changed": changed_tools})
    if len(current.messages) < len(previous.messages):
        what = (
            f"the request shrank from {len(previous.messages)} to {len(current.messages)} messages"
        )
        return _break(step, what, {"messages_before": len(previous.messages)})
    for index, (old, new) in enumerate(zip(previous.messages, current.messages, strict=False)):
        if _message_key(old) != _message_key(new):
            what = f"message {index} ({old.role}) changed: “{_quote(old.content)}” → “{_quote(new.content)}”"
            return _break(step, what, {"message": index, "role": old.role})
    return None


def _break(step: int, what: str, detail: JsonObject) -> Activity:
    return Activity(
        type=CACHE_BREAK,
        message=f"step {step} is not an append of step {step - 1}: {what}",
        detail={"step": step, **detail},
    )


def prefix_change(previous: Receipt, current: Receipt) -> Activity | None:
    """A turn's first receipt against the previous turn's: None when the prefix is the same."""
    if not previous.prefix_digest or previous.prefix_digest == current.prefix_digest:
        return None
    reasons = []
    if previous.system_digest and previous.system_digest != current.system_digest:
        reasons.append("the system prompt changed")
    old, new = _by_name(previous.tool_digests), _by_name(current.tool_digests)
    added = [n for n in new if n not in old]
    removed = [n for n in old if n not in new]
    changed = [n for n in new if n in old and old[n] != new[n]]
    if added:
        reasons.append(f"tools added: {', '.join(added)}")
    if removed:
        reasons.append(f"tools removed: {', '.join(removed)}")
    if changed:
        reasons.append(f"tool schemas changed: {', '.join(changed)}")
    if not reasons and list(old) != list(new):
        reasons.append("the tools were reordered")
    if previous.model != current.model:
        reasons.append(f"the model changed from {previous.model} to {current.model}")
    what = "; ".join(reasons) or "the prefix digest changed"
    return Activity(
        type=PREFIX_CHANGED,
        message=f"the stable prefix changed since the previous turn: {what}",
        detail={
            "before": previous.prefix_digest,
            "after": current.prefix_digest,
            "added": added,
            "removed": removed,
            "changed": changed,
        },
    )


def cache_shortfall(expected: int, receipt: Receipt, why: str) -> Activity | None:
    """A provider-reported cache read below what an append should have read, or None."""
    cached = receipt.usage.cache_read_tokens
    if expected <= 0 or cached >= expected:
        return None
    return Activity(
        type=CACHE_MISS,
        message=(
            f"step {receipt.step} read {cached:,} cached tokens where {why} allowed "
            f"{expected:,}; the prefix digest is {receipt.prefix_digest}"
        ),
        detail={
            "step": receipt.step,
            "cached": cached,
            "expected": expected,
            "prefix_digest": receipt.prefix_digest,
        },
    )
