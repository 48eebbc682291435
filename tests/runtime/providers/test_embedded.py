"""The embedded engine refuses what it cannot serve with a sentence a user can act on.

Starting it for real needs a model file and minutes: that is the live tier (`make test-live`).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from vak_desktop.runtime.providers.embedded import (
    EmbeddedEngineError,
    EngineConfig,
    chat_template,
    check_model_file,
    start_engine,
)


def test_a_missing_file_a_folder_and_a_non_gguf_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(EmbeddedEngineError, match="no model file at"):
        check_model_file(tmp_path / "absent.gguf")
    with pytest.raises(EmbeddedEngineError, match="is a folder"):
        check_model_file(tmp_path)
    text = tmp_path / "notes.gguf"
    text.write_text("just some notes")
    with pytest.raises(EmbeddedEngineError, match="not a GGUF model file"):
        check_model_file(text)


def test_the_shipped_qwen_template_exists_and_writes_single_braces() -> None:
    template = chat_template("qwen2.5-tools").read_text(encoding="utf-8")
    assert """'{"name": <function-name>, "arguments": <args-json-object>}'""" in template
    with pytest.raises(EmbeddedEngineError, match="no chat template named"):
        chat_template("no-such-template")


@pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None, reason="the embedded extra is not installed"
)
async def test_a_broken_model_file_ends_the_start_with_the_engines_reason(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\x00" * 64)  # the magic, then nothing a loader can use
    with pytest.raises(EmbeddedEngineError, match=r"could not start|exited while starting"):
        await start_engine(EngineConfig(broken, n_ctx=512, startup_timeout_s=60))
