"""Tool calls a model wrote in its message text instead of the `tool_calls` channel.

Why it exists: small local models (measured: Qwen2.5-Coder 0.5B and 1.5B Instruct, through a
llama.cpp server and through Ollama) often answer a tool instruction with the call *written*:
a JSON object `{"name": "read", "arguments": {...}}` — bare, in a ```json fence or between
Qwen's `<tool_call>` tags — or a Python-looking `read(path="notes.txt")`. The capacity probe
must count those as followed (it measures the model, not our parser), and a turn must execute
them as calls, or the model's answer is a tool call nobody runs.

One recogniser serves both. It is deliberately narrow:

- only tools the caller admits count (`{"name": "Bob"}` is data, not a call);
- JSON must decode, and its shape must be a call: `name` (or `tool` / `tool_name`, or an
  OpenAI-style `function: {name, arguments}`) with optional `arguments` / `parameters` /
  `args` / `input` holding an object, or a JSON string of one; lists of calls and
  `{"tool_calls": [...]}` hold several;
- `name(...)` must parse as a call whose arguments are literals: keywords, one JSON-object
  argument, or a single positional value when the tool's schema names exactly one parameter
  the value can be (its only required one, else its only one) — `function_calls.py`;
- `name {"key": …}`: an admitted tool's name followed by one JSON object whose keys are all
  that tool's parameters, its required ones among them — the shape a card's `did:` line
  shows, which the 0.5B copied (`glob {"pattern":"38-14-92"}`, issue #22);
- a bare mention of a tool's name is never a call.

A JSON value that decodes but is not a call is skipped whole, so an example object the model
shows as data does not turn its inner objects into calls.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vak_desktop.context.evidence.function_calls import function_calls
from vak_desktop.context.payloads import Activity, JsonObject, ToolCall
from vak_desktop.context.request import ToolSpec

TEXT_FORM_CALL = "text_form_call"  # Activity: a step's tool calls came written in its text

_NAME_KEYS = ("name", "tool", "tool_name", "function")  # "function": "recall" (1.5B)
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
_LIST_KEYS = ("tool_calls", "calls")
_DECODER = json.JSONDecoder()
# a call written with its keys unquoted: `{function: session_search, arguments: {…}}` (1.5B)
_CALL_SHAPED = re.compile(
    r"\{\s*\"?(?:name|function|tool)\"?\s*:\s*\"?[A-Za-z_]\w*\"?\s*,\s*"
    r"\"?(?:arguments|parameters|args|input)\"?\s*:"
)
# What may wrap a call: a Markdown fence (```json … ```), inline code, Qwen's <tool_call> tags
_OPENERS = re.compile(r"(?:```[A-Za-z0-9_-]*|<tool_call>|<function_call>)\s*\Z|`\Z")
_CLOSERS = re.compile(r"\A\s*(?:```|</tool_call>|</function_call>)|\A`")
_IDENTIFIER = re.compile(r"[A-Za-z_][\w.\-]{0,63}")
_LETTER = re.compile(r"[^\W_]")  # a letter or digit, any script


@dataclass(frozen=True)
class TextCall:
    """One call found in a text: the tool, its arguments, where it was written (`start:end`,
    a fence or tags around it included) and in which form ("json" or "function")."""

    name: str
    arguments: JsonObject
    start: int
    end: int
    form: str


def find_text_calls(
    text: str, admitted: Mapping[str, JsonObject], *, invented: bool = False
) -> tuple[TextCall, ...]:
    """Every well-formed call of an admitted tool written in `text`, in the order written.
    `admitted` maps each tool's name to its JSON-Schema parameters ({} when unknown).
    `invented`: a JSON call of a tool not admitted counts too when its shape leaves no doubt
    (`_invented_call`), so the caller can repair its name (`call_repair.py`) or answer it
    with the real tools' names."""
    if not text or not (
        any(name in text for name in admitted) or (invented and ("{" in text or "[" in text))
    ):
        return ()
    found: list[TextCall] = []
    taken: list[tuple[int, int]] = []
    position = 0
    while True:
        start = _next_json_start(text, position)
        if start < 0:
            break
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            completed = _unclosed_tail(text, start)
            if completed is None:
                position = start + 1
                continue
            value, end = completed, len(text)
        calls = _json_calls(value, admitted, invented)
        if calls is None:
            before = text[max(0, start - 80) : start]
            calls, back = _named_object(before, value, admitted)
            start -= back  # the span opens at the tool's name
        if calls is not None:
            start, end = _widen(text, start, end)
            found += [TextCall(n, a, start, end, "json") for n, a in calls]
        taken.append((start, end))  # a call, or data whose insides are not calls either
        position = end
    for name, arguments, start, end in function_calls(text, admitted):
        if not any(s <= start < e for s, e in taken):
            found.append(TextCall(name, arguments, *_widen(text, start, end), "function"))
    return tuple(sorted(found, key=lambda c: c.start))


