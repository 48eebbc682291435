"""The spec's invariants over one planned and assembled request, checked from the outside.

`check_request` reads the request the way a reviewer would: it partitions the history into
its segments (handoff, whole turns, the packet, runs of cards), then checks each invariant the
spec states (§3, §4, §6, §10 and "Verification") against the ledger's turns:

- no-cut: every tool result of every turn not behind a reset is in the request verbatim (the
  current turn, within the 30k window rule), as a digest ending in its evidence id, on its
  turn's card with the id, or its turn is named by the packet — never absent, never cut;
- no turn is split: a whole turn is its full record, contiguous, and nothing of a turn shown
  as a card or packeted appears anywhere else; every tool call has exactly one result after it;
- the plan stays within its budget whenever the compact packet fits;
- one source per fact: no tool twice, no directive both whole and in the thread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vak_desktop.context.assemble import AssembledRequest, current_turn_messages
from vak_desktop.context.capacity import estimate_tokens
from vak_desktop.context.cards import card_of, full_record
from vak_desktop.context.digests import digest_result
from vak_desktop.context.evidence import RESULT_LIMIT, carry, short_ref
from vak_desktop.context.packets import render_handoff
from vak_desktop.context.payloads import EvidenceBody, ToolResult
from vak_desktop.context.planner import Fidelity, Plan
from vak_desktop.context.request import Message
from vak_desktop.context.turns import Turn, TurnIndex

_CARD_LINE = re.compile(r"^Turn (\d+) \(", re.MULTILINE)
_PACKET_OPEN = re.compile(r'^<context_summary turns="(\d+)(?:–(\d+))?">')
_THREAD = re.compile(r"<thread>(.*?)</thread>", re.DOTALL)
_PAUSED_REF = re.compile(r"turn \d+ \(above\)")


def thread_lines(tail: str) -> list[str]:
    """The directives the tail's `<thread>` lists, summarised or paused (a paused turn that is
    in the working set is named by number, not asked again: not a directive line)."""
    match = _THREAD.search(tail)
    if not match:
        return []
    lines = [line[2:] for line in match.group(1).split("\n") if line.startswith("- ")]
    return [line for line in lines if not _PAUSED_REF.fullmatch(line)]


def results_of(turn: Turn) -> list[tuple[str, EvidenceBody, ToolResult]]:
    """(evidence id, whole result, what the request carried) for every tool result of a turn."""
    carried = {
        e.payload.evidence: e.payload for e in turn.entries if isinstance(e.payload, ToolResult)
    }
    return [
        (e.id, e.payload, carried[e.id])
        for e in turn.entries
        if isinstance(e.payload, EvidenceBody)
    ]


def check_tool_pairs(messages: Sequence[Message]) -> None:
    """Every assistant tool call is followed by exactly one result, in call order; no result
    stands without its call."""
    i = 0
    while i < len(messages):
        message = messages[i]
        assert message.role != "tool", f"message {i}: a tool result without its call"
        i += 1
        if message.role == "assistant" and message.tool_calls:
            wanted = [c.id for c in message.tool_calls]
            got = [m.tool_call_id for m in messages[i : i + len(wanted)] if m.role == "tool"]
            assert got == wanted, f"message {i}: calls {wanted} answered by {got}"
            i += len(wanted)


def _card_blocks(blocks: Sequence[str]) -> dict[int, str]:
    """Each card turn's number and its lines, from the `<earlier_turns>` blocks."""
    cards: dict[int, str] = {}
    for block in blocks:
        starts = list(_CARD_LINE.finditer(block))
        for at, match in enumerate(starts):
            end = starts[at + 1].start() if at + 1 < len(starts) else len(block)
            number = int(match.group(1))
            assert number not in cards, f"turn {number} is carded twice"
            cards[number] = block[match.start() : end]
    return cards


