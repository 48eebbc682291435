"""The prefix is measured once per profile against the Ollama double, and the plan uses it."""

from __future__ import annotations

import httpx

from tests.doubles.fixtures import TOOL_MODEL, double_fixture, http_fixture  # noqa: F401
from tests.doubles.ollama_model import Reply
from tests.doubles.ollama_server import OllamaDouble
from vak_desktop.context.capacity.prefix import PREFIX_MEASURED
from vak_desktop.context.payloads import Activity, Receipt
from vak_desktop.context.planning.assemble import prefix_digest
from vak_desktop.ledger import Ledger
from vak_desktop.providers.ollama import OllamaProvider
from vak_desktop.providers.retry import NO_RETRY
from vak_desktop.runtime import TurnRunner, default_tools
from vak_desktop.runtime.capacity.binding import bind_model
from vak_desktop.runtime.capacity.prefix import PREFIX_MEASURE_FAILED
from vak_desktop.runtime.events import TurnFinished
from vak_desktop.runtime.tools.surface import tool_surface
from vak_desktop.runtime.turn.runner import DEFAULT_SYSTEM_PROMPT


def _activities(ledger: Ledger, session: str, kind: str) -> list[Activity]:
    return [
        e.payload
        for e in ledger.chain_to_root(session)
        if isinstance(e.payload, Activity) and e.payload.type == kind
    ]


async def _turn(runner: TurnRunner, provider: OllamaProvider, session: str, text: str) -> str:
    binding = await bind_model(provider, TOOL_MODEL)
    events = [e async for e in runner.run(session, text, binding)]
    finished = events[-1]
    assert isinstance(finished, TurnFinished)
    return finished.outcome


async def test_the_first_turn_measures_the_prefix_alone_and_plans_with_the_count(
    ledger: Ledger, double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    provider = OllamaProvider(http, double.url)
    tools = default_tools()
    runner = TurnRunner(ledger, provider, tools, measure_prefix=True)
    session = ledger.create_session().id
    double.enqueue(Reply(text="."), Reply(text="Hello!"), Reply(text="Again!"))
    assert await _turn(runner, provider, session, "hi") == "completed"

    bodies = double.chat_bodies()
    probe, first = bodies[0], bodies[1]
    assert [m["role"] for m in probe["messages"]] == ["system"]
    surface = tool_surface(tools, DEFAULT_SYSTEM_PROMPT, "hi")  # the turn's own prefix
    assert probe["messages"][0]["content"] == surface.system == first["messages"][0]["content"]
    assert probe["options"]["num_predict"] == 1
    assert probe["tools"] == first["tools"]
    assert probe["options"]["num_ctx"] == first["options"]["num_ctx"]  # no reload between them

    expected = double.prompt_tokens(probe["messages"], probe["tools"])
    (measured,) = _activities(ledger, session, PREFIX_MEASURED)
    assert measured.detail["prefix_tokens"] == expected
    assert measured.detail["prefix_digest"] == prefix_digest(surface.system, surface.tools)
    receipt = next(
        e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, Receipt)
    )
    assert receipt.plan["budget"]["prefix_tokens"] == expected

    assert await _turn(runner, provider, session, "and again") == "completed"
    assert len(double.chat_bodies()) == 3  # measured once: the second turn sent one request
    assert len(_activities(ledger, session, PREFIX_MEASURED)) == 1


async def test_without_the_option_nothing_extra_is_sent(
    ledger: Ledger, double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    provider = OllamaProvider(http, double.url)
    runner = TurnRunner(ledger, provider, default_tools())
    session = ledger.create_session().id
    double.enqueue(Reply(text="Hello!"))
    assert await _turn(runner, provider, session, "hi") == "completed"
    assert len(double.chat_bodies()) == 1
    assert _activities(ledger, session, PREFIX_MEASURED) == []


async def test_a_failed_measurement_is_recorded_and_the_turn_still_runs(
    ledger: Ledger, double: OllamaDouble, http: httpx.AsyncClient
) -> None:
    provider = OllamaProvider(http, double.url, retry=NO_RETRY)  # a 500 is retried otherwise
    runner = TurnRunner(ledger, provider, default_tools(), measure_prefix=True)
    session = ledger.create_session().id
    double.fail_next(500, "model runner has unexpectedly stopped")
    double.enqueue(Reply(text="Hello anyway."))
    assert await _turn(runner, provider, session, "hi") == "completed"
    (failed,) = _activities(ledger, session, PREFIX_MEASURE_FAILED)
    assert "unexpectedly stopped" in failed.message
    assert _activities(ledger, session, PREFIX_MEASURED) == []
