"""Shared fixtures. Tests never touch the user's data directory: every ledger is a temp file."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest

from tests.doubles.keyring import MemoryKeyring
from vak_desktop.ledger import Ledger


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point VAK_DATA_DIR at a temp dir so nothing can reach the real per-user data."""
    monkeypatch.setenv("VAK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("VAK_LOG_DIR", str(tmp_path / "log"))  # nor the real log directory


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    store = Ledger.open(tmp_path / "ledger.sqlite3")
    yield store
    store.close()


@pytest.fixture(autouse=True)
def _fail_on_unexpected_warning_logs(
    request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> Iterator[None]:
    """A test that logs a WARNING or worse fails, unless it marks it expected with
    `@pytest.mark.allow_log_warnings`."""
    yield
    bad = [r for r in caplog.get_records("call") if r.levelno >= logging.WARNING]
    if bad and request.node.get_closest_marker("allow_log_warnings") is None:
        pytest.fail("unexpected log records:\n" + "\n".join(r.getMessage() for r in bad))


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """An in-memory keyring backend in place of the OS service, for one test."""
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)
