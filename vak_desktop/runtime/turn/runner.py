"""Running turns: directive in, streamed steps and tool exchanges out, everything in the ledger.

The order of writes is what makes a turn survive anything: the Directive is committed before the
first byte is requested; each assistant step, tool result and receipt is committed as soon as it
exists (`loop.TurnLoop`, one turn's steps); a turn ends with a `turn_closed` Activity carrying
its outcome. A process killed mid-turn leaves a turn with no close, which the next turn in that
session marks `turn_interrupted`. A cancelled stream keeps whatever text had arrived, marked
interrupted. `TurnRunner` is the service around the turns: the tool surface a turn gets, the
look-ahead packet after it, the warm request while the user types, compaction on demand.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator

from vak_desktop.context.capacity.probe_history import PROBE_REQUEST, ProbePrefix
from vak_desktop.context.payloads import Directive
from vak_desktop.context.presentations.library import fence_guide
from vak_desktop.ledger import Ledger
from vak_desktop.ledger.canonical import utc_now
from vak_desktop.providers.base import ChatProvider, is_local
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.capacity.prefix import PrefixMeter
from vak_desktop.runtime.capacity.service import CapacityService
from vak_desktop.runtime.events import CompactionEvent, Notice, TurnEvent, TurnFinished, TurnStarted
from vak_desktop.runtime.presentations import card_library
from vak_desktop.runtime.sessions.system_prompts import system_prompt_of
from vak_desktop.runtime.tools import ToolRegistry
from vak_desktop.runtime.tools.surface import (
    ToolSurface,
    fitted_surface,
    sent_tools,
    tool_surface,
)
from vak_desktop.runtime.turn.closing import close_interrupted, close_turn
from vak_desktop.runtime.turn.compaction import (
    CompactionResult,
    compact_session,
    compaction_events,
)
from vak_desktop.runtime.turn.lookahead import Lookahead
from vak_desktop.runtime.turn.loop import TurnLoop
from vak_desktop.runtime.turn.projection import TurnIndexes
from vak_desktop.runtime.turn.recovery import DEFAULT_INSTRUCTION_CHECKS, InstructionCheck
from vak_desktop.runtime.turn.reset import check_reset
from vak_desktop.runtime.turn.summariser import SummaryWatch
from vak_desktop.runtime.turn.warm import Warmed, Warmer, draft_request, warm_part

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant running in Vak Desktop on the user's own machine. "
    "Answer clearly and directly. Tool results you have seen before may be shown as a digest or "
    "a window with an evidence id; call `recall` with that id to read them in full."
)


class TurnRunner:
    """Runs turns of any session against one provider, with one set of tools."""

    def __init__(
        self,
        ledger: Ledger,
        provider: ChatProvider,
        tools: ToolRegistry,
        *,
        keep_alive: str | int | None = "30m",
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        capacity: CapacityService | None = None,
        instruction_checks: tuple[InstructionCheck, ...] = DEFAULT_INSTRUCTION_CHECKS,
        compact_ahead: bool = False,
        measure_prefix: bool = False,
    ) -> None:
        self.ledger = ledger
        self.provider = provider
        self.tools = tools
        self.keep_alive = keep_alive
        self.system_prompt = system_prompt
        # Without a scheduler (the default) nothing probes in the background; the window
        # passes `runtime.scheduler.probing_capacity(...)` to probe idle local models.
        self.capacity = capacity if capacity is not None else CapacityService(ledger)
        self.instruction_checks = instruction_checks
        # After a turn closes, write the packet the next turn will want in the background (the
        # window and the REPL turn this on; a one-shot command has no next turn to prepare).
        self.compact_ahead = compact_ahead
        self.lookahead = Lookahead()
        self.indexes = TurnIndexes()  # each session's TurnIndex, advanced request by request
        self.warmer = Warmer()  # the draft's request sent while the user types
        self._running = 0  # turns running on this runner now
        self.cards = card_library()  # the card definitions the fence fallback reads

        # Opt-in: one usage-only request per profile counts the prefix (spec §6)
        self.prefix_meter = PrefixMeter(ledger, provider, self.capacity) if measure_prefix else None

    def _surface(
        self, binding: ModelBinding, directive: str, session: str = "", prompt: str = ""
    ) -> ToolSurface:
        """The turn's tool surface. A model that says it cannot call tools is sent none
        (Ollama refuses the request otherwise) and its system text says how to write a card as
        a ```vak fence instead. `prompt`: the session's own system prompt, if it set one. A
        small model, or a full prefix over a third of the horizon, gets the compact form
        (`fitted_surface`); a session's own prompt is kept whole in it."""
        prompt = prompt or self.system_prompt
        if session:
            chain = self.ledger.chain_to_root(session)
            profile = self.capacity.profile_for(binding, chain, utc_now())
            own = prompt if prompt != DEFAULT_SYSTEM_PROMPT else ""
            earlier = sent_tools(chain)  # the session's tools only grow: the prefix cache holds
            surface = fitted_surface(
                self.tools, prompt, directive, profile, own_prompt=own, earlier=earlier
            )
            notes = self.tools.session_notes(self.ledger, session)  # where the user's files are
            if notes:
                system = "\n\n".join((surface.system, *notes))
                surface = dataclasses.replace(surface, system=system)
        else:
            surface = tool_surface(self.tools, prompt, directive)
        if not self.without_tools(binding):
            return surface
        system = f"{prompt.rstrip()}\n\n{fence_guide(self.cards)}"
        return dataclasses.replace(surface, system=system, prefix=(), catalogue=())

    def probe_prefix(self, binding: ModelBinding, session: str = "") -> ProbePrefix:
        """The stable prefix this model's real requests carry, for its capacity probe (issue
        #17): the surface this runner builds for the probe's own request — the session's
        system text, the catalogue, the schemas that request loads — for the bound profile."""
        chain = self.ledger.chain_to_root(session) if session else []
        prompt = system_prompt_of(chain, self.system_prompt)
        surface = self._surface(binding, PROBE_REQUEST.format(token="QX-1000"), session, prompt)
        return ProbePrefix(surface.system, surface.tools)

    @staticmethod
    def without_tools(binding: ModelBinding) -> bool:
        """The model says it cannot call tools: it is sent none, and writes cards as fences."""
        return bool(binding.capabilities) and "tools" not in binding.capabilities

    def close_interrupted(self, session: str) -> str | None:
        """Close the session's last turn as interrupted if it never closed (the process died
        mid-turn). Returns the turn's id if it did."""
        return close_interrupted(self.ledger, session)

    async def run(
        self,
        session: str,
        text: str,
        binding: ModelBinding,
        *,
        images: tuple[str, ...] = (),
        think: bool | None = None,
        parent: str | None = None,
    ) -> AsyncIterator[TurnEvent]:
        """Run one turn and yield what happens. `parent` starts a branch (edit / regenerate).
        The session is held for the whole turn: SessionBusy if another turn runs in it. It is
        free again before `TurnFinished` is yielded, so an observer that stops reading there
        (without closing the generator) never keeps the session held."""
        finished: TurnFinished | None = None
        self._running += 1
        try:
            with self.ledger.hold(session):
                turn = self._run(session, text, binding, images=images, think=think, parent=parent)
                async with contextlib.aclosing(turn) as events:
                    async for event in events:
                        if isinstance(event, TurnFinished):
                            finished = event  # the turn's last event: yielded once the hold ends
                        else:
                            yield event
        finally:
            self._running -= 1
        if finished is not None:
            yield finished

    async def _run(
        self,
        session: str,
        text: str,
        binding: ModelBinding,
        *,
        images: tuple[str, ...] = (),
        think: bool | None = None,
        parent: str | None = None,
    ) -> AsyncGenerator[TurnEvent, None]:
        ledger = self.ledger
        # a real turn never waits on a summary being written ahead: it cancels it (the
        # deterministic packet stands in) and the look-ahead starts again after this turn
        await self.abandon_lookahead(session)
        await self.warmer.wait()  # a warm request in flight prefills what this turn sends
        self.close_interrupted(session)
        self.capacity.turn_starting(binding)  # a probe of this model yields the runner
        self.capacity.catch_up(session, binding)  # a probe finished since: into the ledger
        # the branch's own system prompt (runtime/sessions/system_prompts.py), else ours
        before = ledger.chain_to_root(session, parent) if parent else []
        if parent is None:
            before = ledger.chain_to_root(session)
        prompt = system_prompt_of(before, self.system_prompt)
        surface = self._surface(binding, text, session, prompt)
        planned = None  # the reset check's plan of this turn, when it stands (planned once)
        if parent is None:  # no room even for a packet: the boundary goes in before the turn
            reset, planned = check_reset(
                ledger,
                session,
                binding,
                text,
                system=surface.system,
                tools=surface.prefix,
                capacity=self.capacity,
                images=tuple(images),
            )
            if reset is not None:
                yield Notice(reset.reason)
        directive = Directive(
            text=text,
            images=images,
            model=binding.model,
            provider=binding.provider,
            system=prompt,
        )
        if parent is None:
            turn = ledger.append(session, directive)
        else:  # "" (branches.ROOT): an alternative of the first turn starts at the root
            turn = ledger.append(session, directive, parent=parent or None)
        yield TurnStarted(session, turn.id, binding.model)
        loop = TurnLoop(self, session, binding, turn.id, text, surface, think, planned)
        try:
            async for event in loop.steps():
                yield event
        except (asyncio.CancelledError, GeneratorExit):
            if loop.streaming:
                loop.keep_partial()
            close_turn(ledger, session, "cancelled", loop.total, "stopped by the user", loop.ratio)
            raise
        close_turn(ledger, session, loop.outcome, loop.total, loop.error, loop.ratio)
        if self.compact_ahead and loop.outcome != "failed":
            self.start_compaction(session, binding)
        # the model is idle: a probe may run now, shaped like this session's requests
        self.capacity.turn_finished(binding, lambda: self.probe_prefix(binding, session))
        yield TurnFinished(session, turn.id, loop.outcome, loop.total, loop.error)

    def warm(
        self, session: str, draft: str, binding: ModelBinding, *, think: bool | None = None
    ) -> asyncio.Task[Warmed | None] | None:
        """Prefill the model's prompt cache with what the session's next turn would send for
        `draft` (`turn/warm.py`); nothing is written to the ledger. None when
        it would cost money (a hosted model) or time another request needs: a turn, a probe, a
        look-ahead summary or another warm request holds the model."""
        if not is_local(self.provider) or self._running or self.warmer.busy:
            return None
        if self.lookahead.busy or self.capacity.probing(binding):
            return None
        chain = self.ledger.chain_to_root(session)
        surface = self._surface(
            binding, draft, session, system_prompt_of(chain, self.system_prompt)
        )
        request = draft_request(
            self.indexes.index_of(session, chain),
            session,
            binding,
            self.capacity.profile_for(binding, chain, utc_now()),
            draft,
            surface=surface,
            keep_alive=self.keep_alive,
            think=think,
        )
        return self.warmer.start(self.provider, warm_part(request))

    async def compact(
        self, session: str, binding: ModelBinding, watch: SummaryWatch | None = None
    ) -> CompactionResult:
        """Write the packet the session's next turn will want, if it wants one not stored
        (the look-ahead after each turn; `compact_events` for `/compact` and "Compact now")."""
        prompt = system_prompt_of(self.ledger.chain_to_root(session), self.system_prompt)
        floor = self._surface(binding, "", session, prompt)  # the next ask is unknown
        return await compact_session(
            self.ledger,
            session,
            self.provider,
            binding,
            system=floor.system,
            tools=floor.prefix,
            keep_alive=self.keep_alive,
            capacity=self.capacity,
            watch=watch,
        )

    def compact_events(self, session: str, binding: ModelBinding) -> AsyncIterator[CompactionEvent]:
        """`compact` in the foreground (`/compact`, "Compact now"): its progress while the
        summariser writes, then its `CompactionResult`. Closing the stream early cancels it."""
        return compaction_events(lambda watch: self.compact(session, binding, watch))

    def start_compaction(
        self, session: str, binding: ModelBinding
    ) -> asyncio.Task[CompactionResult]:
        """`compact` in the background; the session's next turn waits for it to land."""
        return self.lookahead.start(session, lambda: self.compact(session, binding))

    async def settle(self, session: str | None = None) -> None:
        """Wait for the look-ahead compaction of `session` (default: every session) to end."""
        await self.lookahead.settle(session)

    async def abandon_lookahead(self, session: str) -> None:
        """Cancel the look-ahead compaction of `session`, if one runs: the session's next turn
        goes to another provider's runner, whose model plans its own working set."""
        await self.lookahead.abandon(session)

    async def aclose(self) -> None:
        """Stop look-ahead work (the app is quitting); nothing half-written reaches the ledger."""
        await self.warmer.aclose()
        await self.lookahead.aclose()
