"""Closed-turn digests: how a tool result reads once its turn is over (spec §3).

The current turn carries a result verbatim or as a window (`evidence.carry`). Working-set turns
before it carry a *digest* instead, built from the result's shape — search hits, command output,
JSON structure, a text outline, an error — and never by a character count, so the model never
reads a cut of prose it cannot tell apart from the whole. Every digest ends with a footer naming
the evidence and its size, and `recall` returns the whole result: every digest is reversible.
A digest line over `LINE_LIMIT` follows the window rule (`evidence.line_at_limit`): its start,
how many characters it continues for, and the recall call that returns them.

Pure and deterministic: the same result gives the same bytes, so a closed turn stays byte-stable
in the provider's prefix cache.

    shape            digest
    error            verbatim
    search_results   every title and URL, no bodies
    command_output   exit code, first and last `EDGE_LINES` lines of stdout, then stderr
    json             top-level keys with type/size, array lengths, first element of each array
    text             heading lines, first paragraph, line and byte count

Over 400 lines on purpose: the digest of each content shape (JSON, command output, Markdown,
plain text) uses one private locator grammar for its line references; split by shape, those
private helpers would become a public API.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar

from vak_desktop.context.evidence.windows import (
    LINE_LIMIT,
    line_at_limit,
    line_shown,
    recall_call,
    short_ref,
)

__all__ = ["EDGE_LINES", "PARAGRAPH_LINES", "digest_result", "result_shape"]

EDGE_LINES = 10  # command output: lines shown from its start and from its end
# A first "paragraph" with no blank line can be a whole log; past this many lines it shows its
# first lines whole and names the rest with a recall range (whole lines, never a character cut).
PARAGRAPH_LINES = 20

_EXIT_KEYS = ("exit_code", "returncode", "exitCode")
_STREAM_KEYS = ("stdout", "stderr")
_COMMAND_KEYS = ("command", "cmd")
_URL_KEYS = ("url", "link", "href", "sourceURL")
_EXIT_LINE = re.compile(r"\[?\s*exit(?:[ _-]?(?:code|status))?\s*[:=]?\s*(-?\d+)\s*\]?", re.I)
# "stdout:", "[stderr]", "--- stderr ---": a text command result naming its streams
_STREAM_MARK = re.compile(
    r"\s*(?:\[(stdout|stderr)\]|-{2,}\s*(stdout|stderr)\s*-{2,}|(stdout|stderr)\s*:)\s*", re.I
)
_MARK_CHARS = 64  # exit and stream marker lines are short; longer lines are not tried
_ATX = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_SETEXT = re.compile(r" {0,3}(?:=+|-+)[ \t]*")
_FENCE = re.compile(r" {0,3}(```|~~~)")
_BARE_KEY = re.compile(r"[\w$@.\-]+")
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()

_JsonPath = tuple[str | int, ...]  # where a value sits inside a JSON result: keys and indices
_T = TypeVar("_T")


def _footer(content: str, evidence_id: str) -> str:
    """The line every digest ends with."""
    return f"[evidence:{short_ref(evidence_id)} — {len(content):,} chars; call recall to expand]"


def result_shape(content: str, *, is_error: bool = False) -> str:
    """The shape a digest is built from, as trace lines name it: "error", "search_results",
    "command_output", "json" (an object or an array) or "text"."""
    return _classify(content, is_error)[0]


def digest_result(
    content: str, evidence_id: str, *, tool_name: str = "", is_error: bool = False
) -> str:
    """The deterministic digest of a stored tool result, as turns before the current one show it.

    `tool_name` is accepted for callers that know it but does not steer the digest: the shape
    is read from the content alone, so the digest and `result_shape` always agree.
    """
    del tool_name
    ref = short_ref(evidence_id)
    shape, value = _classify(content, is_error)
    if shape == "error":
        body = "\n".join(
            line_shown(line.raw, line.number, line.offset, ref)
            for line in _lines(content, keep_trailing=True)
        )
        gap = "" if body == "" or body.endswith("\n") else "\n"
        return f"{body}{gap}{_footer(content, evidence_id)}"
    if shape == "search_results":
        body_lines = _search_digest(content, ref, value)
    elif shape == "command_output" and isinstance(value, dict):
        body_lines = _command_json_digest(content, ref, value)
    elif shape == "command_output":
        body_lines = _command_text_digest(content, ref)
    elif shape == "json":
        body_lines = _json_digest(content, ref, value)
    else:
        body_lines = _text_digest(content, ref)
    return "\n".join([*body_lines, _footer(content, evidence_id)])


def _classify(content: str, is_error: bool) -> tuple[str, Any]:
    if is_error:
        return "error", None
    value = _parse_json(content)
    if isinstance(value, dict):
        if _is_command(value):
            return "command_output", value
        return ("search_results" if _hit_lists(value) else "json"), value
    if isinstance(value, list):
        return ("search_results" if _is_hit_list(value) else "json"), value
    return ("command_output" if _exit_code(content) is not None else "text"), None


def _exit_code(content: str) -> str | None:
    """The exit code a text result's first line states ("exit code: 2", "[exit 2]"), if any."""
    end = content.find("\n")
    first = (content if end < 0 else content[:end]).strip()
    match = _EXIT_LINE.fullmatch(first) if len(first) <= _MARK_CHARS else None
    return match.group(1) if match else None


