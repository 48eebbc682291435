"""A directive that points back at an earlier turn it does not name pins that turn's card (spec
§10: relevance survives a tiny budget), in every shipped language; the same subject asked
without pointing back pins nothing, and only the preceding turn counts for anaphora."""

from __future__ import annotations

import pytest

from tests.context.sessions import SessionBuilder, TurnScript
from vak_desktop.context.planning.candidates import candidates
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.lexicons import lexicons

# language → (the turn that gave the code, a refer-back question about it, the same subject
# asked afresh)
ASKED = {
    "en": (
        "Note the shipment code ZX-4471-Q",
        "What was the shipment code I gave you earlier?",
        "What is a shipment code?",
    ),
    "de": (
        "Merk dir den Versandcode ZX-4471-Q",
        "Wie war der Versandcode, den ich dir vorhin gegeben habe?",
        "Was ist ein Versandcode?",
    ),
    "fr": (
        "Retiens le code d'expédition ZX-4471-Q",
        "Quel était le code d'expédition que je t'ai donné tout à l'heure ?",
        "Qu'est-ce qu'un code d'expédition ?",
    ),
    "es": (
        "Apunta el código de envío ZX-4471-Q",
        "¿Cuál era el código de envío que te di antes?",
        "¿Qué es un código de envío?",
    ),
    "pt": (
        "Anota o código de envio ZX-4471-Q",
        "Qual era o código de envio que te dei antes?",
        "O que é um código de envio?",
    ),
    "it": (
        "Annota il codice di spedizione ZX-4471-Q",
        "Qual era il codice di spedizione che ti ho dato prima?",
        "Che cos'è un codice di spedizione?",
    ),
    "nl": (
        "Onthoud de verzendcode ZX-4471-Q",
        "Wat was de verzendcode die ik je eerder gaf?",
        "Wat is een verzendcode?",
    ),
    "pl": (
        "Zapamiętaj kod przesyłki ZX-4471-Q",
        "Jaki był kod przesyłki, który ci wcześniej podałem?",
        "Co to jest kod przesyłki?",
    ),
    "ru": (
        "Запомни код отправки ZX-4471-Q",
        "Какой код отправки я тебе дал раньше?",
        "Что такое код отправки?",
    ),
    "zh": ("记住发货代码 ZX-4471-Q", "我之前给你的发货代码是什么？", "什么是发货代码？"),
    "ja": (
        "発送コード ZX-4471-Q を覚えて",
        "さっき渡した発送コードは何でしたか？",
        "発送コードとは何ですか？",
    ),
}
LATER = ["Plan a vegetable garden for a small yard", "Which tomatoes grow in shade?"]


def test_every_shipped_language_has_a_refer_back_case() -> None:
    assert set(ASKED) == {lex.language for lex in lexicons().languages}


@pytest.mark.parametrize("language", sorted(ASKED))
def test_a_refer_back_directive_pins_the_turn_it_points_at(language: str) -> None:
    gave, recall, afresh = ASKED[language]
    ledger = Ledger.open(":memory:")
    try:
        session = SessionBuilder(ledger)
        for directive in (gave, *LATER):
            session.turn(TurnScript(directive, (), "Noted."))
        history = list(session.index().turns)
    finally:
        ledger.close()
    pointed = candidates(history, 0.25, recall, lexicons())
    assert pointed.pinned == 0, (pointed.by_relevance, pointed.pinned)
    assert pointed.values[0] == 1.0  # its best match, however old
    fresh = candidates(history, 0.25, afresh, lexicons())
    assert fresh.by_relevance[:1] == (0,) and fresh.pinned is None
