"""The seam every provider adapter fits: one required coroutine and a few optional abilities.

`ChatProvider.stream(request)` yields `StreamEvent`s and ends with exactly one `Done`. Abilities
only some providers have (listing, pulling, unloading models …) are separate `Protocol`s that
callers test with `isinstance`, so no code outside `providers/` asks which provider it holds.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from vak_desktop.context.payloads import SignedThinking, Timings, ToolCall, Usage
from vak_desktop.context.request import ChatRequest


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True)
class ThinkingSigned:
    """A thinking block closed with its signature (or redacted): its text already streamed as
    `ThinkingDelta`s; the block is kept so the turn can send it back."""

    block: SignedThinking


@dataclass(frozen=True)
class ToolCallEvent:
    call: ToolCall


@dataclass(frozen=True)
class StreamNotice:
    """Something the adapter repaired or could not use in the stream, with the raw bytes: invalid
    UTF-8 (`kind` "repaired"), or a tool call the output limit cut off ("tool_call_cut")."""

    message: str
    raw: bytes = b""
    kind: str = "repaired"


def cut_tool_call(name: str, partial: str) -> StreamNotice:
    """The notice for a tool call whose arguments the output limit (max_tokens) cut off: it is
    not run, and its partial arguments are kept as they arrived."""
    return StreamNotice(
        f"the model reached its output limit (max_tokens) in the middle of a call to "
        f"`{name or 'a tool'}`; the call was not run; its partial arguments are kept",
        partial.encode("utf-8"),
        kind="tool_call_cut",
    )


@dataclass(frozen=True)
class Done:
    """The last event of a stream: why it stopped and what it cost."""

    done_reason: str
    usage: Usage
    timings: Timings
    model: str = ""


@dataclass(frozen=True)
class Waiting:
    """The server has not started answering yet (a model loading): shown to the user as it
    happens, never part of the answer (`providers/deadlines.py`). Not counted as a yielded
    event by the retry (`retry.py`)."""

    message: str


StreamEvent = (
    TextDelta | ThinkingDelta | ThinkingSigned | ToolCallEvent | StreamNotice | Waiting | Done
)


@dataclass(frozen=True)
class ModelSummary:
    """A model the provider has, as its catalogue lists it."""

    name: str
    digest: str = ""
    size: int = 0
    modified_at: str = ""
    family: str = ""
    parameter_size: str = ""
    quantisation: str = ""


@dataclass(frozen=True)
class ModelDetails:
    """What the provider says about one model: its trained window and what it can do."""

    name: str
    declared_window: int | None
    configured_num_ctx: int | None = None  # set in the model's own configuration, if any
    capabilities: tuple[str, ...] = ()
    architecture: str = ""
    family: str = ""
    parameter_size: str = ""
    quantisation: str = ""


@dataclass(frozen=True)
class LoadedModel:
    name: str
    digest: str = ""
    size: int = 0
    size_vram: int = 0
    expires_at: str = ""
    context_length: int | None = None


@dataclass(frozen=True)
class PullProgress:
    status: str
    digest: str = ""
    total: int = 0
    completed: int = 0
    extra: dict[str, str] = field(default_factory=dict)


@runtime_checkable
class ChatProvider(Protocol):
    """The one thing every provider does: stream a chat completion."""

    name: str
    host: str

    def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]: ...


@runtime_checkable
class RunsLocally(Protocol):
    """Whether the provider's models run on hardware the user controls (`local = True`): the
    capacity probe costs such a runner time, not money, so it is always eligible for one.
    A provider without the attribute counts as hosted."""

    local: bool


def is_local(provider: object) -> bool:
    return isinstance(provider, RunsLocally) and bool(provider.local)


@runtime_checkable
class ChoosesTools(Protocol):
    """The provider sends a request's `tool_choice` (OpenAI's wire form), so a step that must
    not call a tool keeps its tools — the prompt prefix the server has cached — and says
    "none". Measured on the bundled llama.cpp: the template renders the tools either way and
    the prompt cache held 151 of 152 tokens; dropping the tools re-read a 4k-token prompt
    (42 s on the 0.5B). A provider without the attribute drops the tools instead."""

    chooses_tools: bool


def chooses_tools(provider: object) -> bool:
    return isinstance(provider, ChoosesTools) and bool(provider.chooses_tools)


@runtime_checkable
class ModelCatalog(Protocol):
    async def list_models(self) -> list[ModelSummary]: ...


@runtime_checkable
class ModelDigests(Protocol):
    """The digest of the model a name stands for now ("" when the provider has none): a changed
    digest means the weights changed under the same name, so measurements of it are void."""

    async def digest(self, model: str) -> str: ...


@runtime_checkable
class ModelInspector(Protocol):
    async def show(self, model: str) -> ModelDetails: ...


@runtime_checkable
class LoadedModels(Protocol):
    async def loaded(self) -> list[LoadedModel]: ...


@runtime_checkable
class ModelPuller(Protocol):
    def pull(self, model: str) -> AsyncGenerator[PullProgress, None]: ...


@runtime_checkable
class ModelRemover(Protocol):
    async def delete(self, model: str) -> None: ...


@runtime_checkable
class ModelUnloader(Protocol):
    async def unload(self, model: str) -> None: ...


@runtime_checkable
class VersionReporter(Protocol):
    async def version(self) -> str: ...
