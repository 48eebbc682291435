"""The spec's invariants over one planned and assembled request, read from the outside (spec
§3, §4, §6, §10, "Verification"), as findings rather than assertions: `vak eval` reports them
for every session of a ledger, and the tests assert there are none.

The history of a request (between the system message and the current turn) is partitioned into
its segments — the reset's handoff, the packet, runs of cards, whole turns — using only the
plan and the ledger's turns, then each invariant is checked:

- no_cut: every tool result of every turn not behind a reset is in the request verbatim (the
  current turn, within the 30k window rule), as a digest ending in its evidence id, on its
  turn's card with the id, or its turn is named by the packet — never absent, never cut. A card
  call's result is an ack, not evidence: whole turns carry it as written, a card turn shows the
  card it wrote;
- no_split: the plan covers every earlier turn once; a whole turn is its full record,
  contiguous, and nothing of a turn shown as a card or packeted appears anywhere else; every
  tool call has exactly one result after it; turns keep their order;
- plan_within_horizon: the history costs no more than the plan priced it, and the plan stays
  within its budget (so the request within the horizon) whenever the compact part fits and the
  plan did not say it carried a partial newest batch past it;
- uniqueness: no tool twice — declared twice, or declared and also listed in the system text's
  catalogue of tools not loaded yet (one found by `find_tools` during the turn is appended
  after the prefix, which keeps its catalogue line); no directive both whole and in the thread;
- packet_batch: the packet starts at the first live turn and spans whole batches of
  PACKET_BATCH_TURNS (so its range holds steady and its summary is reused), and it lists no turn
  the request carries at another fidelity.

Over 400 lines on purpose: every invariant reads the same parsed layout of one request (cards,
packet, thread, tool pairs); split, that private layout would cross module boundaries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from vak_desktop.context.capacity.profile import estimate_tokens
from vak_desktop.context.evidence.windows import LINE_LIMIT, RESULT_LIMIT, carry, short_ref
from vak_desktop.context.payloads import EvidenceBody, ToolResult
from vak_desktop.context.planning.assemble import AssembledRequest, current_turn_messages
from vak_desktop.context.planning.packets import render_handoff
from vak_desktop.context.planning.planner import PACKET_BATCH_TURNS, Fidelity, Plan
from vak_desktop.context.planning.turn_cards import card_of, full_record, is_card_tool
from vak_desktop.context.planning.turns import Turn, TurnIndex
from vak_desktop.context.request import Message, ToolSpec

NO_CUT = "no_cut"
NO_SPLIT = "no_split"
WITHIN_HORIZON = "plan_within_horizon"
UNIQUENESS = "uniqueness"
PACKET_BATCH = "packet_batch"

_CARD_LINE = re.compile(r"^Turn (\d+) \(", re.MULTILINE)
_PACKET_OPEN = re.compile(r'^<context_summary turns="(\d+)(?:–(\d+))?">')
_THREAD = re.compile(r"<thread>(.*?)</thread>", re.DOTALL)
_PAUSED_REF = re.compile(r"turns? \d+(?:[–,] ?\d+)* \(above\)")  # "turns 25–30, 32 (above)"
_ACK_ID = re.compile(r'"presentation":\s*"([^"]+)"')


@dataclass(frozen=True)
class Finding:
    """One invariant a request breaks: which, about which turn (1-based; 0 for none), why."""

    invariant: str
    message: str
    turn: int = 0

    def __str__(self) -> str:
        where = f"turn {self.turn}: " if self.turn else ""
        return f"{self.invariant}: {where}{self.message}"


@dataclass
class _Layout:
    """The history of a request, partitioned: what each segment carries."""

    whole: dict[int, list[Message]] = field(default_factory=dict)
    cards: dict[int, str] = field(default_factory=dict)
    packet: str = ""
    handoffs: int = 0
    order: list[tuple[str, list[int]]] = field(default_factory=list)


def thread_lines(tail: str) -> list[str]:
    """The directives the tail's `<thread>` lists, summarised or paused (a paused turn that is
    in the working set is named by number, not asked again: not a directive line)."""
    match = _THREAD.search(tail)
    if not match:
        return []
    lines = [line[2:] for line in match.group(1).split("\n") if line.startswith("- ")]
    return [line for line in lines if not _PAUSED_REF.fullmatch(line)]


def results_of(turn: Turn) -> list[tuple[str, EvidenceBody, ToolResult | None]]:
    """(evidence id, whole result, what the request carried) for every tool result of a turn."""
    carried = {
        e.payload.evidence: e.payload for e in turn.entries if isinstance(e.payload, ToolResult)
    }
    return [
        (e.id, e.payload, carried.get(e.id))
        for e in turn.entries
        if isinstance(e.payload, EvidenceBody)
    ]


def tool_pair_findings(messages: Sequence[Message]) -> list[Finding]:
    """Every assistant tool call is followed by exactly one result, in call order; no result
    stands without its call."""
    found: list[Finding] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        if message.role == "tool":
            found.append(Finding(NO_SPLIT, f"message {i}: a tool result without its call"))
        i += 1
        if message.role == "assistant" and message.tool_calls:
            wanted = [c.id for c in message.tool_calls]
            got = [m.tool_call_id for m in messages[i : i + len(wanted)] if m.role == "tool"]
            if got != wanted:
                found.append(Finding(NO_SPLIT, f"message {i}: calls {wanted} answered by {got}"))
            i += len(got)
    return found


def _card_blocks(blocks: Sequence[str], found: list[Finding]) -> dict[int, str]:
    """Each card turn's number and its lines, from the `<earlier_turns>` blocks."""
    cards: dict[int, str] = {}
    for block in blocks:
        starts = list(_CARD_LINE.finditer(block))
        for at, match in enumerate(starts):
            end = starts[at + 1].start() if at + 1 < len(starts) else len(block)
            number = int(match.group(1))
            if number in cards:
                found.append(Finding(NO_SPLIT, "carded twice", number))
            cards[number] = block[match.start() : end]
    return cards


