"""Write THIRD-PARTY-NOTICES.txt: every distribution the app ships, with its licence and the
text of its licence files, read from the installed distributions' metadata.

    python tools/third_party_notices.py [OUT] [--extra embedded]

What is shipped: `vak-desktop`'s requirements, followed transitively (with the `embedded` extra
by default, as the bundle has it: xllamacpp and the llama.cpp engine inside it), plus Python
itself (a bundle carries the interpreter). A distribution that ships no licence file but names
a licence (PySide6 and shiboken6 name LGPL-3.0, and ship no text) gets the text from
packaging/licenses/. llama.cpp's MIT notice is added under xllamacpp. The output is
deterministic (sorted, no dates), so the repo's copy changes only when a dependency does; the
wheel, the bundle, the .deb and the installers carry this file beside LICENSE.
"""

from __future__ import annotations

import argparse
import re
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXTS = ROOT / "packaging" / "licenses"
# the licence texts of distributions that name a licence and ship no file for it
NAMED_TEXTS = {"LGPL-3.0": ["LGPL-3.0.txt", "GPL-3.0.txt"]}
EXTRA_TEXTS = {"xllamacpp": ["llama.cpp-MIT.txt"]}
# data the app ships beside its code, and its licence text
DATA = [
    ("WordNet 3.0 nouns (resources/kinds/, passage recall's kinds of things)", "WordNet-3.0.txt")
]
LICENCE_FILE = re.compile(r"(^|/)(LICEN[CS]E|COPYING|NOTICE|AUTHORS)[^/]*$", re.IGNORECASE)


def _name(requirement: str) -> tuple[str, str]:
    """A requirement's distribution name and its marker ('' when none)."""
    spec, _, marker = requirement.partition(";")
    name = re.split(r"[\s\[<>=!~(]", spec.strip(), maxsplit=1)[0]
    return name, marker.strip()


def _applies(marker: str, extras: set[str]) -> bool:
    """Whether a requirement's marker holds here (extras as given); a marker we cannot read is
    taken as true, so the notices list too much rather than too little."""
    if not marker:
        return True
    try:
        from packaging.markers import Marker
    except ImportError:  # pip's vendored copy is not importable: keep everything but extras
        return "extra" not in marker
    parsed = Marker(marker)
    return any(parsed.evaluate({"extra": extra}) for extra in extras or {""})


def shipped(extras: set[str]) -> list[metadata.Distribution]:
    """vak-desktop's runtime requirements (with `extras`), followed transitively."""
    found: dict[str, metadata.Distribution] = {}
    todo = [("vak-desktop", extras)]
    while todo:
        name, wanted = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # a requirement for another platform
        found[key] = dist
        for requirement in dist.requires or []:
            child, marker = _name(requirement)
            if _applies(marker, wanted):
                todo.append((child, set()))
    found.pop("vak-desktop", None)
    return sorted(found.values(), key=lambda d: d.metadata["Name"].lower())


def licence_of(dist: metadata.Distribution) -> str:
    meta = dist.metadata
    named = meta.get("License-Expression") or ""
    if not named and (meta.get("License") or "") and len(meta["License"]) < 120:
        named = meta["License"]
    if not named:
        classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or []]
        named = "; ".join(c for c in classifiers if "License" in c or "GPL" in c) or ""
    return named.strip() or "see the licence text below"


def licence_texts(dist: metadata.Distribution) -> list[tuple[str, str]]:
    texts = []
    for file in sorted(dist.files or [], key=str):
        if LICENCE_FILE.search(str(file)):
            try:
                texts.append((Path(str(file)).name, file.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError):
                continue
    name = dist.metadata["Name"].lower()
    named = licence_of(dist)
    extra = list(EXTRA_TEXTS.get(name, []))
    if not texts:
        extra += [t for key, files in NAMED_TEXTS.items() if key in named for t in files]
    texts += [(t, (TEXTS / t).read_text(encoding="utf-8")) for t in extra]
    return texts


def python_licence() -> str:
    for candidate in (
        Path(sys.base_prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}",
        Path(sys.base_prefix),
    ):
        path = candidate / "LICENSE.txt"
        if path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")
    return "Python Software Foundation License Version 2 (https://docs.python.org/3/license.html)"


def notices(extras: set[str]) -> str:
    dists = shipped(extras)
    out = [
        "Third-party software shipped with Vak Desktop",
        "=" * 46,
        "",
        "Vak Desktop itself is licensed under the Apache License 2.0 (LICENSE). It ships the",
        "software below, each under its own licence. Qt and PySide6 are used under the LGPL-3.0:",
        "they are loaded as separate shared libraries, which you may replace with your own build",
        "of the same version (their source: https://download.qt.io and",
        "https://code.qt.io/cgit/pyside/pyside-setup.git).",
        "",
        f"Python {sys.version_info[0]}.{sys.version_info[1]}: PSF-2.0",
    ]
    out += [f"{name}: see the licence text below" for name, _ in DATA]
    out += [f"{d.metadata['Name']} {d.version}: {licence_of(d)}" for d in dists]
    out += [
        "",
        "-" * 78,
        f"Python {sys.version_info[0]}.{sys.version_info[1]}",
        "",
        python_licence(),
    ]
    seen: dict[str, str] = {}  # a licence text -> where it was first printed
    for dist in dists:
        out += ["", "-" * 78, f"{dist.metadata['Name']} {dist.version} ({licence_of(dist)})"]
        home = dist.metadata.get("Home-page") or next(
            (u.split(", ", 1)[-1] for u in dist.metadata.get_all("Project-URL") or []), ""
        )
        if home:
            out.append(home)
        for file, text in licence_texts(dist):
            first = seen.setdefault(text.strip(), f"{dist.metadata['Name']} [{file}]")
            if first.startswith(f"{dist.metadata['Name']} ["):
                out += ["", f"[{file}]", "", text.strip()]
            else:
                out += ["", f"[{file}]: the same text as {first} above"]
    for name, file in DATA:
        out += ["", "-" * 78, name, "", (TEXTS / file).read_text(encoding="utf-8").strip()]
    return "\n".join(line.rstrip() for line in "\n".join(out).splitlines()) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "THIRD-PARTY-NOTICES.txt")
    parser.add_argument("--extra", action="append", default=None, help="default: embedded")
    args = parser.parse_args(argv)
    text = notices(set(args.extra if args.extra is not None else ["embedded"]))
    args.out.write_text(text, encoding="utf-8", newline="\n")
    print(f"{args.out}: {text.count(chr(10)):,} lines", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
