"""One redaction for every output (issue 24 item 6, F8): a server that echoes the API key — in
its text, split across chunks; in its thinking; in a tool call's arguments; in an error — has
it redacted on stdout in text mode, in `vak chat --json`'s events, on stderr, and in the turn
events the window draws, not only in what is stored. The key is held in an in-memory keyring
(`memory_keyring`) and reaches the loopback OpenAI double only in its Authorization header."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.doubles.keyring import MemoryKeyring
from tests.doubles.openai_server import SSE, Fail, OpenAIDouble, chunk, text_chunks
from vak_desktop.cli import main
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import TurnRunner, bind_model, default_tools
from vak_desktop.runtime.events import TextChunk, ThinkingChunk, ToolCallRequested
from vak_desktop.runtime.providers.entries import open_named
from vak_desktop.runtime.providers.secrets import store_api_key
from vak_desktop.runtime.settings import HostedProvider, Settings, save_settings

MODEL = "gpt-4o-mini"
KEY = "sk-proj-ECHOCHECK-5e1d9a7c3b2f4e60"


def _echoes(mode: str) -> list[SSE | Fail]:
    """The double's replies for one echo mode (a tool call is followed by a second step)."""
    said = f"your key is {KEY}, keep it safe"
    if mode == "text":
        return [SSE(text_chunks(said, chunk_chars=5))]
    if mode == "thinking":
        thought = [chunk({"reasoning_content": said[i : i + 7]}) for i in range(0, len(said), 7)]
        return [SSE([*thought, *text_chunks("done")])]
    if mode == "tool call":
        arguments = json.dumps({"query": said})
        call = {"id": "c1", "type": "function", "function": {"name": "recall", "arguments": ""}}
        pieces = [arguments[i : i + 6] for i in range(0, len(arguments), 6)]
        chunks: list[Any] = [chunk({"tool_calls": [{"index": 0, **call}]})]
        chunks += [
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces
        ]
        return [SSE([*chunks, chunk({}, "tool_calls")]), SSE(text_chunks("ok"))]
    assert mode == "error"
    return [Fail(400, {"error": {"message": f"bad request from {KEY}", "type": "x"}})]


MODES = ["text", "thinking", "tool call", "error"]


def _data(tmp_path: Path, server: OpenAIDouble) -> Path:
    data = tmp_path / "data"
    entry = HostedProvider("echo", "openai", base_url=server.url + "/v1")
    save_settings(Settings(providers=(entry,)), data / "settings.toml")
    store_api_key("echo", KEY)
    return data


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_an_echoed_key_is_redacted_on_stdout_and_stderr(
    tmp_path: Path,
    memory_keyring: MemoryKeyring,
    capsys: pytest.CaptureFixture[str],
    mode: str,
    as_json: bool,
) -> None:
    with OpenAIDouble(models=(MODEL,), api_key=KEY) as server:
        data = _data(tmp_path, server)
        server.script(*_echoes(mode))
        argv = ["chat", MODEL, "say it", "--provider", "echo", "--data-dir", str(data)]
        with contextlib.suppress(SystemExit):
            main([*argv, "--json"] if as_json else argv)
        out, err = capsys.readouterr()
    assert out or err  # the turn ran and said something
    assert KEY not in out and KEY not in err, (mode, out[-300:], err[-300:])
    assert KEY[:12] not in out + err  # not even a cut part of it
    if mode != "error":
        assert "redacted" in out + err  # what stood in for it was shown


@pytest.mark.parametrize("mode", MODES)
async def test_the_turn_events_the_window_draws_hold_no_key(
    tmp_path: Path, memory_keyring: MemoryKeyring, mode: str
) -> None:
    with OpenAIDouble(models=(MODEL,), api_key=KEY) as server:
        data = _data(tmp_path, server)
        server.script(*_echoes(mode))
        ledger = Ledger.open(data / "ledger.sqlite3")
        session = ledger.create_session().id
        async with httpx.AsyncClient() as client:
            settings = Settings(providers=(HostedProvider("echo", "openai", server.url + "/v1"),))
            provider = open_named("echo", client, settings)
            binding = await bind_model(provider, MODEL)
            runner = TurnRunner(ledger, provider, default_tools())
            events = [event async for event in runner.run(session, "say it", binding)]
        ledger.close()
    shown = [e for e in events if isinstance(e, TextChunk | ThinkingChunk | ToolCallRequested)]
    assert mode == "error" or shown
    assert KEY not in repr(events)
    joined = "".join(e.text for e in events if isinstance(e, TextChunk | ThinkingChunk))
    assert KEY[:12] not in joined
