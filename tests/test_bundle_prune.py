"""packaging/linux/elf.py on real ELF files (issue 23 item 4): a library that no NEEDED chain
from a program, an extension module or a plugin reaches is removed, one that is reached stays
(through a link too), and the glibc floor is the newest GLIBC_x.y version any file needs."""

from __future__ import annotations

import importlib.util
import shutil
import sys
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("elf", ROOT / "packaging" / "linux" / "elf.py")
assert spec is not None and spec.loader is not None
elf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(elf)

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("readelf") is None,
    reason="ELF files and binutils' readelf: Linux only",
)


def _library(name: str) -> Path:
    """The system's copy of the library `name`."""
    import ctypes.util

    found = ctypes.util.find_library(name.removeprefix("lib").split(".so")[0])
    for folder in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64"):
        path = Path(folder) / (found or name)
        if path.is_file():
            return path.resolve()
    pytest.skip(f"no {name} on this system")


def test_unreached_libraries_go_and_reached_ones_stay(tmp_path: Path) -> None:
    module = Path(getattr(zlib, "__file__", ""))
    if not module.is_file() or "libz.so.1" not in elf.needed(module):
        pytest.skip("this Python's zlib module does not link libz.so.1")
    libz = _library("libz.so.1")
    libpng = _library("libpng16.so.16")  # needs libz; nothing here needs it
    top = tmp_path / "vak-desktop"
    internal = top / "_internal"
    (internal / "lib-dynload").mkdir(parents=True)
    shutil.copy(module, internal / "lib-dynload" / module.name)  # a root: an extension module
    shutil.copy(libz, internal / "libz.so.1.2")
    (internal / "libz.so.1").symlink_to("libz.so.1.2")  # reached through the link's name
    shutil.copy(libpng, internal / "libpng16.so.16")
    (internal / "libpng16.so").symlink_to("libpng16.so.16")
    removed = {path.name for path, _ in elf.prune(top)}
    assert removed == {"libpng16.so.16"}
    assert sorted(p.name for p in internal.iterdir()) == ["lib-dynload", "libz.so.1", "libz.so.1.2"]
    floor = elf.glibc_floor(top)
    assert floor.startswith("2.") and int(floor.split(".")[1]) >= 2