def _partition(
    history: Sequence[Turn], plan: Plan, middle: Sequence[Message], found: list[Finding]
) -> _Layout | None:
    """Read the history messages as segments. None when they cannot be read (the finding says
    where); the whole turns are recognised by their full records, in the plan's order."""
    fidelity = {p.turn_id: p.fidelity for p in plan.turns}
    expected = [t for t in history if fidelity.get(t.turn_id) is Fidelity.FULL]
    records = {t.turn_id: full_record(t) for t in expected}
    layout, card_texts, i = _Layout(), [], 0
    while i < len(middle):
        message = middle[i]
        text = message.content
        if message.role != "user":
            found.append(Finding(NO_SPLIT, f"history message {i} ({message.role}) starts no turn"))
            return None
        if text.startswith("<handoff>"):
            layout.handoffs += 1
            i += 1
        elif text.startswith("<context_summary"):
            if layout.packet:
                found.append(Finding(NO_SPLIT, "the request carries two packets"))
            layout.packet = text
            layout.order.append(("packet", []))
            i += 1
        elif text.startswith("<earlier_turns>"):
            card_texts.append(text)
            layout.order.append(("cards", [int(n) for n in _CARD_LINE.findall(text)]))
            i += 1
        else:
            turn = expected[len(layout.whole)] if len(layout.whole) < len(expected) else None
            record = records[turn.turn_id] if turn is not None else []
            if turn is None or tuple(middle[i : i + len(record)]) != tuple(record):
                named = [t.number for t in history if t.directive.text == text]
                about = f" (turn {named[0]}'s directive)" if named else ""
                found.append(
                    Finding(
                        NO_SPLIT,
                        f"history message {i}{about} is not the whole turn the plan carries "
                        "next: a turn is split, changed, out of order or at the wrong fidelity",
                        named[0] if named else 0,
                    )
                )
                return None
            layout.whole[turn.number] = records[turn.turn_id]
            layout.order.append(("full", [turn.number]))
            i += len(records[turn.turn_id])
    layout.cards = _card_blocks(card_texts, found)
    return layout


