"""The provider set: configured entries opened with their keys, listings asked of every provider
at once (one that fails is a state, not an error), and the embedded engine started once on
demand and stopped with the set."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import keyring
import pytest

from tests.doubles.anthropic_server import AnthropicDouble
from tests.doubles.openai_server import OpenAIDouble
from tests.runtime.test_shared_services import MemoryKeyring
from vak_desktop.context.payloads import Directive
from vak_desktop.ledger import Ledger
from vak_desktop.providers import OpenAICompatibleProvider
from vak_desktop.runtime import ToolRegistry, TurnRunner
from vak_desktop.runtime.providers.choices import (
    DORMANT,
    FAILED,
    NEEDS_KEY,
    READY,
    UNREACHABLE,
    ModelChoice,
    ProviderListing,
    preferred_choice,
    still_offered,
)
from vak_desktop.runtime.providers.embedded import EmbeddedEngineError, EngineConfig
from vak_desktop.runtime.providers.provider_set import (
    ProviderSet,
    ProviderUnavailable,
    configured_slots,
    engine_slot,
)
from vak_desktop.runtime.providers.secrets import store_api_key
from vak_desktop.runtime.settings import HostedProvider, Settings

KEY = "sk-provider-set-test"


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


def closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def runners(ledger: Ledger) -> ProviderSet:
    return ProviderSet(lambda provider: TurnRunner(ledger, provider, ToolRegistry([])))


async def test_every_entry_is_listed_and_a_failing_one_is_a_state(
    tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    store_api_key("gpt", KEY)
    store_api_key("wrong", "sk-not-the-key")
    with OpenAIDouble(models=("gpt-4o-mini",), api_key=KEY) as double:
        settings = Settings(
            providers=(
                HostedProvider("gpt", "openai", double.url),
                HostedProvider("claude", "anthropic"),
                HostedProvider("lan", "openai-compatible", closed_port()),
                HostedProvider("wrong", "openai", double.url),
            )
        )
        ledger = Ledger.open(tmp_path / "ledger.db")
        async with httpx.AsyncClient() as client:
            providers = runners(ledger)
            for slot in configured_slots(settings, client):
                providers.add(slot)
            listings = await providers.listings()
            assert [(item.title, item.state, item.models) for item in listings] == [
                ("gpt (openai)", READY, ("gpt-4o-mini",)),
                ("claude (anthropic)", NEEDS_KEY, ()),
                ("lan (openai-compatible)", UNREACHABLE, ()),
                ("wrong (openai)", NEEDS_KEY, ()),  # the key was refused
            ]
            assert "Settings → Providers" in listings[1].reason
            assert "refused" in listings[3].reason and "sk-not-the-key" not in listings[3].reason
            with pytest.raises(ProviderUnavailable, match="no API key is stored"):
                await providers.bind(ModelChoice("claude", "claude-sonnet-4-5"))
            binding = await providers.bind(ModelChoice("gpt", "gpt-4o-mini"))
            assert (binding.provider, binding.model) == ("openai", "gpt-4o-mini")
            assert providers.runners() == []  # made on first use, by a turn
            runner = await providers.runner("gpt")
            assert runner.provider.host == double.url and await providers.runner("gpt") is runner
            await providers.aclose()
        ledger.close()


async def test_a_catalogue_is_reused_for_a_while_unless_asked_fresh(
    tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    store_api_key("claude", KEY)
    with AnthropicDouble(api_key=KEY) as double:  # its adapter keeps no catalogue of its own
        settings = Settings(providers=(HostedProvider("claude", "anthropic", double.url),))
        ledger = Ledger.open(tmp_path / "ledger.db")
        async with httpx.AsyncClient() as client:
            providers = runners(ledger)
            for slot in configured_slots(settings, client):
                providers.add(slot)

            def reads() -> int:
                return sum(1 for r in double.requests if r[1] == "/v1/models")

            (first,) = await providers.listings(reuse_s=60)
            assert first.state == READY and reads() == 1
            assert await providers.listings(reuse_s=60) == [first] and reads() == 1
            await providers.listings(reuse_s=60, fresh=("claude",))
            assert reads() == 2
            await providers.listings()  # reuse_s 0: asked again
            assert reads() == 3
            await providers.aclose()
        ledger.close()


def test_the_selection_stands_while_its_provider_cannot_be_asked() -> None:
    up = ProviderListing("Ollama", "ollama", "h", READY, ("llama3.2:latest", "qwen2.5:0.5b"))
    down = ProviderListing("Ollama", "ollama", "h", UNREACHABLE)
    hosted = ProviderListing("gpt", "openai", "o", READY, ("qwen2.5:0.5b", "gpt-4o"))
    engine = ProviderListing("llama.cpp", "embedded", "", DORMANT, ("qwen",))
    choice = ModelChoice("Ollama", "llama3.2:latest")
    assert still_offered([up, hosted], choice)
    assert still_offered([down, hosted], choice)  # down for a moment: keep it
    assert not still_offered([hosted], choice)  # the provider was removed
    gone = ProviderListing("Ollama", "ollama", "h", READY, ("qwen2.5:0.5b",))
    assert not still_offered([gone], choice)  # it answered without the model
    last = Directive(text="hi", model="qwen2.5:0.5b", provider="openai")
    assert preferred_choice([up, hosted, engine], last) == ModelChoice("gpt", "qwen2.5:0.5b")
    assert preferred_choice([down, hosted], None) == ModelChoice("gpt", "qwen2.5:0.5b")
    assert preferred_choice([down, engine], None) is None  # never starts an engine by itself


@dataclass
class CountedStart:
    url: str
    fail_first: bool = False
    calls: list[EngineConfig] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)

    async def __call__(self, config: EngineConfig) -> Engine:
        self.calls.append(config)
        await asyncio.sleep(0.05)  # loading takes a while: concurrent demands overlap
        if self.fail_first and len(self.calls) == 1:
            raise EmbeddedEngineError(
                f"the embedded engine exited while loading {config.model_path}"
            )
        return Engine(config, self)


@dataclass
class Engine:
    config: EngineConfig
    owner: CountedStart

    @property
    def model(self) -> str:
        return self.config.model_path.stem

    def provider(self, client: httpx.AsyncClient) -> OpenAICompatibleProvider:
        return OpenAICompatibleProvider(client, self.owner.url)

    async def stop(self) -> int:
        self.owner.stopped.append(self.model)
        return 0


async def test_the_engine_starts_once_on_demand_and_stops_with_the_set(tmp_path: Path) -> None:
    path = tmp_path / "tiny-model.gguf"
    with OpenAIDouble(models=("tiny-model",), props_n_ctx=4096) as double:
        start = CountedStart(double.url, fail_first=True)
        ledger = Ledger.open(tmp_path / "ledger.db")
        async with httpx.AsyncClient() as client:
            providers = runners(ledger)
            providers.add(engine_slot(path, client, start=start))
            (listing,) = await providers.listings()
            assert (listing.state, listing.models) == (DORMANT, ("tiny-model",))
            assert start.calls == []  # listing starts nothing

            with pytest.raises(ProviderUnavailable, match="exited while loading"):
                await providers.bind(ModelChoice("llama.cpp", "tiny-model"))
            (listing,) = await providers.listings()
            assert listing.state == FAILED and "exited while loading" in listing.reason

            choice = ModelChoice("llama.cpp", "tiny-model")
            first, runner = await asyncio.gather(
                providers.bind(choice), providers.runner(choice.provider)
            )
            assert runner.provider.host == double.url
            assert len(start.calls) == 2  # the failed start, then one start for both demands
            assert first.declared_window == 4096  # the server's own window (/props)
            (listing,) = await providers.listings()
            assert (listing.state, listing.host) == (READY, double.url)
            await providers.aclose()
            assert start.stopped == ["tiny-model"]
        ledger.close()
