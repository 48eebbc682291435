"""The one service the window shows: the runtime on the Qt side, as a QObject with signals.

It owns the `TurnRunner` and runs each turn, each model-list refresh and each model binding as an
asyncio task on the qasync loop, so the UI thread never waits on the network. Every runtime event
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
from vak_desktop.providers.base import ChatProvider, ModelCatalog
from vak_desktop.providers.errors import ModelNotFound, ProviderError, Unreachable
from vak_desktop.runtime import (
    ModelBinding,
    SessionSummary,
    ToolRegistry,
    TurnRunner,
    bind_model,
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

log = logging.getLogger(__name__)

UNKNOWN, CHECKING, REACHABLE, UNREACHABLE = "unknown", "checking", "reachable", "unreachable"
HOLD_LOOP_S = 0.008  # the longest a turn's events run before the window gets the loop back


@dataclass(frozen=True)
class Reachability:
    """What we last learned about the provider's server: `state` is one of the four above."""

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
    modelsChanged = Signal(list)  # list[str]: the provider's models, as it lists them
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
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._ledger = ledger
        self._provider = provider
        # keep_alive may be a function of the model (settings: per model, else the default),
        # asked again at every turn so a change in the model manager applies to the next one.
        self._keep_alive = keep_alive if callable(keep_alive) else lambda _model: keep_alive
        # With background probes, an idle local model's capacity is measured after a turn
        # finishes; a turn on that model cancels the probe rather than wait for it. The same
        # switch measures the prompt prefix once per profile (one usage-only request).
        capacity = probing_capacity(ledger, provider) if background_probes else None
        self._runner = TurnRunner(
            ledger,
            provider,
            tools if tools is not None else default_tools(),
            keep_alive=self._keep_alive(""),
            capacity=capacity,
            compact_ahead=True,  # the next turn's packet is written while the user reads
            measure_prefix=background_probes,
        )
        self._tasks: set[asyncio.Task[Any]] = set()
        self._turn: asyncio.Task[None] | None = None
        self._models: list[str] = []
        self._model = ""
        self._bindings: dict[str, ModelBinding] = {}
        self._session: str | None = None
        self._shown: dict[str, str] = {}  # session -> the leaf of the branch shown, if not head
        self._think: bool | None = None
        self._reachability = Reachability(UNKNOWN, provider.host)

    # -- state ------------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return self._provider.host

    @property
    def ledger(self) -> Ledger:
        return self._ledger

    @property
    def runner(self) -> TurnRunner:
        """The runner turns go through (its system prompt and tools are what a request has)."""
        return self._runner

    @property
    def provider(self) -> ChatProvider:
        return self._provider

    @property
    def reachability(self) -> Reachability:
        return self._reachability

    @property
    def models(self) -> list[str]:
        return list(self._models)

    @property
    def model(self) -> str:
        return self._model

    @property
    def binding(self) -> ModelBinding | None:
        """The binding of the selected model, once the provider has described it."""
        return self._bindings.get(self._model)

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
        """Ask the provider for its models; this is also the reachability check."""
        return self._spawn(self._refresh_models(), "refresh-models")

    def select_model(self, model: str) -> None:
        """Bind `model` for the next turns; the provider is asked about it in the background."""
        if model == self._model:
            return
        self._model = model
        self.modelChanged.emit(model)
        if not model:
            return
        if model in self._bindings:
            self.modelBound.emit(self._bindings[model])
        else:
            self._spawn(self._bind_quietly(model), f"bind-{model}")

    async def _refresh_models(self) -> None:
        self._set_reachability(Reachability(CHECKING, self.host))
        try:
            if isinstance(self._provider, ModelCatalog):
                names = [m.name for m in await self._provider.list_models()]
            else:
                names = []
        except Unreachable as exc:
            self._set_reachability(Reachability(UNREACHABLE, self.host, exc.reason))
            return
        except ProviderError as exc:  # it answered, but not with a model list
            self._set_reachability(Reachability(REACHABLE, self.host))
            self.notice.emit(f"Could not list models: {exc}")
            return
        self._set_reachability(Reachability(REACHABLE, self.host))
        self._models = names
        self.modelsChanged.emit(list(names))
        if self._model not in names:
            self.select_model(self._preferred_model(names))

    def _preferred_model(self, names: list[str]) -> str:
        """The model the shown session last used, if the server has it; else the first one."""
        if self._session is not None:
            turns = self.turns(self._session)
            if turns and turns[-1].directive.model in names:
                return turns[-1].directive.model
        return names[0] if names else ""

    async def _bind_quietly(self, model: str) -> None:
        try:
            await self._binding_for(model)
        except ModelNotFound as exc:
            self.notice.emit(str(exc))
        except ProviderError:
            pass  # _binding_for already recorded an unreachable server; a turn will say more

    async def _binding_for(self, model: str) -> ModelBinding:
        binding = self._bindings.get(model)
        if binding is not None:
            return binding
        try:
            binding = await bind_model(self._provider, model)
        except Unreachable as exc:
            self._set_reachability(Reachability(UNREACHABLE, self.host, exc.reason))
            raise
        if self._reachability.unreachable:
            self.refresh_models()  # it answered: fill the picker and hide the banner
        self._bindings.setdefault(model, binding)
        if model == self._model:
            self.modelBound.emit(self._bindings[model])
        return self._bindings[model]

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
        if not self._model:
            self.turnRefused.emit("Pick a model first: the model list is empty or still loading.")
            return False
        self.directiveSubmitted.emit(text)
        work = self._run_turn(self._session, text, self._model, images, parent)
        self._turn = self._spawn(work, "turn")
        self.busyChanged.emit(True)
        return True

    def compact_now(self) -> bool:
        """Write the packet the shown session's next turn will want, now ("Compact now"); the
        outcome arrives as a notice. False when there is no session, model, or a turn runs."""
        if self._session is None or not self._model or self.busy:
            return False
        self._spawn(self._compact(self._session, self._model), "compact")
        return True

    async def _compact(self, session: str, model: str) -> None:
        try:
            binding = await self._binding_for(model)
        except ProviderError as exc:
            self.notice.emit(f"Cannot compact now: {exc}")
            return
        await self._runner.settle(session)
        self.notice.emit("Compacting: summarising the turns that left the working set…")
        result = await self._runner.compact(session, binding)
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
        model: str,
        images: tuple[str, ...] = (),
        parent: str | None = None,
    ) -> None:
        started: TurnStarted | None = None
        usage = Usage()
        try:
            try:
                binding = await self._binding_for(model)
            except ProviderError as exc:
                self.turnRefused.emit(self._refusal(exc))
                return
            if session is None:  # a new chat becomes a session once there is something to keep
                session = self._ledger.create_session().id
                self._session = session
            self._runner.keep_alive = self._keep_alive(model)  # one turn runs at a time
            # an async generator, typed as an iterator: close it here, never leave it to the GC
            run = self._runner.run(
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

    def _refusal(self, exc: ProviderError) -> str:
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
        await self._runner.aclose()  # a look-ahead compaction still running
        await self._runner.capacity.aclose()
        await self._runner.tools.aclose()  # MCP servers a call started
