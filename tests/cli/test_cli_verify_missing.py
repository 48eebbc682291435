"""`vak ledger verify` only reads (issue 23 item 6): pointed at a data directory that does not
exist, it says so in one line and creates nothing (it used to create the folder and an empty
ledger, then report "ok: 0 entries")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_cli import vak


def test_verify_of_a_missing_data_directory_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no" / "such" / "data"
    code, out, err = vak(capsys, "ledger", "verify", "--data-dir", str(missing))
    assert code == 2 and out == ""
    assert f"no ledger at {missing / 'ledger.sqlite3'}: nothing to verify" in err
    assert not (tmp_path / "no").exists()
    missing.mkdir(parents=True)  # an empty folder: still nothing made in it
    code, _, err = vak(capsys, "ledger", "verify", "--json", "--data-dir", str(missing))
    assert code == 2 and "nothing to verify" in err
    assert list(missing.iterdir()) == []
