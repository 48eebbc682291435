"""The providers one window chats with: Ollama, the settings' `[[providers]]`, the embedded engine.

Why it exists: a session may move between models of different providers (spec §12, the
ladder), and `TurnRunner` speaks to one provider. So the set keeps one runner per provider,
made on first use by a factory the caller gives (sharing the ledger, the tools and the profile
cache), and routes a `ModelChoice` — (provider entry, model) — to its provider and runner. The
runtime already re-plans every turn from the ledger under the bound model's profile, so moving
to another provider needs nothing more than the other runner.

A provider that cannot be used is kept in the set with the reason (no API key, unreachable,
key refused, the engine failed), so the picker can say so without hiding the others; listing
asks every provider at once and one slow or failing provider delays or breaks no other.

A slot may also be *on demand*: the embedded engine (`runtime/providers/embedded.py`) is started only
when its model is picked or a turn needs it (`EngineSource`), and stopped with the set.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import httpx

from vak_desktop.providers import HOSTED_KINDS, ChatProvider, ModelCatalog
from vak_desktop.providers.errors import KeyRefused, ProviderError, Unreachable
from vak_desktop.runtime.capacity.binding import ModelBinding, bind_model
from vak_desktop.runtime.providers.choices import (
    DORMANT,
    FAILED,
    NEEDS_KEY,
    READY,
    STARTING,
    UNREACHABLE,
    ModelChoice,
    ProviderListing,
)
from vak_desktop.runtime.providers.embedded import EmbeddedEngineError, EngineConfig, start_engine
from vak_desktop.runtime.providers.entries import ProviderSetupError, open_entry
from vak_desktop.runtime.providers.secrets import SecretStoreError
from vak_desktop.runtime.settings import Settings
from vak_desktop.runtime.turn.runner import TurnRunner

ENGINE = "llama.cpp"  # the embedded engine's entry name
ENGINE_KIND = "embedded"


class ProviderUnavailable(ProviderError):
    """The provider entry cannot be used now; the message says why and what to do."""


class EngineLike(Protocol):
    """What the set needs of a running embedded engine (`runtime.embedded.EmbeddedEngine`)."""

    @property
    def model(self) -> str: ...

    def provider(self, client: httpx.AsyncClient) -> ChatProvider: ...

    async def stop(self) -> int: ...


EngineStarter = Callable[[EngineConfig], Awaitable[EngineLike]]


class EngineSource:
    """The embedded engine for one GGUF file, started once on demand (concurrent demands share
    the one start) and stopped with the set. A failed start is remembered (the picker shows
    it) and tried again at the next demand."""

    def __init__(
        self,
        config: EngineConfig,
        client: httpx.AsyncClient,
        *,
        start: EngineStarter = start_engine,
    ) -> None:
        self.config = config
        self._client = client
        self._start = start
        self._engine: EngineLike | None = None
        self._starting: asyncio.Task[ChatProvider] | None = None
        self._provider: ChatProvider | None = None
        self.error = ""

    @property
    def path(self) -> Path:
        return self.config.model_path

    @property
    def model(self) -> str:
        """The name the engine serves the file under (its file name without `.gguf`)."""
        return self._engine.model if self._engine is not None else self.config.model_path.stem

    @property
    def state(self) -> str:
        if self._provider is not None:
            return READY
        if self._starting is not None and not self._starting.done():
            return STARTING
        return FAILED if self.error else DORMANT

    @property
    def host(self) -> str:
        return self._provider.host if self._provider is not None else ""

    async def provider(self) -> ChatProvider:
        """The running engine's provider, starting the engine first if it is not running.
        Raises ProviderUnavailable with the engine's own explanation when it cannot start."""
        if self._provider is not None:
            return self._provider
        return await asyncio.shield(self.begin())

    def begin(self) -> asyncio.Task[ChatProvider]:
        """Start the engine in the background if it is neither running nor starting; the task
        of the start (a running engine's is done)."""
        if self._starting is None or (self._starting.done() and self._provider is None):
            self._starting = asyncio.get_running_loop().create_task(
                self._run(), name=f"engine {self.config.model_path.name}"
            )
        return self._starting

    async def _run(self) -> ChatProvider:
        self.error = ""
        try:
            engine = await self._start(self.config)
        except EmbeddedEngineError as exc:
            self.error = str(exc)
            raise ProviderUnavailable(str(exc)) from None
        self._engine = engine
        self._provider = engine.provider(self._client)
        return self._provider

    async def stop(self) -> None:
        """Stop the engine (and a start still under way)."""
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
            with contextlib.suppress(asyncio.CancelledError, ProviderError):
                await self._starting
        engine, self._engine, self._provider = self._engine, None, None
        if engine is not None:
            await engine.stop()