def _structure(
    index: TurnIndex, plan: Plan, history: Sequence[Turn], layout: _Layout
) -> tuple[list[Finding], set[int]]:
    """Each turn at exactly the fidelity the plan chose, in order. Returns the findings and
    the turn numbers the packet covers."""
    found: list[Finding] = []
    fidelity = {p.turn_id: p.fidelity for p in plan.turns}
    wanted = {f: {t.number for t in history if fidelity[t.turn_id] is f} for f in Fidelity}
    for kind, got, want in (
        ("whole", set(layout.whole), wanted[Fidelity.FULL]),
        ("as cards", set(layout.cards), wanted[Fidelity.CARD]),
    ):
        for number in sorted(got ^ want):
            planned = "planned" if number in want else "not planned"
            found.append(Finding(NO_SPLIT, f"{planned} {kind} but carried otherwise", number))
    behind = wanted[Fidelity.BEHIND_RESET]
    if layout.handoffs != (1 if behind and index.reset is not None else 0):
        found.append(Finding(NO_SPLIT, f"{layout.handoffs} handoffs for {len(behind)} turns"))
    if bool(layout.packet) != (plan.packet_range is not None):
        found.append(Finding(NO_SPLIT, "the packet in the request is not the plan's"))
    covered: set[int] = set()
    if plan.packet_range is not None and layout.packet:
        first, last = (index.by_id(i) for i in plan.packet_range)
        match = _PACKET_OPEN.match(layout.packet)
        if first is None or last is None or match is None:
            found.append(Finding(NO_SPLIT, "the packet's range cannot be read"))
        else:
            span = (int(match.group(1)), int(match.group(2) or match.group(1)))
            if span != (first.number, last.number):
                found.append(Finding(NO_SPLIT, f"the packet says turns {span}, the plan another"))
            covered = set(range(first.number, last.number + 1))
            for number in sorted(covered & behind):
                found.append(Finding(NO_SPLIT, "behind the reset and in the packet", number))
            for number in sorted(wanted[Fidelity.PACKET] - covered):
                found.append(Finding(NO_SPLIT, "packeted outside the packet's range", number))
            for number in sorted(packet_listed(layout.packet) - wanted[Fidelity.PACKET]):
                found.append(Finding(NO_SPLIT, "in the packet and carried elsewhere too", number))
            found += _batch_findings(history, first, last)
            if 'recall({"turn": ' not in layout.packet:
                found.append(Finding(NO_CUT, "the packet does not say how to recall its turns"))
    elif plan.packet_range is None:
        for number in sorted(wanted[Fidelity.PACKET]):
            found.append(Finding(NO_SPLIT, "packeted with no packet", number))
    order = [n for _, numbers in layout.order for n in numbers]
    if order != sorted(order):
        found.append(Finding(NO_SPLIT, f"turns out of order: {order}"))
    kinds = [kind for kind, _ in layout.order]
    if layout.packet and "packet" in kinds:
        at = kinds.index("packet")
        before = {n for _, numbers in layout.order[:at] for n in numbers}
        after = {n for _, numbers in layout.order[at + 1 :] for n in numbers}
        if not before <= covered or after & covered:
            found.append(Finding(NO_SPLIT, "a turn of the packet's range sits outside it"))
    return found, covered


_PACKET_LISTED = re.compile(r"^(?:- Turn (\d+):|Turn (\d+) \()", re.MULTILINE)


_PACKET_NUMBERED = re.compile(r"^Also covered, by number: turns (.+)\.$", re.MULTILINE)
# a stretch of the topic index (`topics.py`): its whole range, less the turns named as shown
# outside the packet
_PACKET_STRETCH = re.compile(r"^- Turns (\d+(?:–\d+)?)(?: \(|:|$)", re.MULTILINE)
_PACKET_OUTSIDE = re.compile(r"^Turns (.+) of this range are shown outside it\.$", re.MULTILINE)


def _numbers(runs: str) -> set[int]:
    """ "1–3, 7" as {1, 2, 3, 7}."""
    found: set[int] = set()
    for run in runs.split(", "):
        first, _, last = run.partition("–")
        if first.isdigit() and (not last or last.isdigit()):
            found.update(range(int(first), int(last or first) + 1))
    return found


