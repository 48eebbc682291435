"""The canonical byte form of a ledger entry, and the entry id derived from it.

This is a contract (tests/ledger/test_canonical.py pins it with literal bytes): an entry id is

    "b3:" + hex(blake3(envelope))

where `envelope` is the UTF-8 encoding of the JSON object

    {"created_at": <str>, "kind": <str>, "parent": <str|null>, "payload": <payload>, "session": <str>}

written canonically: keys sorted by code point at every level, no whitespace (separators `,`
and `:`), non-ASCII characters written as themselves (not `\\u` escapes), integers as integers,
floats in their shortest round-trip form, and no NaN or Infinity. `created_at` is an ISO-8601
UTC instant with microseconds, e.g. `2026-11-30T09:50:35.123456Z`.

The payload is stored as its own canonical text, and the envelope embeds those exact stored
bytes, so verification hashes what is on disk rather than a re-encoding of it: one changed byte
anywhere in a stored entry changes its id.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import blake3

ID_PREFIX = "b3:"


class CanonicalFormError(ValueError):
    """A value that has no canonical form (NaN, a lone surrogate, a non-JSON type)."""


def canonical_text(value: Any) -> str:
    """The canonical JSON text of a JSON value."""
    try:
        text = json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError) as exc:
        raise CanonicalFormError(f"no canonical JSON form: {exc}") from exc
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CanonicalFormError(
            f"text is not valid Unicode (lone surrogate at character {exc.start})"
        ) from exc
    return text


def envelope_bytes(
    *, created_at: str, kind: str, parent: str | None, payload: str | bytes, session: str
) -> bytes:
    """The hashed envelope, assembled around the payload's stored canonical text (or its bytes)."""
    head = (
        f'{{"created_at":{_string(created_at, ascii=True)},"kind":{_string(kind)},'
        f'"parent":{"null" if parent is None else _string(parent, ascii=True)},"payload":'
    ).encode()
    tail = f',"session":{_string(session)}}}'.encode()
    body = payload if isinstance(payload, bytes) else payload.encode("utf-8")
    return head + body + tail


def _string(text: str, *, ascii: bool = False) -> str:
    """A JSON string in canonical form. The envelope's strings are almost always ids, kinds and
    instants (letters, digits, `:` `.` `-` `_`), which need no escaping: quoted as they are
    (this runs on every append and every verified entry), else through `json.dumps`."""
    if _PLAIN.fullmatch(text):
        return f'"{text}"'
    return json.dumps(text, ensure_ascii=ascii)


_PLAIN = re.compile(r"[0-9A-Za-z:._+-]*")


def entry_id(envelope: bytes) -> str:
    """The content address of an envelope."""
    return ID_PREFIX + blake3.blake3(envelope).hexdigest()


def utc_now() -> str:
    """The current instant in the envelope's `created_at` format.

    Formatted by hand around the second, which is formatted once per second (every append
    reads the clock; `datetime.strftime` was 2 µs of a 40 µs append)."""
    global _second
    seconds, micros = divmod(time.time_ns() // 1000, 1_000_000)
    known = _second
    if known[0] != seconds:
        known = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)))
        _second = known  # one tuple, swapped whole: safe across threads
    return f"{known[1]}.{micros:06d}Z"


_second: tuple[int, str] = (-1, "")
