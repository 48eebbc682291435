"""The pure half of the Ollama double: its data, its token model and what a reply looks like.

Why it exists: `ollama_server.py` grew past the module guideline, and these parts need no socket,
no lock and no server state — only the request and the double's settings — so they live here,
where a reader can check the arithmetic tests rely on without reading any HTTP plumbing.

Token model, so tests can compute what the double will report:
    prompt_tokens = ceil(chars / chars_per_token) + MESSAGE_OVERHEAD * messages
                    + IMAGE_TOKENS * images
where chars counts each message's content, thinking and tool calls (name + JSON arguments)
plus the JSON of the request's `tools`. `OllamaDouble.prompt_tokens(messages, tools)` computes it.

Instruction pattern for `instruction_horizon`: the request's last message is a user message
containing "call the `NAME` tool" or "call the tool `NAME`" (case-insensitive, backticks
optional) and NAME is one of the request's tools. Within the horizon the default reply is that
tool call (arguments {}); beyond it the model answers in prose that does not name the tool.
With `search_requests=True` a natural request "Search my files for … WORD." counts too when
the request offers `grep` (or `glob`): within the horizon the reply is that call with
{"pattern": WORD} (the capacity probe's real-shaped request).
`noise` is the chance of flipping that verdict within ±10% of the horizon (seeded by `seed`).
With `search_requests=True` a closing question "… I asked you to remember? …" is answered with
the code an earlier user message asked it to remember ("remember … LK-1234") when the prompt is
within `memory_horizon` (default: the instruction horizon), else "I do not remember that."

Timing model: prompt_eval_duration covers only tokens after the prefix shared with the model's
previous prompt, at `prefill_tps`; eval_duration is eval_count at `decode_tps`; load_duration is
`cold_load_ns` on the first request and whenever num_ctx or shift change, else `warm_load_ns`.
Nothing sleeps for these unless `realtime=True`.
"""

from __future__ import annotations

import json
import math
import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

MESSAGE_OVERHEAD = 4  # role header and end-of-turn marker of a chat template
IMAGE_TOKENS = 768
DEFAULT_KEEP_ALIVE_S = 300.0
FOREVER = timedelta(days=292 * 365)
OVERFLOW_TEXT = (
    "the prompt is longer than the context length currently available to the model; shorten "
    "the prompt, adjust the context length in settings, or use a model with a longer context "
    "length"
)
_INSTRUCTION = re.compile(r"call the `?([\w.-]+)`? tool\b|call the tool `?([\w.-]+)`?", re.I)
_SEARCH = re.compile(r"\bsearch my files for\b.*?([\w-]+)\W*$", re.I | re.S)
_RECALL = re.compile(r"\bI asked you to remember\b", re.I)
_FACT = re.compile(r"\bremember\b[^\n]*?\b([A-Z]{2}-\d+)", re.I)
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
_DURATION_PART = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION = re.compile(r"(?:[0-9]*\.?[0-9]+(?:ns|us|µs|μs|ms|s|m|h))+")


