"""The presets file and a chat's system prompt entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from vak_desktop.context.payloads import Activity
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.sessions.system_prompts import (
    SYSTEM_PROMPT_SET,
    PresetStore,
    set_system_prompt,
    system_prompt_of,
)


def test_a_prompt_is_written_once_and_read_back_from_the_branch(tmp_path: Path) -> None:
    ledger = Ledger.open(tmp_path / "l.sqlite3")
    try:
        session = ledger.create_session().id
        assert system_prompt_of(ledger.chain_to_root(session), "built-in") == "built-in"
        assert set_system_prompt(ledger, session, "  Be brief.  ", "built-in", preset="Brief")
        assert not set_system_prompt(ledger, session, "Be brief.", "built-in")
        chain = ledger.chain_to_root(session)
        kinds = [e.payload for e in chain if isinstance(e.payload, Activity)]
        assert kinds[0].type == SYSTEM_PROMPT_SET and kinds[0].detail["preset"] == "Brief"
        assert system_prompt_of(chain, "built-in") == "Be brief."
        with pytest.raises(ValueError, match="cannot be empty"):
            set_system_prompt(ledger, session, "   ", "built-in")
    finally:
        ledger.close()


def test_presets_round_trip_keep_their_order_and_a_damaged_file_is_named(
    tmp_path: Path,
) -> None:
    store = PresetStore.open(tmp_path)
    store.put("A", "first")
    store.put("B", "second")
    store.put("A", "first, edited")
    store.set_default("B")
    again = PresetStore.open(tmp_path)
    assert again.names() == ["A", "B"] and again.get("A").text == "first, edited"  # type: ignore[union-attr]
    assert again.default_text("built-in") == "second"
    again.remove("B")
    assert PresetStore.open(tmp_path).default_text("built-in") == "built-in"
    with pytest.raises(ValueError, match="no preset named"):
        again.set_default("Z")
    (tmp_path / "system_prompts.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"system_prompts\.json is not a presets file"):
        PresetStore.open(tmp_path)