def _parse_json(content: str) -> Any:
    """An object or array the content parses as, else None (scalars read better as text)."""
    if content.lstrip(" \t\n\r")[:1] not in ("{", "["):
        return None
    try:
        return json.loads(content)
    except (ValueError, RecursionError):
        return None


# ---- JSON: where a value sits in the original text, so a long line's note can recall it ----


def _skip(content: str, at: int) -> int:
    match = _JSON_SPACE.match(content, at)
    return match.end() if match else at


def _child_start(content: str, at: int, step: str | int) -> int:
    """Where member `step` of the object or array starting at `at` begins (last duplicate key
    wins, as in `json.loads`)."""
    is_object = content[at] == "{"
    found, index, i = -1, 0, _skip(content, at + 1)
    while content[i] not in "]}":
        match = index == step
        if is_object:
            key, i = _DECODER.raw_decode(content, i)
            i = _skip(content, _skip(content, i) + 1)  # past the colon
            match = key == step
        if match:
            found = i
            if not is_object:
                return found
        _, i = _DECODER.raw_decode(content, i)
        i = _skip(content, i)
        if content[i] == ",":
            i = _skip(content, i + 1)
        index += 1
    return found


def _locate(content: str, path: _JsonPath) -> tuple[int, int]:
    """The character range [start, end) of the value at `path` in the JSON text."""
    start = _skip(content, 0)
    for step in path:
        start = _child_start(content, start, step)
    _, end = _DECODER.raw_decode(content, start)
    return start, end


def _json_line(line: str, content: str, ref: str, path: _JsonPath, what: str) -> str:
    """A digest line rendered from JSON; when over the limit, its note recalls `what` (the
    value at `path`), the original text it was rendered from."""
    if len(line) <= LINE_LIMIT:
        return line
    start, end = _locate(content, path)
    return line_at_limit(
        line, "this line", f"{recall_call(ref, chars=[start, end])} returns {what}"
    )


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _kind(value: Any) -> str:
    """A value's type and size: `object{3}`, `array[42]`, `string (12 chars)`, `number 8080`."""
    if isinstance(value, dict):
        return f"object{{{len(value)}}}"
    if isinstance(value, list):
        return f"array[{len(value)}]"
    if isinstance(value, str):
        return f"string ({_count(len(value), 'char')})"
    if isinstance(value, bool):
        return f"boolean {_compact(value)}"
    if value is None:
        return "null"
    return f"number {_compact(value)}"


def _member(content: str, ref: str, key: str, value: Any) -> str:
    return _json_line(f"{_key(key)}: {_kind(value)}", content, ref, (key,), f'the whole "{key}"')


def _members(content: str, ref: str, value: dict[str, Any], skip: set[str]) -> list[str]:
    return [_member(content, ref, k, v) for k, v in value.items() if k not in skip]


def _json_digest(content: str, ref: str, value: Any) -> list[str]:
    if isinstance(value, list):
        out = [f"JSON array[{len(value)}]"]
        if value:
            out.append(
                _json_line(f"[0]: {_compact(value[0])}", content, ref, (0,), "the first element")
            )
        return out
    out = [f"JSON object with {_count(len(value), 'key')}"]
    for k, v in value.items():
        out.append(_member(content, ref, k, v))
        if isinstance(v, list) and v:
            line = f"{_key(k)}[0]: {_compact(v[0])}"
            out.append(_json_line(line, content, ref, (k, 0), f'the first element of "{k}"'))
    return out


# ---- search and crawl results ----


