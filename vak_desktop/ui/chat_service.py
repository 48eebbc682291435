"""The one service the window shows: the runtime on the Qt side, as a QObject with signals.

It owns the providers (`runtime.provider_set.ProviderSet`: Ollama, the settings' providers, the
embedded engine, one `TurnRunner` each) and runs each turn, each model-list refresh and each model
binding as an asyncio task on the qasync loop, so the UI thread never waits on the network. Every runtime event
is re-emitted as a Qt signal, in order, on the UI thread (the loop *is* Qt's event loop), so a
slot can touch widgets directly. It keeps a reference to every task it starts and cancels them
all in `aclose()`.

Edits and regenerations append a new directive beside the old one (`parent=`), so the earlier
entries stay; the service remembers which branch of each session is shown (`turns` follows it,
and the next message continues it). Card clicks (👍 / 👎, dismiss / restore) are appended as
`PresentationFeedback` / `PresentationSelection` entries and folded back by
`runtime.presentations.presentation_states`.

Stopping a turn cancels its task: the runtime keeps the text that had streamed, marked
interrupted, and closes the turn `cancelled`; the service then emits a `TurnFinished` with that
outcome itself, because a cancelled runtime generator raises instead of yielding one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, cast

from PySide6.QtCore import QObject, Signal

from vak_desktop.context.payloads import (
    Directive,
    Usage,
)
from vak_desktop.context.turns import Turn, split_turns
from vak_desktop.ledger import Ledger
from vak_desktop.providers.base import ChatProvider
from vak_desktop.providers.errors import ModelNotFound, ProviderError, Unreachable
from vak_desktop.runtime import (
    ModelBinding,
    ProbePolicy,
    SessionSummary,
    ToolRegistry,
    TurnRunner,
    default_tools,
    probing_capacity,
    session_summaries,
    session_turns,
)
from vak_desktop.runtime.branches import (
    alternatives,
    branch_parent,
    chain_from,
    newest_leaf,
    version_positions,
)
from vak_desktop.runtime.capacity import ProfileCache
from vak_desktop.runtime.events import (
    Notice,
    StepFinished,
    TextChunk,
    ThinkingChunk,
    ToolCallRequested,
    ToolResultReady,
    TurnEvent,
    TurnFinished,
    TurnStarted,
)
from vak_desktop.runtime.presentations import (
    CardState,
    presentation_states,
    record_feedback,
    set_selection,
)
from vak_desktop.runtime.provider_set import (
    FAILED,
    READY,
    ModelChoice,
    ProviderListing,
    ProviderSet,
    ProviderSlot,
    ProviderUnavailable,
)
from vak_desktop.runtime.provider_set import (
    UNREACHABLE as PROVIDER_UNREACHABLE,
)

log = logging.getLogger(__name__)

UNKNOWN, CHECKING, REACHABLE, UNREACHABLE = "unknown", "checking", "reachable", "unreachable"
PRIMARY = "Ollama"  # the entry name of the provider the service is made with
HOLD_LOOP_S = 0.008  # the longest a turn's events run before the window gets the loop back


@dataclass(frozen=True)
class Reachability:
    """What we last learned about the primary provider's (Ollama's) server: `state` is one of the four above."""

    state: str
    host: str
    reason: str = ""

    @property
    def unreachable(self) -> bool:
        return self.state == UNREACHABLE


@dataclass(frozen=True)
class Transcript:
    """What the chat view draws for a session, from one read of its entries: the shown
    branch's turns, every clicked card's state, each directive's (position, count) among its
    versions."""

    turns: list[Turn]
    cards: dict[str, CardState]
    versions: dict[str, tuple[int, int]]


class ChatService(QObject):
    """Runs turns and model look-ups for the window and tells it what happened."""

    reachabilityChanged = Signal(object)  # Reachability
    modelsChanged = Signal(list)  # list[str]: the primary provider's models, as it lists them
    choicesChanged = Signal(list)  # list[ProviderListing]: every provider's models or state
    modelChanged = Signal(str)  # the selected model ('' when there is none)
    modelBound = Signal(object)  # ModelBinding of the selected model
    sessionsChanged = Signal()  # titles, order or count may have changed
    sessionOpened = Signal(str)  # the session now shown; '' for a new, not yet written chat
    busyChanged = Signal(bool)  # a turn is running
    directiveSubmitted = Signal(str)  # the user's text, the moment `send` accepts it
    turnRefused = Signal(str)  # the turn could not start; says why, for the user
    turnStarted = Signal(object)  # TurnStarted
    textChunk = Signal(str)
    thinkingChunk = Signal(str)
    toolCallRequested = Signal(object)  # ToolCallRequested
    toolResultReady = Signal(object)  # ToolResultReady
    stepFinished = Signal(object)  # StepFinished
    notice = Signal(str)
    turnFinished = Signal(object)  # TurnFinished, also for a stopped turn
    branchChanged = Signal(str)  # the session whose shown branch changed (switch, edit …)
    presentationsChanged = Signal(str)  # a card of this session was rated, dismissed, restored
    thinkChanged = Signal(object)  # bool | None: the thinking toggle (None: the model decides)

    def __init__(
        self,
        ledger: Ledger,
        provider: ChatProvider,
        tools: ToolRegistry | None = None,
        *,
        keep_alive: str | int | Callable[[str], str | int | None] | None = "30m",
        background_probes: bool = False,
        probe_hosted: bool = False,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._ledger = ledger
        self._provider = provider
        self._tools = tools if tools is not None else default_tools()
        # keep_alive may be a function of the model (settings: per model, else the default),
        # asked again at every turn so a change in the model manager applies to the next one.
        self._keep_alive = keep_alive if callable(keep_alive) else lambda _model: keep_alive
        self._background_probes = background_probes
        self._probe_policy = ProbePolicy(hosted="full" if probe_hosted else "off")
        self._profiles = ProfileCache()  # what this process measured, for every provider
        # One runner per provider, made on first use; the primary's now (the window reads its
        # system prompt and tools). A session moves between them turn by turn.
        self._runner = self._make_runner(provider)
        self._providers = ProviderSet(self._make_runner)
        self._providers.add(ProviderSlot(PRIMARY, provider.name, provider, runner=self._runner))
        self._listings: list[ProviderListing] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._turn: asyncio.Task[None] | None = None
        self._models: list[str] = []
        self._choice: ModelChoice | None = None
        self._session: str | None = None
        self._shown: dict[str, str] = {}  # session -> the leaf of the branch shown, if not head
        self._think: bool | None = None
        self._reachability = Reachability(UNKNOWN, provider.host)

    def _make_runner(self, provider: ChatProvider) -> TurnRunner:
        # With background probes, an idle local model's capacity is measured after a turn
        # finishes (a hosted one only with `[probe] hosted`); a turn on that model cancels the
        # probe rather than wait for it. The same switch measures the prompt prefix once per
        # profile (one usage-only request).
        capacity = None
        if self._background_probes:
            capacity = probing_capacity(
                self._ledger, provider, self._probe_policy, cache=self._profiles
            )
        return TurnRunner(
            self._ledger,
            provider,
            self._tools,
            keep_alive=self._keep_alive(""),
            capacity=capacity,
            compact_ahead=True,  # the next turn's packet is written while the user reads
            measure_prefix=self._background_probes,
        )

    # -- state ------------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return self._provider.host

    @property
    def ledger(self) -> Ledger:
        return self._ledger

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

    @property
    def session(self) -> str | None:
        """The session shown, or None for a new chat that has no entry yet."""
        return self._session

    @property
    def busy(self) -> bool:
        return self._turn is not None

    @property
    def capabilities(self) -> tuple[str, ...]:
        """What the bound model says it can do (`/api/show`): "vision", "thinking", "tools" …"""
        binding = self.binding
        return binding.capabilities if binding is not None else ()

    @property
    def think(self) -> bool | None:
        return self._think

    def set_think(self, value: bool | None) -> None:
        """Ask the next turns to think (True), not to (False), or leave it to the model (None)."""
        if value != self._think:
            self._think = value
            self.thinkChanged.emit(value)

    # -- sessions ---------------------------------------------------------------------------

    def sessions(self) -> list[SessionSummary]:
        """Every session, the most recently active first."""
        return session_summaries(self._ledger)

    def turns(self, session: str) -> list[Turn]:
        """The turns of the branch of `session` that is shown (the newest one by default)."""
        head = self._shown.get(session)
        if head is None:
            return session_turns(self._ledger, session)
        return split_turns(self._ledger.chain_to_root(session, head))

    def directive(self, turn_id: str) -> Directive:
        """The directive entry `turn_id` (what the user asked, with its images)."""
        payload = self._ledger.entry(turn_id).payload
        if not isinstance(payload, Directive):
            raise ValueError(f"{turn_id} is not a directive")
        return payload

    def transcript(self, session: str) -> Transcript:
        """The shown branch of `session` with its card states and versions (one ledger read)."""
        entries = list(self._ledger.entries(session))
        chain = chain_from(entries, self._shown.get(session))
        return Transcript(
            split_turns(chain), presentation_states(entries), version_positions(entries)
        )

    # -- branches ---------------------------------------------------------------------------

    def alternatives(self, turn_id: str) -> tuple[int, int]:
        """(position, count) of a turn among its alternatives (edits and regenerations), 1-based."""
        if self._session is None:
            return (1, 1)
        siblings = alternatives(list(self._ledger.entries(self._session)), turn_id)
        return (siblings.index(turn_id) + 1, len(siblings))

    def show_alternative(self, turn_id: str, step: int) -> bool:
        """Show the alternative `step` places after (or before) `turn_id`, with the newest
        conversation that followed it. Nothing is written. Refused while a turn runs."""
        session = self._session
        if session is None or self.busy:
            return False
        entries = list(self._ledger.entries(session))
        siblings = alternatives(entries, turn_id)
        target = siblings.index(turn_id) + step
        if not 0 <= target < len(siblings):
            return False
        leaf = newest_leaf(entries, siblings[target])
        head = self._ledger.head(session)
        if head is not None and head.id == leaf:
            self._shown.pop(session, None)
        else:
            self._shown[session] = leaf
        self.branchChanged.emit(session)
        return True

    def edit(self, turn_id: str, text: str, images: tuple[str, ...] = ()) -> bool:
        """Send `text` as a new alternative of turn `turn_id`; the old turn and all that
        followed it stay in the ledger, on their own branch."""
        return self._branch(turn_id, text.strip(), images)

    def regenerate(self, turn_id: str) -> bool:
        """Ask again: the same directive as a new alternative of `turn_id`, answered anew by
        the selected model."""
        session = self._session
        if session is None:
            return False
        directive = self._ledger.entry(turn_id).payload
        if not isinstance(directive, Directive):
            return False
        return self._branch(turn_id, directive.text, directive.images)

    def _branch(self, turn_id: str, text: str, images: tuple[str, ...]) -> bool:
        session = self._session
        if session is None or not text or self.busy:
            return False
        head = self._shown.get(session)
        parent = branch_parent(self._ledger.chain_to_root(session, head), turn_id)
        return self._start(text, images, parent)

    # -- cards ------------------------------------------------------------------------------

    def presentation_states(self, session: str | None = None) -> dict[str, CardState]:
        """Every clicked card of `session` (default: the shown one) and what the clicks say."""
        session = session or self._session
        if session is None:
            return {}
        return presentation_states(self._ledger.entries(session))

    def rate_presentation(self, presentation_id: str, verdict: str) -> None:
        """Record 👍 ("up"), 👎 ("down") or taking it back ("clear") as a ledger fact."""
        self._card_fact(
            lambda session: record_feedback(self._ledger, session, presentation_id, verdict),
            presentation_id,
        )

    def select_presentation(self, presentation_id: str, action: str) -> None:
        """Record that a card was dismissed or restored."""
        self._card_fact(
            lambda session: set_selection(self._ledger, session, presentation_id, action),
            presentation_id,
        )

    def _card_fact(self, write: Callable[[str], object], presentation_id: str) -> None:
        """Write a click on a card (as a ledger fact in the card's own session)."""
        session = self._ledger.entry(presentation_id).session  # UnknownEntry: no such card
        write(session)  # ValueError: not a card, or not a verdict/action
        self.presentationsChanged.emit(session)

    def open_session(self, session: str | None) -> bool:
        """Show `session` (None: a new chat). Refused while a turn runs."""
        if self.busy:
            return False
        self._session = session
        self.sessionOpened.emit(session or "")
        return True

    def new_session(self) -> bool:
        """Start a new chat. The session is written when its first message is sent."""
        return self.open_session(None)

    # -- models -----------------------------------------------------------------------------

    def refresh_models(self) -> asyncio.Task[None]:
        """Ask every provider for its models; the primary's answer is also the reachability
        check. Providers are asked at once, so a slow or failing one holds up no other."""
        return self._spawn(self._refresh_models(), "refresh-models")

    def select_model(self, model: str | ModelChoice | None) -> None:
        """Bind `model` for the next turns; its provider is asked about it in the background
        (an embedded engine not running yet is started). A name alone means the first provider
        listing it, else the primary."""
        choice = self._as_choice(model) if isinstance(model, str) else model
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
            self._spawn(self._bind_quietly(choice), f"bind-{choice.provider}-{choice.model}")

    def _as_choice(self, model: str) -> ModelChoice | None:
        if not model:
            return None
        listed = (c for listing in self._listings for c in listing.choices())
        return next((c for c in listed if c.model == model), ModelChoice(PRIMARY, model))

    async def _refresh_models(self) -> None:
        self._set_reachability(Reachability(CHECKING, self.host))
        listings = await self._providers.listings()
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
        if not self._still_offered(self._choice):
            self.select_model(self._preferred(listings))

    def _show_listings(self, listings: list[ProviderListing] | None = None) -> None:
        self._listings = listings if listings is not None else self._providers.last_listings()
        self.choicesChanged.emit(list(self._listings))

    def _still_offered(self, choice: ModelChoice | None) -> bool:
        """Whether the selection stands: its provider lists it, or could not be asked (a
        server that is down for a moment keeps its model selected)."""
        if choice is None:
            return False
        listing = next((item for item in self._listings if item.name == choice.provider), None)
        if listing is None:
            return False  # the provider was removed
        return listing.state != READY or choice.model in listing.models

    def _preferred(self, listings: list[ProviderListing]) -> ModelChoice | None:
        """The model the shown session last used, if a provider of its kind has it; else the
        first model listed. An engine that is not running is never started for this."""
        ready = [c for item in listings if item.state == READY for c in item.choices()]
        if self._session is not None:
            turns = self.turns(self._session)
            if turns:
                last = turns[-1].directive
                kinds = {item.name: item.kind for item in listings}
                for choice in ready:
                    if choice.model == last.model and kinds[choice.provider] == last.provider:
                        return choice
        return ready[0] if ready else None

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
        return self._spawn(self._set_providers(slots), "set-providers")

    async def _set_providers(self, slots: list[ProviderSlot]) -> None:
        await self._providers.replace_configured(slots, keep=(PRIMARY,))
        await self._refresh_models()

    def run_engine(self, slot: ProviderSlot) -> asyncio.Task[None]:
        """Put the embedded engine `slot` in place of any other and select its model, which
        starts it in the background (the picker shows it starting, a notice when it runs)."""
        return self._spawn(self._run_engine(slot), "run-engine")

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

    # -- turns ------------------------------------------------------------------------------

    def send(self, text: str, images: tuple[str, ...] = ()) -> bool:
        """Start a turn with `text` (and base64 `images`) on the shown branch of the shown
        session. False if it cannot start now."""
        text = text.strip()
        if not text or self.busy:
            return False
        parent = self._shown.get(self._session) if self._session is not None else None
        return self._start(text, images, parent)

    def _start(self, text: str, images: tuple[str, ...], parent: str | None) -> bool:
        if self._choice is None:
            self.turnRefused.emit("Pick a model first: the model list is empty or still loading.")
            return False
        self.directiveSubmitted.emit(text)
        work = self._run_turn(self._session, text, self._choice, images, parent)
        self._turn = self._spawn(work, "turn")
        self.busyChanged.emit(True)
        return True

    def compact_now(self) -> bool:
        """Write the packet the shown session's next turn will want, now ("Compact now"); the
        outcome arrives as a notice. False when there is no session, model, or a turn runs."""
        if self._session is None or self._choice is None or self.busy:
            return False
        self._spawn(self._compact(self._session, self._choice), "compact")
        return True

    async def _compact(self, session: str, choice: ModelChoice) -> None:
        try:
            binding = await self._binding_for(choice)
            runner = await self._providers.runner(choice.provider)
        except ProviderError as exc:
            self.notice.emit(f"Cannot compact now: {exc}")
            return
        await self._providers.leave(session, runner)
        await runner.settle(session)
        self.notice.emit("Compacting: summarising the turns that left the working set…")
        result = await runner.compact(session, binding)
        self.notice.emit(result.message[:1].upper() + result.message[1:] + ".")
        self.presentationsChanged.emit(session)  # the inspector and gauge re-read the plan

    def stop(self) -> bool:
        """Stop the running turn. The text streamed so far is kept in the ledger."""
        if self._turn is None or self._turn.done():
            return False
        self._turn.cancel()
        return True

    async def _run_turn(
        self,
        session: str | None,
        text: str,
        choice: ModelChoice,
        images: tuple[str, ...] = (),
        parent: str | None = None,
    ) -> None:
        started: TurnStarted | None = None
        usage = Usage()
        try:
            try:
                binding = await self._binding_for(choice)
                runner = await self._providers.runner(choice.provider)
            except ProviderError as exc:
                self.turnRefused.emit(self._refusal(exc, choice))
                return
            if session is None:  # a new chat becomes a session once there is something to keep
                session = self._ledger.create_session().id
                self._session = session
            # The session may have been on another provider: its packet written ahead for
            # that model is dropped; this runner plans the turn from the ledger for this one.
            await self._providers.leave(session, runner)
            runner.keep_alive = self._keep_alive(choice.model)  # one turn runs at a time
            # an async generator, typed as an iterator: close it here, never leave it to the GC
            run = runner.run(
                session, text, binding, images=images, think=self._think, parent=parent
            )
            events = cast(AsyncGenerator[TurnEvent, None], run)
            held_since = time.perf_counter()
            async with contextlib.aclosing(events):
                async for event in events:
                    # Chunks that arrived together are read without the loop ever waiting,
                    # so without this a burst would hold the window until it was all shown.
                    if time.perf_counter() - held_since > HOLD_LOOP_S:
                        await asyncio.sleep(0)  # let Qt paint and fire its timers
                        held_since = time.perf_counter()
                    if isinstance(event, TurnStarted):
                        started = event
                        if self._shown.pop(session, None) is not None or parent is not None:
                            self.branchChanged.emit(session)  # the new turn is the head now
                        self.turnStarted.emit(event)
                        self.sessionsChanged.emit()  # the directive gave it a title
                    elif isinstance(event, TextChunk):
                        self.textChunk.emit(event.text)
                    elif isinstance(event, ThinkingChunk):
                        self.thinkingChunk.emit(event.text)
                    elif isinstance(event, ToolCallRequested):
                        self.toolCallRequested.emit(event)
                    elif isinstance(event, ToolResultReady):
                        self.toolResultReady.emit(event)
                    elif isinstance(event, StepFinished):
                        usage = usage.plus(event.receipt.usage)
                        self.stepFinished.emit(event)
                    elif isinstance(event, Notice):
                        self.notice.emit(event.message)
                    elif isinstance(event, TurnFinished):
                        self.turnFinished.emit(event)
                        if event.outcome == "failed":
                            self.refresh_models()  # was it the server? the banner will say
        except asyncio.CancelledError:
            if started is not None:
                stopped = TurnFinished(
                    started.session, started.turn_id, "cancelled", usage, "stopped by the user"
                )
                self.turnFinished.emit(stopped)
            else:
                self.turnRefused.emit("Stopped before the model was asked.")
            raise
        finally:
            self._turn = None
            self.busyChanged.emit(False)
            self.sessionsChanged.emit()

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

    def _spawn(self, work: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._forget)
        return task

    def _forget(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("task %s failed", task.get_name(), exc_info=task.exception())

    async def aclose(self) -> None:
        """Cancel every task this service started and wait until they have ended."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        # every runner's look-ahead compaction and background probe; every embedded engine
        await self._providers.aclose()
        await self._tools.aclose()  # MCP servers a call started