def check_request(
    index: TurnIndex, plan: Plan, request: AssembledRequest, current: Turn, ratio: float
) -> None:
    """Assert every invariant on one request (see the module docstring)."""
    history = [t for t in index.turns if t.turn_id != current.turn_id]
    fidelity = {p.turn_id: p.fidelity for p in plan.turns}
    assert list(fidelity) == [t.turn_id for t in history], "the plan covers every earlier turn"
    for turn in history:
        assert (fidelity[turn.turn_id] is Fidelity.BEHIND_RESET) == turn.behind_reset

    messages = request.messages
    assert messages[0] == Message(role="system", content=request.system)
    now = current_turn_messages(current, request.tail)
    assert messages[len(messages) - len(now) :] == tuple(now), "the current turn ends the request"
    assert now[0].content.endswith(current.directive.text)
    middle = messages[1 : len(messages) - len(now)]
    check_tool_pairs(messages)

    # -- partition the history into its segments --------------------------------------------
    by_directive = {t.directive.text: t for t in history}
    assert len(by_directive) == len(history), "test sessions use distinct directives"
    segments: list[tuple[str, list[int]]] = []  # (kind, turn numbers) in request order
    whole: dict[int, Sequence[Message]] = {}
    packet_text, card_texts, handoffs = "", [], 0
    i = 0
    while i < len(middle):
        message = middle[i]
        assert message.role == "user", f"history message {i} starts no segment: {message}"
        text = message.content
        if text.startswith("<handoff>"):
            handoffs += 1
            i += 1
        elif text.startswith("<context_summary"):
            assert not packet_text, "one packet at most"
            packet_text = text
            segments.append(("packet", []))
            i += 1
        elif text.startswith("<earlier_turns>"):
            card_texts.append(text)
            segments.append(("cards", [int(n) for n in _CARD_LINE.findall(text)]))
            i += 1
        else:
            turn = by_directive.get(text)
            assert turn is not None, f"history message {i} belongs to no turn: {text[:80]!r}"
            record = full_record(turn)
            assert tuple(middle[i : i + len(record)]) == tuple(record), (
                f"turn {turn.number} is not carried whole"
            )
            assert turn.number not in whole, f"turn {turn.number} is carried twice"
            whole[turn.number] = record
            segments.append(("full", [turn.number]))
            i += len(record)
    cards = _card_blocks(card_texts)

    # -- each turn at exactly the fidelity the plan chose ----------------------------------
    wanted = {f: {t.number for t in history if fidelity[t.turn_id] is f} for f in Fidelity}
    assert set(whole) == wanted[Fidelity.FULL]
    assert set(cards) == wanted[Fidelity.CARD]
    behind = wanted[Fidelity.BEHIND_RESET]
    assert handoffs == (1 if behind and index.reset is not None else 0)
    assert bool(packet_text) == (plan.packet_range is not None)
    covered: set[int] = set()
    if plan.packet_range is not None:
        first, last = (index.by_id(i) for i in plan.packet_range)
        assert first is not None and last is not None
        match = _PACKET_OPEN.match(packet_text)
        assert match is not None
        assert (int(match.group(1)), int(match.group(2) or match.group(1))) == (
            first.number,
            last.number,
        )
        covered = set(range(first.number, last.number + 1))
        assert covered.isdisjoint(behind)
        assert wanted[Fidelity.PACKET] <= covered, "a packeted turn outside the packet's range"
        assert not covered & set(cards), "a carded turn inside the packet's range"
        assert 'recall({"turn": ' in packet_text, "the packet says how to recall its turns"
    else:
        assert not wanted[Fidelity.PACKET]

    # -- chronological order: retrieved older turns, the packet, then the working set ------
    order = [n for kind, numbers in segments for n in numbers]
    assert order == sorted(order), f"turns out of order: {order}"
    if packet_text:
        at = [kind for kind, _ in segments].index("packet")
        before = [n for _, numbers in segments[:at] for n in numbers]
        after = [n for _, numbers in segments[at + 1 :] for n in numbers]
        assert set(before) <= covered and not set(after) & covered

    # -- no-cut: every tool result present, whole or reversible ----------------------------
    for turn in index.turns:
        if turn.behind_reset:
            continue
        for evidence_id, body, result in results_of(turn):
            ref = short_ref(evidence_id)
            footer = f"[evidence:{ref} — {len(body.content):,} chars; call recall to expand]"
            if turn.turn_id == current.turn_id:
                shown = [m for m in now if m.tool_call_id == body.tool_call_id]
                assert [m.content for m in shown] == [result.content]
                assert result.content == carry(body.content, evidence_id).text
                if len(body.content) <= RESULT_LIMIT:
                    assert result.content == body.content, "a result that fits is verbatim"
                else:
                    assert f'"id": "{ref}"' in result.content, "a window names its recall"
                continue
            where = fidelity[turn.turn_id]
            if where is Fidelity.FULL:
                shown = [m for m in whole[turn.number] if m.tool_call_id == body.tool_call_id]
                assert len(shown) == 1 and shown[0].content.endswith(footer), shown
                digest = digest_result(body.content, evidence_id, is_error=body.is_error)
                assert shown[0].content == digest, "a whole turn's result is its digest"
                if body.is_error and "\n" not in body.content:
                    assert shown[0].content.startswith(body.content), "errors are verbatim"
            elif where is Fidelity.CARD:
                assert f"[evidence:{ref}]" in cards[turn.number], f"turn {turn.number} card"
            else:
                assert turn.number in covered, f"turn {turn.number}'s result {ref} is absent"
                if plan.packet_detailed:
                    line = next(
                        (
                            ln
                            for ln in packet_text.split("\n")
                            if ln.startswith(f"- Turn {turn.number}:")
                        ),
                        "",
                    )
                    assert ref in line, f"the packet lists turn {turn.number} without {ref}"
                else:
                    assert f"Turns {min(covered)}–{max(covered)}" in packet_text or (
                        len(covered) == 1 and f"Turns {turn.number} " in packet_text
                    )
            if where is not Fidelity.FULL:  # a turn not whole shows none of its messages
                assert not any(m.tool_call_id == body.tool_call_id for m in middle)

    # -- budget ------------------------------------------------------------------------------
    available = plan.budget.available
    turn_tokens = sum(t.tokens for t in plan.turns)
    assert plan.history_tokens == turn_tokens + plan.packet_tokens + plan.framing_tokens
    measured = history_tokens_measured(request, current, ratio)
    assert measured <= plan.history_tokens, "the history costs more than the plan priced it"
    if plan.packet_tokens + handoff_tokens(index, plan, ratio) <= available:
        # the compact part fits (the handoff and the packet, whichever the plan carries)
        assert plan.history_tokens <= available, (plan.history_tokens, available)

    # -- one source per fact -----------------------------------------------------------------
    names = [t.name for t in request.tools]
    assert len(names) == len(set(names)), f"a tool twice: {names}"
    thread = thread_lines(request.tail)
    # the thread names each packeted directive as its card asks it (verbatim when short)
    whole_asks = {card_of(index.by_number(n), ratio).asked for n in whole}  # type: ignore[arg-type]
    assert not set(thread) & whole_asks, "a directive both whole and in the thread"
    assert current.directive.text not in thread
    packeted = {card_of(t, ratio).asked for t in history if fidelity[t.turn_id] is Fidelity.PACKET}
    assert set(thread) <= packeted


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
