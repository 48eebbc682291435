"""What a running turn tells its observers (the CLI, the window), in the order it happens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vak_desktop.context.payloads import Compaction, Receipt, Usage


@dataclass(frozen=True)
class TurnStarted:
    session: str
    turn_id: str
    model: str


@dataclass(frozen=True)
class TextChunk:
    text: str


@dataclass(frozen=True)
class ThinkingChunk:
    text: str


@dataclass(frozen=True)
class ToolCallRequested:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolResultReady:
    id: str
    name: str
    evidence: str
    chars: int
    is_error: bool
    windowed: bool
    preview: str  # what the request carried, for display


@dataclass(frozen=True)
class CardShown:
    """A card (a Presentation entry) was written in this turn, by an emit call or a fence."""

    presentation: str  # the Presentation entry's id
    type: str  # its semantic type
    title: str


@dataclass(frozen=True)
class StepFinished:
    step: int
    receipt: Receipt


@dataclass(frozen=True)
class Notice:
    """Something the user should know that is not part of the answer (a repaired byte …)."""

    message: str


@dataclass(frozen=True)
class TurnFinished:
    session: str
    turn_id: str
    outcome: str  # completed | failed | cancelled | degraded
    usage: Usage
    error: str = ""


@dataclass(frozen=True)
class CompactionProgress:
    """The summariser writing a packet in the foreground (`/compact`, "Compact now"): the
    packet's turns, the call under way of how many (re-counted as the summary grows), the turns
    that call summarises, what it has written and the seconds since the compaction started."""

    span: str  # the packet's turns by number: "1–32"
    call: int
    calls: int
    chunk: str  # this call's turns: "9–16"
    written_chars: int
    elapsed_s: float

    def line(self) -> str:
        """The progress as one line, the same words in the CLI and the window."""
        return (
            f"summarising turns {self.span}: call {self.call} of {self.calls} "
            f"(turns {self.chunk}) · {self.elapsed_s:.0f} s"
        )


@dataclass(frozen=True)
class CompactionResult:
    """What a compaction did: the packet it wrote (None if none was needed) and why."""

    packet: Compaction | None
    message: str


CompactionEvent = CompactionProgress | CompactionResult

TurnEvent = (
    TurnStarted
    | TextChunk
    | ThinkingChunk
    | ToolCallRequested
    | ToolResultReady
    | CardShown
    | StepFinished
    | Notice
    | TurnFinished
)
