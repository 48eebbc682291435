"""The ledger's entry payloads as plain values.

Every fact the app records is one of these frozen dataclasses. They carry no identity: the
entry id, parent link, session and timestamp are a storage concern and live in `ledger/`.
Keeping the values here lets the pure engine (turn index, planner, cards) read them without
importing storage.

Each payload class has a `KIND` string; that string is what the ledger stores in its `kind`
column and is part of the hashed envelope, so a kind is never renamed. New fields are only ever
added with a default, so entries written before the field existed still decode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """One tool invocation requested by the model in an assistant step."""

    id: str
    name: str
    arguments: JsonObject = field(default_factory=dict)


@dataclass(frozen=True)
class Directive:
    """What the user asked: the entry that opens a turn."""

    KIND: ClassVar[str] = "directive"
    text: str
    images: tuple[str, ...] = ()  # base64-encoded image bytes, for vision models
    model: str = ""  # the model bound when the directive was given
    provider: str = ""
    system: str = ""  # the system prompt preset in force for this turn
    # when the words were said, ISO-8601 UTC, when that is not the entry's own `created_at`: an
    # imported turn keeps its source's time (ChatGPT `create_time`, a dated header); "" = live
    said_at: str = ""


@dataclass(frozen=True)
class SignedThinking:
    """A thinking block as a provider signed it (Anthropic): the text and its signature, or a
    redacted block's opaque `redacted` data. Within a turn's tool loop it goes back verbatim:
    the API checks the signature when tools are used with extended thinking."""

    thinking: str = ""
    signature: str = ""
    redacted: str = ""


@dataclass(frozen=True)
class AssistantStep:
    """One model completion inside a turn: its prose, its thinking, the tools it called."""

    KIND: ClassVar[str] = "assistant_step"
    text: str = ""
    thinking: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    model: str = ""
    done_reason: str = ""
    interrupted: bool = False  # the stream stopped before the model finished
    signed_thinking: tuple[SignedThinking, ...] = ()  # sent back within the turn (Anthropic)
    said_at: str = ""  # an imported step's source time (ISO-8601) when it has its own; "" = live


@dataclass(frozen=True)
class EvidenceBlob:
    """Binary content a tool returned (an MCP image, audio or blob resource), kept whole:
    its media type, its bytes as base64, and the resource URI when it had one."""

    mime: str
    data_base64: str
    uri: str = ""


@dataclass(frozen=True)
class EvidenceBody:
    """The whole result a tool returned, stored once; `recall` reads it back."""

    KIND: ClassVar[str] = "evidence_body"
    tool_call_id: str
    tool_name: str
    content: str
    chars: int
    is_error: bool = False
    blobs: tuple[EvidenceBlob, ...] = ()  # binary parts, kept as they came (the text names them)


@dataclass(frozen=True)
class ToolResult:
    """Exactly what the request carried for one tool call (maybe a window of the evidence)."""

    KIND: ClassVar[str] = "tool_result"
    tool_call_id: str
    tool_name: str
    content: str
    evidence: str  # entry id of the EvidenceBody holding the whole result
    chars: int  # size of the whole result
    is_error: bool = False
    windowed: bool = False
    images: tuple[str, ...] = ()  # base64 images the result held, for a model that can see


@dataclass(frozen=True)
class Usage:
    """Token counts as the provider reported them, every cache tier kept apart.

    `input_tokens` is what the provider billed as fresh input; the cache tiers are separate so
    that `prompt_tokens()` is the whole prompt for every provider's convention.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def plus(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )

    def prompt_tokens(self) -> int:
        """Every prompt token the provider counted, whichever cache tier it came from."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


@dataclass(frozen=True)
class Timings:
    """Durations in nanoseconds. Provider-reported fields are 0 when the provider omits them."""

    total_ns: int = 0
    load_ns: int = 0
    prompt_eval_ns: int = 0
    eval_ns: int = 0
    first_token_ns: int = 0  # measured by us: request sent -> first streamed byte of output
    wall_ns: int = 0  # measured by us: request sent -> stream closed


@dataclass(frozen=True)
class Receipt:
    """What one request cost and how it was served; the feedback the capacity profile learns from."""

    KIND: ClassVar[str] = "receipt"
    provider: str
    model: str
    usage: Usage = Usage()
    timings: Timings = Timings()
    prefix_digest: str = ""
    request_chars: int = 0
    request_messages: int = 0
    num_ctx: int = 0
    step: int = 0
    done_reason: str = ""
    plan: JsonObject = field(default_factory=dict)  # the working-set plan this request followed
    tail: str = ""  # the tail block inserted into the directive (time, intent, thread …)
    system_digest: str = ""  # the stable prefix in parts, so a changed prefix can be named
    tool_digests: tuple[str, ...] = ()  # "name=schema digest" per tool, in request order


@dataclass(frozen=True)
class Presentation:
    """A validated card, written the moment its emit call validated (spec §10)."""

    KIND: ClassVar[str] = "presentation"
    turn_id: str
    source: JsonObject  # {"tool_call": id} or {"fence": message entry id}
    semantic_type: str
    skill_id: str
    skill_version: str
    schema_version: int
    payload: JsonObject
    payload_digest: str
    derived_from: tuple[str, ...] = ()
    title: str = ""
    identity_digest: str = ""


@dataclass(frozen=True)
class PresentationFeedback:
    """A thumbs-up or thumbs-down the user gave a card."""

    KIND: ClassVar[str] = "presentation_feedback"
    presentation: str  # entry id of the Presentation
    verdict: str  # "up" | "down"
    note: str = ""


@dataclass(frozen=True)
class PresentationSelection:
    """Something the user did to a card other than rate it: dismiss, restore, select."""

    KIND: ClassVar[str] = "presentation_selection"
    presentation: str
    action: str  # "dismiss" | "restore" | "select"


@dataclass(frozen=True)
class TraceLine:
    """One non-card tool call of a closed turn, as a TurnCard lists it."""

    tool: str
    args_digest: str
    evidence: str
    result_shape: str
    # The result's closed-turn digest, computed once when the card is written: the full record
    # reads it instead of digesting the stored result again on every request.
    digest: str = ""


@dataclass(frozen=True)
class PresentationRef:
    id: str
    semantic_type: str
    title: str
    digest: str
    derived_from: tuple[str, ...] = ()


@dataclass(frozen=True)
class Answer:
    presentations: tuple[PresentationRef, ...] = ()
    narration: str = ""


@dataclass(frozen=True)
class TurnCard:
    """The compact, deterministic record of a closed turn (spec §10). Written once."""

    KIND: ClassVar[str] = "turn_card"
    turn_id: str
    asked: str
    did: tuple[TraceLine, ...] = ()
    answered: Answer = Answer()
    outcome: str = "completed"  # completed | degraded | cancelled | failed | interrupted
    reading: JsonObject = field(default_factory=dict)
    tokens_full: int = 0  # at the tokens/char of the model that closed the turn
    tokens_card: int = 0
    # The same two sizes in characters, so a later request prices them at its own model's
    # tokens/char (a card written under one model is planned under whichever is bound next).
    chars_full: int = 0
    chars_card: int = 0
    # Its index terms, tokenised when the card is written (BM25 at write time, §10): distinct
    # terms in first-appearance order and how often each occurs (context/planning/relevance.py).
    terms: tuple[str, ...] = ()
    term_counts: tuple[int, ...] = ()
    said_at: str = ""  # when the turn was said (its directive's time, ISO-8601), shown as a date


@dataclass(frozen=True)
class Compaction:
    """A summary of an inclusive range of turns: a cache of the planner's, never a boundary."""

    KIND: ClassVar[str] = "compaction"
    first_turn_id: str
    last_turn_id: str
    summary: str
    model: str
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class Horizon:
    """The largest prompt at which the model still followed a tool instruction."""

    tokens: int
    confidence: float
    last_confirmed: str = ""  # ISO-8601 UTC


