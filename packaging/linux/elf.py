"""The Linux bundle's ELF files, read with binutils' `readelf`:

    python packaging/linux/elf.py prune DIR    remove every bundled library that no NEEDED
                                               chain reaches, then run DIR/vak-desktop --self-test
    python packaging/linux/elf.py glibc DIR    print the newest GLIBC_x.y any file of DIR needs

Pruning: PyInstaller copies each library a collected file links, whole stacks of them, and
some are left with no user once their user was dropped (the GTK3 theme plugin's cairo, pango
and gdk-pixbuf, krb5 ...). The roots are every program, every Python extension module, every
Qt plugin and every library of xllamacpp (ggml loads its CPU backends with dlopen, by
directory); the removable ones are the plain libraries PyInstaller gathered in `_internal/`
and Qt's in `PySide6/Qt/lib/`. A removable library stays when a root, or a library that stays,
names it in its NEEDED list (docs/decisions/0084-bundle-pruning.md).

The glibc floor is read from the version needs (`.gnu.version_r`) of every file: the .deb
declares `libc6 (>= floor)` from it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

NEEDED = re.compile(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]")
GLIBC = re.compile(r"Name: GLIBC_(\d+)\.(\d+)(?:\.(\d+))?")


def is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(4) == b"\x7fELF"
    except OSError:
        return False


def elf_files(top: Path) -> list[Path]:
    return sorted(p for p in top.rglob("*") if p.is_file() and not p.is_symlink() and is_elf(p))


def needed(path: Path) -> list[str]:
    out = subprocess.run(["readelf", "-d", "-W", str(path)], capture_output=True, text=True)
    return NEEDED.findall(out.stdout)


def removable(path: Path, internal: Path) -> bool:
    """A plain shared library PyInstaller gathered: in `_internal/` itself or Qt's lib/."""
    name = path.name
    if not (name.startswith("lib") and ".so" in name) or name.startswith("libpython"):
        return False
    return path.parent in (internal, internal / "PySide6" / "Qt" / "lib")


def prune(top: Path) -> list[tuple[Path, int]]:
    """Remove the unreached libraries under `top`; returns each removed file and its size."""
    top = top.resolve()
    internal = top / "_internal"
    files = elf_files(top)
    by_name: dict[str, list[Path]] = {}
    for path in [*files, *(p for p in top.rglob("*") if p.is_symlink())]:
        by_name.setdefault(path.name, []).append(path)
    candidates = {p for p in files if removable(p, internal)}
    reached: set[Path] = set()
    todo = [p for p in files if p not in candidates]
    while todo:
        path = todo.pop()
        if path in reached:
            continue
        reached.add(path)
        for name in needed(path):
            todo += [target.resolve() for target in by_name.get(name, [])]
    removed = []
    for path in sorted(candidates - reached):
        removed.append((path, path.stat().st_size))
        path.unlink()
    for link in [p for p in top.rglob("*") if p.is_symlink() and not p.exists()]:
        link.unlink()  # a link to a removed library
    return removed


def glibc_floor(top: Path) -> str:
    newest = (2, 17, 0)
    for path in elf_files(top):
        out = subprocess.run(["readelf", "-V", "-W", str(path)], capture_output=True, text=True)
        needs = out.stdout.partition("Version needs section")[2]
        for major, minor, patch in GLIBC.findall(needs):
            newest = max(newest, (int(major), int(minor), int(patch or 0)))
    major, minor, patch = newest
    return f"{major}.{minor}" + (f".{patch}" if patch else "")


def self_test(top: Path) -> str:
    with tempfile.TemporaryDirectory(prefix="vak-prune-") as log:
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "VAK_LOG_DIR": log}
        done = subprocess.run(
            [str(top / "vak-desktop"), "--self-test"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    if done.returncode != 0:
        raise SystemExit(
            f"prune: the pruned bundle fails its self-test:\n{done.stdout}{done.stderr}"
        )
    return done.stdout.strip().splitlines()[-1]


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("prune", "glibc"):
        print(__doc__, file=sys.stderr)
        return 2
    top = Path(argv[1]).resolve()
    if argv[0] == "glibc":
        print(glibc_floor(top))
        return 0
    removed = prune(top)
    total = sum(size for _, size in removed)
    for path, size in removed:
        print(f"prune: removed {path.relative_to(top)} ({size / 1e6:.2f} MB)")
    print(f"prune: {len(removed)} libraries no NEEDED chain reaches, {total / 1e6:.1f} MB, removed")
    print(f"prune: self-test of the pruned bundle: {self_test(top)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