def _hit(item: Any) -> tuple[str | None, str] | None:
    """(title, url) of a search or crawl hit, looking in its `metadata` too; None if no URL."""
    if not isinstance(item, dict):
        return None
    sources = [item] + ([item["metadata"]] if isinstance(item.get("metadata"), dict) else [])
    titles = [s["title"] for s in sources if isinstance(s.get("title"), str)]
    urls = [s[k] for s in sources for k in _URL_KEYS if isinstance(s.get(k), str)]
    return (titles[0] if titles else None, urls[0]) if urls else None


def _is_hit_list(value: Any) -> bool:
    """A non-empty list whose every element has a URL and some element has a title."""
    if not isinstance(value, list) or not value:
        return False
    hits = [_hit(item) for item in value]
    return all(h is not None for h in hits) and any(h and h[0] is not None for h in hits)


def _hit_lists(value: dict[str, Any]) -> list[_JsonPath]:
    """Paths of the hit lists in an object: under a top-level key or one level below it."""
    found: list[_JsonPath] = []
    for k, v in value.items():
        if _is_hit_list(v):
            found.append((k,))
        elif isinstance(v, dict):
            found.extend((k, k2) for k2, v2 in v.items() if _is_hit_list(v2))
    return found


def _hit_lines(content: str, ref: str, hits: list[Any], path: _JsonPath) -> list[str]:
    out = []
    for i, item in enumerate(hits):
        title, url = _hit(item) or (None, "")
        shown = " ".join(title.split()) if title is not None else "(untitled)"
        line = f"{i + 1}. {shown} — {' '.join(url.split())}"
        out.append(_json_line(line, content, ref, (*path, i), "the whole hit"))
    return out


def _search_digest(content: str, ref: str, value: Any) -> list[str]:
    if isinstance(value, list):
        out = [f"search results: JSON array of {_count(len(value), 'hit')} — titles and URLs"]
        return out + _hit_lines(content, ref, value, ())
    out = [f"search results: JSON object with {_count(len(value), 'key')} — titles and URLs"]
    paths = _hit_lists(value)
    for path in paths:
        hits: Any = value
        for step in path:
            hits = hits[step]
        label = ".".join(_key(str(step)) for step in path)
        what = f'the whole "{label}"'
        out.append(_json_line(f"{label}: {_count(len(hits), 'hit')}", content, ref, path, what))
        out.extend(_hit_lines(content, ref, hits, path))
    return out + _members(content, ref, value, {str(p[0]) for p in paths})


# ---- command output ----


def _is_command(value: dict[str, Any]) -> bool:
    return any(k in value for k in _EXIT_KEYS) and any(
        isinstance(value.get(k), str) for k in _STREAM_KEYS
    )


def _edges(
    lines: Sequence[_T], show: Callable[[_T], str], between: Callable[[Sequence[_T]], str]
) -> list[str]:
    """Every line via `show`, or past 2 × EDGE_LINES the first and last EDGE_LINES around
    one `between` line naming the run left out."""
    if len(lines) <= 2 * EDGE_LINES:
        return [show(line) for line in lines]
    head = [show(line) for line in lines[:EDGE_LINES]]
    tail = [show(line) for line in lines[-EDGE_LINES:]]
    return [*head, between(lines[EDGE_LINES:-EDGE_LINES]), *tail]


def _command_json_digest(content: str, ref: str, value: dict[str, Any]) -> list[str]:
    exit_key = next(k for k in _EXIT_KEYS if k in value)
    out = [f"exit code: {_compact(value[exit_key])}"]
    command_key = next((k for k in _COMMAND_KEYS if isinstance(value.get(k), str)), None)
    if command_key is not None:
        command = value[command_key]
        shown = command if "\n" not in command else _compact(command)
        out.append(_json_line(f"command: {shown}", content, ref, (command_key,), "the command"))
    for key in _STREAM_KEYS:
        text = value.get(key)
        if isinstance(text, str) and (text or key == "stdout"):
            out.extend(_stream(content, ref, key, text))
    skip = {exit_key, *_STREAM_KEYS, *([command_key] if command_key else [])}
    return out + _members(content, ref, value, skip)


def _stream(content: str, ref: str, key: str, text: str) -> list[str]:
    """One stream of a JSON command result; its lines are not lines of the stored text, so a
    note recalls the stream's whole JSON string."""
    lines = [line.removesuffix("\r") for line in _split(text)]

    def show(line: str) -> str:
        return _json_line(line, content, ref, (key,), f"the whole {key}")

    def between(run: Sequence[str]) -> str:
        start, end = _locate(content, (key,))
        chars = sum(len(line) + 1 for line in run)
        return (
            f"[… {_count(len(run), 'line')} between ({chars:,} characters); "
            f"{recall_call(ref, chars=[start, end])} returns the whole {key} …]"
        )

    return [f"{key}: {_count(len(lines), 'line')}", *_edges(lines, show, between)]


