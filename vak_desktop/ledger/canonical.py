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
    return canonical_form(value)[0]


def canonical_form(value: Any) -> tuple[str, bytes]:
    """The canonical JSON text of a JSON value and its UTF-8 bytes (encoded once: the append
    hashes the bytes that the encoding checked)."""
    try:
        text = json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError) as exc:
        raise CanonicalFormError(f"no canonical JSON form: {exc}") from exc
    try:
        return text, text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CanonicalFormError(
            f"text is not valid Unicode (lone surrogate at character {exc.start})"
        ) from exc


def envelope_bytes(
    *, created_at: str, kind: str, parent: str | None, payload: str | bytes, session: str
) -> bytes:
    """The hashed envelope, assembled around the payload's stored canonical text (or its bytes)."""
    body = payload if isinstance(payload, bytes) else payload.encode("utf-8")
    if _PLAIN.fullmatch(f"{created_at}{kind}{parent or ''}{session}"):
        # The common case, one check for all four: ids, kinds and instants (letters, digits,
        # `:` `.` `-` `_`) need no escaping and are quoted as they are. This runs on every
        # append and every verified entry.
        created, kind_, session_ = f'"{created_at}"', f'"{kind}"', f'"{session}"'
        parent_ = "null" if parent is None else f'"{parent}"'
    else:
        created, kind_, session_ = _string(created_at, ascii=True), _string(kind), _string(session)
        parent_ = "null" if parent is None else _string(parent, ascii=True)
    head = f'{{"created_at":{created},"kind":{kind_},"parent":{parent_},"payload":'
    return head.encode() + body + f',"session":{session_}}}'.encode()


def _string(text: str, *, ascii: bool = False) -> str:
    """A JSON string in canonical form."""
    return json.dumps(text, ensure_ascii=ascii)


_PLAIN = re.compile(r"[0-9A-Za-z:._+-]*")


def entry_id(envelope: bytes) -> str:
    """The content address of an envelope."""
    return ID_PREFIX + blake3.blake3(envelope).digest().hex()  # (`hexdigest` is slower)


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
