"""One message of ChatGPT's `conversations.json`, read into OpenAI chat messages.

A message is `{"author": {"role", "name"}, "content": {"content_type", …}, "recipient",
"create_time", "metadata"}`. What it becomes, by role and content type:

- user and assistant `text` / `multimodal_text`: their text; an `image_asset_pointer` part
  (`file-service://file-…` or `sediment://file_…`) becomes an attached image when the export's
  folder holds that file, else a `Skipped` "image … (no file)"; `audio_transcription` parts keep
  their words, audio itself is skipped.
- an assistant message addressed to a tool (`recipient` other than "all": code for `python`, a
  query for `web`, a prompt for `dalle.text2im`) becomes a tool call, as a live turn's step writes
  one; the `tool` message after it becomes that call's result (its text, `execution_output`,
  a browsing display or a quote, and its images). A tool message with no call before it gets
  one (named for the tool, no arguments): a result never stands alone in the ledger.
- `thoughts` become the step's thinking; `reasoning_recap` ("Thought for 8s") is the app's
  label, not content; custom instructions (`user_editable_context`, or a system message marked
  `is_user_system_message`, hidden or not) become the system prompt.
- a hidden message with no words is ChatGPT's scaffolding and is dropped unsaid; anything else
  not kept is a `Skipped` with its kind and position.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from vak_desktop.runtime.sessions.formats import Assets, Skipped

IMAGE_MIMES = ((b"\x89PNG", "image/png"), (b"\xff\xd8", "image/jpeg"), (b"GIF8", "image/gif"))


def image_mime(data: bytes) -> str:
    """The image type of `data` from its first bytes ("" when it is none Vak reads)."""
    for magic, mime in IMAGE_MIMES:
        if data.startswith(magic):
            return mime
    return "image/webp" if data[:4] == b"RIFF" and data[8:12] == b"WEBP" else ""


def file_id(pointer: str) -> str:
    """`file-service://file-Abc` or `sediment://file_00ab?x=1` → the file's id."""
    rest = pointer.split("://", 1)[-1]
    return rest.split("?", 1)[0].strip("/")


def _text(content: dict[str, Any], kind: str) -> str:
    if kind in ("code", "execution_output", "system_error"):
        return str(content.get("text") or "")
    if kind == "tether_browsing_display":
        return str(content.get("result") or content.get("summary") or "")
    if kind == "tether_quote":
        quote = (content.get("title"), content.get("url"), content.get("text"))
        return "\n".join(str(line) for line in quote if line)
    if kind == "user_editable_context":
        context = (content.get("user_profile"), content.get("user_instructions"))
        return "\n\n".join(str(line) for line in context if line)
    if kind == "thoughts":
        thoughts = content.get("thoughts") or []
        if isinstance(thoughts, str):
            return thoughts
        return "\n\n".join(
            "\n".join(str(t.get(k) or "") for k in ("summary", "content") if t.get(k))
            for t in thoughts
            if isinstance(t, dict)
        )
    return ""


def _parts(
    content: dict[str, Any], where: str, assets: Assets
) -> tuple[list[str], list[str], list[Skipped]]:
    """The texts and the images (as data URLs) of a text or multimodal content."""
    texts, images, skipped = [], [], []
    for part in content.get("parts") or []:
        if isinstance(part, str):
            if part.strip():
                texts.append(part)
            continue
        if not isinstance(part, dict):
            continue
        kind = str(part.get("content_type") or "part")
        if kind == "image_asset_pointer":
            name = file_id(str(part.get("asset_pointer") or ""))
            data = assets.find(name) if name else None
            mime = image_mime(data) if data else ""
            if data and mime:
                images.append(f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}")
            else:
                why = "no file" if not data else f"{name} is not an image Vak reads"
                skipped.append(Skipped("image", where, why))
        elif kind == "audio_transcription":
            if str(part.get("text") or "").strip():
                texts.append(str(part["text"]))
        elif "audio" in kind or "video" in kind:
            skipped.append(Skipped("audio", where, "Vak keeps no audio or video"))
        else:
            skipped.append(Skipped(kind.replace("_", " "), where, "not text"))
    return texts, images, skipped


