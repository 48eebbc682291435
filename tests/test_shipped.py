"""The one loader for shipped files finds every file of the top-level resources/ folder, at any
depth, under the same relative path (the wheel and the bundle are checked by
tests/test_fresh_install.py and `vak-desktop --self-test`)."""

from __future__ import annotations

from pathlib import Path

from vak_desktop.shipped import shipped

RESOURCES = Path(__file__).resolve().parents[1] / "resources"


def test_every_file_under_resources_is_read_through_shipped() -> None:
    files = [p for p in RESOURCES.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert len(files) > 10, files  # the card library, a chat template, icons, the desktop entry
    for path in files:
        relative = path.relative_to(RESOURCES).as_posix()
        assert shipped(relative).read_bytes() == path.read_bytes(), relative


def test_a_folder_is_listed_and_a_missing_file_is_not_there() -> None:
    names = {node.name for node in shipped("chat_templates").iterdir()}
    assert "qwen2.5-tools.jinja" in names
    assert not shipped("no-such-file.json").is_file()
