"""The RequestAssembler: a plan and the ledger's turns rendered into one request (spec §6).

    [system]   static layers only                          byte-identical across turns
    [tools]    schemas in a fixed order
    [messages] handoff (after a reset) · older turns retrieved whole · the packet ·
               working-set turns (whole, or runs of cards) ·
               the tail block (and the passages recalled for the directive, `passages.py`)
               as a message of its own · the user's words, as written ·
               the current turn's later steps, appended unmodified

The tail (time, intent, stance, thread, work contract) is the only per-turn material and it
rides at the current turn's head, just before the user's words (Anthropic's adapter merges
the two into one message of two blocks), so the prefix caches and the user's words are read
last and alone (decision 0129); within a turn each request is the previous one plus the new
steps. Nothing here does I/O or reads a clock: `now` comes in.

Cards are shown for the tools the turn was planned with (`Plan.present`, the tools given to
`plan_request`: the prefix loaded at the turn's first step), not for each step's own tools, so
a later step that carries more tools (`find_tools`) or none (an answer-only step) still extends
the request before it; across turns they hold while the session's tools do.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass

import blake3

from vak_desktop.context.capacity.prefix import planned_prefix_tokens
from vak_desktop.context.capacity.profile import (
    estimate_tokens,
    is_small,
    tokens_per_char,
    usable_horizon,
)
from vak_desktop.context.payloads import (
    AssistantStep,
    CapacityProfile,
    Ewma,
    Nudge,
    Presentation,
    ToolResult,
)
from vak_desktop.context.planning.candidates import candidates
from vak_desktop.context.planning.card_index import CardIndex, card_index
from vak_desktop.context.planning.lexicon import Lexicons
from vak_desktop.context.planning.packets import number_runs, render_handoff, render_packet
from vak_desktop.context.planning.passages import (
    Recalled,
    focused_cap,
    recall_for,
    select_passages,
)
from vak_desktop.context.planning.planner import (
    PACKET_BATCH_TURNS,
    Fidelity,
    Plan,
    PlannedTurn,
    plan_working_set,
)
from vak_desktop.context.planning.reading import MEMORY, Reading, reading_for
from vak_desktop.context.planning.turn_cards import (
    NOT_RUN,
    absent_tools,
    card_block,
    card_of,
    full_record,
    render_card,
)
from vak_desktop.context.planning.turns import Turn, TurnIndex
from vak_desktop.context.presentations.library import projected_text
from vak_desktop.context.request import Message, ToolSpec

STANCE = (
    "Answer the user's latest message. Earlier turns may appear as cards or in a summary; "
    "recall brings any turn or result back in full when you need it."
)
# Today's date, said as such and apart from the history's dates, so "last Saturday" in an earlier
# turn is read against that turn's own day (a bare "Now: 2026-…" drew answers toward today's)
TODAY = "Today's date:"
DATED = "Earlier turns are dated by the day they were said."
THREAD_SHARE = 8  # the thread's summarised requests: at most 1/8 of the history budget
RECENT_TURNS_FOR_RESERVE = 16  # EWMA(α=0.3) weight beyond these is below 1e-8


@dataclass(frozen=True)
class TailContext:
    """The per-turn facts the tail carries; the caller reads the clock."""

    utc: str  # e.g. 2026-11-30T10:20:00Z
    local: str  # e.g. 2026-11-30 11:20 (Monday)
    timezone: str  # e.g. CET (UTC+01:00)
    intent: str = ""
    work_contract: str = ""


@dataclass(frozen=True)
class AssembledRequest:
    system: str
    tools: tuple[ToolSpec, ...]
    messages: tuple[Message, ...]  # system first
    prefix_digest: str
    cache_breakpoints: tuple[int, ...]  # message indexes that end a cacheable prefix
    tail: str


def prefix_digest(system: str, tools: Sequence[ToolSpec]) -> str:
    """blake3 over the bytes that must stay identical across turns for the prefix cache to hit."""
    stable = json.dumps(
        {"system": system, "tools": [[t.name, t.description, t.parameters] for t in tools]},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return "b3:" + blake3.blake3(stable.encode("utf-8")).hexdigest()


PAUSED_HEADER = "Earlier, now paused (the user moved on; return to these only if asked):"


def render_tail(
    context: TailContext, thread: Sequence[str], paused: Sequence[str] = (), *, plain: bool = False
) -> str:
    """The tail block. `plain` (a small model): the same facts as sentences, without the tags
    and without the stance (the compact system text says it once) — measured on a 0.5B model,
    the tagged block was copied back as the answer in 3 of 6 tries, the plain one in none."""
    if plain:
        return _plain_tail(context, thread, paused)
    parts = [
        f"<turn_context>{TODAY} UTC {context.utc}; local {context.local}; timezone "
        f"{context.timezone}. {DATED}</turn_context>"
    ]
    if context.intent:
        parts.append(f"<intent>{context.intent}</intent>")
    parts.append(f"<stance>{STANCE}</stance>")
    text = _thread_text(thread, paused)
    if text:
        parts.append(f"<thread>{text}</thread>")
    if context.work_contract:
        parts.append(f"<work_contract>{context.work_contract}</work_contract>")
    return "\n".join(parts)


def _thread_text(thread: Sequence[str], paused: Sequence[str]) -> str:
    """The thread's two lists as the tail writes them, in either form; "" when both are empty."""
    sections = []
    if thread:
        sections.append("Earlier requests, now summarised:\n" + "\n".join(f"- {d}" for d in thread))
    if paused:
        sections.append(PAUSED_HEADER + "\n" + "\n".join(f"- {d}" for d in paused))
    return "\n".join(sections)


