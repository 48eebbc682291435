"""Pointer and action reading speed: the lexicons' `conversation`, `stop_words` and `actions`
beside the English regexes and word set they replaced.

    python bench/pointers.py [--repeats 30]

Same run, same machine: the refer-back and action rows of the reading table
(`tests/cli/reading_table.py`) are read by the engine (`recalls_earlier`, `refers_back`,
`about_conversation`, `requested_tool`, `content_words` with `lexicons()`) and, for the English
rows, by the baseline (`bench/baseline_pointers.py`, the code before). A plan reads its directive's
pointers once and the content words of up to nine directives (`drift.GOAL_READINGS` + 1), so the
last line prices what a plan pays for them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import baseline_pointers as before  # noqa: E402
from bench.reading import per_directive_us  # noqa: E402
from tests.cli.reading_table import ACTIONS, BACK  # noqa: E402
from vak_desktop.context.planning.actions import requested_tool  # noqa: E402
from vak_desktop.context.planning.candidates import recalls_earlier, refers_back  # noqa: E402
from vak_desktop.context.planning.drift import (  # noqa: E402
    GOAL_READINGS,
    about_conversation,
    content_words,
)
from vak_desktop.runtime.lexicons import lexicons  # noqa: E402

OFFERED = ("read", "glob", "grep", "recall")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    lex = lexicons()
    english = [r[0] for r in BACK["en"]] + [r[0] for r in ACTIONS["en"]]
    every = [r[0] for rows in (*BACK.values(), *ACTIONS.values()) for r in rows]

    def pointers_new(text: str) -> object:
        return recalls_earlier(text, lex), refers_back(text, lex), about_conversation(text, lex)

    def pointers_old(text: str) -> object:
        return (
            before.recalls_earlier(text),
            before.refers_back(text),
            before.about_conversation(text),
        )

    rows = [
        ("pointers (recall, anaphora, about)", pointers_old, pointers_new),
        ("asked action", lambda t: before.requested_tool(t, OFFERED), lambda t: requested_tool(t, OFFERED, lex)),
        ("content words", before.content_words, lambda t: content_words(t, lex)),
    ]  # fmt: skip
    print(f"{len(english)} English texts, {len(every)} in {len(BACK)} languages")
    per_plan_old = per_plan_new = 0.0
    for name, old, new in rows:
        old_us = per_directive_us(old, english, args.repeats)
        new_us = per_directive_us(new, english, args.repeats)
        all_us = per_directive_us(new, every, args.repeats)
        print(
            f"{name:<36} baseline {old_us:6.1f} µs   lexicons {new_us:6.1f} µs "
            f"({new_us / old_us:.1f}x) English, {all_us:6.1f} µs all languages"
        )
        scale = GOAL_READINGS + 1 if name == "content words" else 1
        per_plan_old += old_us * scale if name != "asked action" else 0
        per_plan_new += all_us * scale if name != "asked action" else 0
    print(f"per plan: baseline {per_plan_old:.0f} µs, lexicons {per_plan_new:.0f} µs")


if __name__ == "__main__":
    main()
