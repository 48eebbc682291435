"""The model side of the chat service: the providers, their models, the selected model.

`ModelSelection` is the base of `ChatService`. It owns the `ProviderSet` (Ollama first, the
settings' providers, the embedded engine; one `TurnRunner` each), lists every provider's models
at once (`choicesChanged`), follows the primary provider's reachability (the banner and the
onboarding panel say what to do about Ollama), and binds the selected `ModelChoice` in the
background — starting an embedded engine when its model is picked. Like the service, it runs
all of it as tasks on the qasync loop and keeps a reference to each.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from vak_desktop.context.payloads import Directive
from vak_desktop.providers.base import ChatProvider
from vak_desktop.providers.errors import ModelNotFound, ProviderError, Unreachable
from vak_desktop.runtime import ModelBinding, TurnRunner
from vak_desktop.runtime.providers.choices import (
    FAILED,
    READY,
    ModelChoice,
    ProviderListing,
    choice_named,
    preferred_choice,
    still_offered,
)
from vak_desktop.runtime.providers.choices import UNREACHABLE as PROVIDER_UNREACHABLE
from vak_desktop.runtime.providers.provider_set import (
    ProviderSet,
    ProviderSlot,
    ProviderUnavailable,
    RunnerFactory,
)
from vak_desktop.ui.parts.tasks import TaskSet

UNKNOWN, CHECKING, REACHABLE, UNREACHABLE = "unknown", "checking", "reachable", "unreachable"
PRIMARY = "Ollama"  # the entry name of the provider the service is made with
CATALOGUE_REUSE_S = 60.0  # how long another provider's model list stands between refreshes


@dataclass(frozen=True)
class Reachability:
    """What we last learned about the primary provider's (Ollama's) server: `state` is one of the four above."""

    state: str
    host: str
    reason: str = ""

    @property
    def unreachable(self) -> bool:
        return self.state == UNREACHABLE


class ModelSelection(QObject):
    """The providers, their models and the selected one, as Qt signals."""

    reachabilityChanged = Signal(object)  # Reachability
    modelsChanged = Signal(list)  # list[str]: the primary provider's models, as it lists them
    choicesChanged = Signal(list)  # list[ProviderListing]: every provider's models or state
    modelChanged = Signal(str)  # the selected model ('' when there is none)
    modelBound = Signal(object)  # ModelBinding of the selected model
    notice = Signal(str)

    def _open_providers(self, provider: ChatProvider, make_runner: RunnerFactory) -> None:
        """Start with `provider` as the primary entry; `make_runner` makes each provider's
        runner (the primary's now: the window reads its system prompt and tools)."""
        self._provider = provider
        self._runner = make_runner(provider)
        self._providers = ProviderSet(make_runner)
        self._providers.add(ProviderSlot(PRIMARY, provider.name, provider, runner=self._runner))
        self._listings: list[ProviderListing] = []
        self._models: list[str] = []
        self._choice: ModelChoice | None = None
        self._reachability = Reachability(UNKNOWN, provider.host)
        self._tasks = TaskSet()

    def _last_directive(self) -> Directive | None:
        """The shown session's last directive (its model is preferred when the list changes)."""
        return None

    # -- state ------------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return self._provider.host

    @property
    def runner(self) -> TurnRunner:
        """The primary provider's runner (every runner has the same system prompt and tools)."""
        return self._runner

    @property
    def provider(self) -> ChatProvider:
        """The primary provider (Ollama): the model manager's."""
        return self._provider

    @property
    def providers(self) -> ProviderSet:
        return self._providers

    @property
    def listings(self) -> list[ProviderListing]:
        """Every provider's models (or why it has none), as last asked."""
        return list(self._listings)

    @property
    def reachability(self) -> Reachability:
        return self._reachability

    @property
    def models(self) -> list[str]:
        """The primary provider's models."""
        return list(self._models)

    @property
    def choice(self) -> ModelChoice | None:
        """The selected model and the provider entry it is chosen from."""
        return self._choice

    @property
    def model(self) -> str:
        return self._choice.model if self._choice is not None else ""

    @property
    def binding(self) -> ModelBinding | None:
        """The binding of the selected model, once the provider has described it."""
        return self._providers.binding(self._choice) if self._choice is not None else None

    # -- models -----------------------------------------------------------------------------

    def refresh_models(self, everything: bool = False) -> asyncio.Task[None]:
        """Ask the providers for their models; the primary's answer is also the reachability
        check. Providers are asked at once, so a slow or failing one holds up no other. The
        others' catalogues are asked again only after a minute, unless `everything` (the
        picker's Refresh): the onboarding panel re-checks Ollama every few seconds. The state
        is "checking" from this call on, not from when the task first runs."""
        self._set_reachability(Reachability(CHECKING, self.host))
        return self._tasks.spawn(self._refresh_models(everything), "refresh-models")

    def select_model(self, model: str | ModelChoice | None) -> None:
        """Bind `model` for the next turns; its provider is asked about it in the background
        (an embedded engine not running yet is started). A name alone means the first provider
        listing it, else the primary."""
        choice = choice_named(self._listings, model, PRIMARY) if isinstance(model, str) else model
        if choice == self._choice:
            return
        self._choice = choice
        self.modelChanged.emit(self.model)
        if choice is None:
            return
        binding = self._providers.binding(choice)
        if binding is not None:
            self.modelBound.emit(binding)
        else:
            self._tasks.spawn(self._bind_quietly(choice), f"bind-{choice.provider}-{choice.model}")

    async def _refresh_models(self, everything: bool = True) -> None:
        self._set_reachability(Reachability(CHECKING, self.host))
        reuse_s = 0.0 if everything else CATALOGUE_REUSE_S
        listings = await self._providers.listings(reuse_s=reuse_s, fresh=(PRIMARY,))
        primary = next(item for item in listings if item.name == PRIMARY)
        if primary.state == PROVIDER_UNREACHABLE:
            self._set_reachability(Reachability(UNREACHABLE, self.host, primary.reason))
        else:
            self._set_reachability(Reachability(REACHABLE, self.host))
        if primary.state == FAILED:  # it answered, but not with a model list
            self.notice.emit(f"Could not list models: {primary.reason}")
        self._show_listings(listings)
        if primary.state == READY:
            self._models = list(primary.models)
            self.modelsChanged.emit(list(primary.models))
        if not still_offered(listings, self._choice):
            self.select_model(preferred_choice(listings, self._last_directive()))

    def _show_listings(self, listings: list[ProviderListing] | None = None) -> None:
        self._listings = listings if listings is not None else self._providers.last_listings()
        self.choicesChanged.emit(list(self._listings))

    async def _bind_quietly(self, choice: ModelChoice) -> None:
        starting = self._providers.slot(choice.provider).engine
        if starting is not None and starting.state != READY:
            self.notice.emit(f"Starting the embedded engine for {starting.path.name}…")
            starting.begin()
            self._show_listings()  # the picker says it is starting
        try:
            await self._binding_for(choice)
        except ProviderError as exc:
            if not (choice.provider == PRIMARY and isinstance(exc, Unreachable)):
                self.notice.emit(f"{choice.provider}: {exc}")  # the banner covers Ollama's
        finally:
            if starting is not None:
                self._show_listings()
        if starting is not None and starting.state == READY:
            self.notice.emit(f"{choice.model} is running in the embedded engine.")

    async def _binding_for(self, choice: ModelChoice) -> ModelBinding:
        binding = self._providers.binding(choice)
        if binding is not None:
            return binding
        primary = choice.provider == PRIMARY
        try:
            binding = await self._providers.bind(choice)
        except Unreachable as exc:
            if primary:
                self._set_reachability(Reachability(UNREACHABLE, self.host, exc.reason))
            raise
        if primary and self._reachability.unreachable:
            self.refresh_models()  # it answered: fill the picker and hide the banner
        if choice == self._choice:
            self.modelBound.emit(binding)
        return binding

    # -- providers --------------------------------------------------------------------------

    def set_providers(self, slots: list[ProviderSlot]) -> asyncio.Task[None]:
        """Use `slots` in place of the configured providers (the settings changed)."""
        return self._tasks.spawn(self._set_providers(slots), "set-providers")

    async def _set_providers(self, slots: list[ProviderSlot]) -> None:
        await self._providers.replace_configured(slots, keep=(PRIMARY,))
        await self._refresh_models()
        choice = self._choice  # on a reopened provider: bound again, for the composer
        if choice is not None and self._providers.binding(choice) is None:
            await self._bind_quietly(choice)

    def use_primary(self, provider: ChatProvider) -> asyncio.Task[None]:
        """Talk to Ollama through `provider` from now on (the host changed in the settings):
        its runner is made anew, what was bound on the old host is forgotten, and the models
        are listed again."""
        return self._tasks.spawn(self._use_primary(provider), "use-primary")

    async def _use_primary(self, provider: ChatProvider) -> None:
        runner = self._make_primary_runner(provider)
        await self._providers.replace(ProviderSlot(PRIMARY, provider.name, provider, runner=runner))
        self._provider, self._runner = provider, runner
        self._set_reachability(Reachability(UNKNOWN, provider.host))
        chosen = self._choice
        await self._refresh_models(everything=False)
        if chosen is not None and chosen == self._choice and chosen.provider == PRIMARY:
            await self._bind_quietly(chosen)  # the same model on the new host, bound there

    def _make_primary_runner(self, provider: ChatProvider) -> TurnRunner:
        raise NotImplementedError  # ChatService makes runners

    def run_engine(self, slot: ProviderSlot) -> asyncio.Task[None]:
        """Put the embedded engine `slot` in place of any other and select its model, which
        starts it in the background (the picker shows it starting, a notice when it runs)."""
        return self._tasks.spawn(self._run_engine(slot), "run-engine")

    async def _run_engine(self, slot: ProviderSlot) -> None:
        await self._providers.replace(slot)
        self._show_listings()
        listing = next(item for item in self._listings if item.name == slot.name)
        self._choice = None  # the same file again (after a failed start) is bound again
        self.select_model(listing.choices()[0])

    def _set_reachability(self, value: Reachability) -> None:
        if value != self._reachability:
            self._reachability = value
            self.reachabilityChanged.emit(value)

    def _refusal(self, exc: ProviderError, choice: ModelChoice) -> str:
        if choice.provider != PRIMARY:
            return f"Not sent to {choice.provider}: {exc}"
        if isinstance(exc, ProviderUnavailable):
            return f"Not sent: {exc}"
        if isinstance(exc, Unreachable):
            return f"Not sent: Ollama is not reachable at {self.host}."
        if isinstance(exc, ModelNotFound):
            return (
                f"Not sent: {exc.model} is not on this Ollama server. Refresh the model list, "
                f"or pull it with `ollama pull {exc.model}`."
            )
        return f"Not sent: {exc}"

    # -- tasks ------------------------------------------------------------------------------