def _plain_tail(context: TailContext, thread: Sequence[str], paused: Sequence[str]) -> str:
    parts = [f"({TODAY} {context.local}, {context.timezone}; {context.utc}. {DATED})"]
    if context.intent:
        parts.append(f"(Current intent: {context.intent})")
    text = _thread_text(thread, paused)
    if text:
        parts.append(text)
    if context.work_contract:
        parts.append(f"(Work contract: {context.work_contract})")
    return "\n".join(parts)


def thread_for(
    plan: Plan,
    index: TurnIndex,
    ratio: float,
    paused: Sequence[str] = (),
    room: int | None = None,
) -> tuple[list[str], list[str]]:
    """The thread's two lists. Summarised: directives not in the working set verbatim, the
    latest ones inside the packet, each as its card asks it (verbatim when short, else its gist
    and how much follows), so a few long pastes cannot crowd out the history the thread
    is there to point at. Paused (directive drift, §7): the directives of the subject the user
    left — asked out when packeted, else named by number, a run of them in one line (their
    words are already above: one source per fact). `room`: the tokens the summarised list may
    take (the newest kept)."""
    packet = Fidelity.PACKET
    latest = list(
        itertools.islice(
            (t for t in reversed(plan.turns) if t.fidelity is packet), PACKET_BATCH_TURNS
        )
    )
    latest.reverse()  # the latest packeted turns, oldest first
    summarised = [
        card_of(index.turns[t.index], ratio).asked for t in latest if t.turn_id not in paused
    ]
    if room is not None and summarised:  # the newest that fit, the newest one always
        kept, chars = [summarised[-1]], len(summarised[-1]) + 3  # "- " and the newline
        for asked in reversed(summarised[:-1]):
            chars += len(asked) + 3
            if estimate_tokens(chars, ratio) > room:
                break
            kept.append(asked)
        summarised = kept[::-1]
    held: list[str] = []
    above: list[int] = []  # the numbers of paused turns shown above, named in one line
    for t in plan.turns if paused else ():
        if t.turn_id not in paused:
            continue
        if t.fidelity is not packet:
            above.append(t.index + 1)
            continue
        if above:
            held.append(_named_above(above))
            above = []
        held.append(card_of(index.turns[t.index], ratio).asked)
    if above:
        held.append(_named_above(above))
    return summarised, held


def _named_above(numbers: Sequence[int]) -> str:
    """Paused turns the request shows above, by number: "turns 25–30 (above)"."""
    return f"turn{'s' if len(numbers) > 1 else ''} {number_runs(numbers)} (above)"


def current_turn_messages(turn: Turn, tail: str) -> list[Message]:
    """The turn in progress exactly as it stands: the tail as a message of its own (when there
    is one), the directive as the user wrote it, then every step with its thinking and its
    results as carried, nudges as their own messages. The user's words come last and alone,
    as every chat app sends them: appended to the tail's passages, the real 1.5B copied more
    of the passages into its answers (decision 0129)."""
    directive = Message(role="user", content=turn.directive.text, images=turn.directive.images)
    messages = [Message(role="user", content=tail), directive] if tail else [directive]
    pending: dict[str, str] = {}

    def close_pending() -> None:
        messages.extend(
            Message(role="tool", content=NOT_RUN, tool_call_id=call_id, tool_name=name)
            for call_id, name in pending.items()
        )
        pending.clear()

    shown: set[str] = set()  # payload digests of the cards written so far in the turn
    for entry in turn.entries:
        payload = entry.payload
        if isinstance(payload, Presentation):
            shown.add(payload.payload_digest)
        elif isinstance(payload, AssistantStep):
            close_pending()
            if payload.text or payload.tool_calls or payload.thinking:
                messages.append(
                    Message(
                        role="assistant",
                        content=projected_text(payload.text, shown),
                        thinking=payload.thinking,
                        tool_calls=payload.tool_calls,
                        signed_thinking=payload.signed_thinking,
                    )
                )
                pending.update((c.id, c.name) for c in payload.tool_calls)
        elif isinstance(payload, ToolResult):
            pending.pop(payload.tool_call_id, None)
            messages.append(
                Message(
                    role="tool",
                    content=payload.content,
                    tool_call_id=payload.tool_call_id,
                    tool_name=payload.tool_name,
                    images=payload.images,
                )
            )
        elif isinstance(payload, Nudge):
            close_pending()
            messages.append(Message(role="user", content=payload.text))
    return messages


