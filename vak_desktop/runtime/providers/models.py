"""The model manager's runtime half: what a provider has, what is loaded, pulls, probes.

Why it exists: the window's model manager and onboarding must never talk HTTP or run the probe
themselves. `ModelService` gathers one listing (`ModelRow`: the catalogue, `/api/show` details,
what is loaded and until when, the newest measured profile from the ledger's profile store),
and runs the operations the manager offers — pull (as `PullState`s summed over the layers),
delete, unload, probe now — through the provider's ability protocols only. It is asyncio, no
Qt: the window wraps it in a QObject that runs each call as a task.

Cancelling a pull is cancelling the task that iterates `pull`: the generator is closed, which
closes the HTTP stream, and Ollama stops downloading (it keeps the layers it finished, so a
later pull of the same name resumes).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass

from vak_desktop.context.capacity.probe_history import ProbePrefix
from vak_desktop.context.capacity.probe_result import resume_from
from vak_desktop.context.payloads import CapacityProfile
from vak_desktop.ledger import Ledger
from vak_desktop.providers.base import (
    ChatProvider,
    LoadedModel,
    LoadedModels,
    ModelCatalog,
    ModelDetails,
    ModelInspector,
    ModelPuller,
    ModelRemover,
    ModelSummary,
    ModelUnloader,
)
from vak_desktop.providers.errors import ProviderError
from vak_desktop.runtime.capacity.binding import ModelBinding
from vak_desktop.runtime.capacity.probe import ProbeProgress, ProbeRecord, run_probe
from vak_desktop.runtime.capacity.scheduler import DEADLINE_S
from vak_desktop.runtime.settings import full_model_name

# A small instruct model to offer when nothing is installed (about 400 MB, tools-capable).
SUGGESTED_MODEL = "qwen2.5:0.5b"

# Ollama's model names: [host/][namespace/]name[:tag], letters, digits and ._- inside.
_MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*(:[\w.-]+)?")


class UnsupportedOperation(ProviderError):
    """The provider cannot do what the manager asked (e.g. a hosted API cannot pull)."""


def check_model_name(name: str) -> str:
    """`name` stripped, if it can be a model name; else ValueError saying what is wrong."""
    text = name.strip()
    if not text:
        raise ValueError("type a model name, e.g. qwen2.5:0.5b")
    if not _MODEL_NAME.fullmatch(text):
        raise ValueError(
            f"{text!r} is not a model name: letters, digits, '.', '_' and '-', "
            "optionally a namespace/ and a :tag (e.g. qwen2.5:0.5b)"
        )
    return text


@dataclass(frozen=True)
class ProfileSummary:
    """The measured capacity of a model, as the manager shows it."""

    horizon: int
    confidence: float
    prefill_tps: float
    cache: str
    verified_window: int | None
    num_ctx: int
    probed_at: str  # "" for a profile no probe measured

    @classmethod
    def of(cls, profile: CapacityProfile) -> ProfileSummary:
        return cls(
            horizon=profile.instruction_horizon.tokens,
            confidence=profile.instruction_horizon.confidence,
            prefill_tps=profile.prefill_tps.value,
            cache=profile.cache,
            verified_window=profile.verified_window,
            num_ctx=profile.num_ctx,
            probed_at=str(profile.provenance.get("probed_at") or ""),
        )


@dataclass(frozen=True)
class ModelRow:
    """One local model with everything the manager shows about it."""

    summary: ModelSummary
    details: ModelDetails | None = None
    loaded: LoadedModel | None = None
    profile: ProfileSummary | None = None

    @property
    def name(self) -> str:
        return self.summary.name

    @property
    def trained_window(self) -> int | None:
        return self.details.declared_window if self.details else None

    @property
    def capabilities(self) -> tuple[str, ...]:
        return self.details.capabilities if self.details else ()


@dataclass(frozen=True)
class PullState:
    """Where a pull is: Ollama's status line and the bytes done over every layer seen so far."""

    model: str
    status: str
    completed: int = 0
    total: int = 0
    done: bool = False

    @property
    def fraction(self) -> float:
        """0 … 1; 1 only once Ollama said "success" (verifying comes after the last byte)."""
        if self.done:
            return 1.0
        if self.total <= 0:
            return 0.0
        return min(self.completed / self.total, 0.999)


