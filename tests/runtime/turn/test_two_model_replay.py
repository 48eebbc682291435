"""The two-model replay gate (spec "Verification", context_engine_gate): a packet is a cache,
never a boundary.

A fixture session of twenty search turns is planned for a small model, which needs a packet:
the summariser writes it once. Planned for a large model, the same ledger gives every packeted
turn back whole, with no `<context_summary>`; planned for the small model again, the stored
packet is reused (no summariser call, no new Compaction) and the projection is byte-identical.
The second test drives a real turn and rebuilds the request the small model was actually sent
from the ledger alone. The third moves a session from a small Ollama model to a large OpenAI
one over their real wire formats (loopback doubles) and renders that turn's projection for a
fallback provider.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from tests.context.sessions import Call, SessionBuilder, TurnScript, profile, search_result
from tests.doubles.ollama_server import OllamaDouble
from tests.doubles.openai_server import OpenAIDouble
from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop.context.payloads import Activity, Compaction, Directive, Receipt
from vak_desktop.context.planning.assemble import TailContext, assemble
from vak_desktop.context.planning.packets import SUMMARISER_SYSTEM
from vak_desktop.context.planning.planner import Fidelity
from vak_desktop.context.planning.turn_cards import full_record
from vak_desktop.context.planning.turns import build_turn_index
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.ledger import Entry, Ledger
from vak_desktop.providers import OllamaProvider, OpenAIProvider
from vak_desktop.providers.anthropic_wire import render as anthropic_render
from vak_desktop.providers.openai_wire import render_message
from vak_desktop.runtime import (
    DEFAULT_SYSTEM_PROMPT,
    ModelBinding,
    TurnRunner,
    bind_model,
    default_tools,
)
from vak_desktop.runtime.capacity.service import CapacityService
from vak_desktop.runtime.tools.surface import fitted_surface
from vak_desktop.runtime.turn.compaction import project_summarised
from vak_desktop.runtime.turn.projection import Projection, plan_turn, step_request

TOOLS = default_tools().specs()
TAIL = TailContext(utc="2026-11-30T10:20:00Z", local="2026-11-30 11:20 (Monday)", timezone="CET")
SMALL = profile(6_000, output_reserve=1_024, ratio=0.25, provider="scripted", model="small")
LARGE = profile(200_000, output_reserve=8_192, ratio=0.3, provider="scripted", model="large")
# what a summariser asked for ≤ 250 tokens writes: shorter than the share the plan reserved
SUMMARY = "The user asked about twenty topics, one per turn; each search found ten sources. " * 8
ASK = "Now compare the first topic with the latest one."


def binding(model: str) -> ModelBinding:
    return ModelBinding(provider="scripted", model=model, details=None)


def fixture(ledger: Ledger, model: str = "small") -> SessionBuilder:
    """Twenty closed turns, each a search with a ~14k-char JSON result and a short answer, and
    both models' measured profiles. The turns were the small model's: what they reached in
    the turn is the reserve its next turn keeps."""
    session = SessionBuilder(ledger, model=model)
    session.append(SMALL)
    session.append(LARGE)
    for n in range(1, 21):
        result = search_result(f"topic{n}", 14_000)
        session.turn(
            TurnScript(
                f"Turn {n}: what does the search say about topic {n}?",
                ((Call("search", {"query": f"topic {n}"}, result),),),
                f"Topic {n} is covered by ten sources; the first says it is fine.",
            )
        )
    return session


def compactions(session: SessionBuilder) -> list[Entry]:
    return [e for e in session.chain() if isinstance(e.payload, Compaction)]


def untimed(tail: str) -> str:
    """The tail without its clock line (the one part that moves between two projections)."""
    return "\n".join(tail.split("\n")[1:])


def clock_of(tail: str) -> TailContext:
    """The tail context a recorded tail was rendered from (its clock's length sizes the tail,
    and so the budget: a replay uses the recorded one)."""
    match = re.match(r"<turn_context>Today's date: UTC (.+?); local (.+?); timezone (.+?)\. ", tail)
    if match is not None:
        return TailContext(*match.groups())
    plain = re.match(r"\(Today's date: (.+?), (.+?); (.+?)\. ", tail)  # a small model's tail
    assert plain is not None, tail
    local, timezone, utc = plain.groups()
    return TailContext(utc, local, timezone)


def whole_in(messages: tuple[Message, ...], record: list[Message]) -> bool:
    starts = [i for i, m in enumerate(messages) if m == record[0]]
    return any(messages[i : i + len(record)] == tuple(record) for i in starts)


async def project(
    session: SessionBuilder, provider: ScriptedProvider, model: str
) -> tuple[Projection, ChatRequest]:
    """What the runtime does before a turn's first step: plan (summarising first if the plan
    needs a packet no stored one covers), then build the step's request."""
    bound = binding(model)
    projection = await project_summarised(
        session.ledger,
        session.session,
        provider,
        bound,
        system=DEFAULT_SYSTEM_PROMPT,
        tools=TOOLS,
        keep_alive=None,
        capacity=CapacityService(session.ledger),
    )
    request = step_request(
        session.ledger,
        session.session,
        bound,
        projection,
        system=DEFAULT_SYSTEM_PROMPT,
        tools=TOOLS,
        keep_alive=None,
        think=None,
    )
    return projection, request