@dataclass
class ProviderSlot:
    """One provider entry: an opened provider, an on-demand engine, or why there is neither."""

    name: str
    kind: str
    provider: ChatProvider | None = None
    engine: EngineSource | None = None
    problem: str = ""  # why it cannot be used (no key …) when there is no provider
    problem_state: str = NEEDS_KEY
    runner: TurnRunner | None = None
    listing: ProviderListing | None = field(default=None, repr=False)
    listed_at: float = 0.0  # time.monotonic() of the request behind `listing`


RunnerFactory = Callable[[ChatProvider], TurnRunner]


class ProviderSet:
    """The window's providers by entry name, the first one primary (Ollama), each with its own
    runner over the shared ledger and tools (`make_runner`)."""

    def __init__(self, make_runner: RunnerFactory) -> None:
        self._make_runner = make_runner
        self._slots: dict[str, ProviderSlot] = {}
        self._bindings: dict[ModelChoice, ModelBinding] = {}

    # -- the slots --------------------------------------------------------------------------

    def add(self, slot: ProviderSlot) -> None:
        """Add `slot` (after the others); an entry of the same name must be removed first."""
        if slot.name in self._slots:
            raise ValueError(f"a provider named {slot.name!r} is already in the set")
        self._slots[slot.name] = slot

    async def replace(self, slot: ProviderSlot) -> None:
        """Put `slot` in place of the entry of the same name (closing that one), or add it."""
        await self.remove(slot.name)
        self.add(slot)

    async def replace_configured(self, slots: list[ProviderSlot], keep: tuple[str, ...]) -> None:
        """The settings changed: every entry but `keep` (the primary) and the engine is closed
        and `slots` take their place (keys may have changed, so nothing is reused)."""
        for name, slot in list(self._slots.items()):
            if name not in keep and slot.engine is None:
                await self.remove(name)
        for slot in slots:
            if slot.name in self._slots:  # an entry named like the primary or the engine
                await _close_slot(slot)
                continue
            self.add(slot)

    async def remove(self, name: str) -> bool:
        """Take the entry out: its runner's background work ends, an engine stops."""
        slot = self._slots.pop(name, None)
        if slot is None:
            return False
        for choice in [c for c in self._bindings if c.provider == name]:
            del self._bindings[choice]
        await _close_slot(slot)
        return True

    @property
    def names(self) -> list[str]:
        return list(self._slots)

    def slot(self, name: str) -> ProviderSlot:
        try:
            return self._slots[name]
        except KeyError:
            raise ProviderUnavailable(f"no provider named {name!r} is configured") from None

    def runners(self) -> list[TurnRunner]:
        """The runners made so far (one per provider a turn or a binding used)."""
        return [s.runner for s in self._slots.values() if s.runner is not None]

    async def provider(self, name: str) -> ChatProvider:
        """The provider of entry `name` (starting an on-demand engine), or ProviderUnavailable."""
        slot = self.slot(name)
        if slot.provider is None and slot.engine is not None:
            slot.provider = await slot.engine.provider()
        if slot.provider is None:
            raise ProviderUnavailable(slot.problem or f"provider {name!r} cannot be used")
        return slot.provider

    async def runner(self, name: str) -> TurnRunner:
        slot = self.slot(name)
        provider = await self.provider(name)
        if slot.runner is None:
            slot.runner = self._make_runner(provider)
        return slot.runner

    # -- listing and binding ----------------------------------------------------------------

    async def listings(
        self, *, reuse_s: float = 0.0, fresh: Collection[str] = ()
    ) -> list[ProviderListing]:
        """Every entry's listing, asked of all providers at once: the primary first, the
        configured entries in their order, the embedded engine last. A ready listing younger
        than `reuse_s` is reused unless its entry is in `fresh` (a hosted catalogue need not be
        fetched at every re-check of a local server)."""
        slots = self._ordered()
        now = time.monotonic()

        async def ask(slot: ProviderSlot) -> ProviderListing:
            held = slot.listing
            reusable = held is not None and held.state == READY and _known(slot) is None
            if held and reusable and slot.name not in fresh and now - slot.listed_at < reuse_s:
                return held
            slot.listed_at = now
            return await self._list(slot)

        listings = await asyncio.gather(*(ask(slot) for slot in slots))
        for slot, listing in zip(slots, listings, strict=True):
            slot.listing = listing
        return list(listings)

    def last_listings(self) -> list[ProviderListing]:
        """The listings as last asked, in the same order (an engine's state is always now's)."""
        return [
            _known(s) or s.listing or ProviderListing(s.name, s.kind, "", "", reason="not asked")
            for s in self._ordered()
        ]

    def _ordered(self) -> list[ProviderSlot]:
        slots = list(self._slots.values())
        return [s for s in slots if s.engine is None] + [s for s in slots if s.engine is not None]

    async def _list(self, slot: ProviderSlot) -> ProviderListing:
        known = _known(slot)
        if known is not None:
            return known
        provider = slot.provider
        assert provider is not None  # _known answered for a slot without one
        if not isinstance(provider, ModelCatalog):
            return ProviderListing(slot.name, slot.kind, provider.host, READY)
        try:
            names = tuple(m.name for m in await provider.list_models())
        except Unreachable as exc:
            return ProviderListing(slot.name, slot.kind, provider.host, UNREACHABLE, (), exc.reason)
        except KeyRefused as exc:
            return ProviderListing(slot.name, slot.kind, provider.host, NEEDS_KEY, (), str(exc))
        except ProviderError as exc:
            return ProviderListing(slot.name, slot.kind, provider.host, FAILED, (), str(exc))
        return ProviderListing(slot.name, slot.kind, provider.host, READY, names)

    def binding(self, choice: ModelChoice) -> ModelBinding | None:
        """The binding of `choice`, once its provider has described the model."""
        return self._bindings.get(choice)

    async def bind(self, choice: ModelChoice) -> ModelBinding:
        """Bind `choice` (asked once per choice). Raises ProviderUnavailable for an entry that
        cannot be used, else what the provider raises (Unreachable, ModelNotFound …)."""
        held = self._bindings.get(choice)
        if held is not None:
            return held
        provider = await self.provider(choice.provider)
        binding = await bind_model(provider, choice.model)
        return self._bindings.setdefault(choice, binding)

    # -- turns and shutdown -----------------------------------------------------------------

    async def leave(self, session: str, keep: TurnRunner) -> None:
        """A turn of `session` is about to run on `keep`'s provider: the other runners' packets
        written ahead for it were planned for another model, so they are abandoned (nothing
        half-written reaches the ledger) rather than waited for."""
        for runner in self.runners():
            if runner is not keep:
                await runner.abandon_lookahead(session)

    async def aclose(self) -> None:
        """End every runner's background work and stop every engine (at shutdown)."""
        slots = list(self._slots.values())
        self._slots.clear()
        self._bindings.clear()
        for slot in slots:
            await _close_slot(slot)


