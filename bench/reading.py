"""Reading speed: the lexicon reading of a directive beside the old in-code English reading.

    python bench/reading.py [--repeats 30]

Same run, same machine: the directives of the reading table (`tests/cli/reading_table.py`, 16
or more per shipped language) are read by `read_directive(text, lexicons())` and, for the
English rows, by the baseline (`bench/baseline_reading.py`, the in-code reading before lexicons). Also
timed: loading the lexicons once (read + validate against the schema + parse), importing the
lexicon modules in a fresh interpreter, and — for the record — importing the CJK segmenters
the decision weighed (jieba, tinysegmenter) when a Python that has them is given
(`--segmenter-python PATH`); the app ships none (docs/decisions/0065-reading-tokeniser.md).

`--large-mb N` (#22 item 6): an N MB directive read once into its `Reading`, then every
consumer a turn runs over that one reading (the planner's refer-back and recall cues, drift's
about-the-conversation and content words, live data, asked-for actions, explicit tool and card
instructions), beside the same run's baseline: `json.dumps` of the text and one normalise +
split (the least any reading of it pays).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import baseline_reading  # noqa: E402
from tests.cli.reading_table import TABLE  # noqa: E402
from vak_desktop.context.planning import actions, drift, instructions, planner  # noqa: E402
from vak_desktop.context.planning.lexicon import Lexicons, normalise  # noqa: E402
from vak_desktop.context.planning.reading import read_directive  # noqa: E402
from vak_desktop.runtime import lexicons as loader  # noqa: E402


def per_directive_us(read: Callable[[str], object], texts: Sequence[str], repeats: int) -> float:
    """Median over `repeats` rounds of the mean time to read one directive, in µs."""
    rounds = []
    for _ in range(repeats):
        start = time.perf_counter()
        for text in texts:
            read(text)
        rounds.append((time.perf_counter() - start) / len(texts))
    return statistics.median(rounds) * 1e6


def import_ms(python: str, statement: str, repeats: int = 5) -> float:
    """Median wall time of `python -c statement` minus a bare interpreter start, in ms."""

    def run(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([python, "-c", code], check=True, cwd=ROOT, timeout=120)
        return time.perf_counter() - start

    bare = statistics.median(run("pass") for _ in range(repeats))
    return (statistics.median(run(statement) for _ in range(repeats)) - bare) * 1e3


_FRESH_LOAD = (
    "import time; t = time.perf_counter(); import vak_desktop.runtime; a = time.perf_counter(); "
    "from vak_desktop.runtime.lexicons import lexicons; lexicons(); b = time.perf_counter(); "
    "print((a - t) * 1e3, (b - a) * 1e3)"
)


LARGE_TEXT = (
    "Please look at the current price of copper now and search my files for the parser log "
    "from 2024-03-11, then tell me what failed and why Anna's build broke again. "
)


def large_directive(mb: float, lex: Lexicons) -> None:
    """A directive of `mb` MB: its one reading and every consumer over it, then the baseline."""
    text = (LARGE_TEXT * (int(mb * 1_000_000) // len(LARGE_TEXT) + 1))[: int(mb * 1_000_000)]
    timed: list[tuple[str, float]] = []

    def clock(name: str, run: Callable[[], object]) -> None:
        start = time.perf_counter()
        run()
        timed.append((name, (time.perf_counter() - start) * 1e3))

    reading = read_directive(text, lex)
    clock("read once", lambda: read_directive(text, lex))
    reading = read_directive(text, lex)  # a fresh reading: no consumer's result kept yet
    clock("refers back", lambda: planner.refers_back(reading, lex))
    clock("recalls earlier", lambda: planner.recalls_earlier(reading, lex))
    clock("about the conversation", lambda: drift.about_conversation(reading, lex))
    clock("content words", lambda: drift.directive_words(reading, lex))
    clock("live data", lambda: drift.seeks_live_data(reading, lex))
    clock("asked-for action", lambda: actions.requested_tools(reading, ["grep", "read"], lex))
    clock(
        "tool instruction",
        lambda: instructions.unmet_tool_instruction(reading, ["recall"], [], lex),
    )
    clock("card instruction", lambda: instructions.required_card(reading, ["table"], lex))
    clock("baseline: json.dumps", lambda: json.dumps(text))
    clock("baseline: normalise + split", lambda: normalise(text).split())
    total = sum(ms for name, ms in timed if not name.startswith("baseline"))
    print(f"a {mb:g} MB directive ({len(text):,} chars), read once and every consumer:")
    for name, ms in timed:
        print(f"  {name:30} {ms:9.1f} ms")
    print(f"  {'total (one turn)':30} {total:9.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--segmenter-python", help="a Python with jieba and tinysegmenter")
    parser.add_argument("--large-mb", type=float, help="time one directive of this many MB only")
    args = parser.parse_args()
    if args.large_mb:
        large_directive(args.large_mb, loader.lexicons())
        return

    start = time.perf_counter()
    lex = loader.lexicons.__wrapped__()  # type: ignore[attr-defined]  # uncached: the real load
    load_ms = (time.perf_counter() - start) * 1e3
    english = [row[0] for row in TABLE["en"]]
    every = [row[0] for rows in TABLE.values() for row in rows]

    old_en = per_directive_us(baseline_reading.read_directive, english, args.repeats)
    new_en = per_directive_us(lambda t: read_directive(t, lex), english, args.repeats)
    new_all = per_directive_us(lambda t: read_directive(t, lex), every, args.repeats)
    print(f"{len(lex.languages)} lexicons, {len(every)} directives ({len(english)} English)")
    print(f"baseline (in-code English)  {old_en:8.1f} µs per English directive")
    print(
        f"lexicons                    {new_en:8.1f} µs per English directive  ({new_en / old_en:.1f}x)"
    )
    print(f"lexicons                    {new_all:8.1f} µs per directive, all languages")
    by_language = {
        code: per_directive_us(lambda t: read_directive(t, lex), [r[0] for r in rows], 10)
        for code, rows in TABLE.items()
    }
    print("per language (µs): " + ", ".join(f"{c} {v:.0f}" for c, v in by_language.items()))
    print(f"load once (read, validate, parse): {load_ms:.1f} ms")
    python = sys.executable
    base = import_ms(python, "import vak_desktop.context.planning.reading")
    print(f"import context.planning.reading + lexicon: {base:.0f} ms over a bare interpreter")
    # In a fresh interpreter: the runtime package (which imports the loader with the turn
    # loop) and then the first `lexicons()` call, timed inside the process.
    split = subprocess.run(
        [python, "-c", _FRESH_LOAD], check=True, cwd=ROOT, timeout=120, capture_output=True
    ).stdout.split()
    print(
        f"fresh process: import the runtime package {float(split[0]):.0f} ms (baseline), then "
        f"the first lexicons() {float(split[1]):.1f} ms"
    )
    if args.segmenter_python:
        for name, code in (
            (
                "jieba (import + first cut, which loads its dictionary)",
                "import jieba; jieba.setLogLevel(60); jieba.lcut('现在铜价是多少')",
            ),
            (
                "tinysegmenter (import + first tokenize)",
                "import tinysegmenter; tinysegmenter.TinySegmenter().tokenize('今の銅の価格は')",
            ),
        ):
            print(f"segmenter {name}: {import_ms(args.segmenter_python, code, 3):.0f} ms")


if __name__ == "__main__":
    main()
