"""The English lexicon reads refer-back, anaphora, the conversation itself and asked actions
exactly as the regexes it replaced (`bench/baseline_pointers.py`, the code before): a seeded
differential over strings built from those regexes' own words, cased and punctuated. Texts the
function words read as English alone are compared; a text they read as English and Dutch too
(a tie: "is", "in", "we" are Dutch words as well) is read in both, and Dutch, whose verb may
come last, reads "… notes.md … open" as a request to read the file."""

from __future__ import annotations

import random

from bench import baseline_pointers as before
from vak_desktop.context.planning.actions import requested_tool
from vak_desktop.context.planning.candidates import recalls_earlier, refers_back
from vak_desktop.context.planning.drift import about_conversation
from vak_desktop.context.planning.lexicon import Text
from vak_desktop.runtime.lexicons import lexicons

WORDS = (
    "the a is what you i we did said told me gave wrote found suggested that it's again one "
    "first second other last time before earlier previously remember chat chats conversation "
    "so far discussed talked decided previous above same budget copper price of please search "
    "grep look through scan find for up in read open list which my our these those this big "
    "files file folders notes documents documentation docs code codebase project repo "
    "repository workspace logs log notes.md a.txt and searching x-files the_files"
)
VOCABULARY = WORDS.split()
OFFERED = ("read", "glob", "grep")


def _texts(count: int) -> list[str]:
    rng = random.Random(16)
    texts = []
    for _ in range(count):
        text = " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(1, 8)))
        texts.append(rng.choice([text, text.capitalize() + "?", text.upper(), text + "."]))
    return texts


def test_english_pointers_and_actions_read_as_the_replaced_regexes() -> None:
    lex, wrong = lexicons(), []
    english = [t for t in _texts(6000) if lex.identify(Text.of(t)) == (lex.language("en"),)]
    assert len(english) > 2000
    for text in english:
        pairs = [
            ("recall", before.recalls_earlier(text), recalls_earlier(text, lex)),
            ("anaphora", before.refers_back(text), refers_back(text, lex)),
            ("about", before.about_conversation(text), about_conversation(text, lex)),
            ("action", before.requested_tool(text, OFFERED), requested_tool(text, OFFERED, lex)),
        ]
        wrong += [f"{text!r} {name}: {old} → {new}" for name, old, new in pairs if old != new]
    assert not wrong, "\n".join(wrong[:20])