@dataclass(frozen=True)
class Ewma:
    """An exponentially weighted moving average and how many samples shaped it."""

    value: float
    samples: int = 0

    def update(self, sample: float, alpha: float = 0.3) -> Ewma:
        if self.samples == 0:
            return Ewma(sample, 1)
        return Ewma(self.value + alpha * (sample - self.value), self.samples + 1)


@dataclass(frozen=True)
class CapacityProfile:
    """What one (provider, model, quantisation) can really use (spec §1): the only input to
    budgeting. Recorded in the ledger; revised from every turn's receipt."""

    KIND: ClassVar[str] = "capacity_profile"
    provider: str
    model: str
    declared_window: int
    instruction_horizon: Horizon
    output_reserve: int
    quantisation: str = ""
    verified_window: int | None = None
    tokens_per_char: Ewma = Ewma(0.0)
    prefill_tps: Ewma = Ewma(0.0)
    cache: str = "none"  # none | prefix_stable | provider_reported
    num_ctx: int = 0
    model_digest: str = ""
    provenance: JsonObject = field(default_factory=dict)
    # the stable prefix (system + tools) as the provider counted it, for the prefix with this
    # digest and this many chars (spec §6; `context/capacity/prefix.py`); 0 samples: not measured yet
    prefix_tokens: Ewma = Ewma(0.0)
    prefix_chars: int = 0
    prefix_digest: str = ""
    # the largest prompt the model still answered a fact from early in it (the probe's
    # answer-from-memory task); None: not probed or not confirmed. A tool-free turn may plan to
    # the larger of the two horizons (`context/capacity/profile.py`, `usable_horizon`)
    memory_horizon: Horizon | None = None


@dataclass(frozen=True)
class Activity:
    """Something the runtime did or noticed. Never model-visible."""

    KIND: ClassVar[str] = "activity"
    type: str
    message: str = ""
    detail: JsonObject = field(default_factory=dict)


@dataclass(frozen=True)
class Reset:
    """The reset-with-handoff boundary: turns behind it are never planned again."""

    KIND: ClassVar[str] = "reset"
    handoff: str
    reason: str = ""


@dataclass(frozen=True)
class Nudge:
    """A runtime message to the model inside a turn, e.g. `[empty-step]`."""

    KIND: ClassVar[str] = "nudge"
    tag: str
    text: str


Payload = (
    Directive
    | AssistantStep
    | EvidenceBody
    | ToolResult
    | Receipt
    | Presentation
    | PresentationFeedback
    | PresentationSelection
    | TurnCard
    | Compaction
    | CapacityProfile
    | Activity
    | Reset
    | Nudge
)

PAYLOAD_TYPES: dict[str, type[Payload]] = {
    cls.KIND: cls
    for cls in (
        Directive,
        AssistantStep,
        EvidenceBody,
        ToolResult,
        Receipt,
        Presentation,
        PresentationFeedback,
        PresentationSelection,
        TurnCard,
        Compaction,
        CapacityProfile,
        Activity,
        Reset,
        Nudge,
    )
}