class Reject(Exception):
    """An HTTP error answer: status and Ollama's {"error": message}."""

    def __init__(self, status: int, message: str, retry_after: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message = status, message
        self.retry_after = retry_after  # a Retry-After header, as Ollama's busy 503 may send


@dataclass
class Reply:
    """One scripted /api/chat answer. `raw_lines` go out verbatim after `raw_after_chunks`
    streamed chunks; `error_after_chunks` ends the stream with an error line instead of done."""

    text: str = ""
    thinking: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    chunk_chars: int = 8
    delay_per_chunk: float = 0.0
    error_after_chunks: int | None = None
    error_text: str = "an error was encountered while running the model: unexpected EOF"
    raw_lines: list[bytes] = field(default_factory=list)
    raw_after_chunks: int = 1
    tool_calls_on_final_chunk: bool = False
    done_reason: str = "stop"


@dataclass
class Model:
    name: str
    trained_window: int
    capabilities: tuple[str, ...]
    family: str
    parameter_size: str
    quantisation: str
    num_ctx_param: int | None
    digest: str
    size: int


@dataclass
class Loaded:
    """A model in memory: until when, with which window, and its last prompt."""

    expires_at: datetime
    num_ctx: int
    shift: bool
    prompt: list[str] = field(default_factory=list)  # canonical messages, for the prefix cache
    tools_key: str = ""


@dataclass
class Served:
    """What the server settled about one chat request before generating its reply."""

    name: str  # the model name as the client wrote it, echoed in every chunk
    thinking: bool
    tokens: int  # prompt_eval_count: the prompt after any truncation
    cached: int  # prompt tokens shared with the model's previous prompt
    load_ns: int
    num_ctx: int
    shift: bool
    num_predict: int | None
    stream: bool


@dataclass
class Answer:
    """One HTTP answer, before it is written to the socket."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json; charset=utf-8"
    # Streamed NDJSON: (object, or raw bytes sent verbatim; delay before it). Objects are
    # serialised when sent, so created_at is the moment each chunk leaves, as in Ollama.
    lines: list[tuple[dict[str, Any] | bytes, float]] | None = None
    headers: dict[str, str] = field(default_factory=dict)


# -- the prompt -------------------------------------------------------------------------------


def prompt_tokens(
    messages: list[dict[str, Any]], tools: list[Any] | None, chars_per_token: float
) -> int:
    """The prompt size the double reports for these messages and tools (see module doc)."""
    chars = len(json.dumps(tools)) if tools else 0
    images = 0
    for m in messages:
        chars += len(str(m.get("content") or "")) + len(str(m.get("thinking") or ""))
        for call in m.get("tool_calls") or []:
            function = call.get("function") or {}
            chars += len(str(function.get("name", "")))
            chars += len(json.dumps(function.get("arguments") or {}))
        images += len(m.get("images") or [])
    tokens = math.ceil(chars / chars_per_token)
    return tokens + MESSAGE_OVERHEAD * len(messages) + IMAGE_TOKENS * images


def fit(messages: list[Any], tools: list[Any], num_ctx: int, chars_per_token: float) -> list[Any]:
    """Ollama's message-level truncation: the longest suffix that fits (the last message
    always), with the system messages from before it put back in front."""
    start = len(messages) - 1
    for i in range(len(messages) - 2, -1, -1):
        systems = [m for m in messages[:i] if m.get("role") == "system"]
        if prompt_tokens(systems + messages[i:], tools, chars_per_token) > num_ctx:
            break
        start = i
    return [m for m in messages[:start] if m.get("role") == "system"] + messages[start:]


def settle_prompt(
    messages: list[Any],
    tools: list[Any],
    num_ctx: int,
    *,
    truncate: bool,
    shift: bool,
    num_keep: Any,
    chars_per_token: float,
) -> tuple[list[Any], int, bool]:
    """(messages kept, prompt_eval_count, whether the runner cut tokens) — or the error Ollama
    gives when the prompt cannot fit. `num_keep` is the raw option, read only on a cut."""
    kept = fit(messages, tools, num_ctx, chars_per_token) if truncate else messages
    tokens, cut = prompt_tokens(kept, tools, chars_per_token), False
    if tokens > num_ctx:
        if not truncate:
            raise Reject(400, llama_overflow(tokens, num_ctx))
        if not shift:
            raise Reject(400, OVERFLOW_TEXT)
        keep = int(num_keep)  # keep num_keep, drop ~half the rest
        tokens -= max(tokens - num_ctx, (tokens - keep) // 2)
        cut = True
    return kept, tokens, cut


@dataclass(frozen=True)
class Load:
    """One time the double loaded a model into memory, and why, as Ollama's scheduler decides:
    "cold" (not in memory: first use, after unloading or expiry, or evicted by another model)
    or a reload of a loaded runner whose options differ ("num_ctx", "shift")."""

    model: str
    num_ctx: int
    reason: str
    previous_num_ctx: int = 0


def load_reason(state: Loaded | None, *, num_ctx: int, shift: bool) -> str | None:
    """Why this request loads the model (None: the loaded runner serves it as it is)."""
    if state is None or state.expires_at <= datetime.now(UTC):
        return "cold"
    if state.num_ctx != num_ctx:
        return "num_ctx"
    if state.shift != shift:
        return "shift"
    return None


def warm(
    state: Loaded | None,
    kept: list[Any],
    tools: list[Any],
    *,
    num_ctx: int,
    shift: bool,
    cut: bool,
    keep: float | None,
    chars_per_token: float,
) -> tuple[bool, int, Loaded | None]:
    """The prefix cache: (whether the model loads afresh, prompt tokens shared with its previous
    prompt, its state after this request — None when keep_alive 0 unloads it)."""
    reload = load_reason(state, num_ctx=num_ctx, shift=shift) is not None
    canon, tools_key = [json.dumps(m, sort_keys=True) for m in kept], json.dumps(tools)
    shared = 0
    if state is not None and not reload and not cut and state.tools_key == tools_key:
        for mine, theirs in zip(canon, state.prompt, strict=False):
            if mine != theirs:
                break
            shared += 1
    cached = prompt_tokens(kept[:shared], tools, chars_per_token) if shared else 0
    if keep == 0:
        return reload, cached, None
    return reload, cached, Loaded(expiry(keep), num_ctx, shift, [] if cut else canon, tools_key)


# -- the reply --------------------------------------------------------------------------------


def default_reply(
    messages: list[Any],
    tools: list[Any],
    *,
    follows: Callable[[], bool],
    text: str | None,
    chunk_chars: int,
    delay_per_chunk: float,
    search_requests: bool = False,
    recalls: Callable[[], bool] | None = None,
) -> Reply:
    """The unscripted answer: the instructed tool call if `follows()`, else prose (module doc)."""
    last = messages[-1]
    content = str(last.get("content") or "")
    reply = Reply(
        thinking="Reading the last message.",
        chunk_chars=chunk_chars,
        delay_per_chunk=delay_per_chunk,
    )
    asks_back = last.get("role") == "user" and _RECALL.search(content)
    if search_requests and recalls is not None and asks_back:
        told = [_FACT.search(str(m.get("content") or "")) for m in messages[:-1]]
        fact = next((f[1] for f in told if f is not None), None)
        remembered = fact is not None and recalls()
        reply.text = f"It is {fact}." if remembered else "I do not remember that."
        return reply
    names = {str((t.get("function") or {}).get("name")) for t in tools if isinstance(t, dict)}
    found = _INSTRUCTION.search(content) if last.get("role") == "user" else None
    wanted = (found[1] or found[2]) if found else None
    arguments: dict[str, Any] = {}
    asked = search_requests and last.get("role") == "user" and not found
    search = _SEARCH.search(content) if asked else None
    if search is not None:
        wanted = next((n for n in ("grep", "glob") if n in names), None)
        arguments = {"pattern": search[1]}
    if wanted in names:
        if follows():
            reply.tool_calls = [(str(wanted), arguments)]
        else:
            reply.text = "Here is a short answer in prose; I did not use any tool."
    elif text is not None:
        reply.text = text
    elif last.get("role") == "tool":
        reply.text = "The tool returned: " + content[:200]
    else:
        users = [m for m in messages if m.get("role") == "user"]
        # the end of the message: the user's own words come last (a tail block may lead it),
        # so two different questions never get the same echo
        reply.text = "You said: " + str(users[-1].get("content") if users else "")[-200:]
    return reply


def generate(
    reply: Reply,
    served: Served,
    *,
    ids: random.Random,
    chars_per_token: float,
    prefill_tps: float,
    decode_tps: float,
    realtime: bool,
) -> Answer:
    """The reply as Ollama would send it: chunks, tool calls, the final metrics."""
    thinking, text = (reply.thinking if served.thinking else ""), reply.text
    alphabet = string.ascii_lowercase + string.digits
    calls = [
        {
            "id": "call_" + "".join(ids.choices(alphabet, k=8)),
            "function": {"index": i, "name": n, "arguments": a},
        }
        for i, (n, a) in enumerate(reply.tool_calls)
    ]
    call_chars = sum(len(n) + len(json.dumps(a)) for n, a in reply.tool_calls)
    out = max(1, math.ceil((len(thinking) + len(text) + call_chars) / chars_per_token))
    limit, room_left = served.num_predict, served.num_ctx - served.tokens
    if not served.shift:  # without context shift, generation stops at the window
        limit = max(0, room_left) if limit is None else min(limit, room_left)
    done_reason = reply.done_reason
    if limit is not None and out > limit:
        room = int(limit * chars_per_token)
        thinking = thinking[:room]
        text = text[: max(0, room - len(thinking))]
        calls, out, done_reason = [], max(0, limit), "length"
    load_ns = served.load_ns
    prompt_ns = duration_ns(max(1, served.tokens - served.cached), prefill_tps)
    eval_ns = duration_ns(out, decode_tps)
    metrics = {
        "total_duration": load_ns + prompt_ns + eval_ns + 250_000,
        "load_duration": load_ns,
        "prompt_eval_count": served.tokens,
        "prompt_eval_duration": prompt_ns,
        "eval_count": out,
        "eval_duration": eval_ns,
    }
    final_message: dict[str, Any] = {"role": "assistant", "content": ""}
    if not served.stream:
        if reply.error_after_chunks is not None:
            raise Reject(500, reply.error_text)
        final_message.update(content=text, **({"thinking": thinking} if thinking else {}))
        calls_on_final = True
    else:
        calls_on_final = reply.tool_calls_on_final_chunk
    if calls and calls_on_final:
        final_message["tool_calls"] = calls
    final = chunk(served.name, final_message, done=True) | {"done_reason": done_reason}
    final |= {k: v for k, v in metrics.items() if v}  # Ollama omits zero metrics
    if not served.stream:
        return json_answer(200, final)
    n = max(1, reply.chunk_chars)
    pieces: list[dict[str, Any]] = [
        {"role": "assistant", "content": "", "thinking": thinking[i : i + n]}
        for i in range(0, len(thinking), n)
    ] + [{"role": "assistant", "content": text[i : i + n]} for i in range(0, len(text), n)]
    if calls and not calls_on_final:
        pieces.append({"role": "assistant", "content": "", "tool_calls": calls})
    outgoing: list[dict[str, Any] | bytes] = []
    for i in range(len(pieces) + 1):
        if i == min(reply.raw_after_chunks, len(pieces)):
            outgoing += [r if r.endswith(b"\n") else r + b"\n" for r in reply.raw_lines]
        if reply.error_after_chunks is not None and i == min(reply.error_after_chunks, len(pieces)):
            outgoing.append({"error": reply.error_text})
            break
        outgoing.append(chunk(served.name, pieces[i], False) if i < len(pieces) else final)
    pace = reply.delay_per_chunk + (eval_ns / 1e9 / len(outgoing) if realtime else 0.0)
    lines = [(line, pace) for line in outgoing]
    if realtime:  # loading and prefill happen before the first byte
        lines[0] = (lines[0][0], pace + (load_ns + prompt_ns) / 1e9)
    return Answer(200, lines=lines)


# -- wire helpers -----------------------------------------------------------------------------


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def llama_overflow(tokens: int, n_ctx: int) -> str:
    """The llama.cpp server's 400 body, which Ollama passes through as its error string."""
    message = (
        f"request ({tokens} tokens) exceeds the available context size ({n_ctx} tokens), "
        "try increasing it"
    )
    error = {
        "code": 400,
        "message": message,
        "type": "exceed_context_size_error",
        "n_prompt_tokens": tokens,
        "n_ctx": n_ctx,
    }
    return json.dumps({"error": error}, separators=(",", ":"))


