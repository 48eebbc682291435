"""Open WebUI's chat export (Settings → Chats → Export, or a chat's ⋯ → Download → JSON).

The export is a list of `{"id", "title", "chat": {"title", "models", "history": {"currentId",
"messages": {id: {"id", "parentId", "childrenIds", "role", "content", "model", "timestamp",
"files"}}}, "messages": [...]}}`; a single downloaded chat may be one such object (or its bare
`chat`). Every branch of the history tree (a regenerated answer, an edit, one answer per model
of a multi-model chat) is kept: `tree.leaf_paths` gives each root-to-leaf path, the one to
`currentId` last. Without a history the flat `chat.messages` list is read in order. Kept:
system, user and assistant text, each message's `timestamp` (epoch seconds), and the images a
message's `files` hold inline (`{"type": "image", "url": "data:image/…;base64,…"}`). An image
or file the export only names (a `/api/v1/files/…` URL, a `{"type": "file"}` upload) is a
`Skipped` item at its position, as is a message that is not text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from vak_desktop.runtime.sessions.formats import (
    Conversation,
    ReadFile,
    Skipped,
    digest,
    plain_text,
)
from vak_desktop.runtime.sessions.formats.tree import leaf_paths

ROLES = ("system", "user", "assistant")


def _chat(item: dict[str, Any]) -> dict[str, Any]:
    chat = item.get("chat")
    return chat if isinstance(chat, dict) else item


def _images(message: dict[str, Any], where: str) -> tuple[list[str], list[Skipped]]:
    """The inline images of a message's `files`, and what it only names."""
    images, skipped = [], []
    for file in message.get("files") or []:
        if not isinstance(file, dict):
            continue
        url = str(file.get("url") or "")
        mime = str(file.get("content_type") or (file.get("meta") or {}).get("content_type") or "")
        image = file.get("type") == "image" or mime.startswith("image/")
        name = str(file.get("name") or (file.get("file") or {}).get("filename") or "")
        if image and url.startswith("data:image/") and ";base64," in url:
            images.append(url)
        elif image:
            skipped.append(Skipped("image", where, "not in the export"))
        else:
            what = f"file {name}" if name else "file"
            skipped.append(Skipped(what, where, "not in the export"))
    return images, skipped


def _read(
    key: str, message: dict[str, Any], where: str
) -> tuple[list[dict[str, Any]], list[Skipped]]:
    role = str(message.get("role", ""))
    if role not in ROLES:
        return [], [Skipped(f"{role or 'role-less'} message", where, "no such role here")]
    images, skipped = _images(message, where)
    if images and role != "user":
        skipped.append(Skipped("image", where, "an answer's image has no place in Vak"))
        images = []
    text = plain_text(message.get("content"))
    if not text.strip() and not images:
        return [], skipped
    content: Any = text
    if images:
        content = [{"type": "text", "text": text}]
        content += [{"type": "image_url", "image_url": {"url": url}} for url in images]
    said = {"timestamp": message["timestamp"]} if message.get("timestamp") else {}
    model = {"model": str(message["model"])} if message.get("model") else {}
    return [{"id": key, "role": role, "content": content, **said, **model}], skipped


def convert(item: dict[str, Any], number: int) -> Conversation:
    """One Open WebUI chat: its shown path as the document, the others as branches."""
    chat = _chat(item)
    title = str(item.get("title") or chat.get("title") or f"Open WebUI chat {number}")
    history: dict[str, Any] = chat["history"] if isinstance(chat.get("history"), dict) else {}
    raw = history["messages"] if isinstance(history.get("messages"), dict) else {}
    nodes: dict[str, Any] = {k: v for k, v in raw.items() if isinstance(v, dict)}
    if nodes:
        paths = leaf_paths(nodes, "parentId", history.get("currentId"))
    else:  # a flat list only: one path, in order
        flat = [m for m in chat.get("messages") or [] if isinstance(m, dict)]
        nodes = {str(i): m for i, m in enumerate(flat)}
        paths = [list(nodes)]
    read: dict[str, list[dict[str, Any]]] = {}
    skipped: list[Skipped] = []
    out: list[list[dict[str, Any]]] = []
    for ids in paths:
        messages: list[dict[str, Any]] = []
        for position, key in enumerate(ids, 1):
            if key not in read:
                where = f"message {position}"
                got, skips = _read(key, nodes[key], where)
                if got and got[0]["role"] == "system" and messages:
                    skips = [Skipped("system message", where, "only one at the start has a place")]
                    got = []
                read[key] = got
                skipped += [dataclasses.replace(s, conversation=title) for s in skips]
            messages += read[key]
        out.append(messages)
    shown = out[-1] if out else []
    models = chat.get("models") if isinstance(chat.get("models"), list) else []
    named = [str(m["model"]) for m in shown if m.get("model")]
    model = named[-1] if named else (str(models[0]) if models else "")
    source = str(item.get("id") or chat.get("id") or "")
    return Conversation(
        {"title": title, "model": model, "messages": shown},
        tuple(skipped),
        tuple(tuple(path) for path in out[:-1]),
        source,
    )


def read(items: Sequence[Any]) -> ReadFile:
    conversations, skipped, digests = [], [], []
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict):
            skipped.append(Skipped("item", f"item {i}", "not an Open WebUI chat"))
            continue
        conversations.append(convert(item, i))
        digests.append(digest(item))
    return ReadFile("openwebui", tuple(conversations), tuple(skipped), tuple(digests))