def _content(text: str, images: list[str]) -> str | list[dict[str, Any]]:
    if not images:
        return text
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    return parts + [{"type": "image_url", "image_url": {"url": url}} for url in images]


def _arguments(kind: str, text: str) -> str:
    """A call's arguments: its JSON object as written (DALL-E's and browsing's calls), else the
    code it runs or the words it sends."""
    try:
        value = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        value = {"code": text} if kind == "code" else {"input": text}
    return json.dumps(value, ensure_ascii=False)


def read_message(
    key: str, message: dict[str, Any], where: str, pending: str | None, assets: Assets
) -> tuple[list[dict[str, Any]], list[Skipped]]:
    """The OpenAI messages one ChatGPT message becomes (none, one, or a call and its result),
    and what of it was skipped. `pending` is the id of the tool call just before it, if any."""
    author = message.get("author") or {}
    role = str(author.get("role") or "")
    content = message.get("content") or {}
    kind = str(content.get("content_type") or "text")
    metadata = message.get("metadata") or {}
    hidden = bool(metadata.get("is_visually_hidden_from_conversation"))
    if kind in ("text", "multimodal_text"):
        texts, images, skipped = _parts(content, where, assets)
    else:
        texts, images, skipped = [t for t in [_text(content, kind)] if t.strip()], [], []
    text = "\n".join(texts)
    said = {"timestamp": message["create_time"]} if message.get("create_time") else {}
    if kind == "reasoning_recap" or (not text and not images and not skipped and hidden):
        return [], []
    if kind == "user_editable_context" or role == "system":
        if not text:
            return [], skipped
        instructions = kind == "user_editable_context" or metadata.get("is_user_system_message")
        if hidden and not instructions:
            return [], [Skipped("hidden system message", where, "ChatGPT did not show it")]
        return [{"id": key, "role": "system", "content": text}], skipped
    known = kind in ("text", "multimodal_text", "code", "execution_output", "thoughts")
    known = known or kind.startswith("tether") or kind == "system_error"
    if not known:
        return [], [*skipped, Skipped(kind.replace("_", " "), where, "not text")]
    if role == "user":
        if hidden and text:
            return [], [Skipped("hidden message", where, "ChatGPT did not show it")]
        if not text and not images:
            return [], skipped
        return [{"id": key, "role": "user", "content": _content(text, images), **said}], skipped
    if role == "assistant":
        model = {"model": str(metadata["model_slug"])} if metadata.get("model_slug") else {}
        recipient = str(message.get("recipient") or "all")
        if recipient != "all":
            function = {"name": recipient, "arguments": _arguments(kind, text)}
            call = {"id": key, "type": "function", "function": function}
            step = {"id": key, "role": "assistant", "content": "", "tool_calls": [call]}
            return [{**step, **model, **said}], skipped
        if images:
            skipped.append(Skipped("image", where, "an answer's image has no place in Vak"))
        if kind == "thoughts":
            return [{"id": key, "role": "assistant", "content": "", "thinking": text}], skipped
        if not text:
            return [], skipped
        return [{"id": key, "role": "assistant", "content": text, **model, **said}], skipped
    if role == "tool":
        name = str(author.get("name") or "tool")
        out: list[dict[str, Any]] = []
        if pending is None:
            pending = f"{key}:call"
            function = {"name": name, "arguments": "{}"}
            call = {"id": pending, "type": "function", "function": function}
            out.append({"id": pending, "role": "assistant", "content": "", "tool_calls": [call]})
        result = {"id": key, "role": "tool", "tool_call_id": pending, "name": name}
        out.append({**result, "content": _content(text, images)})
        return out, skipped
    return [], [*skipped, Skipped(f"{role or 'role-less'} message", where, "no such role here")]