def keep_alive_seconds(value: Any) -> float | None:
    """keep_alive as Ollama reads it: number = seconds, string = Go duration, None = default."""
    if value is None:
        return None
    if isinstance(value, bool | list | dict):
        kind = {bool: "bool", list: "array", dict: "object"}[type(value)]
        raise Reject(400, f"Unsupported type: '{kind}'")
    if isinstance(value, int | float):
        return float(value)
    text = str(value)
    body = text.lstrip("+-")
    if text == "0":
        return 0.0
    if body and _DURATION.fullmatch(body):
        seconds = sum(float(n) * _UNITS[u] for n, u in _DURATION_PART.findall(body))
        return -seconds if text.startswith("-") else seconds
    if re.fullmatch(r"[0-9.]+", body):
        raise Reject(400, f'time: missing unit in duration "{text}"')
    raise Reject(400, f'time: invalid duration "{text}"')


def expiry(keep: float | None) -> datetime:
    """When a model loaded now with this keep_alive unloads (negative: never)."""
    seconds = DEFAULT_KEEP_ALIVE_S if keep is None else keep
    now = datetime.now(UTC)
    return now + FOREVER if seconds < 0 else now + timedelta(seconds=seconds)


def duration_ns(count: int, per_second: float) -> int:
    return 0 if math.isinf(per_second) else round(count / per_second * 1e9)


def chunk(model: str, message: dict[str, Any], done: bool) -> dict[str, Any]:
    created = rfc3339(datetime.now(UTC))
    return {"model": model, "created_at": created, "message": message, "done": done}


def ndjson_line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def json_answer(status: int, obj: dict[str, Any]) -> Answer:
    return Answer(status, ndjson_line(obj)[:-1])
