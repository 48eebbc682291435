"""The first answer never waits on a model-written summary (issue #17, spec §4, §10).

An imported 40-turn session, bound to a small measured profile on the Ollama double: the first
request the turn sends is its own (the double counts every /api/chat), it carries the
deterministic packet built from the covered turns' cards, and the card of the turn the
directive refers back to. The summary is written afterwards, in the background, once the model
is idle; a real turn cancels it rather than wait for it.
"""

from __future__ import annotations

import asyncio
import dataclasses

import httpx

from tests.context.sessions import profile
from tests.doubles.ollama_server import OllamaDouble
from vak_desktop.context.payloads import Compaction, Receipt
from vak_desktop.context.planning.packets import SUMMARISER_SYSTEM
from vak_desktop.ledger import Ledger
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.runtime import TurnRunner, default_tools
from vak_desktop.runtime.capacity.binding import bind_model
from vak_desktop.runtime.sessions.interchange import import_openai
from vak_desktop.runtime.tools.surface import COMPACT_SYSTEM

MODEL = "qwen2.5-coder:0.5b"
CODE = "ZX-4471-Q"
# measured: a small horizon, as the probe finds for a 0.5B model
SMALL = dataclasses.replace(
    profile(3_000, output_reserve=256, ratio=0.3, provider="ollama", model=MODEL),
    quantisation="Q4_K_M",
)
ASK = "Search my files for the shipment code I gave you earlier."


def conversation(turns: int = 40) -> dict[str, object]:
    """A long chat in the OpenAI format: a fact stated in turn 3, tool results in others."""
    messages: list[dict[str, object]] = [{"role": "system", "content": "You are helpful."}]
    for n in range(1, turns + 1):
        if n == 3:
            messages.append(
                {"role": "user", "content": f"Note for later: the shipment code is {CODE}."}
            )
            messages.append({"role": "assistant", "content": "Noted, I will remember it."})
            continue
        messages.append(
            {"role": "user", "content": f"Question {n}: how do I tune part {n} of the build?"}
        )
        if n % 4 == 0:
            call = {
                "id": f"c{n}",
                "type": "function",
                "function": {"name": "read", "arguments": f'{{"path": "notes/part{n}.md"}}'},
            }
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
            body = f"# Part {n}\n" + f"Line about tuning part {n} with flags.\n" * 60
            messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": body})
        messages.append(
            {
                "role": "assistant",
                "content": f"For part {n}, raise the cache size and rebuild. " * 3,
            }
        )
    return {"messages": messages}


async def test_the_first_request_is_the_turns_own_and_carries_the_referred_turn(
    ledger: Ledger,
) -> None:
    imported = import_openai(ledger, conversation(), title="imported")
    session = imported.session
    ledger.append(session, SMALL)
    with OllamaDouble(default_text="The summary so far: part questions.") as server:
        server.add_model(MODEL, trained_window=32_768)
        async with httpx.AsyncClient(timeout=30) as client:
            ollama = OllamaProvider(client, server.url)
            binding = await bind_model(ollama, MODEL)
            runner = TurnRunner(ledger, ollama, default_tools(), compact_ahead=True)
            async for _ in runner.run(session, ASK, binding):
                pass
            chats = [b for _, p, b in server.requests if p == "/api/chat"]
            first = chats[0]
            assert first["messages"][0]["content"] != SUMMARISER_SYSTEM
            assert first["messages"][-1]["content"].endswith(ASK)
            sent = "\n".join(str(m["content"]) for m in first["messages"])
            assert CODE in sent  # turn 3's card reached the model
            assert "<context_summary" in sent and 'recall({"turn": ' in sent
            receipt = next(
                e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, Receipt)
            )
            assert receipt.plan["packet_range"] is not None and receipt.plan["packet"] is None
            assert "num_predict" in first.get("options", {})  # a max output on every request
            # the prefix fits the model: the compact system text, within a third of the horizon
            assert first["messages"][0]["content"].startswith(COMPACT_SYSTEM)
            # a small model: only the tools the asked-for search needs, and a plain tail
            assert {t["function"]["name"] for t in first["tools"]} == {"grep", "glob"}
            assert "<stance>" not in sent and "<turn_context>" not in sent
            prefix = receipt.plan["budget"]["prefix_tokens"]
            assert prefix * 3 <= SMALL.instruction_horizon.tokens, prefix
            # after the close, the summary is written in the background and stored by range
            await asyncio.wait_for(runner.settle(session), 30)
            packets = [
                e.payload
                for e in ledger.chain_to_root(session)
                if isinstance(e.payload, Compaction)
            ]
            assert packets and packets[-1].summary
            later = [b for _, p, b in server.requests if p == "/api/chat"][len(chats) :]
            assert later and later[0]["messages"][0]["content"] == SUMMARISER_SYSTEM
            await runner.aclose()


async def test_a_real_turn_cancels_the_summary_being_written_instead_of_waiting(
    ledger: Ledger,
) -> None:
    session = import_openai(ledger, conversation(), title="imported").session
    ledger.append(session, SMALL)
    with OllamaDouble(default_text="slow summary " * 40, default_delay_per_chunk=0.2) as server:
        server.add_model(MODEL, trained_window=32_768)
        async with httpx.AsyncClient(timeout=30) as client:
            ollama = OllamaProvider(client, server.url)
            binding = await bind_model(ollama, MODEL)
            runner = TurnRunner(ledger, ollama, default_tools())
            task = runner.start_compaction(session, binding)
            await asyncio.sleep(0.5)  # the summariser is streaming, slowly
            assert not task.done()
            server.default_delay_per_chunk = 0.0
            loop = asyncio.get_running_loop()
            started = loop.time()
            async for _ in runner.run(session, ASK, binding):
                pass
            assert task.cancelled() and loop.time() - started < 10
            assert not [
                e for e in ledger.chain_to_root(session) if isinstance(e.payload, Compaction)
            ]
            await runner.aclose()


async def test_the_compact_prefix_is_byte_stable_across_turns(ledger: Ledger) -> None:
    session = import_openai(ledger, conversation(), title="imported").session
    ledger.append(session, SMALL)
    with OllamaDouble(default_text="Fine.") as server:
        server.add_model(MODEL, trained_window=32_768)
        async with httpx.AsyncClient(timeout=30) as client:
            ollama = OllamaProvider(client, server.url)
            binding = await bind_model(ollama, MODEL)
            runner = TurnRunner(ledger, ollama, default_tools())
            for ask in ("What did we decide about part 9?", "Thanks, and part 10?"):
                async for _ in runner.run(session, ask, binding):
                    pass
            chats = [b for _, p, b in server.requests if p == "/api/chat"]
            systems = {c["messages"][0]["content"] for c in chats}
            assert len(systems) == 1 and next(iter(systems)).startswith(COMPACT_SYSTEM)
            receipts = [
                e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, Receipt)
            ]
            assert len({r.prefix_digest for r in receipts}) == 1
