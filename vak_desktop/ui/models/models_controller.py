"""The model manager's service on the Qt side: `runtime.models.ModelService` as signals.

Like `ChatService`, it runs every call (listing, pull, delete, unload, probe) as an asyncio task
on the qasync loop and reports through Qt signals, so the views never wait on the network and
never talk HTTP. It keeps a reference to each task and cancels them all in `aclose()`. One pull
runs at a time; cancelling it cancels its task, which closes the HTTP stream. keep_alive per
model is a setting: it goes through the `SettingsController`, and the chat service reads it
from there on every request.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import QObject, Signal

from vak_desktop.context.capacity.probe_history import ProbePrefix
from vak_desktop.ledger import Ledger
from vak_desktop.providers.base import ChatProvider
from vak_desktop.providers.errors import ProviderError
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.capacity.probe import ProbeProgress, ProbeRecord
from vak_desktop.runtime.providers.models import ModelRow, ModelService
from vak_desktop.runtime.settings import check_keep_alive, full_model_name
from vak_desktop.ui.parts.tasks import TaskSet
from vak_desktop.ui.settings.settings_dialog import SettingsController

SUCCEEDED, CANCELLED, FAILED = "succeeded", "cancelled", "failed"
PAUSED = "paused"  # a probe's outcome: stopped by the user, its decided rungs kept


def paused_words(record: ProbeRecord) -> str:
    """'paused after 3 rungs' — what a paused probe has kept."""
    detail = record.activity.detail
    decided = len(detail.get("rungs") or ()) + len(detail.get("memory_rungs") or ())
    return f"paused after {decided} rung{'s' if decided != 1 else ''}"


ENDED = "ended"  # a probe this controller did not start ended (measured or not)


class ModelsController(QObject):
    """Lists, pulls, deletes, unloads and probes models for the window."""

    modelsChanged = Signal(list)  # list[ModelRow]
    refreshFailed = Signal(str)  # why the listing failed
    catalogueChanged = Signal()  # a model was added or removed: other views may re-list
    pullStarted = Signal(str)
    pullProgress = Signal(object)  # PullState
    pullFinished = Signal(str, str, str)  # model, SUCCEEDED | CANCELLED | FAILED, message
    probeProgress = Signal(str, object)  # model, ProbeProgress
    probeFinished = Signal(str, str, str)  # model, outcome, message
    operationFailed = Signal(str)  # a delete, unload or keep_alive change failed: why
    keepAliveChanged = Signal(str, str)  # model, the keep_alive its requests now carry

    def __init__(
        self,
        ledger: Ledger,
        provider: ChatProvider,
        settings: SettingsController,
        parent: QObject | None = None,
        *,
        prefix_for: Callable[[ModelBinding], ProbePrefix] | None = None,
    ) -> None:
        super().__init__(parent)
        self.service = ModelService(provider, ledger)
        self.settings = settings
        # the prefix the model's real turns carry, for "Probe now" (the chat's runner builds it)
        self.prefix_for = prefix_for
        self.rows: list[ModelRow] = []
        self._tasks = TaskSet()
        self._pull: asyncio.Task[None] | None = None
        self._pulling = ""
        self._probes: dict[str, asyncio.Task[None]] = {}
        self._pauses: dict[str, asyncio.Event] = {}  # set one: that probe pauses
        self._running: set[str] = set()  # models whose probe this controller runs
        self.paused: dict[str, ProbeRecord] = {}  # paused probes, each resumable from here
        self._elsewhere: set[str] = set()  # models a background probe is measuring

    async def use_provider(self, provider: ChatProvider) -> None:
        """Manage the models of `provider` from now on (the Ollama host changed)."""
        await self._tasks.cancel_all()
        old, self.service = self.service, ModelService(provider, self.service.ledger)
        await old.aclose()
        self._pull, self._pulling = None, ""
        await self._refresh()

    @property
    def host(self) -> str:
        return self.service.provider.host

    @property
    def pulling(self) -> str:
        """The model being pulled, or ''."""
        return self._pulling

    def probing(self, model: str) -> bool:
        """A probe of `model` runs: this controller's, or one the window was told of."""
        # started here: from `probe` on, before its first await, until it says it finished
        mine = model in self._running
        return mine or self.service.probing(model) or model in self._elsewhere

    def probe_elsewhere(self, model: str, progress: ProbeProgress | None) -> None:
        """A probe of `model` this controller did not start (the chat's background probe)
        made progress, or ended (None): the manager says "measuring" meanwhile."""
        if progress is None:
            self._elsewhere.discard(model)
            self.probeFinished.emit(model, ENDED, "")
            self.refresh()
        else:
            self._elsewhere.add(model)
            self.probeProgress.emit(model, progress)

    # -- listing ----------------------------------------------------------------------------

    def refresh(self) -> asyncio.Task[None]:
        return self._tasks.spawn(self._refresh(), "models-refresh")

    async def _refresh(self) -> None:
        try:
            rows = await self.service.models()
        except ProviderError as exc:
            self.refreshFailed.emit(str(exc))
            return
        self.rows = rows
        self.modelsChanged.emit(list(rows))

    # -- pull -------------------------------------------------------------------------------

    def pull(self, model: str) -> asyncio.Task[None] | None:
        """Start pulling `model`; None when a pull is already running."""
        if self._pull is not None:
            return None
        self._pulling = model.strip()
        self._pull = self._tasks.spawn(self._run_pull(self._pulling), f"pull-{self._pulling}")
        self._pull.add_done_callback(self._pull_ended)
        self.pullStarted.emit(self._pulling)
        return self._pull

    def _pull_ended(self, task: asyncio.Task[None]) -> None:
        """A task cancelled before its first step never runs `_run_pull`'s `finally`: end the
        pull here so the panel is not left 'asking for the manifest' with nothing running."""
        if self._pull is task:
            model, self._pull, self._pulling = self._pulling, None, ""
            self.pullFinished.emit(model, CANCELLED, "pull cancelled")

    def cancel_pull(self) -> bool:
        if self._pull is None or self._pull.done():
            return False
        self._pull.cancel()
        return True

    async def _run_pull(self, model: str) -> None:
        outcome, message = FAILED, ""
        try:
            states = self.service.pull(model)
            async with contextlib.aclosing(states):
                async for state in states:
                    self.pullProgress.emit(state)
                    if state.done:
                        outcome, message = SUCCEEDED, f"{state.model} is ready"
            if outcome != SUCCEEDED:
                message = "the pull ended without success"
        except asyncio.CancelledError:
            outcome, message = CANCELLED, "pull cancelled"
            raise
        except (ProviderError, ValueError) as exc:
            message = str(exc)
        finally:
            self._pull, self._pulling = None, ""
            self.pullFinished.emit(model, outcome, message)
            if outcome == SUCCEEDED:
                self.catalogueChanged.emit()
                self.refresh()

    # -- delete, unload, keep_alive --------------------------------------------------------

    def delete(self, model: str) -> asyncio.Task[None]:
        """Remove `model` from the server's disk (the view asks for confirmation first)."""
        return self._tasks.spawn(self._change(self.service.delete(model), True), f"delete-{model}")

    def unload(self, model: str) -> asyncio.Task[None]:
        """Free the memory `model` holds now."""
        return self._tasks.spawn(self._change(self.service.unload(model), False), f"unload-{model}")

    async def _change(self, work: Coroutine[Any, Any, None], catalogue: bool) -> None:
        try:
            await work
        except ProviderError as exc:
            self.operationFailed.emit(str(exc))
        else:
            if catalogue:
                self.catalogueChanged.emit()
        await self._refresh()

    def keep_alive_for(self, model: str) -> str:
        return self.settings.settings.keep_alive_for(model)

    def has_own_keep_alive(self, model: str) -> bool:
        return full_model_name(model) in self.settings.settings.model_keep_alive

    def set_keep_alive(self, model: str, value: str | None) -> bool:
        """Give `model` its own keep_alive (None: back to the default) and save the settings.
        False, with `operationFailed` saying why, for a value Ollama would refuse."""
        per_model = dict(self.settings.settings.model_keep_alive)
        key = full_model_name(model)
        try:
            if value is None:
                per_model.pop(key, None)
            else:
                per_model[key] = check_keep_alive(value)
            self.settings.save(self.settings.settings.replace(model_keep_alive=per_model))
        except (ValueError, OSError) as exc:
            self.operationFailed.emit(str(exc))
            return False
        self.keepAliveChanged.emit(model, self.keep_alive_for(model))
        return True

    # -- probe ------------------------------------------------------------------------------

    def probe(self, model: str) -> asyncio.Task[None] | None:
        """Measure `model` now — continuing a paused probe of it from its next rung —;
        progress arrives as `probeProgress`. None if one is running."""
        if self.service.probing(model) or model in self._running:
            return None
        self._running.add(model)
        pause = self._pauses[model] = asyncio.Event()
        resume = self.paused.pop(model, None)
        task = self._tasks.spawn(self._run_probe(model, pause, resume), f"probe-{model}")
        self._probes[model] = task
        task.add_done_callback(lambda _done: self._ended(model))
        return task

    def _ended(self, model: str) -> None:
        self._probes.pop(model, None)
        self._running.discard(model)  # (also for a task cancelled before it ever ran)

    def pause_probe(self, model: str) -> bool:
        """Pause the probe of `model` this controller started (the status bar's Pause): it
        stops after cutting the sample in flight and keeps every rung it decided; `probe`
        (Resume) continues from the next one. False when it started none."""
        task, pause = self._probes.get(model), self._pauses.get(model)
        if task is None or task.done() or pause is None:
            return False
        pause.set()
        return True

    cancel_probe = pause_probe  # Pause was a cancel once; callers of that name pause now

    def resume_probe(self, model: str) -> asyncio.Task[None] | None:
        """Continue the paused probe of `model` from its next rung (None: none is paused)."""
        return self.probe(model) if model in self.paused else None

    async def _run_probe(
        self, model: str, pause: asyncio.Event, resume: ProbeRecord | None
    ) -> None:
        def report(progress: ProbeProgress) -> None:
            self.probeProgress.emit(model, progress)

        outcome, message = FAILED, ""
        try:
            record = await self.service.probe(
                model,
                keep_alive=self.keep_alive_for(model),
                on_sample=report,
                prefix_for=self.prefix_for,
                pause=pause,
                resume=resume,
            )
            if record.paused:
                self.paused[model] = record
                outcome, message = PAUSED, paused_words(record)
            elif record.profile.provenance.get("undecided"):
                outcome, message = SUCCEEDED, "undecided: no size was confirmed"
            else:
                outcome = SUCCEEDED
                message = f"horizon {record.profile.instruction_horizon.tokens:,} tokens"
        except asyncio.CancelledError:
            outcome, message = CANCELLED, "probe cancelled"
            raise
        except ProviderError as exc:
            message = str(exc)
        finally:
            self._running.discard(model)
            self.probeFinished.emit(model, outcome, message)
        await self._refresh()

    # -- tasks ------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Cancel every task this controller started and wait until they have ended."""
        await self._tasks.cancel_all()
        await self.service.aclose()
