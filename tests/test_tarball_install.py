"""The .tar.gz's install.sh (issue 23 item 6): it puts the menu entry (pointing at the unpacked
folder), the icons and the AppStream file under the user's data folder and links the programs
into ~/.local/bin; uninstall.sh removes exactly those and leaves the folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ID = "org.vakdesktop.Vak"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell script")


def _unpacked(top: Path) -> Path:
    """The tarball's layout (packaging/linux/build.sh): programs, share/, install.sh."""
    folder = top / "vak-desktop-1.2.3"
    share = folder / "share"
    (share / "applications").mkdir(parents=True)
    (share / "metainfo").mkdir()
    shutil.copy(ROOT / "resources" / "linux" / f"{ID}.desktop", share / "applications")
    shutil.copy(ROOT / "resources" / "linux" / f"{ID}.metainfo.xml", share / "metainfo")
    for size in (16, 256):
        icons = share / "icons" / "hicolor" / f"{size}x{size}" / "apps"
        icons.mkdir(parents=True)
        shutil.copy(ROOT / "resources" / "icons" / f"vak-desktop-{size}.png", icons / f"{ID}.png")
    (folder / "vak-desktop").write_text("#!/bin/sh\n")
    (folder / "vak-desktop").chmod(0o755)
    (folder / "vak").symlink_to("vak-desktop")
    shutil.copy(ROOT / "packaging" / "linux" / "install.sh", folder / "install.sh")
    (folder / "uninstall.sh").symlink_to("install.sh")
    return folder


def test_install_then_uninstall_the_menu_entry(tmp_path: Path) -> None:
    folder = _unpacked(tmp_path / "Apps dir")  # a space in the path, as users have
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    subprocess.run(["sh", str(folder / "install.sh")], env=env, check=True, capture_output=True)
    data = home / ".local" / "share"
    entry = (data / "applications" / f"{ID}.desktop").read_text()
    assert f'Exec="{folder}/vak-desktop"' in entry and f"TryExec={folder}/vak-desktop" in entry
    assert (data / "icons" / "hicolor" / "256x256" / "apps" / f"{ID}.png").is_file()
    assert (data / "metainfo" / f"{ID}.metainfo.xml").is_file()
    assert os.readlink(home / ".local" / "bin" / "vak") == str(folder / "vak")

    subprocess.run(["sh", str(folder / "uninstall.sh")], env=env, check=True, capture_output=True)
    left = sorted(str(p.relative_to(home)) for p in home.rglob("*") if not p.is_dir())
    assert left == []
    assert (folder / "vak-desktop").is_file()  # the folder itself stays