def packet_listed(packet: str) -> set[int]:
    """The turn numbers a packet lists (a line each), shows as a card, names by number or
    covers by a stretch (less those it says are shown outside it)."""
    listed = {int(a or b) for a, b in _PACKET_LISTED.findall(packet)}
    for match in _PACKET_NUMBERED.finditer(packet):
        listed |= _numbers(match.group(1))
    stretched: set[int] = set()
    for match in _PACKET_STRETCH.finditer(packet):
        stretched |= _numbers(match.group(1))
    for match in _PACKET_OUTSIDE.finditer(packet):
        stretched -= _numbers(match.group(1))
    return listed | stretched


def _batch_findings(history: Sequence[Turn], first: Turn, last: Turn) -> list[Finding]:
    """The packet starts at the first turn not behind the reset and spans whole batches."""
    live = [t for t in history if not t.behind_reset]
    if not live or first.turn_id != live[0].turn_id:
        return [Finding(PACKET_BATCH, "the packet does not start at the first live turn")]
    size = last.index - first.index + 1
    if size % PACKET_BATCH_TURNS:
        return [
            Finding(
                PACKET_BATCH,
                f"the packet covers {size} turns, not whole batches of {PACKET_BATCH_TURNS}",
                last.number,
            )
        ]
    return []


def _acked(result: ToolResult | None) -> str:
    """The presentation id a successful, new card call's ack names ("" for none)."""
    if result is None or result.is_error or '"repeat": true' in result.content:
        return ""
    match = _ACK_ID.search(result.content)
    return match.group(1) if match else ""


def _no_cut(
    index: TurnIndex,
    plan: Plan,
    layout: _Layout,
    covered: set[int],
    current: Turn,
    now: Sequence[Message],
    middle: Sequence[Message],
) -> list[Finding]:
    found: list[Finding] = []
    fidelity = {p.turn_id: p.fidelity for p in plan.turns}
    for turn in index.turns:
        if turn.behind_reset:
            continue
        n = turn.number
        for evidence_id, body, result in results_of(turn):
            ref = short_ref(evidence_id)
            if result is None:
                found.append(Finding(NO_CUT, f"result {ref} was never carried", n))
                continue
            if turn.turn_id == current.turn_id:
                shown = [m.content for m in now if m.tool_call_id == body.tool_call_id]
                if (
                    shown != [result.content]
                    or result.content != carry(body.content, evidence_id).text
                ):
                    found.append(Finding(NO_CUT, f"result {ref} is not as carried", n))
                elif len(body.content) <= RESULT_LIMIT and result.content != body.content:
                    found.append(Finding(NO_CUT, f"result {ref} fits but is not verbatim", n))
                elif len(body.content) > RESULT_LIMIT and f'"id": "{ref}"' not in result.content:
                    found.append(Finding(NO_CUT, f"the window of {ref} names no recall", n))
                continue
            where = fidelity.get(turn.turn_id)
            card_call = is_card_tool(body.tool_name)
            if where is Fidelity.FULL:
                shown = [
                    m.content
                    for m in layout.whole.get(n, [])
                    if m.tool_call_id == body.tool_call_id
                ]
                footer = f"[evidence:{ref} — {len(body.content):,} chars; call recall to expand]"
                if card_call:
                    ok = shown == [result.content]
                else:
                    ok = len(shown) == 1 and shown[0].endswith(footer)
                    short = "\n" not in body.content and len(body.content) <= LINE_LIMIT
                    if ok and body.is_error and short:  # a one-line error is shown verbatim
                        ok = shown[0].startswith(body.content)
                if not ok:
                    found.append(Finding(NO_CUT, f"result {ref} is not in the whole turn", n))
            elif where is Fidelity.CARD:
                text = layout.cards.get(n, "")
                presentation = _acked(result) if card_call else ""
                title = _card_title(turn, presentation)
                if card_call and presentation and f' "{title}" — ' not in text:
                    found.append(Finding(NO_CUT, f"the card {presentation} is not on its card", n))
                elif not card_call and f"[evidence:{ref}]" not in text:
                    found.append(Finding(NO_CUT, f"result {ref} is not on the turn's card", n))
            elif where is Fidelity.PACKET:
                if n not in covered:
                    found.append(Finding(NO_CUT, f"result {ref} is absent (packet)", n))
                elif turn.turn_id in plan.packet_featured and not card_call:
                    if f"[evidence:{ref}]" not in _packet_card(layout.packet, n):
                        found.append(Finding(NO_CUT, f"the packet's card lacks {ref}", n))
                elif plan.packet_detailed and not card_call:
                    line = next(
                        (ln for ln in layout.packet.split("\n") if ln.startswith(f"- Turn {n}:")),
                        "",
                    )
                    if ref not in line:
                        found.append(Finding(NO_CUT, f"the packet lists it without {ref}", n))
                elif f"Turns {min(covered)}" not in layout.packet:
                    found.append(Finding(NO_CUT, "the packet does not name its range", n))
            else:
                found.append(Finding(NO_CUT, f"result {ref}: the plan does not cover its turn", n))
            if where is not Fidelity.FULL and any(
                m.tool_call_id == body.tool_call_id for m in middle
            ):
                found.append(Finding(NO_SPLIT, f"result {ref} appears outside its whole turn", n))
    return found


