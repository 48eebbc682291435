"""Conversation files of other apps, read into the OpenAI chat shape the ledger imports.

Each module turns one app's export into `Conversation`s (an OpenAI-format document: title,
model, messages) plus what it left out and why; `interchange.import_openai` writes each one the
way it writes any import, as its own session. Detection is by shape, never by file name:

- ChatGPT's `conversations.json`: a list of conversations, each a `mapping` tree of nodes
  (`message.author.role`, `message.content.parts`) with `current_node` the shown leaf.
- Open WebUI's chat export: a list of `{"chat": {"history": {"messages": {id: …},
  "currentId"}, "messages": […]}}`, or one such chat.
- The OpenAI shape itself: `{"messages": […]}`, or a list of them.

Pure functions over parsed JSON: no ledger, no I/O. `markdown` writes a session as Markdown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Conversation:
    """One conversation in the OpenAI chat shape, ready for `import_openai`."""

    document: dict[str, Any]  # {"title", "model", "messages": [...]}
    skipped: tuple[str, ...] = ()  # what was left out of it, and why

    @property
    def title(self) -> str:
        return str(self.document.get("title", ""))


@dataclass(frozen=True)
class ReadFile:
    """What a file held: its format, its conversations, and what could not be read at all."""

    format: str  # "openai", "chatgpt", "openwebui"
    conversations: tuple[Conversation, ...]
    skipped: tuple[str, ...] = field(default_factory=tuple)


class UnknownFormat(ValueError):
    """Not a conversation file this app reads; the message says what was expected."""


def detect(document: Any) -> str:
    """'openai', 'chatgpt' or 'openwebui' for a parsed file (UnknownFormat otherwise)."""
    items = document if isinstance(document, list) else [document]
    first = next((item for item in items if isinstance(item, dict)), None)
    if first is None:
        raise UnknownFormat("expected a JSON object or a list of conversations")
    if "mapping" in first:
        return "chatgpt"
    chat = first.get("chat")
    if isinstance(chat, dict) and ("history" in chat or "messages" in chat):
        return "openwebui"
    if "history" in first and isinstance(first.get("history"), dict):
        return "openwebui"  # a bare chat object, without its export wrapper
    if isinstance(first.get("messages"), list):
        return "openai"
    raise UnknownFormat(
        'not a conversation export: expected OpenAI chat JSON ({"messages": [...]}), '
        "ChatGPT's conversations.json or an Open WebUI chat export"
    )


def read_conversations(document: Any) -> ReadFile:
    """Every conversation in a parsed file, in the OpenAI shape, with what was skipped."""
    from vak_desktop.runtime.sessions.formats import chatgpt, openwebui

    kind = detect(document)
    items = document if isinstance(document, list) else [document]
    if kind == "chatgpt":
        return chatgpt.read(items)
    if kind == "openwebui":
        return openwebui.read(items)
    conversations, skipped = [], []
    for i, item in enumerate(items):
        if isinstance(item, dict) and isinstance(item.get("messages"), list):
            conversations.append(Conversation(item))
        else:
            skipped.append(f"item {i + 1}: not an OpenAI chat document")
    return ReadFile("openai", tuple(conversations), tuple(skipped))


def path_to(nodes: dict[str, Any], leaf: Any, parent_key: str) -> list[dict[str, Any]]:
    """The nodes of a tree export from its root to `leaf`, following `parent_key` links (a
    loop or a dangling link ends the walk: the path so far is kept)."""
    path, seen = [], set()
    cursor = leaf
    while cursor is not None and cursor in nodes and cursor not in seen:
        seen.add(cursor)
        node = nodes[cursor] or {}
        path.append(node)
        cursor = node.get(parent_key)
    path.reverse()
    return path


def plain_text(value: Any) -> str:
    """A message content as text: a string, or the text of a list of parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [plain_text(part) for part in value]
        return "\n".join(t for t in texts if t)
    if isinstance(value, dict):
        return str(value.get("text") or value.get("content") or "")
    return ""
