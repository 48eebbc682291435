"""TurnCards: the compact, deterministic record of a closed turn, and the two ways a closed turn
is shown to a later request (spec §10).

A card is built once when a turn closes, from the ledger alone, with no model call: what was
asked, which tools ran on what (with their evidence ids), what was answered, how it ended.
A later request shows a turn either as its card (a few lines) or as its *full record*: the real
tool_use/tool_result pairs with thinking dropped, every result replaced by its shape digest and
every card result by its short ack, so the record is API-valid and byte-stable once closed.
The card also stores what every later request would otherwise recompute: each result's digest,
both sizes in characters (priced at whichever model is bound) and its index terms for BM25.

A card is shown to a request that carries a set of tools: a past call of a tool outside that set
(an imported turn's `read_file`) is told in words, not in the call's own shape, wherever a card
is shown — in the handoff, a run of cards, the packet — and it is priced as told (`card_chars`).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Collection, Mapping, Sequence, Set
from typing import Any

from vak_desktop.context.capacity.profile import estimate_tokens
from vak_desktop.context.evidence.call_repair import words_of
from vak_desktop.context.evidence.digests import digest_result, result_shape
from vak_desktop.context.evidence.windows import short_ref
from vak_desktop.context.payloads import (
    Answer,
    AssistantStep,
    EvidenceBody,
    JsonObject,
    Presentation,
    PresentationRef,
    ToolCall,
    ToolResult,
    TraceLine,
    TurnCard,
)
from vak_desktop.context.planning.dates import said_on
from vak_desktop.context.planning.gist import gist
from vak_desktop.context.planning.relative_dates import annotate
from vak_desktop.context.planning.relevance import index_terms
from vak_desktop.context.planning.turns import Turn
from vak_desktop.context.presentations.library import narration_text, projected_text
from vak_desktop.context.request import Message

NOT_RUN = "[not run: the turn stopped before this tool call was executed]"
SHORT_WORDS = 60  # narration up to this many words is kept verbatim
SHORT_ASK_TOKENS = 60  # a directive up to this many tokens is kept verbatim
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
LEAD_WORDS = 40  # a card's gist of a long text: its salient sentences, up to this many words ...
LONG_WORD = 200  # ... and a word longer than this many characters shown by its size
_LONG_ARGUMENT = 80  # a string argument longer than this is shown by its size in a trace line


def is_card_tool(name: str) -> bool:
    """Tools that emit a presentation card (their results are acks, not evidence)."""
    return name.startswith("emit_") and name.endswith("_card")


def leading_sentence(text: str) -> str:
    """The first sentence of `text`, ending at the first `.`, `!` or `?` followed by space."""
    flat = " ".join(text.split())
    parts = _SENTENCE_END.split(flat, maxsplit=1)
    return parts[0]


def narration_of(text: str, stop_words: Set[str] = frozenset()) -> str:
    """The narration a card keeps: verbatim when short, else its gist (`card_gist`)."""
    total = len(text.split())
    if total <= SHORT_WORDS:
        return " ".join(text.split())
    shown, words = card_gist(text, stop_words)
    return _sized(shown, total - words)


def asked_of(directive: str, tokens_per_char: float, stop_words: Set[str] = frozenset()) -> str:
    """The directive as a card shows it: verbatim when short, else its gist + its size."""
    flat = " ".join(directive.split())
    if estimate_tokens(len(flat), tokens_per_char) <= SHORT_ASK_TOKENS:
        return flat
    shown, words = card_gist(flat, stop_words)
    return _sized(shown, len(flat.split()) - words)


def _sized(shown: str, left: int) -> str:
    """A gist and how many words of its text it leaves out ("(+0 words)" says nothing)."""
    return f"{shown} (+{left} words)" if left > 0 else shown


def card_gist(text: str, stop_words: Set[str] = frozenset()) -> tuple[str, int]:
    """The part a card keeps of a long text, and how many of its words that is: its most
    salient sentences within `LEAD_WORDS` words, in order (`gist.py`: numbers, dates, names,
    quoted strings and identifiers over greetings and fillers) — not its first sentence, the
    least informative part of a chat message. A word longer than `LONG_WORD` characters
    (base64, a minified line) is shown by its size, so a 5 MB paste is never copied whole."""
    shown, words = gist(text, LEAD_WORDS, stop_words)
    kept = shown.split()
    if any(len(w) > LONG_WORD for w in kept):
        shown = " ".join(w if len(w) <= LONG_WORD else f"<{len(w):,} chars>" for w in kept)
    return shown, words


def args_digest(arguments: dict[str, Any]) -> str:
    """A call's arguments in compact JSON, long strings shown by their size (the call itself is
    in the full record, one `recall({turn})` away)."""

    def shrink(value: Any) -> Any:
        if isinstance(value, str) and len(value) > _LONG_ARGUMENT:
            return f"<{len(value):,} chars>"
        if isinstance(value, dict):
            return {k: shrink(v) for k, v in value.items()}
        if isinstance(value, list):
            return [shrink(v) for v in value]
        return value

    return json.dumps(shrink(arguments), ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _results_by_call(turn: Turn) -> dict[str, tuple[str, ToolResult, EvidenceBody | None]]:
    bodies: dict[str, EvidenceBody] = {}
    results: list[tuple[str, ToolResult]] = []
    for entry in turn.entries:
        payload = entry.payload
        if isinstance(payload, ToolResult):
            results.append((entry.id, payload))
        elif isinstance(payload, EvidenceBody):
            bodies[entry.id] = payload
    return {r.tool_call_id: (at, r, bodies.get(r.evidence)) for at, r in results}


def _calls(turn: Turn) -> list[ToolCall]:
    return [
        call
        for e in turn.entries
        if isinstance(e.payload, AssistantStep)
        for call in e.payload.tool_calls
    ]


def build_turn_card(
    turn: Turn,
    outcome: str,
    tokens_per_char: float,
    card_digests: dict[str, str] | None = None,
    *,
    reading: JsonObject | None = None,
    stop_words: Set[str] = frozenset(),
) -> TurnCard:
    """The TurnCard of a closed turn. Deterministic: the same turn gives the same card.
    `reading` is the directive's reading (`reading.py`), kept whole and indexed by its terms;
    `stop_words` (the lexicons') score down in the gists of a long directive and answer."""
    results = _results_by_call(turn)
    did = []
    digests: dict[str, str] = {}
    for call in _calls(turn):
        if is_card_tool(call.name):
            continue
        found = results.get(call.id)
        body = found[2] if found else None
        evidence = found[1].evidence if found else ""
        if body is not None:
            digests[evidence] = _digest(body, evidence, call.name)
        did.append(
            TraceLine(
                tool=call.name,
                args_digest=args_digest(call.arguments),
                evidence=evidence,
                result_shape=(
                    result_shape(body.content, is_error=body.is_error) if body else "not run"
                ),
                digest=digests.get(evidence, ""),
            )
        )
    presentations = tuple(
        PresentationRef(
            id=e.id,
            semantic_type=e.payload.semantic_type,
            title=e.payload.title,
            digest=(card_digests or {}).get(e.id, e.payload.identity_digest),
            derived_from=e.payload.derived_from,
        )
        for e in turn.entries
        if isinstance(e.payload, Presentation)
    )
    card = TurnCard(
        turn_id=turn.turn_id,
        asked=asked_of(turn.directive.text, tokens_per_char, stop_words),
        did=tuple(did),
        answered=Answer(presentations, narration_of(narration_text(turn.answer), stop_words)),
        outcome=outcome,
        reading=dict(reading or {}),
        said_at=turn.said_at,
    )
    full_chars = sum(m.chars() for m in full_record(turn, digests))
    card_chars = len(render_card(card, turn.number))
    terms, term_counts = index_terms(card)
    return TurnCard(
        turn_id=card.turn_id,
        asked=card.asked,
        did=card.did,
        answered=card.answered,
        outcome=card.outcome,
        reading=card.reading,
        tokens_full=estimate_tokens(full_chars, tokens_per_char),
        tokens_card=estimate_tokens(card_chars, tokens_per_char),
        chars_full=full_chars,
        chars_card=card_chars,
        terms=terms,
        term_counts=term_counts,
        said_at=card.said_at,
    )


def full_tokens(card: TurnCard, ratio: float) -> int:
    """What the turn's full record costs at `ratio` (the bound model's tokens/char)."""
    return estimate_tokens(card.chars_full, ratio) if card.chars_full else card.tokens_full


def card_tokens(card: TurnCard, ratio: float) -> int:
    """What the turn's card costs at `ratio`, as one line group of a card block: its text and
    the newline that separates it from the next (`CARD_BLOCK_CHARS` counts one of those)."""
    return estimate_tokens(card.chars_card + 1, ratio) if card.chars_card else card.tokens_card


def card_of(turn: Turn, ratio: float) -> TurnCard:
    """The turn's stored card, or the card it would get (old or still-open turns)."""
    return turn.card or build_turn_card(turn, turn.outcome, ratio)


def absent_tools(card: TurnCard, present: Collection[str] | None) -> tuple[str, ...]:
    """The tools `card`'s trace lines call that `present` (the tools a request carries; None:
    any) does not hold, each once, sorted: what its text as that request shows it depends on."""
    if present is None or not card.did:
        return ()
    return tuple(sorted({t.tool for t in card.did if t.tool not in present}))


def absent_as_prose(card: TurnCard, present: Collection[str]) -> TurnCard:
    """`card` with each past call of a tool the request does not carry told in words, not in
    the call's own shape: measured on Qwen2.5-Coder 0.5B (issue #22), an imported turn's
    `did: read_file {"q": …}` in the handoff was copied as a call in 3 tries of 6."""
    did = []
    for trace in card.did:
        if trace.tool in present:
            did.append(trace)
            continue
        try:
            arguments = json.loads(trace.args_digest)
        except ValueError:
            arguments = {}
        values = arguments.values() if isinstance(arguments, dict) else ()
        said = ", ".join(f"“{v}”" if isinstance(v, str) else json.dumps(v) for v in values)
        tool = " ".join(words_of(trace.tool)) or "a tool"
        told = f"{tool} (another app's tool, not one you can call)"
        did.append(dataclasses.replace(trace, tool=told, args_digest=f"on {said}" if said else ""))
    return dataclasses.replace(card, did=tuple(did))


def render_card(card: TurnCard, number: int, present: Collection[str] | None = None) -> str:
    """The text a card turn contributes to a request that carries the tools `present` (None:
    any tool): a past call of any other is told in words (`absent_as_prose`)."""
    if present is not None and absent_tools(card, present):
        card = absent_as_prose(card, present)
    said = said_on(card.said_at)
    when = f"{card.outcome}, {said}" if said else card.outcome
    lines = [f"Turn {number} ({when}) — asked: {card.asked}"]
    for trace in card.did:
        ref = f" [evidence:{short_ref(trace.evidence)}]" if trace.evidence else ""
        lines.append(f"  did: {trace.tool} {trace.args_digest} → {trace.result_shape}{ref}")
    for ref_ in card.answered.presentations:
        lines.append(f'  card: {ref_.semantic_type} "{ref_.title}" — {ref_.digest}')
    if card.answered.narration:
        lines.append(f"  answered: {card.answered.narration}")
    return "\n".join(lines)


def card_chars(card: TurnCard, number: int, present: Collection[str] | None = None) -> int:
    """What `card` (turn `number`'s) adds to a request carrying the tools `present` (None: any)
    in characters, with the newline after it (as `card_tokens` counts it): its stored size,
    unless a past call of an absent tool is told in words — then the text `render_card` makes
    for that request, so the plan prices what is sent."""
    if card.chars_card and not absent_tools(card, present):
        return card.chars_card + 1
    return len(render_card(card, number, present)) + 1


def _digest(body: EvidenceBody, evidence: str, tool: str) -> str:
    return digest_result(body.content, evidence, tool_name=tool, is_error=body.is_error)


def full_record(
    turn: Turn, digests: Mapping[str, str] | None = None, *, resolve_on: str | None = None
) -> list[Message]:
    """A closed turn as a later request shows it whole, an imported directive led by the day
    its source says it was said and the turn's relative times resolved on that day where they
    are said (`relative_dates.py`: "off to Canada next month (= February 2024)"; from the words
    alone the 1.5B answered "next month", or today's date): thinking dropped, results as digests,
    card results as their ack, every tool call paired with a result. The digests are the ones
    its TurnCard stored (or `digests`, by evidence id); a result without one is digested here.
    `resolve_on`: the time relative times are resolved on, in place of the source's (a request
    leaves a live turn unresolved: its card priced it so)."""
    if digests is None:
        card = turn.card
        stored = card.did if card is not None and card.turn_id == turn.turn_id else ()
        digests = {t.evidence: t.digest for t in stored if t.digest}
    source = turn.directive.said_at  # an imported turn's source time (live: its card's day)
    day = source if resolve_on is None else resolve_on
    said = said_on(source)
    text = annotate(turn.directive.text, day)
    text = f"[{said}] {text}" if said else text
    messages = [Message(role="user", content=text, images=turn.directive.images)]
    results = _results_by_call(turn)
    shown: set[str] = set()  # payload digests of the cards written so far in the turn
    for entry in turn.entries:
        step = entry.payload
        if isinstance(step, Presentation):
            shown.add(step.payload_digest)
        if not isinstance(step, AssistantStep) or not (step.text or step.tool_calls):
            continue
        text = annotate(projected_text(step.text, shown), day)  # minus repeated fences
        messages.append(Message(role="assistant", content=text, tool_calls=step.tool_calls))
        for call in step.tool_calls:
            found = results.get(call.id)
            if found is None:
                content = NOT_RUN
            else:
                _, result, body = found
                if is_card_tool(call.name) or body is None:
                    content = result.content
                else:
                    content = digests.get(result.evidence) or _digest(
                        body, result.evidence, call.name
                    )
            messages.append(
                Message(role="tool", content=content, tool_call_id=call.id, tool_name=call.name)
            )
    return messages


def card_block(rendered: Sequence[str]) -> str:
    """A run of consecutive card turns as one message: the cards inside one wrapper."""
    body = "\n".join(rendered)
    note = 'Earlier turns as cards; recall({"turn": N}) returns turn N whole.'
    return f"<earlier_turns>\n{note}\n{body}\n</earlier_turns>"


# What a card block adds beyond its cards (each card's price covers the newline after it).
CARD_BLOCK_CHARS = len(card_block([""]))


def turn_numbers(turns: Sequence[Turn]) -> str:
    """A run of turns as packets and notes name it: "3–7", or "3" for one."""
    if not turns:
        return ""
    first, last = turns[0].number, turns[-1].number
    return str(first) if first == last else f"{first}–{last}"
