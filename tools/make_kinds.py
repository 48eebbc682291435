"""Writes `resources/kinds/wordnet-nouns.txt.gz`, the noun taxonomy passage recall reads "which
kind of thing is this word?" from: `python tools/make_kinds.py [/usr/share/wordnet]`.

The source is Princeton WordNet 3.0's noun database (Debian's `wordnet-base` package puts it in
/usr/share/wordnet). Kept: every noun synset's depth and hypernyms (instance hypernyms too:
"Paris" is an instance of "national capital"), and every lemma of one or two words, letters
only, with its most frequent senses (index.noun orders them by tagged frequency), plus noun.exc's
irregular plurals and verb.exc's irregular verb forms ("bought" is a form of "buy": passage recall
matches "what did Maria buy?" to "I bought…"). Dropped: glosses, every other pointer, the
verb/adjective databases. The
output is committed and deterministic (gzip without a time stamp); run this again only to move
to another WordNet release.
"""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

SENSES = 3  # the most frequent senses a lemma keeps
OUT = Path(__file__).resolve().parents[1] / "resources" / "kinds" / "wordnet-nouns.txt.gz"
_LEMMA = re.compile(r"^[a-z]{2,}(?:_[a-z]{2,})?$")
_WORD = re.compile(r"^[a-z]{2,}$")
LICENCE = Path(__file__).resolve().parents[1] / "packaging" / "licenses" / "WordNet-3.0.txt"
FORMAT = """\
Derived from WordNet 3.0 (noun synsets' hypernyms and lemmas' senses) by tools/make_kinds.py.
Format: "S depth parent…" per synset (its line number after this header is its id), then
"L lemma sense…" (most frequent first), "X plural lemma" (irregular plurals) and "V form verb"
(irregular verb forms).
WordNet's licence, which travels with every copy:
"""


def synsets(folder: Path) -> tuple[dict[str, int], list[tuple[str, list[str]]]]:
    """Every noun synset's offset → id (file order), and (offset, hypernym offsets) in order."""
    ids: dict[str, int] = {}
    rows: list[tuple[str, list[str]]] = []
    for line in (folder / "data.noun").read_text(encoding="latin-1").splitlines():
        if line.startswith("  "):  # the licence at the file's head
            continue
        fields = line.split("|")[0].split()
        offset, count = fields[0], int(fields[3], 16)
        at = 4 + 2 * count
        pointers = int(fields[at])
        parents = []
        for k in range(pointers):
            symbol, target, pos = fields[at + 1 + 4 * k : at + 4 + 4 * k]
            if symbol in ("@", "@i") and pos == "n":
                parents.append(target)
        ids[offset] = len(rows)
        rows.append((offset, parents))
    return ids, rows


def depths(ids: dict[str, int], rows: list[tuple[str, list[str]]]) -> list[int]:
    """Each synset's shortest distance to a root ("entity" is 0)."""
    found: list[int | None] = [None] * len(rows)

    def depth(at: int) -> int:
        known = found[at]
        if known is not None:
            return known
        parents = rows[at][1]
        value = 1 + min(depth(ids[p]) for p in parents) if parents else 0
        found[at] = value
        return value

    sys.setrecursionlimit(10_000)
    return [depth(at) for at in range(len(rows))]


def main(argv: list[str]) -> int:
    folder = Path(argv[0] if argv else "/usr/share/wordnet")
    ids, rows = synsets(folder)
    depth = depths(ids, rows)
    header = FORMAT + LICENCE.read_text(encoding="utf-8")
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    lines += [
        " ".join(["S", str(depth[at]), *(str(ids[p]) for p in parents)])
        for at, (_, parents) in enumerate(rows)
    ]
    kept: set[str] = set()
    for line in (folder / "index.noun").read_text(encoding="latin-1").splitlines():
        if line.startswith("  "):
            continue
        fields = line.split()
        lemma, pointers = fields[0], int(fields[3])
        if not _LEMMA.match(lemma):
            continue
        offsets = fields[4 + pointers + 2 :][:SENSES]
        lines.append(" ".join(["L", lemma, *(str(ids[o]) for o in offsets)]))
        kept.add(lemma)
    for line in (folder / "noun.exc").read_text(encoding="latin-1").splitlines():
        plural, *bases = line.split()
        if _LEMMA.match(plural) and bases and bases[0] in kept:
            lines.append(f"X {plural} {bases[0]}")
    for line in (folder / "verb.exc").read_text(encoding="latin-1").splitlines():
        form, *bases = line.split()
        if bases and _WORD.match(form) and _WORD.match(bases[0]) and form != bases[0]:
            lines.append(f"V {form} {bases[0]}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    data = ("\n".join(lines) + "\n").encode("utf-8")
    OUT.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    print(f"{OUT}: {len(rows):,} synsets, {len(data):,} bytes ({OUT.stat().st_size:,} gzipped)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