_NAMED_BEFORE = re.compile(r"(?:^|[\s`:(>])([A-Za-z_][\w.\-]{0,63})`?\s*:?\s*\Z")


def _named_object(
    before: str, value: Any, admitted: Mapping[str, JsonObject]
) -> tuple[list[tuple[str, JsonObject]] | None, int]:
    """`read {"path": "notes.md"}`: the object just after an admitted tool's name, when its
    keys are all the tool's parameters and hold every required one; and how many characters
    before the object the name starts."""
    match = _NAMED_BEFORE.search(before)
    if match is None or not isinstance(value, dict) or not value:
        return None, 0
    name = match.group(1)
    schema = admitted.get(name)
    properties = (schema or {}).get("properties")
    if not isinstance(properties, dict) or not properties:
        return None, 0
    required = set((schema or {}).get("required") or ())
    keys = set(value)
    if not keys <= set(properties) or not required <= keys:
        return None, 0
    return [(name, dict(value))], len(before) - match.start(1)


def text_form_call(text: str, name: str) -> bool:
    """Whether `text` holds a well-formed call of tool `name` written as text (the probe's
    question; its tool takes no arguments, so any literal arguments still count)."""
    return any(c.name == name for c in find_text_calls(text, {name: {}}))


def text_call_id(key: str, index: int) -> str:
    """A deterministic id for the `index`-th call recognised in the step named by `key`
    (e.g. "<turn id>:<step>"): the same ledger gives the same ids when replayed."""
    digest = hashlib.sha256(f"{key}#{index}".encode()).hexdigest()[:16]
    return f"call_text_{digest}"


@dataclass(frozen=True)
class AdoptedCalls:
    """A step's text-form calls, adopted as its tool calls: the calls (ids synthesised), the
    text before the first of them, and the Activity saying they came as text (the whole
    text kept there)."""

    calls: tuple[ToolCall, ...]
    text: str
    activity: Activity


