"""Cue matching and language identification over lexicons given as plain data."""

from __future__ import annotations

from vak_desktop.context.planning.lexicon import Cues, Lexicons, Text, normalise, split_words
from vak_desktop.runtime.lexicons import lexicons


def test_each_cue_form_matches_what_it_says() -> None:
    def hit(cue: str, text: str) -> bool:
        return Cues.of([cue]).hit(Text.of(text))

    assert hit("price", "The PRICE of copper") and not hit("price", "priceless")
    assert hit("aktuell*", "die aktuellen Werte") and not hit("aktuell*", "unaktuell")
    assert hit("*preis", "der Kupferpreis") and not hit("*preis", "Preisliste")
    assert hit("*temperatur*", "Wassertemperaturen")
    assert hit("right now", "what is it right now?") and not hit("right now", "now right")
    assert hit("no live|current data|value", "there is no current value")
    assert hit("现在", "铜价现在是多少") and hit("カード", "銅の価格をカードで")
    assert hit("heure", "quelle est l'heure") and hit("karte", "eine Metrik-Karte")
    assert hit("show", "Ｓｈｏｗ it") and hit("*strasse", "Hauptstraße")  # NFKC and case folding


def test_cjk_runs_are_kept_apart_from_latin_letters() -> None:
    assert split_words(normalise("recallツールを使って")) == ["recall", "ツールを使って"]


def test_a_directive_is_read_in_the_languages_its_function_words_name() -> None:
    lex = lexicons()

    def read_in(text: str) -> tuple[str, ...]:
        return tuple(x.language for x in lex.identify(Text.of(text)))

    assert read_in("What is the price of copper?") == ("en",)
    assert read_in("Wie hoch ist der Kupferpreis?") == ("de",)
    assert read_in("今の銅の価格は？") == ("ja",)
    assert read_in("铜价是多少？") == ("zh",)
    assert read_in("Kupferpreis jetzt?") == tuple(x.language for x in lex.languages)  # all


def test_lexicons_are_plain_values() -> None:
    one = lexicons()
    assert one.language("de").name == "Deutsch"
    assert Lexicons.from_json([], "b3:x").languages == ()
