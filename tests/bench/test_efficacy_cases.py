"""`bench/efficacy.py`'s success rules (`bench/efficacy_cases.py`) and its whole-turn try,
against the loopback OpenAI double — no model."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
from efficacy import imported, measured_profile, whole_turn
from efficacy_cases import CASES, raw_call

from tests.doubles.openai_server import (
    SSE,
    OpenAIDouble,
    text_chunks,
    tool_call_chunks,
)
from vak_desktop.context.payloads import ToolCall
from vak_desktop.providers.base import ModelDetails
from vak_desktop.providers.openai_compatible import OpenAICompatibleProvider
from vak_desktop.runtime import ModelBinding

LOCKER = CASES["locker"]


def test_the_final_answer_must_name_what_was_found_and_not_the_decoy() -> None:
    assert LOCKER.answer_right("The combination is in notes/feb.txt.")
    assert not LOCKER.answer_right("It is in notes/mar.txt.")  # the near-miss decoy
    assert not LOCKER.answer_right("Either feb.txt or mar.txt.")  # not an answer
    assert not LOCKER.answer_right("I searched your notes folder.")
    assert not LOCKER.answer_right('{"name": "read", "arguments": {"path": "notes/feb.txt"}}')
    assert CASES["venue"].answer_right("The reply confirms 46 guests on 12 June.")
    assert not CASES["venue"].answer_right("It says 40 guests, date still open.")
    assert CASES["shipment"].answer_right("Found it in shipping/manifest.txt: 40 crates.")


def test_a_raw_json_call_is_never_an_answer() -> None:
    assert raw_call('```json\n{"name": "grep", "arguments": {"pattern": "x"}}\n```')
    assert raw_call('[{"name": "glob", "arguments": {}}]')
    assert not raw_call("The file is feb.txt; its name says February.")


def test_the_first_call_is_right_with_the_value_or_the_words_that_lead_to_it() -> None:
    assert LOCKER.first_call_right([ToolCall("1", "grep", {"pattern": "38-14-92"})]) == (True, True)
    assert LOCKER.first_call_right([ToolCall("1", "grep", {"pattern": "Locker"})]) == (True, True)
    assert LOCKER.first_call_right([ToolCall("1", "glob", {"pattern": "*.txt"})]) == (True, False)
    assert LOCKER.first_call_right([ToolCall("1", "recall", {"id": "x"})]) == (False, False)


def _binding() -> ModelBinding:
    return ModelBinding(
        provider="openai-compatible",
        model="m",
        details=ModelDetails(name="m", declared_window=32_768),
    )


async def test_a_whole_turn_is_judged_by_its_first_call_and_its_final_answer(
    tmp_path: Path,
) -> None:
    files = LOCKER.files(tmp_path)
    source = imported(LOCKER.session(), tmp_path)
    binding = _binding()
    with OpenAIDouble(models=("m",)) as double:
        arguments = json.dumps({"pattern": "38-14-92"})
        double.script(
            SSE(tool_call_chunks([("c1", "grep", arguments)])),
            SSE(text_chunks("It is in notes/feb.txt.")),
        )
        async with httpx.AsyncClient() as client:
            provider = OpenAICompatibleProvider(client, double.url)
            profile = measured_profile(binding, 4_096, 32_768)
            sample = await whole_turn(
                provider, binding, LOCKER, source, files, profile, LOCKER.ask, 60
            )
        bodies = [b for (_, p, _, b) in double.requests if p.endswith("/chat/completions")]
    assert (sample.tool_call, sample.correct, sample.answered) == (True, True, True)
    assert sample.steps == 2 and not sample.undecided and len(bodies) == 2
    assert "notes/feb.txt" in json.dumps(bodies[1]["messages"])  # the grep's result was sent


async def test_a_turn_out_of_time_is_undecided(tmp_path: Path) -> None:
    files = LOCKER.files(tmp_path)
    binding = _binding()
    with socket.socket() as silent:  # accepts the connection (its backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        async with httpx.AsyncClient() as client:
            provider = OpenAICompatibleProvider(
                client, f"http://127.0.0.1:{silent.getsockname()[1]}"
            )
            sample = await whole_turn(
                provider, binding, LOCKER, None, files, None, LOCKER.fresh_ask, 0.5
            )
    assert sample.undecided and sample.answered is False and not sample.refused