async def test_a_packet_written_for_a_small_model_is_a_cache_never_a_boundary(
    ledger: Ledger,
) -> None:
    session = fixture(ledger)
    session.pending(ASK)
    summariser = ScriptedProvider(Scripted(text=SUMMARY))

    small, first = await project(session, summariser, "small")
    assert len(summariser.requests) == 1
    assert summariser.requests[0].messages[0].content == SUMMARISER_SYSTEM
    (stored,) = compactions(session)
    assert small.plan.packet is not None and small.plan.packet.entry_id == stored.id
    packeted = [t for t in small.plan.turns if t.fidelity is Fidelity.PACKET]
    assert len(packeted) >= 8
    summaries = [m.content for m in first.messages if m.content.startswith("<context_summary")]
    assert len(summaries) == 1 and SUMMARY.strip() in summaries[0]

    large, second = await project(session, summariser, "large")
    assert len(summariser.requests) == 1 and len(compactions(session)) == 1
    assert large.plan.packet_range is None
    assert {t.fidelity for t in large.plan.turns} == {Fidelity.FULL}
    assert not any("<context_summary" in m.content for m in second.messages)
    index = session.index()
    for planned in packeted:
        assert whole_in(second.messages, full_record(index.turns[planned.index]))

    again, third = await project(session, summariser, "small")
    assert len(summariser.requests) == 1 and len(compactions(session)) == 1
    assert again.plan == small.plan and again.plan.packet == small.plan.packet
    assert third.messages[:-2] == first.messages[:-2]  # system and history: byte-identical
    assert (first.messages[-2].content, third.messages[-2].content) == (small.tail, again.tail)
    assert third.messages[-1] == first.messages[-1]  # the user's words
    assert untimed(again.tail) == untimed(small.tail)
    # with the clock fixed, the whole request is a function of (ledger, profile)
    fixed = [
        plan_turn(
            index,
            p.profile,
            system=DEFAULT_SYSTEM_PROMPT,
            tools=TOOLS,
            tail_context=TAIL,
            pending=True,
        )
        for p in (small, again)
    ]
    built = [
        assemble(
            index,
            p.plan,
            index.turns[-1],
            system=DEFAULT_SYSTEM_PROMPT,
            tools=TOOLS,
            tail=p.tail,
            ratio=p.ratio,
        )
        for p in fixed
    ]
    # the same request but for its tail (the clock read when it was built)
    assert built[0] == built[1] and built[0].messages[:-2] == first.messages[:-2]
    assert built[0].messages[-1] == first.messages[-1]


async def test_the_request_a_small_model_was_sent_is_rebuilt_from_the_ledger_alone(
    ledger: Ledger,
) -> None:
    session = fixture(ledger)
    provider = ScriptedProvider(Scripted(text="They agree."))
    registry = default_tools()
    runner = TurnRunner(ledger, provider, registry)
    async for _ in runner.run(session.session, ASK, binding("small")):
        pass
    # the turn's own request is the first and only one: no summariser call precedes it, and it
    # carries the deterministic packet built from the covered turns' cards
    (sent,) = provider.requests
    assert sent.messages[0].content != SUMMARISER_SYSTEM
    assert any(m.content.startswith("<context_summary") for m in sent.messages)
    assert compactions(session) == []

    chain = session.chain()
    receipt = next(e.payload for e in chain if isinstance(e.payload, Receipt))
    directive = max(i for i, e in enumerate(chain) if isinstance(e.payload, Directive))
    before = chain[: directive + 1]  # the ledger as it stood when the step was planned
    index = build_turn_index(before)
    capacity = CapacityService(ledger)
    replayed, surfaces = {}, {}
    for model in ("small", "large"):
        bound = capacity.profile_for(binding(model), before, "2026-11-30T10:20:00Z")
        # what the turn's prefix was for this profile (the small model's is the compact one)
        surfaces[model] = fitted = fitted_surface(registry, DEFAULT_SYSTEM_PROMPT, ASK, bound)
        replayed[model] = plan_turn(
            index,
            bound,
            system=fitted.system,
            tools=fitted.tools,
            tail_context=clock_of(receipt.tail),
            pending=True,
        )
    small = replayed["small"]
    assert small.plan.to_json() == receipt.plan and small.tail == receipt.tail
    request = assemble(
        index,
        small.plan,
        index.turns[-1],
        system=surfaces["small"].system,
        tools=surfaces["small"].tools,
        tail=receipt.tail,
        ratio=small.ratio,
    )
    assert request.messages == sent.messages and request.tools == sent.tools

    large = replayed["large"]
    assert {t.fidelity for t in large.plan.turns} == {Fidelity.FULL}
    whole = assemble(
        index,
        large.plan,
        index.turns[-1],
        system=DEFAULT_SYSTEM_PROMPT,
        tools=TOOLS,
        tail=large.tail,
        ratio=large.ratio,
    )
    assert not any("<context_summary" in m.content for m in whole.messages)
    packeted = [t for t in small.plan.turns if t.fidelity is Fidelity.PACKET]
    assert packeted
    for planned in packeted:
        assert whole_in(whole.messages, full_record(index.turns[planned.index]))