def _packet_card(packet: str, number: int) -> str:
    """The lines of turn `number`'s card inside a packet ("" if it shows none)."""
    lines = packet.split("\n")
    start = next((i for i, ln in enumerate(lines) if ln.startswith(f"Turn {number} (")), None)
    if start is None:
        return ""
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), None)
    return "\n".join(lines[start:end])


def _card_title(turn: Turn, presentation: str) -> str:
    for entry in turn.entries:
        if entry.id == presentation:
            return str(getattr(entry.payload, "title", ""))
    return ""


def handoff_tokens(index: TurnIndex, plan: Plan, ratio: float) -> int:
    """What the reset's handoff costs when the request carries it (turns behind it), else 0."""
    behind = any(p.fidelity is Fidelity.BEHIND_RESET for p in plan.turns)
    if index.reset is None or not behind:
        return 0
    return estimate_tokens(len(render_handoff(index.reset.handoff)), ratio)


def history_tokens_measured(request: AssembledRequest, current: Turn, ratio: float) -> int:
    """What the history of an assembled request really costs at `ratio` (every message between
    the system prompt and the current turn, wrappers included)."""
    now = current_turn_messages(current, request.tail)
    middle = request.messages[1 : len(request.messages) - len(now)]
    chars = sum(m.chars() for m in middle)
    return estimate_tokens(chars, ratio) if chars else 0


def budget_findings(
    index: TurnIndex, plan: Plan, request: AssembledRequest, current: Turn, ratio: float
) -> list[Finding]:
    """The plan within its budget whenever its compact part (packet, handoff) fits, and the
    history costing no more than the plan priced it."""
    found: list[Finding] = []
    turn_tokens = sum(t.tokens for t in plan.turns)
    if plan.history_tokens != turn_tokens + plan.packet_tokens + plan.framing_tokens:
        found.append(Finding(WITHIN_HORIZON, "the plan's history total is not its parts' sum"))
    measured = history_tokens_measured(request, current, ratio)
    if measured > plan.history_tokens:
        found.append(
            Finding(
                WITHIN_HORIZON,
                f"the history costs {measured:,} tokens, the plan priced it at "
                f"{plan.history_tokens:,}",
            )
        )
    available = plan.budget.available
    compact = plan.packet_tokens + handoff_tokens(index, plan, ratio)
    if compact <= available and plan.history_tokens > available and not plan.partial_batch:
        found.append(
            Finding(
                WITHIN_HORIZON,
                f"the history takes {plan.history_tokens:,} tokens of {available:,} "
                f"available (horizon {plan.budget.horizon:,})",
            )
        )
    return found


# The catalogue the runtime writes into the system text (`runtime/tools/surface.py`): a heading
# "More tools (…):" then a line "- name — …" per tool, or, compact, one line of names.
_CATALOGUE_HEADING = re.compile(r"^More tools \(.*\):$", re.MULTILINE)
_CATALOGUE_LINE = re.compile(r"- (\S+) — ")
_COMPACT_CATALOGUE = re.compile(r"^More tools \(find_tools loads them\): (.+)\.$", re.MULTILINE)


