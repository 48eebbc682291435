"""Messages of the OpenAI chat shape, read and checked before an import writes anything.

`{"role", "content", "tool_calls", "tool_call_id", "name", "timestamp"}`: content is a string or
a list of `text` and inline base64 `image_url` parts; tool call arguments are a JSON string or
an object. `check` raises the `ConversationFormatError` a write would meet, first.
"""

from __future__ import annotations

import json
from typing import Any

from vak_desktop.context.payloads import ToolCall

ROLES = ("system", "user", "assistant", "tool")


class ConversationFormatError(ValueError):
    """The document is not a conversation we can import; the message says where."""


def text_and_images(content: Any, where: str) -> tuple[str, tuple[str, ...]]:
    if content is None:
        return "", ()
    if isinstance(content, str):
        return content, ()
    if not isinstance(content, list):
        raise ConversationFormatError(f"{where}.content must be a string or a list of parts")
    texts, images = [], []
    for i, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            texts.append(str(part.get("text", "")))
        elif kind == "image_url":
            url = str((part.get("image_url") or {}).get("url", ""))
            if not url.startswith("data:") or ";base64," not in url:
                raise ConversationFormatError(
                    f"{where}.content[{i}]: only inline base64 images import"
                )
            images.append(url.split(";base64,", 1)[1])
        else:
            raise ConversationFormatError(f"{where}.content[{i}]: unknown part type {kind!r}")
    return "\n".join(texts), tuple(images)


def tool_calls(raw: Any, where: str) -> tuple[ToolCall, ...]:
    if raw in (None, []):
        return ()
    if not isinstance(raw, list):
        raise ConversationFormatError(f"{where}.tool_calls must be a list")
    calls = []
    for i, call in enumerate(raw):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not function.get("name"):
            raise ConversationFormatError(f"{where}.tool_calls[{i}] has no function name")
        arguments = function.get("arguments") or {}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError:
                arguments = {"_unparsed": arguments}  # kept as written, nothing dropped
        if not isinstance(arguments, dict):
            arguments = {"_value": arguments}
        calls.append(ToolCall(str(call.get("id") or f"call_{i}"), function["name"], arguments))
    return tuple(calls)


def check(messages: list[Any]) -> None:
    """Raise the ConversationFormatError a write would meet, before it writes anything: a
    staged import commits as it goes, so a file rejected half-way must be rejected first."""
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            role = message.get("role") if isinstance(message, dict) else message
            raise ConversationFormatError(
                f"messages[{i}]: role {role!r} is not one of {', '.join(ROLES)}"
            )
    if not any(m["role"] == "user" for m in messages):
        raise ConversationFormatError("the conversation has no user message")
    in_turn = False
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        role = message["role"]
        text, _images = text_and_images(message.get("content"), where)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ConversationFormatError(
                f"{where}: text is not valid Unicode (lone surrogate at character {exc.start + 1})"
            ) from None
        if role == "system":
            continue
        if role != "user" and not in_turn:
            raise ConversationFormatError(f"{where}: a {role} message before any user message")
        in_turn = True
        if role == "assistant":
            tool_calls(message.get("tool_calls"), where)
