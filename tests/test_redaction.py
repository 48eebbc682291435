"""An API key a server echoes back never reaches the ledger, the logs or the error the user
reads (issue 13 item 4): the OpenAI-compatible double answers with a line that is not JSON and
quotes the key."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest

from tests.doubles.openai_server import SSE, OpenAIDouble, Raw
from vak_desktop import redaction
from vak_desktop.ledger import Ledger
from vak_desktop.providers import OpenAICompatibleProvider
from vak_desktop.redaction import redactable_prefix
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools
from vak_desktop.runtime.events import TurnFinished

KEY = "sk-echoed-0123456789abcdef"


def _every_byte(folder: Path) -> bytes:
    """The ledger, its WAL and anchor: all that reached the disk."""
    return b"".join(p.read_bytes() for p in folder.iterdir() if p.is_file())


@pytest.mark.allow_log_warnings
async def test_an_echoed_key_is_redacted_everywhere(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "ledger.sqlite3"
    ledger = Ledger.open(path)
    session = ledger.create_session().id
    echo = Raw(f"data: invalid key {KEY} for this deployment".encode())
    with OpenAIDouble(models=("m",), api_key=KEY) as server, caplog.at_level(logging.DEBUG):
        server.script(*[SSE([echo]) for _ in range(6)])
        async with httpx.AsyncClient() as client:
            provider = OpenAICompatibleProvider(client, server.url, api_key=KEY, key_name="lan")
            runner = TurnRunner(ledger, provider, default_tools())
            binding = ModelBinding(provider="openai-compatible", model="m", details=None)
            finished = [
                e async for e in runner.run(session, "hello", binding)
                if isinstance(e, TurnFinished)
            ]  # fmt: skip
            logging.getLogger("test").warning("the server said %s", KEY)
    ledger.close()
    assert finished and KEY not in finished[0].error
    assert KEY.encode() not in _every_byte(tmp_path)
    assert all(KEY not in r.getMessage() for r in caplog.records)
    assert any("[redacted: lan API key]" in r.getMessage() for r in caplog.records)


SPLIT = "sk-split-0123456789abcdef"


def test_a_stream_is_cut_only_where_no_secret_is_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """A piece of a stream ending the way a secret begins keeps that tail back; a cut never
    falls inside a whole secret; ordinary text is written whole (issue 13: journal redaction
    across checkpoints)."""
    monkeypatch.setitem(redaction._secrets, SPLIT, "[redacted: split API key]")
    assert redactable_prefix("plain text, nothing held") == len("plain text, nothing held")
    for k in range(1, len(SPLIT)):  # every place the secret can be cut
        assert redactable_prefix("key: " + SPLIT[:k]) == len("key: ")
    whole = "key: " + SPLIT + " and more"
    assert redactable_prefix(whole) == len(whole)
    # a tail that begins another secret, inside a whole one: the cut goes before the whole one
    monkeypatch.setitem(redaction._secrets, "cdef-other-key", "[redacted: other API key]")
    assert redactable_prefix("x " + SPLIT) == len("x ")