def current_turn_reserve(
    history: Sequence[Turn],
    current: Turn | None,
    ratio: float,
    model: str,
    indexed: CardIndex | None = None,
) -> int:
    """max(this turn so far, EWMA of the in-turn size earlier turns of this `model` reached:
    the spec's "observed for this model", the turns given while it was bound). An imported
    chat's turns, or another model's, say nothing of its turns: efficacy's imported build
    logs made the 0.5B's reserve 3,150 tokens at its 2,742-token horizon, and left the
    history no room at all. `indexed` keeps each closed turn's in-turn size, so a request
    does not rebuild sixteen turns' messages."""
    observed = Ewma(0.0)
    newest = (t for t in reversed(history) if t.directive.model == model)
    for turn in reversed(list(itertools.islice(newest, RECENT_TURNS_FOR_RESERVE))):
        chars = (
            indexed.rendered("in_turn_chars", turn, functools.partial(_in_turn_chars, turn))
            if indexed is not None
            else _in_turn_chars(turn)
        )
        observed = observed.update(estimate_tokens(chars, ratio))
    now = _in_turn_chars(current) if current else 0
    return max(estimate_tokens(now, ratio), int(observed.value))


def _in_turn_chars(turn: Turn) -> int:
    return sum(m.chars() for m in current_turn_messages(turn, ""))


