"""An imported conversation written as the entries a live chat would have made, every branch kept.

A conversation arrives as root-to-leaf paths of OpenAI messages (one for a plain document; one a
leaf for a tree export, the shown one last). Each path is cut into turns at its user messages;
a turn the paths share (the same messages, by source `id`, after the same turns) is written
once, and where paths fork the later turns are written as alternatives of one another — the
same entries an edit or a regenerate appends (`branches.py`): a Directive whose parent is the
turn before's closing entry. The shown path is written last, so its leaf is the session's head
and the chat opens on it. The session's first entry is an `imported` Activity naming the source
and its digest (`origins.py` finds it again: a second import of the same conversation writes
nothing).

Each turn gets what a live one gets: Directive, AssistantSteps, EvidenceBody + ToolResult for a
tool's answer, then its TurnCard and the `turn_closed` mark. Time is kept: a message's
`timestamp`, else a dated header in its text, is its entry's `said_at`; a turn with none takes
the latest one before it on its path, and the report names the shown turns that had none.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vak_desktop.context.capacity.profile import FALLBACK_TOKENS_PER_CHAR
from vak_desktop.context.evidence.windows import carry
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    Directive,
    EvidenceBody,
    ToolResult,
)
from vak_desktop.context.planning.turn_cards import build_turn_card
from vak_desktop.context.planning.turns import TURN_CLOSED, split_turns
from vak_desktop.ledger import Entry, Ledger
from vak_desktop.runtime.sessions.formats.times import header_time, source_time
from vak_desktop.runtime.sessions.openai_messages import text_and_images, tool_calls

IMPORTED = "imported"  # the Activity type of an imported session's first entry


@dataclass(frozen=True)
class ImportReport:
    session: str
    turns: int  # on the shown branch
    entries: int
    untimed: tuple[int, ...] = ()  # turn numbers no source time dated (dated when imported)
    inherited: int = 0  # turns without a time of their own, dated by the latest one before
    branches: int = 0  # other branches kept beside the shown one (message versions)


@dataclass(frozen=True)
class _Done:
    """A turn written: where the next turn of its path goes, and how its time was found."""

    close: str  # its closing entry, the parent of the turn after it
    known: str  # the latest source time on its path, after it
    system: str  # the system prompt in force after it
    own: bool  # its directive had a time of its own
    dated_before: bool  # a time was known before it


def _turns(path: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The path cut at its user messages; a system message goes with the turn it precedes."""
    turns: list[list[dict[str, Any]]] = []
    lead: list[dict[str, Any]] = []
    for message in path:
        if message["role"] == "user":
            turns.append([*lead, message])
            lead = []
        elif message["role"] == "system" or not turns:
            lead.append(message)
        else:
            turns[-1].append(message)
    return turns


def _key(turn: list[dict[str, Any]], path: int, start: int) -> tuple[str, ...]:
    """A turn's identity: its messages' source ids (by position when a message has none)."""
    return tuple(str(m.get("id") or f"{path}:{start + i}") for i, m in enumerate(turn))


def write_paths(
    ledger: Ledger,
    paths: Sequence[Sequence[dict[str, Any]]],
    model: str,
    title: str,
    origin: dict[str, Any],
) -> ImportReport:
    """Write the conversation `paths` (checked already) into a new session; the last one shown."""
    session = ledger.create_session(title=title).id
    first = ledger.append(session, Activity(type=IMPORTED, message=title, detail=origin))
    written, branches = 1, 0
    # a written turn by (the closing entry of the turn before it, its own messages' ids): the
    # prefix is named by that entry, so a lookup costs the turn's length, not the path's
    done: dict[tuple[str, tuple[str, ...]], _Done] = {}
    shown_keys: list[tuple[str, tuple[str, ...]]] = []
    for n, path in enumerate(paths):
        parent, known, system = first.id, "", ""
        keys: list[tuple[str, tuple[str, ...]]] = []
        start, wrote = 0, False
        for index, turn in enumerate(_turns(path)):
            key = (parent, _key(turn, n, start))
            keys.append(key)
            start += len(turn)
            if key not in done:
                entries, (after, system_after, own) = _write_turn(
                    ledger, session, parent, turn, model, system, known
                )
                close = _close(ledger, session, entries, index)
                written += len(entries) + 2
                done[key] = _Done(close.id, after, system_after, bool(own), bool(known))
                wrote = True
            parent, known, system = done[key].close, done[key].known, done[key].system
        if n < len(paths) - 1 and wrote:
            branches += 1
        if n == len(paths) - 1:
            shown_keys = keys
    shown = [done[k] for k in shown_keys]
    untimed = tuple(i for i, t in enumerate(shown, 1) if not t.own and not t.dated_before)
    inherited = sum(1 for t in shown if not t.own and t.dated_before)
    return ImportReport(session, len(shown_keys), written, untimed, inherited, branches)


def _write_turn(
    ledger: Ledger,
    session: str,
    parent: str,
    turn: list[dict[str, Any]],
    model: str,
    system: str,
    known: str,
) -> tuple[list[Entry], tuple[str, str, str]]:
    """One turn's entries, its directive after `parent`. Returns the entries and (the latest
    time known after it, the system prompt after it, the directive's own time)."""
    entries: list[Entry] = []
    names: dict[str, str] = {}
    own_directive = ""
    for i, message in enumerate(turn):
        where = f"messages[{i}]"
        role = message["role"]
        text, images = text_and_images(message.get("content"), where)
        if role == "system":
            system = text
            continue
        own = source_time(message.get("timestamp")) if role != "tool" else ""
        if not own and role != "tool":
            own = header_time(text)
        known = own or known
        payload: Any
        if role == "user":
            own_directive = own
            payload = Directive(text=text, images=images, model=model, system=system, said_at=known)
            entries.append(ledger.append(session, payload, parent=parent))
            continue
        if role == "assistant":
            calls = tool_calls(message.get("tool_calls"), where)
            names.update({c.id: c.name for c in calls})
            thinking = str(message.get("reasoning_content") or message.get("thinking") or "")
            payload = AssistantStep(
                text=text, thinking=thinking, tool_calls=calls, model=model, said_at=own
            )
        else:
            call_id = str(message.get("tool_call_id", ""))
            name = str(message.get("name") or names.get(call_id, ""))
            body = ledger.append(
                session, EvidenceBody(call_id, name, content=text, chars=len(text))
            )
            entries.append(body)
            carried = carry(text, body.id)
            payload = ToolResult(
                call_id,
                name,
                carried.text,
                body.id,
                len(text),
                windowed=carried.windowed,
                images=images,
            )
        entries.append(ledger.append(session, payload))
    return entries, (known, system, own_directive)


def _close(ledger: Ledger, session: str, entries: list[Entry], index: int) -> Entry:
    """Close the imported turn as a live one closes: its TurnCard, then the mark (returned).
    The turn is built from its own entries (re-reading the chain each turn was quadratic:
    3,288 of 10,000 turns after 1,025 s)."""
    (turn,) = split_turns(entries)
    turn = dataclasses.replace(turn, index=index)
    ledger.append(session, build_turn_card(turn, "completed", FALLBACK_TOKENS_PER_CHAR))
    return ledger.append(
        session, Activity(type=TURN_CLOSED, message="imported", detail={"outcome": "completed"})
    )
