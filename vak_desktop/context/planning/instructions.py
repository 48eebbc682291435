"""Explicit instructions in a directive, in any shipped language: the failures feedback folds
into the horizon (spec §1 "Horizon tightening": required tool not called, required card not
emitted).

An instruction is explicit, never inferred: a sentence that holds an imperative of the lexicon
(call / use / run …, show / emit / display …) and names the tool or the card. A tool is named
by its exact name in backticks, or bare beside the word for "tool" ("recall tool", "das Tool
recall", "recallツール"); a card by its type beside the word for "card" ("metric card",
"Metrik-Karte", "carte métrique", "表格卡片"). A tool or card merely mentioned is not an
instruction: "What does recall mean?", "What is a table card?".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from vak_desktop.context.planning.lexicon import Cues, Lexicon, Lexicons, Text, normalise, sentences
from vak_desktop.context.planning.reading import Reading, reading_for


def unmet_tool_instruction(
    directive: str | Reading, available: Sequence[str], called: Iterable[str], lexicons: Lexicons
) -> str | None:
    """The tool a directive explicitly told the model to call and the turn never called, or
    None."""
    done = set(called)
    read = reading_for(directive, lexicons)
    lowered = read.seen.lowered
    # a sentence that calls a tool holds a call verb: languages with none in the text are out
    languages = [lex for lex in read.read_in if lex.call_verbs.hit(read.seen)]
    for name in available:
        if not languages or name in done or normalise(name) not in lowered:
            continue
        for sentence in _sentences(read, normalise(name)):
            for lexicon in languages:
                if lexicon.call_verbs.hit(sentence) and _names_tool(sentence, name, lexicon):
                    return name
    return None


def _names_tool(sentence: Text, name: str, lexicon: Lexicon) -> bool:
    wanted = normalise(name)
    if f"`{wanted}`" in sentence.lowered:
        return True
    cjk_tool_word = any(s in sentence.lowered for s in lexicon.tool_words.substrings)
    return any(
        word == wanted and (cjk_tool_word or _beside(sentence, i, lexicon.tool_words))
        for i, word in enumerate(sentence.words)
    )


def required_card(directive: str | Reading, types: Iterable[str], lexicons: Lexicons) -> str | None:
    """The card type (of `types`, the library's) a directive explicitly asks for ("show it as
    a table card", "zeig es als Tabellen-Karte"), or None."""
    library = list(types)
    read = reading_for(directive, lexicons)
    # a sentence asking for a card holds a show verb and the word for "card": languages
    # without both anywhere in the text are out (a 5 MB paste is not read sentence by sentence)
    languages = [
        lex
        for lex in read.read_in
        if lex.show_verbs.hit(read.seen) and lex.card_words.hit(read.seen)
    ]
    if not languages:
        return None
    for sentence in _sentences(read):
        for lexicon in languages:
            if not lexicon.show_verbs.hit(sentence):
                continue
            for kind, cues in lexicon.card_types.items():
                if _typed_card(sentence, cues, lexicon.card_words):
                    match = [t for t in library if t == kind or t.startswith(kind + ".")]
                    if match:
                        return match[0]
    return None


def _typed_card(sentence: Text, type_cues: Cues, card_words: Cues) -> bool:
    """The card type named beside the word for "card", or in one word with it
    ("Tabellenkarte"); in CJK text, both anywhere in the sentence."""
    if any(s in sentence.lowered for s in type_cues.substrings) and card_words.phrase_hit(sentence):
        return True
    return any(
        card_words.at(sentence, i) or _beside(sentence, i, card_words)
        for i in type_cues.positions(sentence)
    )


def _beside(sentence: Text, i: int, cues: Cues, reach: int = 2) -> bool:
    """Whether a cue of `cues` is within `reach` words of word `i` ("the tool recall": 2)."""
    low, high = max(0, i - reach), min(len(sentence.words), i + reach + 1)
    return any(cues.at(sentence, k) for k in range(low, high) if k != i)


def _sentences(read: Reading, containing: str = "") -> list[Text]:
    """The directive's sentences, each ready for cue matching (split once per reading); with
    `containing`, only those that contain it (made ready only then)."""
    raw = read.derived("sentences", lambda: sentences(read.seen.lowered))
    if not raw:
        return [read.seen]
    if containing:
        return [Text.of(s, normalised=True) for s in raw if containing in s]
    return read.derived("sentence_texts", lambda: [Text.of(s, normalised=True) for s in raw])
