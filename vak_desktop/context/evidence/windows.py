"""How a tool result is carried in a request without ever being cut blind (spec §3).

A result up to `RESULT_LIMIT` characters goes verbatim, however long its lines. A longer one is
carried as a *window*: whole lines from its start and from its end, and one line in between
that names the omitted line range, its size, and the exact `recall` call that returns it. Inside
a window a line longer than `LINE_LIMIT` shows its start and says how many characters it
continues for, with the `recall` call for those characters (`chars`: [start, end), 0-based). The whole result is always stored
(EvidenceBody), so every window is reversible by the model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

RESULT_LIMIT = 30_000  # characters of a current-turn result carried verbatim
LINE_LIMIT = 2_000  # characters of one line shown inside a window


@dataclass(frozen=True)
class Carried:
    """What the request carries for one result, and whether it is a window of it."""

    text: str
    windowed: bool


def short_ref(evidence_id: str) -> str:
    """The evidence reference the model sees and passes back to `recall`."""
    return evidence_id.removeprefix("b3:")[:12]


def recall_call(ref: str, **selector: list[int]) -> str:
    """The `recall` call, as the model would write it, that returns `selector` of `ref`."""
    args: dict[str, object] = {"id": ref, **selector}
    return f"recall({json.dumps(args, separators=(', ', ': '))})"


def line_at_limit(line: str, subject: str, returns: str) -> str:
    """`line` whole when it fits `LINE_LIMIT`, else its start and a note: "[… <subject> continues
    for <n> more characters; <returns>]". `returns` names the recall call that gets them back."""
    if len(line) <= LINE_LIMIT:
        return line
    rest = len(line) - LINE_LIMIT
    return f"{line[:LINE_LIMIT]} [… {subject} continues for {rest:,} more characters; {returns}]"


def line_shown(line: str, number: int, offset: int, ref: str) -> str:
    """Line `number` (1-based) of a result as a window shows it; `offset` is where the line
    starts in the whole result, so the note's `chars` range is exact."""
    if len(line) <= LINE_LIMIT:  # the common case: no note, so no recall call to render
        return line
    start = offset + LINE_LIMIT
    end = offset + len(line)
    return line_at_limit(
        line, f"line {number}", f"{recall_call(ref, chars=[start, end])} returns them"
    )


def carry(content: str, evidence_id: str, limit: int = RESULT_LIMIT) -> Carried:
    """The current-turn form of a result: verbatim when it fits, else a window of whole lines."""
    if len(content) <= limit:
        return Carried(content, windowed=False)
    ref = short_ref(evidence_id)
    lines = content.split("\n")
    offsets = [0]
    for line in lines[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    budget = (limit - 400) // 2  # leave room for the line naming the omitted range
    head: list[str] = []
    used = 0
    for number, line in enumerate(lines, start=1):
        shown = line_shown(line, number, offsets[number - 1], ref)
        if head and used + len(shown) + 1 > budget:
            break
        head.append(shown)
        used += len(shown) + 1
    tail: list[str] = []
    used = 0
    first_tail = len(lines) + 1
    for number in range(len(lines), len(head), -1):
        shown = line_shown(lines[number - 1], number, offsets[number - 1], ref)
        if tail and used + len(shown) + 1 > budget:
            break
        tail.append(shown)
        used += len(shown) + 1
        first_tail = number
    tail.reverse()
    omitted_from, omitted_to = len(head) + 1, first_tail - 1
    parts = head
    if omitted_to >= omitted_from:
        omitted_chars = sum(len(line) + 1 for line in lines[omitted_from - 1 : omitted_to])
        parts.append(
            f"[… lines {omitted_from}–{omitted_to} of {len(lines)} omitted "
            f"({omitted_chars:,} characters of {len(content):,}); "
            f"{recall_call(ref, range=[omitted_from, omitted_to])} returns them …]"
        )
    return Carried("\n".join(parts + tail), windowed=True)


def select_chars(content: str, start: int, end: int) -> str:
    """Characters `start` up to (not including) `end` of a stored result."""
    if start < 0 or end <= start or start >= len(content):
        raise ValueError(f"character range [{start}, {end}) is outside 0–{len(content)}")
    return content[start:end]


def select_lines(content: str, first: int, last: int) -> str:
    """Lines `first`..`last` (1-based, inclusive) of a stored result."""
    lines = content.split("\n")
    if first < 1 or last < first or first > len(lines):
        raise ValueError(f"line range [{first}, {last}] is outside 1–{len(lines)}")
    return "\n".join(lines[first - 1 : last])
