"""Session search over TurnCards, API keys through keyring, and the presentation digest."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.context.sessions import SessionBuilder, TurnScript
from tests.doubles.keyring import MemoryKeyring
from vak_desktop.context.presentations.digest import canonical_payload, payload_digest
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.providers.secrets import api_key, delete_api_key, store_api_key
from vak_desktop.runtime.sessions.search import search_sessions


def test_search_finds_turns_across_sessions_and_archived_ones(tmp_path: Path) -> None:
    ledger = Ledger.open(tmp_path / "ledger.db")
    first = SessionBuilder(ledger)
    first.turn(TurnScript("how do I tune the sourdough starter hydration", answer="Feed it 1:1."))
    first.turn(TurnScript("what is a good bread flour", answer="High protein flour."))
    second = SessionBuilder(ledger)
    second.turn(TurnScript("explain rust lifetimes", answer="Borrows outlive nothing."))
    second.turn(TurnScript("sourdough again: starter smells of acetone", answer="Feed more."))
    ledger.archive_session(second.session)

    hits = search_sessions(ledger, "sourdough starter")
    assert [h.turn_id for h in hits] == [first.turn_ids[0], second.turn_ids[1]] or [
        h.turn_id for h in hits
    ] == [second.turn_ids[1], first.turn_ids[0]]
    assert {h.session for h in hits} == {first.session, second.session}
    assert [h.archived for h in hits if h.session == second.session] == [True]
    assert hits[0].score >= hits[1].score > 0
    assert search_sessions(ledger, "kubernetes") == []
    assert search_sessions(ledger, "  ") == []


def test_api_keys_round_trip_through_the_keyring(memory_keyring: MemoryKeyring) -> None:
    assert api_key("claude") is None
    store_api_key("claude", "  sk-ant-secret  ")
    assert api_key("claude") == "sk-ant-secret"
    assert memory_keyring.store == {("vak-desktop", "claude"): "sk-ant-secret"}
    assert delete_api_key("claude") is True
    assert delete_api_key("claude") is False
    with pytest.raises(ValueError, match="empty"):
        store_api_key("claude", " ")


def test_payload_digest_ignores_key_order_and_sees_values() -> None:
    a = {"label": "CPU", "value": 42, "unit": "%", "series": [1, 2]}
    b = {"series": [1, 2], "unit": "%", "value": 42, "label": "CPU"}
    assert canonical_payload(a) == canonical_payload(b)
    assert payload_digest(a) == payload_digest(b)
    assert payload_digest(a).startswith("b3:")
    assert payload_digest(a) != payload_digest({**a, "value": 43})
