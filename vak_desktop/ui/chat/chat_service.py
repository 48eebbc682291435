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
import time
from collections.abc import AsyncGenerator, Callable
from typing import cast

from PySide6.QtCore import QObject, Signal

from vak_desktop.context.payloads import (
    Directive,
    Usage,
)
from vak_desktop.ledger import DamagedEntry, Ledger, SessionBusy
from vak_desktop.providers.base import ChatProvider, is_local
from vak_desktop.providers.errors import ProviderError
from vak_desktop.runtime import (
    ModelBinding,
    ProbePolicy,
    ToolRegistry,
    TurnRunner,
    default_tools,
    probing_capacity,
)
from vak_desktop.runtime.capacity.probe import ProbeProgress
from vak_desktop.runtime.capacity.scheduler import ProbeScheduler
from vak_desktop.runtime.capacity.service import ProfileCache
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
from vak_desktop.runtime.providers.choices import (
    ModelChoice,
)
from vak_desktop.ui.chat.compact_now import CompactNow
from vak_desktop.ui.chat.model_selection import (  # re-exported: the views import them from here
    CHECKING,
    PRIMARY,
    REACHABLE,
    UNKNOWN,
    UNREACHABLE,
    Reachability,
)
from vak_desktop.ui.chat.session_browsing import SessionBrowsing, Transcript
from vak_desktop.ui.chat.session_prompts import SessionPrompts

__all__ = [
    "CHECKING",
    "PRIMARY",
    "REACHABLE",
    "UNKNOWN",
    "UNREACHABLE",
    "ChatService",
    "Reachability",
    "Transcript",
]

HOLD_LOOP_S = 0.008  # the longest a turn's events run before the window gets the loop back


