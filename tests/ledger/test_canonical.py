"""The canonical envelope is a contract: these bytes and ids must never change."""

from __future__ import annotations

import math

import blake3
import pytest

from vak_desktop.ledger.canonical import (
    CanonicalFormError,
    canonical_text,
    entry_id,
    envelope_bytes,
)


def test_canonical_text_sorts_keys_drops_whitespace_and_keeps_unicode() -> None:
    value = {"b": [1, 2.5, None, True], "a": {"é": "ü ☃", "A": ""}}
    assert canonical_text(value) == '{"a":{"A":"","é":"ü ☃"},"b":[1,2.5,null,true]}'


def test_envelope_bytes_are_pinned() -> None:
    envelope = envelope_bytes(
        created_at="2026-11-30T09:50:35.123456Z",
        kind="directive",
        parent=None,
        payload=canonical_text({"text": "hi ☃", "images": []}),
        session="0123456789abcdef",
    )
    expected = (
        '{"created_at":"2026-11-30T09:50:35.123456Z","kind":"directive","parent":null,'
        '"payload":{"images":[],"text":"hi ☃"},"session":"0123456789abcdef"}'
    ).encode()
    assert envelope == expected


def test_entry_id_is_b3_over_the_envelope() -> None:
    envelope = b'{"created_at":"x","kind":"k","parent":null,"payload":{},"session":"s"}'
    assert entry_id(envelope) == "b3:" + blake3.blake3(envelope).hexdigest()
    assert entry_id(envelope) == (
        "b3:96bfebba352af50449abd45b10b8fda52d015f9a7db3f70fb2847500752fd1e5"
    )


def test_envelope_embeds_payload_text_exactly_as_stored() -> None:
    payload = canonical_text({"text": "x"})
    a = envelope_bytes(created_at="t", kind="k", parent="b3:00", payload=payload, session="s")
    b = envelope_bytes(
        created_at="t", kind="k", parent="b3:00", payload=payload.encode(), session="s"
    )
    assert a == b
    assert a == canonical_text(
        {
            "created_at": "t",
            "kind": "k",
            "parent": "b3:00",
            "payload": {"text": "x"},
            "session": "s",
        }
    ).encode("utf-8")


@pytest.mark.parametrize("bad", [math.nan, math.inf, {"s": "\ud800"}, {1, 2}])
def test_values_without_a_canonical_form_are_refused(bad: object) -> None:
    with pytest.raises(CanonicalFormError):
        canonical_text(bad)


@pytest.mark.parametrize(
    "text", ["plain-id_01:2.5+x", 'quote " and \\ slash', "ünïcode ☃", "tab\there", "", "a/b"]
)
def test_envelope_strings_are_json_dumps_whatever_they_hold(text: str) -> None:
    """The envelope quotes plain strings itself (a fast path): it must give exactly the bytes of
    `json.dumps`, created_at and parent ASCII-escaped, kind and session not."""
    import json

    envelope = envelope_bytes(created_at=text, kind=text, parent=text, payload="{}", session=text)
    expected = (
        f'{{"created_at":{json.dumps(text)},"kind":{json.dumps(text, ensure_ascii=False)},'
        f'"parent":{json.dumps(text)},"payload":{{}},'
        f'"session":{json.dumps(text, ensure_ascii=False)}}}'
    ).encode()
    assert envelope == expected