def catalogued_tools(system: str) -> set[str]:
    """The tool names a system text's catalogue lists as not loaded yet."""
    names: set[str] = set()
    heading = _CATALOGUE_HEADING.search(system)
    if heading is not None:
        for line in system[heading.end() :].lstrip("\n").split("\n"):
            match = _CATALOGUE_LINE.match(line)
            if match is None:
                break
            names.add(match.group(1))
    for compact in _COMPACT_CATALOGUE.finditer(system):
        names.update(n.strip() for n in compact.group(1).split(","))
    return names


def _found_by_find_tools(messages: Sequence[Message]) -> set[str]:
    """The tools a `find_tools` result in these messages loaded (they keep their catalogue
    line for the rest of that turn: the prefix does not move within a turn)."""
    loaded: set[str] = set()
    for message in messages:
        if message.role != "tool" or message.tool_name != "find_tools":
            continue
        try:
            found = json.loads(message.content)
        except ValueError:
            continue
        if isinstance(found, dict) and isinstance(found.get("loaded"), list):
            loaded.update(str(name) for name in found["loaded"])
    return loaded


def tool_name_findings(
    system: str, tools: Sequence[ToolSpec], messages: Sequence[Message] = ()
) -> list[Finding]:
    """Every tool is named once: declared once, and not also listed by the catalogue as not
    loaded yet (unless `find_tools` loaded it during the turn)."""
    found: list[Finding] = []
    names = [t.name for t in tools]
    for name in sorted({n for n in names if names.count(n) > 1}):
        found.append(Finding(UNIQUENESS, f"the tool {name} is declared twice"))
    twice = (set(names) & catalogued_tools(system)) - _found_by_find_tools(messages)
    for name in sorted(twice):
        found.append(
            Finding(UNIQUENESS, f"the tool {name} is declared and listed as not loaded yet")
        )
    return found


def request_findings(
    index: TurnIndex, plan: Plan, request: AssembledRequest, current: Turn, ratio: float
) -> list[Finding]:
    """Every invariant one request breaks (see the module docstring); [] when it keeps all."""
    history = [t for t in index.turns if t.turn_id != current.turn_id]
    found: list[Finding] = []
    planned = [p.turn_id for p in plan.turns]
    if planned != [t.turn_id for t in history]:
        found.append(Finding(NO_SPLIT, "the plan does not cover every earlier turn once, in order"))
        return found
    for turn, p in zip(history, plan.turns, strict=True):
        if (p.fidelity is Fidelity.BEHIND_RESET) != turn.behind_reset:
            found.append(Finding(NO_SPLIT, "planned against its reset", turn.number))
    messages = request.messages
    if not messages or messages[0] != Message(role="system", content=request.system):
        found.append(Finding(NO_SPLIT, "the request does not open with its system text"))
        return found
    now = current_turn_messages(current, request.tail)
    if len(messages) < len(now) + 1 or tuple(messages[len(messages) - len(now) :]) != tuple(now):
        found.append(Finding(NO_SPLIT, "the current turn does not end the request"))
        return found
    middle = messages[1 : len(messages) - len(now)]
    found += tool_pair_findings(messages)
    layout = _partition(history, plan, middle, found)
    if layout is None:
        return found
    structure, covered = _structure(index, plan, history, layout)
    found += structure
    found += _no_cut(index, plan, layout, covered, current, now, middle)
    found += budget_findings(index, plan, request, current, ratio)

    found += tool_name_findings(request.system, request.tools, messages)
    thread = thread_lines(request.tail)
    whole_asks = {card_of(t, ratio).asked for t in history if t.number in layout.whole}
    for ask in sorted(set(thread) & whole_asks):
        found.append(Finding(UNIQUENESS, f"a directive both whole and in the thread: {ask[:60]}"))
    if current.directive.text and current.directive.text in thread:
        found.append(Finding(UNIQUENESS, "the current directive is in the thread"))
    packeted = {
        card_of(t, ratio).asked for t, p in zip(history, plan.turns, strict=True)
        if p.fidelity is Fidelity.PACKET
    }  # fmt: skip
    for ask in sorted(set(thread) - packeted):
        found.append(Finding(UNIQUENESS, f"the thread names a turn not packeted: {ask[:60]}"))
    return found
