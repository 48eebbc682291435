"""A step's stream journal: what streams reaches the disk while it streams, redacted."""

from __future__ import annotations

import pytest

from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop import redaction
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.turn import step
from vak_desktop.runtime.turn.step import StepOutcome, stream_step

SECRET = "sk-journal-0123456789abcdef"


@pytest.mark.parametrize("chunk", [1, 5, 9, 13])
async def test_a_secret_split_across_checkpoints_is_redacted_in_the_journal(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Each checkpoint was redacted on its own, so a key the server streamed across two of
    them reached the journal in two harmless-looking halves, and a recovering process read it
    back whole. Here every delta is a checkpoint, so every chunk boundary inside the key is
    a checkpoint boundary inside it."""
    monkeypatch.setitem(redaction._secrets, SECRET, "[redacted: journal API key]")
    monkeypatch.setattr(step, "CHECKPOINT_CHARS", 1)
    text = f"the key is {SECRET}, keep it safe"
    provider = ScriptedProvider(Scripted(text=text, chunk=chunk))
    session = ledger.create_session().id
    out = StepOutcome(ChatRequest(model="m", messages=(Message("user", "hi"),)))
    shown = [e async for e in stream_step(provider, ledger, session, out)]
    assert shown and out.text == text  # what is shown and kept in memory is untouched
    rows = [r[0] for r in ledger._db.execute("SELECT text FROM stream_journal ORDER BY seq")]
    assert len(rows) > 1 and SECRET not in "".join(rows)
    assert ledger.unfolded_stream(session) == (
        "the key is [redacted: journal API key], keep it safe",
        "",
    )


async def test_a_secret_across_the_16_kb_boundary_is_redacted_in_the_journal(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real size bound: a delta fills the checkpoint with the key's first seven
    characters, the next one brings the rest."""
    monkeypatch.setitem(redaction._secrets, SECRET, "[redacted: journal API key]")
    filler = "x" * (step.CHECKPOINT_CHARS - 7)
    rest = "y" * (2 * step.CHECKPOINT_CHARS - len(filler) - len(SECRET))  # fills the second
    text = filler + SECRET + rest
    provider = ScriptedProvider(Scripted(text=text, chunk=step.CHECKPOINT_CHARS))
    session = ledger.create_session().id
    out = StepOutcome(ChatRequest(model="m", messages=(Message("user", "hi"),)))
    assert [e async for e in stream_step(provider, ledger, session, out)]
    rows = [r[0] for r in ledger._db.execute("SELECT text FROM stream_journal ORDER BY seq")]
    assert len(rows) == 2 and rows[0] == filler
    assert ledger.unfolded_stream(session) == (redaction.redact(text), "")
