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
from datetime import UTC, datetime
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
    dumps = json.dumps
    head = (
        f'{{"created_at":{dumps(created_at)},"kind":{dumps(kind, ensure_ascii=False)},'
        f'"parent":{dumps(parent)},"payload":'
    ).encode()
    tail = f',"session":{dumps(session, ensure_ascii=False)}}}'.encode()
    body = payload if isinstance(payload, bytes) else payload.encode("utf-8")
    return head + body + tail


def entry_id(envelope: bytes) -> str:
    """The content address of an envelope."""
    return ID_PREFIX + blake3.blake3(envelope).hexdigest()


def utc_now() -> str:
    """The current instant in the envelope's `created_at` format."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