class ModelService:
    """The provider's model abilities, and the ledger's profiles, for the model manager."""

    def __init__(self, provider: ChatProvider, ledger: Ledger) -> None:
        self.provider = provider
        self.ledger = ledger
        self._details: dict[tuple[str, str], ModelDetails] = {}  # (name, digest) -> /api/show
        self._probes: dict[str, asyncio.Task[ProbeRecord]] = {}

    def _unsupported(self, what: str) -> UnsupportedOperation:
        return UnsupportedOperation(f"{self.provider.name} cannot {what}")

    # -- listing ----------------------------------------------------------------------------

    async def models(self) -> list[ModelRow]:
        """Every local model with its details, whether it is loaded, and its measured profile.

        `/api/show` is asked once per (name, digest); a model whose show fails is still listed,
        without details."""
        if not isinstance(self.provider, ModelCatalog):
            raise self._unsupported("list models")
        summaries = await self.provider.list_models()
        loaded = {m.name: m for m in await self.loaded()}
        details = await asyncio.gather(*(self._show(s) for s in summaries))
        return [
            ModelRow(s, d, loaded.get(s.name), self.profile(s.name, s.quantisation or None))
            for s, d in zip(summaries, details, strict=True)
        ]

    async def loaded(self) -> list[LoadedModel]:
        """The models in memory now (none when the provider cannot say)."""
        if not isinstance(self.provider, LoadedModels):
            return []
        return await self.provider.loaded()

    async def _show(self, summary: ModelSummary) -> ModelDetails | None:
        key = (summary.name, summary.digest)
        if key in self._details or not isinstance(self.provider, ModelInspector):
            return self._details.get(key)
        try:
            details = await self.provider.show(summary.name)
        except ProviderError:
            return None
        self._details[key] = details
        return details

    def profile(self, model: str, quantisation: str | None = None) -> ProfileSummary | None:
        """The newest measured profile of `model` in the ledger's profile store, if any."""
        stored = self.ledger.profiles().latest(self.provider.name, model, quantisation)
        if stored is None and quantisation is not None:
            stored = self.ledger.profiles().latest(self.provider.name, model)
        return ProfileSummary.of(stored.profile) if stored is not None else None

    # -- operations -------------------------------------------------------------------------

    async def pull(self, model: str) -> AsyncGenerator[PullState, None]:
        """Download `model`; yields the progress summed over its layers, last with done=True.
        Raises ValueError for a name that cannot be one, ModelNotFound for an unknown one."""
        name = check_model_name(model)
        if not isinstance(self.provider, ModelPuller):
            raise self._unsupported("pull models")
        layers: dict[str, tuple[int, int]] = {}  # digest -> (completed, total)
        async with contextlib.aclosing(self.provider.pull(name)) as lines:
            async for line in lines:
                if line.digest and line.total:
                    done_before = layers.get(line.digest, (0, 0))[0]
                    layers[line.digest] = (max(line.completed, done_before), line.total)
                completed = sum(c for c, _ in layers.values())
                total = sum(t for _, t in layers.values())
                finished = line.status == "success"
                yield PullState(name, line.status, completed, total, finished)
        self._details = {k: v for k, v in self._details.items() if k[0] != full_model_name(name)}

    async def delete(self, model: str) -> None:
        if not isinstance(self.provider, ModelRemover):
            raise self._unsupported("delete models")
        await self.provider.delete(model)

    async def unload(self, model: str) -> None:
        """Free the memory `model` holds now (Ollama: a request with keep_alive 0)."""
        if not isinstance(self.provider, ModelUnloader):
            raise self._unsupported("unload models")
        await self.provider.unload(model)

    def probing(self, model: str) -> bool:
        task = self._probes.get(model)
        return task is not None and not task.done()

    async def probe(
        self,
        model: str,
        *,
        keep_alive: str | int | None = None,
        on_sample: Callable[[ProbeProgress], None] | None = None,
        max_prompt_tokens: int | None = None,
        prefix_for: Callable[[ModelBinding], ProbePrefix] | None = None,
        pause: asyncio.Event | None = None,
        resume: ProbeRecord | None = None,
    ) -> ProbeRecord:
        """Measure `model` now (the whole ladder, both tasks, within the background probe's
        time budget) and record the result in the profile store, where every session's next
        bind finds it. `prefix_for` gives the prefix the model's real requests carry
        (`TurnRunner.probe_prefix`, as `vak probe` sends); without it the synthetic pair is
        sent. Setting `pause` stops it after the sample in flight, keeping its decided rungs:
        the record it returns then is paused (`ProbeRecord.paused`) and is not stored; pass it
        back as `resume` to continue from the next rung. One probe per model at a time: a
        second call while one runs waits for the same result."""
        running = self._probes.get(model)
        if running is not None and not running.done():
            return await asyncio.shield(running)
        task = asyncio.get_running_loop().create_task(
            self._probe(model, keep_alive, on_sample, max_prompt_tokens, prefix_for, pause, resume),
            name=f"probe {model}",
        )
        self._probes[model] = task
        return await task

    async def _probe(
        self,
        model: str,
        keep_alive: str | int | None,
        on_sample: Callable[[ProbeProgress], None] | None,
        max_prompt_tokens: int | None,
        prefix_for: Callable[[ModelBinding], ProbePrefix] | None,
        pause: asyncio.Event | None,
        resume: ProbeRecord | None,
    ) -> ProbeRecord:
        if not isinstance(self.provider, ModelInspector):
            raise self._unsupported("describe models")
        details = await self.provider.show(model)
        digest = ""
        if isinstance(self.provider, ModelCatalog):
            wanted = full_model_name(model)
            for summary in await self.provider.list_models():
                if full_model_name(summary.name) == wanted:
                    digest = summary.digest
        binding = ModelBinding(provider=self.provider.name, model=model, details=details)
        stored = self.ledger.profiles().latest(self.provider.name, model, details.quantisation)
        record = await run_probe(
            self.provider,
            model,
            details=details,
            digest=digest,
            keep_alive=keep_alive,
            on_sample=on_sample,
            max_prompt_tokens=max_prompt_tokens,
            prefix=prefix_for(binding) if prefix_for is not None else None,
            deadline_s=DEADLINE_S,
            memory=True,
            keep=stored.profile if stored is not None else None,
            resume=resume_from(resume.activity) if resume is not None else None,
            pause=pause,
        )
        if not record.paused:
            self.ledger.profiles().record(record.profile, record.activity)
        return record

    async def aclose(self) -> None:
        """Cancel running probes and wait for them (at shutdown)."""
        tasks = [t for t in self._probes.values() if not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