# -- a ladder of providers over real wire formats -------------------------------------------


class RecordingOpenAI(OpenAIProvider):
    """The real OpenAI adapter, keeping each provider-neutral request it rendered."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent: list[ChatRequest] = []

    def render(self, request: ChatRequest) -> dict[str, Any]:
        self.sent.append(request)
        return super().render(request)


def said_openai(body: dict[str, Any]) -> list[str]:
    """What an OpenAI-shaped body says, in order: texts, calls and results."""
    out: list[str] = []
    for message in body["messages"]:
        out.append(message["content"])
        out += [
            f"{c['function']['name']} {json.loads(c['function']['arguments'])}"
            for c in message.get("tool_calls", [])
        ]
    return [s for s in out if s]


def said_anthropic(body: dict[str, Any]) -> list[str]:
    """What a Messages API body says, in the same terms."""
    out = [b["text"] for b in body.get("system", [])]
    for message in body["messages"]:
        for part in message["content"]:
            if part["type"] == "text":
                out.append(part["text"])
            elif part["type"] == "tool_use":
                out.append(f"{part['name']} {part['input']}")
            elif part["type"] == "tool_result":
                out.append(part["content"])
    return [s for s in out if s]


async def test_a_session_moves_from_a_small_local_model_to_a_large_hosted_one(
    ledger: Ledger,
) -> None:
    """Started on Ollama (a small trained window, metadata only), continued on an OpenAI model
    (a large window): the second request is re-projected from the ledger, so the packet the
    small model needed is not shown to the large one, which gets every turn whole; and the
    projection of that turn, rendered for another provider (a fallback leg), carries the same
    turns at the same fidelity."""
    session = fixture(ledger, model="qwen2.5:0.5b")  # its earlier turns ran on the small model
    key = "sk-ladder-0123456789"
    with (
        OllamaDouble(default_text=SUMMARY) as ollama_server,
        OpenAIDouble(models=("gpt-4.1",), api_key=key) as openai_server,
    ):
        ollama_server.add_model("qwen2.5:0.5b", trained_window=8_192)
        async with httpx.AsyncClient() as client:
            ollama = OllamaProvider(client, ollama_server.url)
            small = await bind_model(ollama, "qwen2.5:0.5b")
            async for _ in TurnRunner(ledger, ollama, default_tools()).run(
                session.session, ASK, small
            ):
                pass
            hosted = RecordingOpenAI(client, openai_server.url, api_key=key)
            large = await bind_model(hosted, "gpt-4.1")
            async for _ in TurnRunner(ledger, hosted, default_tools()).run(
                session.session, "And topic 2 against topic 19?", large
            ):
                pass

    chats = [b for m, p, b in ollama_server.requests if p == "/api/chat"]
    (chat,) = chats  # the turn's own request, with the deterministic packet: no summariser
    assert any(m["content"].startswith("<context_summary") for m in chat["messages"])
    assert compactions(session) == []
    receipts = [e.payload for e in session.chain() if isinstance(e.payload, Receipt)]
    packeted = [t["turn_id"] for t in receipts[0].plan["turns"] if t["fidelity"] == "packet"]
    assert len(packeted) >= 8 and receipts[0].plan["packet"] is None

    (body,) = [b for m, p, h, b in openai_server.requests if p == "/v1/chat/completions"]
    assert not any("<context_summary" in str(m["content"]) for m in body["messages"])
    assert {t["fidelity"] for t in receipts[-1].plan["turns"]} == {"full"}
    index = session.index()
    turns = {t.turn_id: t for t in index.turns}
    for turn_id in packeted:  # every packeted turn is back whole, in the wire format
        record = [render_message(m) for m in full_record(turns[turn_id])]
        start = body["messages"].index(record[0])
        assert body["messages"][start : start + len(record)] == record

    # the fallback leg: the same projection rendered for Anthropic says the same, in order
    (request,) = hosted.sent
    said = said_openai(body)
    assert len(said) > 3 * 20 and said_anthropic(anthropic_render(request)) == said
    assert not [
        e
        for e in session.chain()
        if isinstance(e.payload, Activity)
        and e.payload.type in ("silent_truncation", "context_overflow")
    ]
