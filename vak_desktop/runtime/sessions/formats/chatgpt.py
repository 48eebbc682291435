"""ChatGPT's `conversations.json` (Settings → Data controls → Export) as OpenAI chat documents.

Each conversation is `{"title", "create_time", "mapping": {node_id: {"id", "parent",
"children", "message": {"author": {"role", "name"}, "content": {"content_type", "parts"},
"metadata": {...}}}}, "current_node"}`. The shown conversation is the path from the root to
`current_node` (other branches are edits the user left). Kept: user and assistant text
(`text` and the text parts of `multimodal_text`), the first visible system message, and each
message's `create_time` (as its `timestamp`: the turn keeps the time it was said). Left out,
each named in the report: hidden system and context messages, tool and browsing messages
(ChatGPT records no tool call to pair them with), code-interpreter input and output, and image
or file pointers (the export holds a pointer, not the bytes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vak_desktop.runtime.sessions.formats import Conversation, ReadFile, path_to

TEXT_TYPES = ("text", "multimodal_text")


def _path(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """The nodes from the root to the shown leaf (the last node when none is named)."""
    mapping = conversation.get("mapping")
    if not isinstance(mapping, dict) or not mapping:
        return []
    cursor = conversation.get("current_node")
    if cursor not in mapping:
        leaves = [k for k, node in mapping.items() if not (node or {}).get("children")]
        cursor = leaves[-1] if leaves else next(iter(mapping))
    return path_to(mapping, cursor, "parent")


def _message(node: dict[str, Any], where: str, skipped: list[str]) -> dict[str, Any] | None:
    message = node.get("message")
    if not isinstance(message, dict):
        return None  # the tree's root: no message
    role = str((message.get("author") or {}).get("role", ""))
    content = message.get("content") or {}
    kind = str(content.get("content_type", "text"))
    metadata = message.get("metadata") or {}
    parts = content.get("parts") or []
    texts = [p for p in parts if isinstance(p, str) and p.strip()]
    pointers = [p for p in parts if isinstance(p, dict)]
    if role == "system" or metadata.get("is_visually_hidden_from_conversation"):
        if role == "system" and texts and not metadata.get("is_visually_hidden_from_conversation"):
            return {"role": "system", "content": "\n".join(texts)}
        return None  # ChatGPT's own scaffolding, not the user's words
    if role not in ("user", "assistant"):
        name = (message.get("author") or {}).get("name") or role
        skipped.append(f"{where}: a {role} message ({name}) — no tool call to pair it with")
        return None
    if kind not in TEXT_TYPES:
        skipped.append(f"{where}: {role} {kind} content (not text)")
        return None
    if pointers:
        skipped.append(
            f"{where}: {len(pointers)} image or file pointer(s) (no bytes in the export)"
        )
    if not texts:
        return None
    said = {"timestamp": message["create_time"]} if message.get("create_time") else {}
    return {"role": role, "content": "\n".join(texts), **said}


def convert(conversation: dict[str, Any], number: int) -> Conversation:
    """One ChatGPT conversation as an OpenAI chat document."""
    title = str(conversation.get("title") or f"ChatGPT conversation {number}")
    messages: list[dict[str, Any]] = []
    skipped: list[str] = []
    model = ""
    for node in _path(conversation):
        where = f"“{title}”"
        message = _message(node, where, skipped)
        if message is None:
            continue
        if message["role"] == "system" and messages:
            continue  # only a leading system message has a place
        slug = ((node.get("message") or {}).get("metadata") or {}).get("model_slug")
        model = str(slug or model)
        messages.append(message)
    return Conversation({"title": title, "model": model, "messages": messages}, tuple(skipped))


def read(items: Sequence[Any]) -> ReadFile:
    conversations, skipped = [], []
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict) or not isinstance(item.get("mapping"), dict):
            skipped.append(f"item {i}: not a ChatGPT conversation (no mapping)")
            continue
        conversations.append(convert(item, i))
    return ReadFile("chatgpt", tuple(conversations), tuple(skipped))
