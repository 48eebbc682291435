"""API keys travel only from the keyring to a request header.

A real turn runs through a hosted adapter opened from a settings entry, its key in an
in-memory keyring backend, against the loopback OpenAI double; then a turn whose key the
server refuses. The server received the key; the ledger file (with its WAL), every log record
captured at DEBUG (httpx and httpcore included) and the settings file never contain it, nor
the refused one.
"""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest

from tests.doubles.keyring import MemoryKeyring
from tests.doubles.openai_server import OpenAIDouble
from vak_desktop.context.payloads import Activity
from vak_desktop.ledger import Ledger
from vak_desktop.providers import NO_RETRY, KeyRefused, OpenAIProvider
from vak_desktop.runtime import ModelBinding, TurnRunner, bind_model, default_tools
from vak_desktop.runtime.events import TurnFinished
from vak_desktop.runtime.providers.entries import ProviderSetupError, open_named
from vak_desktop.runtime.providers.secrets import store_api_key
from vak_desktop.runtime.settings import HostedProvider, Settings, load_settings, save_settings

MODEL = "gpt-4o-mini"
KEY = "sk-proj-LEAKCHECK-7f3a9c2e1b5d4a6f"
WRONG = "sk-proj-WRONGKEY-00112233445566"


def files_bytes(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in directory.rglob("*") if p.is_file()}


async def run_turn(
    ledger: Ledger, session: str, settings: Settings, text: str, binding: ModelBinding | None
) -> tuple[TurnFinished, ModelBinding]:
    async with httpx.AsyncClient() as client:
        provider = open_named("work-openai", client, settings, retry=NO_RETRY)
        assert isinstance(provider, OpenAIProvider)
        binding = binding or await bind_model(provider, MODEL)
        runner = TurnRunner(ledger, provider, default_tools())
        events = [event async for event in runner.run(session, text, binding)]
    finished = events[-1]
    assert isinstance(finished, TurnFinished)
    return finished, binding


async def test_the_key_reaches_the_server_and_nothing_else(
    tmp_path: Path, memory_keyring: MemoryKeyring, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    data = tmp_path / "data"
    with OpenAIDouble(models=(MODEL,), api_key=KEY) as server:
        entry = HostedProvider("work-openai", "openai", base_url=server.url + "/v1")
        settings_file = save_settings(Settings(providers=(entry,)), data / "settings.toml")
        store_api_key("work-openai", KEY)
        settings = load_settings(settings_file)

        ledger = Ledger.open(data / "ledger.sqlite3")
        session = ledger.create_session().id
        ok, binding = await run_turn(ledger, session, settings, "Say hello.", None)
        assert ok.outcome == "completed"

        store_api_key("work-openai", WRONG)  # the user pastes a bad key
        with pytest.raises(KeyRefused):  # binding asks the catalogue: refused there first
            await run_turn(ledger, session, settings, "Again, please.", None)
        refused, _ = await run_turn(ledger, session, settings, "Again, please.", binding)
        assert refused.outcome == "failed" and "was refused" in refused.error
        recorded = [
            e.payload.message
            for e in ledger.chain_to_root(session)
            if isinstance(e.payload, Activity) and e.payload.type == "provider_error"
        ]
        assert recorded and "Settings → Providers" in recorded[0]

        # the double did get the key, in the header and nowhere else in the request
        posts = [r for r in server.requests if r[0] == "POST"]
        assert posts[0][2]["authorization"] == f"Bearer {KEY}"
        assert posts[-1][2]["authorization"] == f"Bearer {WRONG}"
        assert all(KEY not in str(r[3]) for r in server.requests)

        stored = files_bytes(data)  # read while the ledger is open: the WAL holds the turns
        ledger.close()
    assert {"ledger.sqlite3", "ledger.sqlite3-wal", "settings.toml"} <= set(stored)
    assert len(stored["ledger.sqlite3-wal"]) > 0
    stored.update({f"closed:{k}": v for k, v in files_bytes(data).items()})
    for secret in (KEY, WRONG):
        for name, content in stored.items():
            assert secret.encode() not in content, f"{secret[:8]}… found in {name}"
        for record in caplog.records:
            assert secret not in record.getMessage(), record.name
            assert secret not in repr(record.__dict__), record.name
    assert b"Say hello." in stored["ledger.sqlite3-wal"] + stored["ledger.sqlite3"]
    loggers = {r.name.split(".")[0] for r in caplog.records}
    assert {"httpx", "httpcore"} <= loggers  # the HTTP layer's own logs were captured too


async def test_a_hosted_entry_without_a_key_is_refused_before_any_request(
    memory_keyring: MemoryKeyring,
) -> None:
    settings = Settings(providers=(HostedProvider("claude", "anthropic"),))
    async with httpx.AsyncClient() as client:
        with pytest.raises(ProviderSetupError, match="no API key is stored for provider 'claude'"):
            open_named("claude", client, settings)
        with pytest.raises(ProviderSetupError, match=r"unknown provider 'nope'.*claude"):
            open_named("nope", client, settings)
        store_api_key("claude", "sk-ant-x")
        provider = open_named("claude", client, settings, host="http://127.0.0.1:9")
        assert provider.name == "anthropic" and provider.host == "http://127.0.0.1:9"
        # a kind by name opens at its default address; a local one needs no key
        assert open_named("ollama", client, settings).name == "ollama"
        assert open_named("openai-compatible", client, settings).name == "openai-compatible"
