"""A step's stream journal: what streams reaches the disk while it streams, redacted."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest

from tests.runtime.scripted import Scripted, ScriptedProvider
from vak_desktop import redaction
from vak_desktop.context.payloads import AssistantStep, Timings, Usage
from vak_desktop.context.request import ChatRequest, Message
from vak_desktop.ledger import Ledger
from vak_desktop.providers.base import Done, StreamEvent, TextDelta
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools
from vak_desktop.runtime.events import TurnFinished
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


class _Counted(str):
    """A streamed chunk that counts the characters copied whenever something appends it to
    the text accumulated so far (`so_far + chunk` calls this first)."""

    copied = 0

    def __radd__(self, other: str) -> str:
        _Counted.copied += len(other) + len(self)
        return str(other) + str(self)


class _ManyChunks(ScriptedProvider):
    """The scripted provider's stream, each chunk a `_Counted`."""

    def __init__(self, text: str, chunk: int) -> None:
        super().__init__()
        self.text, self.chunk = text, chunk

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        self.requests.append(request)
        for i in range(0, len(self.text), self.chunk):
            yield TextDelta(_Counted(self.text[i : i + self.chunk]))
        usage = Usage(input_tokens=request.chars() // 4, output_tokens=len(self.text) // 4)
        yield Done("stop", usage, Timings())


async def test_a_turn_streamed_in_many_chunks_copies_its_text_a_bounded_number_of_times(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13 item 12: streamed text was appended to one string, copying everything so far
    on every chunk (10 MB in 10,000 chunks: 155 s against 12 s in one). Counted, not timed:
    the characters copied by appending chunks to the text so far, over a whole turn."""
    text = "".join(f"word{i} " for i in range(4000))  # 34,890 characters in 6,978 chunks
    monkeypatch.setattr(_Counted, "copied", 0)
    runner = TurnRunner(ledger, _ManyChunks(text, chunk=5), default_tools())
    session = ledger.create_session().id
    binding = ModelBinding(provider="scripted", model="m", details=None)
    events = [e async for e in runner.run(session, "hi", binding)]
    assert isinstance(events[-1], TurnFinished) and events[-1].outcome == "completed"
    steps = [e.payload for e in ledger.entries(session) if isinstance(e.payload, AssistantStep)]
    assert [step.text for step in steps] == [text]
    assert _Counted.copied <= 2 * len(text)  # appending to one string copied 121,748,655