def _known(slot: ProviderSlot) -> ProviderListing | None:
    """The listing of a slot that needs no request: an engine (one model, the file's, whatever
    name its server lists), or an entry that could not be opened."""
    if slot.engine is not None:
        engine = slot.engine
        return ProviderListing(
            slot.name, slot.kind, engine.host, engine.state, (engine.model,), engine.error
        )
    if slot.provider is None:
        return ProviderListing(slot.name, slot.kind, "", slot.problem_state, (), slot.problem)
    return None


async def _close_slot(slot: ProviderSlot) -> None:
    if slot.runner is not None:
        await slot.runner.aclose()
        await slot.runner.capacity.aclose()
    if slot.engine is not None:
        await slot.engine.stop()


def configured_slots(settings: Settings, client: httpx.AsyncClient) -> list[ProviderSlot]:
    """A slot per `[[providers]]` entry, each opened with its key from the keyring; an entry
    that cannot be opened (no key, an unusable keyring) is a slot saying why."""
    slots = []
    for entry in settings.providers:
        try:
            provider = open_entry(entry, client)
        except (ProviderSetupError, SecretStoreError) as exc:
            state = NEEDS_KEY if entry.kind in HOSTED_KINDS else FAILED
            slots.append(
                ProviderSlot(entry.name, entry.kind, problem=str(exc), problem_state=state)
            )
            continue
        slots.append(ProviderSlot(entry.name, entry.kind, provider))
    return slots


def engine_slot(
    path: Path,
    client: httpx.AsyncClient,
    *,
    start: EngineStarter = start_engine,
    n_ctx: int = EngineConfig.n_ctx,
) -> ProviderSlot:
    """The embedded engine for the GGUF file at `path`, as a slot that starts on demand."""
    source = EngineSource(EngineConfig(path, n_ctx=n_ctx), client, start=start)
    return ProviderSlot(ENGINE, ENGINE_KIND, engine=source)