def adopt_text_calls(
    text: str,
    native: Iterable[ToolCall],
    tools: Iterable[ToolSpec],
    *,
    key: str,
    step: int,
    invented: bool = False,
) -> AdoptedCalls | None:
    """The text-form calls of a step that made no native call, or None. `tools` are the
    admitted tools; native calls win: a step that used the tool channel is taken as it is.

    A call written again with the same arguments in the same step runs once: a small model
    that falls into repeating itself (measured live: Qwen2.5-Coder-0.5B wrote the same three
    `read_note` calls over and over until its output limit) asks for each thing once."""
    if any(True for _ in native):
        return None
    written = find_text_calls(text, {t.name: t.parameters for t in tools}, invented=invented)
    if not written:
        return None
    seen: set[str] = set()
    found: list[TextCall] = []
    for c in written:
        identity = json.dumps([c.name, c.arguments], sort_keys=True)
        if identity not in seen:
            seen.add(identity)
            found.append(c)
    calls = tuple(ToolCall(text_call_id(key, i), c.name, c.arguments) for i, c in enumerate(found))
    # only what came before the first call stays the step's text: what follows a call was
    # written before its result existed, so it cannot report it. Measured on the 0.5B (issue
    # #22): a call, then flag-like babble to the output cap ("--no-heading --path …", "- glob:
    # *.md - output: text [evidence:…]"), which was shown, and copied by the next step.
    left = re.sub(r"\n{3,}", "\n\n", text[: written[0].start]).strip()
    # no letter or digit says nothing: the 0.5B wrote ">" before each of its calls (efficacy's
    # venue case), and the ">"s were shown as the turn's answer
    if not _LETTER.search(left):
        left = ""
    names = ", ".join(c.name for c in calls)
    activity = Activity(
        type=TEXT_FORM_CALL,
        message=f"the model wrote {len(calls)} tool call(s) as text ({names}); run as calls",
        detail={
            "step": step,
            "text": text,
            "repeats_dropped": len(written) - len(found),
            "calls": [
                {"id": call.id, "name": call.name, "form": c.form, "span": [c.start, c.end]}
                for call, c in zip(calls, found, strict=True)
            ],
        },
    )
    return AdoptedCalls(calls, left, activity)


def machine_text(text: str) -> bool:
    """Whether a step's text is machinery, not an answer: nothing but JSON naming a tool (a
    call nobody ran, a tool's schema copied back, the tool list printed) or Qwen's call tags,
    once fences, tags and whitespace are set aside. Measured on Qwen2.5-Coder 0.5B/1.5B: the
    final text of a turn was often a raw JSON call (issue #22)."""
    if "<tool_call>" in text or "<function_call>" in text:
        return True
    rest, position, named = [], 0, False
    while True:
        start = _next_json_start(text, position)
        if start < 0:
            rest.append(text[position:])
            break
        rest.append(text[position:start])
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            value, end = _unclosed_tail(text, start, mid_string=True), len(text)
            if value is None:
                rest.append(text[start:])
                break
        named = named or _names_a_tool(value)
        position = end
    left = re.sub(r"```[A-Za-z0-9_-]*|`", "", "".join(rest)).strip()
    if not named and _CALL_SHAPED.match(left):  # not JSON, but a call's shape: {function: x, …
        return True
    return named and len(left) <= 40  # a few words around it ("Here:") are not an answer


def _names_a_tool(value: Any) -> bool:
    if isinstance(value, list):
        return any(_names_a_tool(v) for v in value)
    if not isinstance(value, dict):
        return False
    inner = value.get("function")
    if isinstance(inner, dict) and _names_a_tool(inner):
        return True
    if any(isinstance(value.get(k), list) and _names_a_tool(value[k]) for k in _LIST_KEYS):
        return True
    return any(isinstance(value.get(k), str) for k in _NAME_KEYS) and bool(
        set(value) & {*_ARGUMENT_KEYS, "description", "function"}
    )


# -- JSON form --------------------------------------------------------------------------------


def _next_json_start(text: str, position: int) -> int:
    starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
    return min(starts, default=-1)


def _unclosed_tail(text: str, start: int, *, mid_string: bool = False) -> Any | None:
    """The JSON value that `text[start:]` is once its missing closing brackets are added, if
    that is all it lacks: the step ended mid-call (measured: a 0.5B model stopped before the
    last `}` of `{"name": "grep", "arguments": {...}` in 1 of 6 tries). None otherwise.
    `mid_string`: a text that ended inside a string is closed there too — what it is, not a
    call to run (the 1.5B's output limit cut `{"name": "recipe_request", "arguments":
    {"recipe": " marinaded …` and it was shown as the answer: issue #22, LoCoMo conv-49)."""
    stack: list[str] = []
    quoted = escaped = False
    for c in text[start:]:
        if quoted:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c in "{[":
            stack.append("}" if c == "{" else "]")
        elif c in "}]" and (not stack or stack.pop() != c):
            return None
    if (quoted and not mid_string) or not stack:
        return None
    tail = text[start:] if quoted else text[start:].rstrip()
    try:
        return json.loads(tail + ('"' if quoted else "") + "".join(reversed(stack)))
    except ValueError:
        return None


