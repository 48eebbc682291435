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

Shaped like the real requests (issue #17): given a `ProbePrefix` — the system text and the
schemas the engine's own prefix builder (`TurnRunner.probe_prefix`) would send this model —
the conversation carries that prefix byte for byte, its filler turns alternate between calling
the prefix's own tools (a directive, a call of a file tool, its digest, a short answer) and a
chat turn answered from what was read (a directive, an answer), and it closes on a natural
request ("Search my files for the order number QX-…") whose compliance is checked
deterministically: a call of one of the task's tools whose arguments carry the requested token.
Without a prefix (a bare provider, the benchmarks' double) it falls back to the synthetic
`lookup` / `probe_ack` pair.

The answer-from-memory task (issue #22: which horizon governs a turn that needs no tool): with
`memory=True` the conversation opens, right after the system prompt, on a fact the user asks
the model to remember ("the code of the bike lock in the garage is LK-…"), and `for_task`
gives the same conversation closing on the question instead ("What is the code … ? Answer
from our conversation"), followed when the reply's text names the code. Both tasks
share every byte up to their closing message, so the runner's prefix cache serves one from
the other's prefill.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass

from vak_desktop.context.evidence.digests import digest_result
from vak_desktop.context.evidence.text_calls import find_text_calls
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
SEARCH_TOOLS = ("grep", "glob", "read")  # the file tools a "search my files" request is met by
PROBE_REQUEST = "Search my files for the order number {token}."
# The fact is of another kind and shape than the tool task's order number, and its answer no
# formula: an order number "QX-…" acknowledged "Noted: …" drew 5 of the real 1.5B's 8 tool-task
# replies to open "Noted: the order number QX-1479 was found in …"; this one drew none
MEMORY_FACT = "Please remember this for later: the code of the bike lock in the garage is {token}."
MEMORY_NOTED = "The bike lock's code is {token}; I'll keep it in mind."
MEMORY_REQUEST = (
    "What is the code of the bike lock I asked you to remember? "
    "Answer from our conversation in a few words."
)
TOOL, MEMORY = "tool", "memory"  # the two kinds of probe task


@dataclass(frozen=True)
class ProbeTask:
    """The probe's closing request and its deterministic compliance check: followed when the
    reply calls one of `tools` (natively or written as text) with `token` in its arguments."""

    directive: str
    tools: tuple[str, ...]
    token: str = ""  # "" accepts any arguments (the synthetic `probe_ack` takes none)
    kind: str = TOOL  # MEMORY: followed when the reply's text names `token`, no tool needed

    def followed(self, calls: Sequence[ToolCall], text: str, specs: Sequence[ToolSpec]) -> bool:
        """Whether a reply (its native calls and its text) did what the task asked."""
        if self.kind == MEMORY:
            return bool(self.token) and self.token.lower() in text.lower()
        admitted = {s.name: s.parameters for s in specs if s.name in self.tools}
        written = [ToolCall("", c.name, c.arguments) for c in find_text_calls(text, admitted)]
        return any(self._meets(call) for call in (*calls, *written))

    def as_text(self, calls: Sequence[ToolCall]) -> bool:
        """Whether no native call met the task (so a follow came written in the text)."""
        if self.kind == MEMORY:
            return False
        return not any(self._meets(call) for call in calls)

    def _meets(self, call: ToolCall) -> bool:
        if call.name not in self.tools:
            return False
        return self.token.lower() in json.dumps(call.arguments, ensure_ascii=False).lower()


SYNTHETIC_TASK = ProbeTask(INSTRUCTION, (PROBE_TOOL,))


def search_task(nonce: str, offered: Sequence[str]) -> ProbeTask | None:
    """The natural request of a real prefix: search the user's files for a code the history
    never mentions; None when the prefix offers no file tool to do it with."""
    tools = tuple(name for name in SEARCH_TOOLS if name in offered)
    if not tools:
        return None
    digits = int(hashlib.sha256(nonce.encode()).hexdigest()[:8], 16) % 9000 + 1000
    token = f"QX-{digits}"
    return ProbeTask(PROBE_REQUEST.format(token=token), tools, token)


def memory_task(nonce: str) -> ProbeTask:
    """The answer-from-memory question: the fact's number, asked last (never the tool task's)."""
    digits = int(hashlib.sha256(f"memory {nonce}".encode()).hexdigest()[:8], 16) % 9000 + 1000
    return ProbeTask(MEMORY_REQUEST, (), f"LK-{digits}", MEMORY)


@dataclass(frozen=True)
class ProbePrefix:
    """The stable prefix of this model's real requests, as the engine builds it: the system
    text and the schemas loaded for the task's directive."""

    system: str
    tools: tuple[ToolSpec, ...]

    def task(self, nonce: str) -> ProbeTask | None:
        return search_task(nonce, [spec.name for spec in self.tools])


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


def _arguments(spec: ToolSpec | None, value: str) -> dict[str, str]:
    """A call's arguments: `value` in the schema's first required (else first) property."""
    if spec is None:
        return {"query": value}
    properties = spec.parameters.get("properties") or {}
    required = [p for p in spec.parameters.get("required") or () if p in properties]
    names = required or list(properties)
    return {str(names[0]): value} if names else {}


def filler_turn(i: int, tool: ToolSpec | None = None, *, chat: bool = False) -> tuple[Message, ...]:
    """Turn `i` of the probe's conversation: directive, a call of `tool` (the synthetic
    `lookup` without one), its digest, a short answer — or, a `chat` turn, a directive and an
    answer from what was read before (real sessions mix both). Deterministic in `i`, the tool
    and `chat`, so every sample and every probe run carries the same bytes."""
    rng = random.Random(i)
    document, noun = rng.choice(_DOCUMENTS), rng.choice(_NOUNS)
    section = i + 1
    paragraphs = ["\n".join(_sentence(rng) for _ in range(rng.randint(5, 9))) for _ in range(4)]
    if chat:
        ask = f"Thanks. Sum up what you found about the {noun} so far, in two sentences."
        answer = f"{paragraphs[0].split('.')[0]}. {paragraphs[1].split('.')[0]}."
        return Message(role="user", content=ask), Message(role="assistant", content=answer)
    body = f"# {document.removeprefix('the ').capitalize()}, section {section}\n\n"
    body += "\n\n".join(paragraphs)
    evidence = "b3:" + hashlib.sha256(f"probe-evidence-{i}".encode()).hexdigest()
    name = tool.name if tool is not None else FILLER_TOOL
    query = f"{document} section {section}"
    if tool is not None and tool.name in ("read", "glob"):
        query = f"docs/{document.removeprefix('the ').replace(' ', '-')}.md"
    call = ToolCall(f"probe_call_{i}", name, _arguments(tool, query))
    return (
        Message(
            role="user", content=f"In {document}, what does section {section} say about the {noun}?"
        ),
        Message(role="assistant", tool_calls=(call,)),
        Message(
            role="tool",
            content=digest_result(body, evidence),
            tool_call_id=call.id,
            tool_name=name,
        ),
        Message(
            role="assistant", content=f"Section {section} says: {paragraphs[0].split('.')[0]}."
        ),
    )


class ProbeHistory:
    """The probe's conversation, grown by appending turns. `messages(k)` is the request for a
    sample of k filler turns; any two samples share everything up to the shorter one's turns."""

    def __init__(
        self,
        nonce: str,
        *,
        system: str = SYSTEM,
        prefix: ProbePrefix | None = None,
        memory: bool = False,
    ) -> None:
        task = prefix.task(nonce) if prefix is not None else None
        if prefix is None or task is None:  # the synthetic pair: nothing real to shape it on
            prefix, task = ProbePrefix(system, PROBE_TOOLS), SYNTHETIC_TASK
        self.prefix, self.task, self.nonce = prefix, task, nonce
        self.tools = prefix.tools
        self.system = Message(role="system", content=f"[probe {nonce}] {prefix.system}")
        self.instruction = Message(role="user", content=task.directive)
        self.memory = memory_task(nonce) if memory else None
        self.fact: tuple[Message, ...] = ()  # the answer-from-memory task's fact, early
        if self.memory is not None:
            token = self.memory.token
            self.fact = (
                Message(role="user", content=MEMORY_FACT.format(token=token)),
                Message(role="assistant", content=MEMORY_NOTED.format(token=token)),
            )
        by_name = {spec.name: spec for spec in prefix.tools}
        # the filler turns take turns with the task's tools; the synthetic ones call `lookup`
        self._fillers: tuple[ToolSpec | None, ...] = (None,)
        if task is not SYNTHETIC_TASK:
            self._fillers = tuple(by_name[n] for n in task.tools if n in by_name)
        self._turns: list[tuple[Message, ...]] = []
        fixed = (self.system, *self.fact, self.instruction)
        self._base = ChatRequest(model="", messages=fixed, tools=self.tools).chars()
        self._cumulative = [0]  # the filler turns' chars with k turns, k = index

    def for_task(self, task: ProbeTask) -> ProbeHistory:
        """The same conversation (its turns shared, grown once) closing on `task` instead."""
        other = copy.copy(self)
        other.task, other.instruction = task, Message(role="user", content=task.directive)
        other._base = self._base - self.instruction.chars() + other.instruction.chars()
        return other

    def _grow(self, turns: int) -> None:
        while len(self._turns) < turns:
            k = len(self._turns)
            chat = self.task is not SYNTHETIC_TASK and k % 2 == 1
            turn = filler_turn(k, self._fillers[(k // 2) % len(self._fillers)], chat=chat)
            self._turns.append(turn)
            self._cumulative.append(self._cumulative[-1] + sum(m.chars() for m in turn))

    def messages(self, turns: int) -> tuple[Message, ...]:
        self._grow(turns)
        body = [m for turn in self._turns[:turns] for m in turn]
        return (self.system, *self.fact, *body, self.instruction)

    def request_chars(self, turns: int) -> int:
        """`ChatRequest.chars()` of the sample with `turns` filler turns (tools included)."""
        self._grow(turns)
        return self._base + self._cumulative[turns]

    def turns_within(self, chars: int, limit: int = 100_000) -> int:
        """The most filler turns whose request stays within `chars` characters (0 if none)."""
        turns = 0
        while turns < limit and self.request_chars(turns + 1) <= chars:
            turns += 1
        return turns