def plan_request(
    index: TurnIndex,
    profile: CapacityProfile,
    current: Turn | None,
    *,
    system: str,
    tools: Sequence[ToolSpec],
    tail_context: TailContext,
    lexicons: Lexicons,
    reading_terms: Sequence[str] = (),
    reading: Reading | None = None,
    small: bool | None = None,
) -> tuple[Plan, str]:
    """Plan the next request and build its tail. The thread depends on the plan and the plan on
    the tail's size, so the two are settled together: the tail is budgeted at the largest size
    tried so far, and the plan is taken once its own thread fits that budget. The budget only
    grows, so this ends (usually in one or two rounds); a fixed number of rounds could return a
    tail whose thread belongs to another plan (a directive both whole and in the thread).
    `reading`: the current directive's one reading, when the caller made it. `small`: whether
    the model is a small one, judged by its tool horizon (default: `is_small(profile)`). A
    tool-free turn is planned at the memory horizon (`for_turn`), and that may pass
    `SMALL_HORIZON` while the model stays small: the real 0.5B's memory horizon reached 9,493,
    and it lost its focused plans (8,350-token requests, 150 s a question, LoCoMo conv-49)."""
    ratio = tokens_per_char(profile)
    indexed = None
    if index.head is not None and index.turns and current is index.turns[-1]:
        history: Sequence[Turn] = index.turns[:-1]  # a running session's request: the card
        indexed = card_index(index, ratio)  # index holds every earlier turn
    else:
        history = [t for t in index.turns if current is None or t.turn_id != current.turn_id]
    prefix_chars = len(system) + sum(t.chars() for t in tools)
    prefix_tokens = planned_prefix_tokens(profile, prefix_chars, prefix_digest(system, tools))
    reserve = current_turn_reserve(history, current, ratio, profile.model, indexed)
    directive: str | Reading = current.directive.text if current else ""
    if reading is not None and current is not None and reading.text == current.directive.text:
        directive = reading
    present = frozenset(t.name for t in tools)  # the tools a card's past calls are shown for
    ranked = candidates(
        history, ratio, directive, lexicons, reading_terms, indexed=indexed, present=present
    )
    plain = is_small(profile) if small is None else small
    tail = render_tail(tail_context, [], plain=plain)
    # the passages matching the directive (ranked once), in a slice of the budget reserved for
    # them when not every turn fits whole; they ride in the tail (the part that moves)
    spent = prefix_tokens + estimate_tokens(len(tail), ratio) + profile.output_reserve + reserve
    asked = current.directive.text if current else ""  # the words the passages are found by
    available = max(0, usable_horizon(profile) - spent)
    read = reading_for(directive, lexicons)
    memory = MEMORY in read.domains
    found, recalled, reserved = recall_for(  # every earlier turn, those behind a reset too
        index if indexed is not None else history,
        asked,
        lexicons,
        available=available,
        whole=sum(ranked.full_cost),
        memory=memory,
        behind=len(history) - len(ranked.live),
    )
    # A small model asked about the conversation's past (a cue said so: "remember", "our
    # conversation", "the file I mentioned a while ago"; not the floor an uncued reading gets)
    # is `focused`: what it refers to is in the passages, which come before everything the
    # history may leave out (whole turns promoted for recency, packet lines, the summarised
    # requests); the history keeps only what every plan carries. Issue #22: on the real 1.5B
    # at its probed 2,211 tokens, the passages had yielded to those until one line was left.
    plan_at = functools.partial(  # the working set at a tail size: all else is this request's
        plan_working_set,
        index,
        profile,
        history=history,
        prefix_tokens=prefix_tokens,
        current_turn_reserve=reserve,
        ranked=ranked,
    )
    focused = bool(reserved) and plain and memory and not read.orienting
    if focused:
        nothing_left = estimate_tokens(len(tail), ratio) + available
        floor = plan_at(tail_tokens=nothing_left, focused=True).history_tokens
        # unless the newest batch, which every plan carries, leaves the passages less than
        # half their usual slice: the usual plan's whole turns found by relevance carry more
        focused = available - floor >= reserved // 2
        if focused:
            reserved = min(focused_cap(asked), available - floor)
    # the thread's summarised requests get a share of the same budget: on a small model eight
    # long ones took 370 of 1,381 tokens and the passages the question found were cut to none
    # (issue #22, LoCoMo conv-49); a frontier model's share holds them all. A focused request
    # shows none: they are the newest requests, not what its question asks about
    thread = available // THREAD_SHARE
    if reserved and found is not None and not focused:  # the slice is no larger than the
        # passages found fill: a question few passages match leaves the rest to the history
        # (a focused one leaves it empty: what it asks is not in the newest turns, and a small
        # model answers worse beside them — LoCoMo's evidence lines alone scored 0.43 on the
        # real 1.5B where its whole 20k-token history scored 0.22)
        reserved = min(reserved, select_passages(found, recalled, reserved, ratio).tokens)
    tail_tokens = estimate_tokens(len(tail), ratio) + reserved
    if focused:  # the history is the floor and no more: the room the passages leave stays
        # unused. Given it, the newest turns filled it as cards and whole turns (the real 1.5B
        # at its 8,086-token memory horizon: 7,314 tokens, 341 s to answer one question)
        tail_tokens = nothing_left - floor
    while True:
        plan = plan_at(tail_tokens=tail_tokens, focused=focused)
        if plan.over_budget > 0 and reserved > 0:  # the passages yield to the newest turns a
            cut = min(reserved, plan.over_budget)  # plan must carry: never the cause of a reset
            reserved, tail_tokens = reserved - cut, tail_tokens - cut
            continue
        summarised, paused = thread_for(plan, index, ratio, ranked.paused, thread)
        tail = render_tail(tail_context, [] if focused else summarised, paused, plain=plain)
        passages = Recalled()
        if reserved and found is not None:
            # the slice is the passages' own: a thread that grew takes more tail, not their room
            whole = [t.index for t in plan.turns if t.fidelity is Fidelity.FULL]
            passages = select_passages(found, recalled, reserved, ratio, whole)
        if passages.text:
            tail = f"{tail}\n\n{passages.text}"
        if estimate_tokens(len(tail), ratio) <= tail_tokens:
            if passages.text:
                plan = dataclasses.replace(
                    plan,
                    passage_tokens=passages.tokens,
                    passage_turns=passages.turns,
                    passage_refs=passages.refs,
                )
            return plan, tail
        tail_tokens = estimate_tokens(len(tail), ratio)