class _Line(NamedTuple):
    """One line of a stored result: its 1-based number, where it starts, its text."""

    number: int
    offset: int
    raw: str

    @property
    def text(self) -> str:
        return self.raw.removesuffix("\r")


def _split(text: str) -> list[str]:
    """Lines as a person counts them: a final newline does not start another line."""
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def _lines(content: str, *, keep_trailing: bool = False) -> list[_Line]:
    out, offset = [], 0
    for number, raw in enumerate(content.split("\n") if keep_trailing else _split(content), 1):
        out.append(_Line(number, offset, raw))
        offset += len(raw) + 1
    return out


def _shown(line: _Line, ref: str) -> str:
    return line_shown(line.text, line.number, line.offset, ref)


def _omitted(run: Sequence[_Line], ref: str, lead: str) -> str:
    """The line naming a run of whole lines left out, and the recall call that returns them."""
    first, last = run[0].number, run[-1].number
    chars = sum(len(line.raw) + 1 for line in run)
    return (
        f"[… {lead} (lines {first}–{last}, {chars:,} characters); "
        f"{recall_call(ref, range=[first, last])} returns them …]"
    )


def _command_text_digest(content: str, ref: str) -> list[str]:
    lines = _lines(content)
    out = [f"exit code: {_exit_code(content)}"]
    sections: list[tuple[str, list[_Line]]] = [("output", [])]
    for line in lines[1:]:
        mark = _STREAM_MARK.fullmatch(line.text) if len(line.text) <= _MARK_CHARS else None
        if mark is None:
            sections[-1][1].append(line)
            continue
        name = next(group for group in mark.groups() if group).lower()
        if sections[-1] == ("output", []):
            sections.pop()
        sections.append((name, []))
    for name, section in sections:
        if name == "stderr" and not section:
            continue
        out.append(f"{name}: {_count(len(section), 'line')}")
        out.extend(
            _edges(
                section,
                lambda line: _shown(line, ref),
                lambda run: _omitted(run, ref, f"{_count(len(run), 'line')} between"),
            )
        )
    return out


# ---- text and markdown ----


def _headings(lines: list[_Line]) -> list[int]:
    """Indices of heading lines: ATX (`# …`) and setext (a line underlined by `===`/`---`,
    both lines), outside fenced code blocks."""
    found: list[int] = []
    fence: str | None = None
    plain_before = False  # the previous line could be a setext heading's text
    for i, line in enumerate(lines):
        text = line.text
        opened = _FENCE.match(text)
        if fence is not None or opened:
            if fence is None and opened:
                fence = opened.group(1)
            elif opened and opened.group(1) == fence:
                fence = None
            plain_before = False
            continue
        if _ATX.match(text):
            found.append(i)
            plain_before = False
        elif plain_before and _SETEXT.fullmatch(text):
            found.extend((i - 1, i))
            plain_before = False
        else:
            plain_before = bool(text.strip())
    return found


def _text_digest(content: str, ref: str) -> list[str]:
    lines = _lines(content)
    size = len(content.encode("utf-8", "surrogatepass"))
    out = [f"text: {_count(len(lines), 'line')}, {_count(size, 'byte')}"]
    headings = _headings(lines)
    out.append("headings:" if headings else "headings: none")
    out.extend(f"line {lines[i].number}: {_shown(lines[i], ref)}" for i in headings)
    heading_set = set(headings)
    start = next(
        (i for i, line in enumerate(lines) if line.text.strip() and i not in heading_set), None
    )
    if start is None:
        return [*out, "first paragraph: none"]
    end = start
    while end + 1 < len(lines) and lines[end + 1].text.strip() and end + 1 not in heading_set:
        end += 1
    paragraph = lines[start : end + 1]
    span = (
        f"line {paragraph[0].number}"
        if start == end
        else f"lines {paragraph[0].number}–{paragraph[-1].number}"
    )
    out.append(f"first paragraph ({span}):")
    out.extend(_shown(line, ref) for line in paragraph[:PARAGRAPH_LINES])
    if len(paragraph) > PARAGRAPH_LINES:
        rest = paragraph[PARAGRAPH_LINES:]
        lead = f"the paragraph continues for {_count(len(rest), 'more line')}"
        out.append(_omitted(rest, ref, lead))
    return out


def _count(n: int, unit: str) -> str:
    return f"{n:,} {unit}{'' if n == 1 else 's'}"