def _json_calls(
    value: Any, admitted: Mapping[str, JsonObject], invented: bool = False
) -> list[tuple[str, JsonObject]] | None:
    """The calls a decoded JSON value makes, or None when it is not (only) calls."""
    if isinstance(value, list):
        if not value:
            return None
        calls: list[tuple[str, JsonObject]] = []
        for item in value:
            inner = _json_calls(item, admitted, invented)
            if inner is None:
                return None
            calls += inner
        return calls
    if not isinstance(value, dict):
        return None
    for key in _LIST_KEYS:
        if isinstance(value.get(key), list):
            return _json_calls(value[key], admitted, invented)
    call = _one_call(value, admitted)
    if call is None and invented:
        call = _invented_call(value)
    return [call] if call is not None else None


def _one_call(
    value: dict[str, Any], admitted: Mapping[str, JsonObject]
) -> tuple[str, JsonObject] | None:
    function = value.get("function")
    if isinstance(function, dict):
        value = function
    if "description" in value:  # a tool's definition copied back (its schema), not a call
        return None
    name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    if name is None or name not in admitted:
        return None
    present = [k for k in _ARGUMENT_KEYS if k in value]
    if len(present) > 1:
        return None
    if not present:
        return name, {}
    arguments = value[present[0]]
    if isinstance(arguments, str):  # OpenAI's wire shape: the arguments as a JSON string
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return None
    if arguments is None:
        arguments = {}
    if isinstance(arguments, list):
        arguments = _listed_arguments(arguments, admitted[name])
    return (name, arguments) if isinstance(arguments, dict) else None


_PAIR = re.compile(r"\s*([A-Za-z_]\w*)\s*[:=]\s*(.+?)\s*\Z", re.S)


def _listed_arguments(items: list[Any], schema: JsonObject) -> JsonObject | None:
    """`["pattern:ZX-4471-Q"]`: arguments written as "key:value" strings, each key one of
    the tool's parameters (the 0.5B, issue #22), as the object they mean; else None."""
    properties = schema.get("properties")
    if not items or not isinstance(properties, dict):
        return None
    out: JsonObject = {}
    for item in items:
        match = _PAIR.match(item) if isinstance(item, str) else None
        if match is None or match.group(1) not in properties or match.group(1) in out:
            return None
        out[match.group(1)] = match.group(2).strip("\"'")
    return out


def _invented_call(value: dict[str, Any]) -> tuple[str, JsonObject] | None:
    """A call of a tool that is not admitted, written in a shape that can only be a call:
    an identifier under `name` (or its synonyms), an object under `arguments` (or its
    synonyms), and nothing else but an OpenAI `type`. `{"name": "Bob", "age": 3}` is data."""
    function = value.get("function")
    if isinstance(function, dict) and set(value) <= {"function", "type", "id"}:
        value = function
    names = [k for k in _NAME_KEYS if k in value]
    present = [k for k in _ARGUMENT_KEYS if k in value]
    if len(names) != 1 or len(present) != 1 or set(value) - {names[0], present[0], "type"}:
        return None
    name, arguments = value[names[0]], value[present[0]]
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        return None
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return None
    return (name, arguments) if isinstance(arguments, dict) else None


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of a call with the fence or tags written around it."""
    before = _OPENERS.search(text, 0, start)
    after = _CLOSERS.match(text[end:])
    if before is not None and after is not None:
        return before.start(), end + after.end()
    return start, end