class ChatService(CompactNow, SessionBrowsing, SessionPrompts):
    """Runs turns for the window and tells it what happened (the model look-ups and the
    providers are `ModelSelection`'s, "Compact now" `CompactNow`'s; sessions, branches and card
    clicks `SessionBrowsing`'s)."""

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
    turnFinished = Signal(object)  # TurnFinished, also for a stopped turn
    branchChanged = Signal(str)  # the session whose shown branch changed (switch, edit …)
    presentationsChanged = Signal(str)  # a card of this session was rated, dismissed, restored
    thinkChanged = Signal(object)  # bool | None: the thinking toggle (None: the model decides)
    # a background probe's sample (ProbeProgress), then None when it ends (measured or not)
    probeProgress = Signal(str, object)
    systemPromptChanged = Signal(str)  # the shown chat's system prompt (set, or another chat)

    def __init__(
        self,
        ledger: Ledger,
        provider: ChatProvider,
        tools: ToolRegistry | None = None,
        *,
        keep_alive: str | int | Callable[[str], str | int | None] | None = "30m",
        background_probes: bool = False,
        probe_hosted: bool = False,
        titles: bool = False,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._ledger = ledger
        self._tools = tools if tools is not None else default_tools()
        # keep_alive may be a function of the model (settings: per model, else the default),
        # asked again at every turn so a change in the model manager applies to the next one.
        self._keep_alive = keep_alive if callable(keep_alive) else lambda _model: keep_alive
        self._background_probes = background_probes
        self._titles = titles  # name a new chat by a side call after its first answer
        self.naming: asyncio.Task[None] | None = None  # the latest title side call
        self._probe_policy = ProbePolicy(hosted="full" if probe_hosted else "off")
        self._profiles = ProfileCache()  # what this process measured, for every provider
        self._schedulers: list[ProbeScheduler] = []  # every runner's background ProbeScheduler
        # One runner per provider over the same ledger, tools and measurements; a session
        # moves between them turn by turn.
        self._open_providers(provider, self._make_runner)
        self._turn: asyncio.Task[None] | None = None
        self._session: str | None = None
        self._shown: dict[str, str] = {}  # session -> the leaf of the branch shown, if not head
        self._think: bool | None = None
        self._compaction = None
        self._init_prompts()

    def _make_runner(self, provider: ChatProvider) -> TurnRunner:
        """The runner of one provider: the same ledger, tools and probe settings as every other."""
        # With background probes, an idle local model's capacity is measured after a turn
        # finishes (a hosted one only with `[probe] hosted`); a turn on that model cancels the
        # probe rather than wait for it. The same switch measures the prompt prefix once per
        # profile (one usage-only request).
        capacity = None
        if self._background_probes:
            capacity = probing_capacity(
                self._ledger,
                provider,
                self._probe_policy,
                cache=self._profiles,
                on_progress=self._background_probe,
            )
            assert isinstance(capacity.scheduler, ProbeScheduler)
            self._schedulers.append(capacity.scheduler)
        return TurnRunner(
            self._ledger,
            provider,
            self._tools,
            keep_alive=self._keep_alive(""),
            capacity=capacity,
            compact_ahead=True,  # the next turn's packet is written while the user reads
            # a hosted provider bills the usage-only request too: measured there only when
            # hosted probes are opted in
            measure_prefix=self._background_probes
            and (is_local(provider) or self._probe_policy.hosted == "full"),
        )

    # -- state ------------------------------------------------------------------------------

    @property
    def ledger(self) -> Ledger:
        return self._ledger

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

    def _make_primary_runner(self, provider: ChatProvider) -> TurnRunner:
        return self._make_runner(provider)

    def use_tools(self, tools: ToolRegistry) -> asyncio.Task[None]:
        """Give every runner `tools` from the next turn on (the workspace folders or MCP servers
        changed in the settings); the old registry's servers are stopped."""
        old, self._tools = self._tools, tools
        for runner in self._providers.runners():
            runner.tools = tools
        return self._tasks.spawn(old.aclose(), "close-old-tools")

    @property
    def tools(self) -> ToolRegistry:
        return self._tools

    def _background_probe(self, binding: ModelBinding, progress: ProbeProgress | None) -> None:
        self.probeProgress.emit(binding.model, progress)

    def pause_probe(self, model: str) -> bool:
        """Pause a background probe of `model` now: it keeps the rungs it decided and waits
        for `resume_probe` (no later turn restarts it)."""
        return any([scheduler.pause_model(model) for scheduler in self._schedulers])

    def paused_probe(self, model: str) -> str | None:
        """'paused after N rungs' for a paused background probe of `model`, else None."""
        for scheduler in self._schedulers:
            paused = scheduler.paused(model)
            if paused is not None:
                detail = paused.record.activity.detail
                decided = len(detail.get("rungs") or ()) + len(detail.get("memory_rungs") or ())
                return f"paused after {decided} rung{'s' if decided != 1 else ''}"
        return None

    def resume_probe(self, model: str) -> bool:
        """Continue a paused background probe of `model` from its next rung, now."""
        return any([scheduler.resume_model(model) is not None for scheduler in self._schedulers])

    def open_session(self, session: str | None) -> bool:
        """Show `session` (None: a new chat). Refused while a turn runs, and for a session
        with an entry changed outside Vak: the notice names it, the shown chat stays, and
        nothing is written to the damaged one (every later read of it would fail alike)."""
        if self.busy:
            return False
        damage = self._read_to_open(session) if session else ""
        if damage:
            self.notice.emit(damage)
            return False
        self._session = session
        self._forget_pending_prompt()
        try:
            self.sessionOpened.emit(session or "")
        finally:
            self._opening = None
        self.systemPromptChanged.emit(self.system_prompt)
        return True

    def new_session(self) -> bool:
        """Start a new chat. The session is written when its first message is sent."""
        return self.open_session(None)

    def _last_directive(self) -> Directive | None:
        turns = self.turns(self._session) if self._session is not None else []
        return turns[-1].directive if turns else None

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
        self.stop_compaction()  # the answer never waits behind a summary being written
        work = self._run_turn(self._session, text, self._choice, images, parent)
        self._turn = self._tasks.spawn(work, "turn")
        self.busyChanged.emit(True)
        return True

    def warm(self, draft: str) -> bool:
        """While the user types `draft`: prefill the bound model's prompt cache with the shown
        session's next request up to its tail (`runtime/turn/warm.py`), so the first token
        after Enter waits only on the typed words. False when there is nothing to warm: a new
        chat, no model, a turn or Compact now running, or an older branch shown (the turn would
        branch)."""
        draft = draft.strip()
        session = self._session
        if session is None or self._choice is None or self.busy or not draft:
            return False
        if session in self._shown or self.compacting:  # Compact now holds the model
            return False
        self._tasks.spawn(self._warm(session, draft, self._choice), "warm")
        return True

    async def _warm(self, session: str, draft: str, choice: ModelChoice) -> None:
        try:
            binding = await self._binding_for(choice)
            runner = await self._providers.runner(choice.provider)
        except ProviderError:
            return  # the turn will say why, if the user sends it
        runner.keep_alive = self._keep_alive(choice.model)  # as the turn will send it
        warming = runner.warm(session, draft, binding, think=self._think)
        if warming is not None:
            await warming

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
                self._write_new_chat_prompt(session)
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
                        elif self._titles and event.outcome == "completed":
                            self.naming = self._tasks.spawn(
                                self._title(session, runner, binding, choice.model), "title"
                            )
        except SessionBusy as exc:  # another window or `vak chat` runs a turn in it
            self.turnRefused.emit(str(exc))
        except DamagedEntry as exc:  # its chain (or a card it reads) changed outside Vak:
            # the runner reads before it writes, so nothing is written to the damaged chat
            if started is None:
                self.turnRefused.emit(f"The turn cannot start: {exc}")
            else:
                failed = TurnFinished(started.session, started.turn_id, "failed", usage, str(exc))
                self.turnFinished.emit(failed)
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

    async def aclose(self) -> None:
        """Cancel every task this service started and wait until they have ended."""
        await self._tasks.cancel_all()
        # every runner's look-ahead compaction and background probe; every embedded engine
        await self._providers.aclose()
        await self._tools.aclose()  # MCP servers a call started