def history_messages(index: TurnIndex, plan: Plan, ratio: float) -> list[Message]:
    """Every turn before the current one at the fidelity the plan chose, in request order: the
    handoff, the older turns retrieved from the packet's range (whole or as cards), the packet,
    then the working set; every card as the plan priced it, for the tools it was planned with."""
    turns = index.by_turn_id
    # what earlier requests rendered of these turns (each step of a turn advances the index)
    indexed = card_index(index, ratio) if index.head is not None else None
    behind, packet = Fidelity.BEHIND_RESET, Fidelity.PACKET
    planned = [p for p in plan.turns if p.fidelity is not behind]
    messages: list[Message] = []
    if index.reset is not None and len(planned) < len(plan.turns):
        messages.append(Message(role="user", content=render_handoff(index.reset.handoff)))
    packet_end = 0
    if plan.packet_range is not None:
        last = turns[plan.packet_range[1]].index
        packet_end = bisect.bisect_right(planned, last, key=_index_of)  # planned is in order
        messages += _turn_messages(turns, planned[:packet_end], ratio, indexed, plan.present)
        text = plan.packet_text()  # as the plan priced it, unless the plan changed since
        if text is None:
            span = [turns[p.turn_id] for p in planned[:packet_end]]
            packeted = [
                (turn, card_of(turn, ratio))
                for turn, p in zip(span, planned, strict=False)
                if p.fidelity is packet
            ]
            text = render_packet(
                plan.packet.packet if plan.packet else None,
                span,
                packeted,
                plan.packet_shape,
                listing=indexed.listing if indexed else None,
                present=plan.present,
                turns=turns,
            )
        messages.append(Message(role="user", content=text))
    messages += _turn_messages(turns, planned[packet_end:], ratio, indexed, plan.present)
    return messages


def _index_of(planned: PlannedTurn) -> int:
    return planned.index


def _turn_messages(
    turns: dict[str, Turn],
    planned: Sequence[PlannedTurn],
    ratio: float,
    indexed: CardIndex | None = None,
    present: frozenset[str] | None = None,
) -> list[Message]:
    """Whole turns as their records and each run of card turns as one block (packeted turns
    are skipped: the packet carries them), each card shown for the tools `present` (None:
    any). `indexed` keeps what a frozen turn renders to."""
    messages: list[Message] = []
    cards: list[str] = []
    packet, card_fidelity = Fidelity.PACKET, Fidelity.CARD
    # what a frozen turn rendered to, read here without a call per turn (a frontier request
    # carries a thousand turns): `CardIndex.rendered`'s store, which turns it holds, their cards
    # (and which of those tell a past call in words for these tools)
    kept, held, held_cards, start, size = ({}, [], [], 0, 0) if indexed is None else indexed.kept()
    told = indexed.told(present) if indexed is not None else {}
    for p in planned:
        fidelity = p.fidelity
        if fidelity is packet:
            continue
        # a frozen turn is the card index's own (its turns are the index's: the one at its
        # index with its id), read there without a look-up by id per turn
        at = p.index - start
        frozen = 0 <= at < size and held[at].turn_id == p.turn_id
        turn = held[at] if frozen else turns[p.turn_id]
        if fidelity is card_fidelity:
            key: tuple[str, ...] = ("card", turn.turn_id)
            if frozen and at in told:  # its text is the same for every set lacking these tools
                key = (*key, *absent_tools(held_cards[at], present))
            text = kept.get(key) if frozen else None
            if text is None:
                card = held_cards[at] if frozen else card_of(turn, ratio)
                text = render_card(card, turn.number, present)
                if frozen:
                    kept[key] = text
            cards.append(text)
            continue
        if cards:
            messages.append(_card_block(cards, indexed))
            cards = []
        key = ("full", turn.turn_id)
        record = kept.get(key) if frozen else None
        if record is None:
            record = tuple(full_record(turn))
            if frozen:
                kept[key] = record
        messages.extend(record)
    if cards:
        messages.append(_card_block(cards, indexed))
    return messages


def _card_block(cards: Sequence[str], indexed: CardIndex | None) -> Message:
    """A run of cards as its message, the one the card index kept when the run recurs."""
    if indexed is None:
        return Message(role="user", content=card_block(cards))
    return indexed.block(cards, lambda: Message(role="user", content=card_block(cards)))


def assemble(
    index: TurnIndex,
    plan: Plan,
    current: Turn,
    *,
    system: str,
    tools: Sequence[ToolSpec],
    tail: str,
    ratio: float,
) -> AssembledRequest:
    """The request for the current turn's next step."""
    history = history_messages(index, plan, ratio)
    now = current_turn_messages(current, tail)
    messages = (Message(role="system", content=system), *history, *now)
    breakpoints = sorted({0, len(history), len(messages) - 1})
    return AssembledRequest(
        system=system,
        tools=tuple(tools),
        messages=messages,
        prefix_digest=prefix_digest(system, tools),
        cache_breakpoints=tuple(breakpoints),
        tail=tail,
    )
