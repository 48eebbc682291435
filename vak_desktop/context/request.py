"""The provider-neutral request: what the assembler produces and every adapter renders.

Plain values only. An adapter turns a `ChatRequest` into its provider's wire format; nothing in
here knows about any provider.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vak_desktop.context.payloads import JsonObject, SignedThinking, ToolCall


@dataclass(frozen=True)
class Message:
    """One message of a request, in the common chat shape."""

    role: str  # "system" | "user" | "assistant" | "tool"
    content: str = ""
    thinking: str = ""
    images: tuple[str, ...] = ()  # base64
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""  # role "tool": the call this answers
    tool_name: str = ""  # role "tool": the tool that produced it
    signed_thinking: tuple[SignedThinking, ...] = ()  # assistant: as signed, within a turn

    def chars(self) -> int:
        """Characters this message puts on the wire, counted the same way for every provider."""
        calls = sum(len(c.name) + len(str(c.arguments)) for c in self.tool_calls)
        return len(self.content) + len(self.thinking) + calls


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: name, one-paragraph description, JSON Schema parameters."""

    name: str
    description: str
    parameters: JsonObject = field(default_factory=lambda: {"type": "object", "properties": {}})

    def chars(self) -> int:
        """Characters this schema puts in a request, counted one way everywhere."""
        return len(self.name) + len(self.description) + len(str(self.parameters))


@dataclass(frozen=True)
class ChatRequest:
    """Everything one model call needs, independent of the provider that serves it."""

    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    num_ctx: int = 0  # context window to ask the runner for; 0 leaves it to the provider
    keep_alive: str | int | None = None  # how long a local runner keeps the model loaded
    max_tokens: int | None = None
    think: bool | None = None  # None: the model's default
    temperature: float | None = None
    # "required": the reply must be a tool call (OpenAI-style `tool_choice`); "" leaves it to
    # the model. An adapter whose server has no such switch sends nothing.
    tool_choice: str = ""
    session_key: str = ""  # groups requests of one session for providers that cache by key
    cache_breakpoints: tuple[int, ...] = ()  # message indexes that end a cacheable prefix

    def chars(self) -> int:
        return sum(m.chars() for m in self.messages) + sum(t.chars() for t in self.tools)
