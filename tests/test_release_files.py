"""What a release carries (issue 23 item 3): the Apache-2.0 LICENSE the metadata names, third-
party notices generated from the installed distributions (Qt's LGPL text, llama.cpp's MIT
notice), and one version, pyproject's, that no packaging file repeats."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location(
    "third_party_notices", ROOT / "tools" / "third_party_notices.py"
)
assert spec is not None and spec.loader is not None
notices_tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(notices_tool)


def test_the_licence_file_is_the_one_the_metadata_names() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0"
    assert "LICENSE" in project["license-files"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text


def test_the_notices_name_every_shipped_distribution_with_its_licence_text() -> None:
    text = notices_tool.notices({"embedded"})
    shipped = {d.metadata["Name"] for d in notices_tool.shipped({"embedded"})}
    assert {"PySide6", "httpx", "mcp", "platformdirs"} <= shipped
    assert not {"pytest", "hypothesis", "ruff"} & shipped  # the test extra is not shipped
    assert re.search(r"^PySide6 [\d.]+: LGPL-3.0", text, re.M)
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in text  # PySide6 ships no text: ours is added
    if "xllamacpp" in shipped:
        assert "Copyright (c) 2023-2026 The ggml authors" in text  # llama.cpp inside it
    assert "Python Software Foundation" in text or "PSF" in text
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in text  # resources/kinds/


@pytest.mark.parametrize(
    "path",
    [
        "packaging/macos/Info.plist",
        "packaging/windows/vak-desktop.iss",
        "packaging/linux/build.sh",
        "packaging/macos/build.sh",
    ],
)
def test_no_packaging_file_repeats_the_version(path: str) -> None:
    version = metadata.version("vak-desktop")
    text = (ROOT / path).read_text(encoding="utf-8")
    assert re.search(rf"(?<![\d.]){re.escape(version)}(?![\d.])", text) is None
