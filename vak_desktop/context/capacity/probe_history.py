"""The conversation the capacity probe sends, and how a reply that writes its call as text is read.

Why it exists: the probe must measure the horizon on requests shaped like the ones the model
will really get (spec §1: user question, assistant tool call, a digest-shaped result with an
`[evidence:…]` tag, a short answer), and it must be cheap. Every sample is a prefix of ONE
endless, deterministic conversation plus the same closing instruction: a sample of k turns is
the system prompt, filler turns 0..k-1 and the instruction. Rungs and samples therefore only
ever *append* turns to what the runner already has in its prefix cache, never rewrite one
(measured on a llama.cpp runner: a repeated 7.6k-token prefix took 0.5 s instead of 77 s).

The `nonce` goes at the very start of the system prompt, so a new probe run never reuses a
cache another conversation left behind: its first request is a true cache miss, which is what
the cache rung and the prefill measurement need.

Small models (measured: Qwen2.5-Coder 0.5B and 1.5B Instruct) answer a tool instruction with
the call written in the message text and no `tool_calls`. The probe reads those with the same
recogniser a turn uses (`context/evidence/text_calls.py`), so it measures the model and not our parser.
"""

from __future__ import annotations

import hashlib
import random

from vak_desktop.context.evidence.digests import digest_result
from vak_desktop.context.payloads import ToolCall
from vak_desktop.context.request import ChatRequest, Message, ToolSpec

PROBE_TOOL = "probe_ack"
FILLER_TOOL = "lookup"
PROBE_TOOLS = (
    ToolSpec(
        FILLER_TOOL,
        "Look up a passage in the user's documents and return it.",
        {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "what to look up"}},
            "required": ["query"],
        },
    ),
    ToolSpec(
        PROBE_TOOL,
        "Acknowledge the user's latest instruction. Takes no arguments and has no side effects.",
        {"type": "object", "properties": {}},
    ),
)
INSTRUCTION = (
    "Before anything else, call the `probe_ack` tool now, with no arguments. "
    "Do not answer in prose."
)
SYSTEM = (
    "You are a helpful assistant working through the user's documents. Use the tools you are "
    "given when the user asks for them; results of earlier lookups may appear as digests."
)

_DOCUMENTS = (
    "the pump maintenance log", "the quarterly sales sheet", "the build pipeline notes",
    "the field survey", "the onboarding handbook", "the incident review", "the lab notebook",
    "the grant proposal", "the supplier contract", "the release checklist",
    "the warehouse inventory", "the migration plan",
)  # fmt: skip
_NOUNS = (
    "valve", "schedule", "budget", "sensor", "deadline", "invoice", "cluster", "sample",
    "shipment", "backlog", "reading", "threshold", "rollout", "audit", "forecast", "queue",
    "battery", "gasket", "ledger", "template", "calibration", "pipeline", "margin", "report",
)  # fmt: skip
_VERBS = (
    "delays", "replaces", "doubles", "checks", "moves", "records", "limits", "flags",
    "confirms", "reduces", "extends", "reviews",
)  # fmt: skip
_ADJECTIVES = (
    "second", "revised", "nightly", "spare", "older", "regional", "primary", "manual",
    "weekly", "pending", "shared", "final",
)  # fmt: skip


def _sentence(rng: random.Random) -> str:
    adjective, noun, other = rng.choice(_ADJECTIVES), rng.choice(_NOUNS), rng.choice(_NOUNS)
    return (
        f"The {adjective} {noun} {rng.choice(_VERBS)} the {other} after "
        f"{rng.randint(2, 90)} {rng.choice(('days', 'hours', 'runs', 'units', 'weeks'))}."
    )


def filler_turn(i: int) -> tuple[Message, ...]:
    """Turn `i` of the probe's conversation: question, lookup call, digest, short answer.
    Deterministic in `i`, so every sample and every probe run carries the same bytes."""
    rng = random.Random(i)
    document, noun = rng.choice(_DOCUMENTS), rng.choice(_NOUNS)
    section = i + 1
    paragraphs = ["\n".join(_sentence(rng) for _ in range(rng.randint(5, 9))) for _ in range(4)]
    body = f"# {document.removeprefix('the ').capitalize()}, section {section}\n\n"
    body += "\n\n".join(paragraphs)
    evidence = "b3:" + hashlib.sha256(f"probe-evidence-{i}".encode()).hexdigest()
    call = ToolCall(f"probe_call_{i}", FILLER_TOOL, {"query": f"{document} section {section}"})
    return (
        Message(
            role="user", content=f"In {document}, what does section {section} say about the {noun}?"
        ),
        Message(role="assistant", tool_calls=(call,)),
        Message(
            role="tool",
            content=digest_result(body, evidence),
            tool_call_id=call.id,
            tool_name=FILLER_TOOL,
        ),
        Message(
            role="assistant", content=f"Section {section} says: {paragraphs[0].split('.')[0]}."
        ),
    )


class ProbeHistory:
    """The probe's conversation, grown by appending turns. `messages(k)` is the request for a
    sample of k filler turns; any two samples share everything up to the shorter one's turns."""

    def __init__(self, nonce: str, *, system: str = SYSTEM) -> None:
        self.system = Message(role="system", content=f"[probe {nonce}] {system}")
        self.instruction = Message(role="user", content=INSTRUCTION)
        self._turns: list[tuple[Message, ...]] = []
        fixed = (self.system, self.instruction)
        self._base = ChatRequest(model="", messages=fixed, tools=PROBE_TOOLS).chars()
        self._cumulative = [self._base]  # request chars with k turns, k = index

    def _grow(self, turns: int) -> None:
        while len(self._turns) < turns:
            turn = filler_turn(len(self._turns))
            self._turns.append(turn)
            self._cumulative.append(self._cumulative[-1] + sum(m.chars() for m in turn))

    def messages(self, turns: int) -> tuple[Message, ...]:
        self._grow(turns)
        body = [m for turn in self._turns[:turns] for m in turn]
        return (self.system, *body, self.instruction)

    def request_chars(self, turns: int) -> int:
        """`ChatRequest.chars()` of the sample with `turns` filler turns (tools included)."""
        self._grow(turns)
        return self._cumulative[turns]

    def turns_within(self, chars: int, limit: int = 100_000) -> int:
        """The most filler turns whose request stays within `chars` characters (0 if none)."""
        turns = 0
        while turns < limit and self.request_chars(turns + 1) <= chars:
            turns += 1
        return turns
