"""Explicit instructions in any shipped language: a tool or card the directive told the model
to use (spec §1 horizon tightening), never one merely mentioned."""

from __future__ import annotations

import pytest

from vak_desktop.context.planning.instructions import required_card, unmet_tool_instruction
from vak_desktop.runtime.lexicons import lexicons
from vak_desktop.runtime.presentations import card_library

LEX = lexicons()
TYPES = card_library().types()
OFFERED = ["recall", "read"]


@pytest.mark.parametrize(
    ("directive", "tool"),
    [
        ("Call the `recall` tool now.", "recall"),
        ("please use recall tool", "recall"),
        ("invoke the tool recall", "recall"),
        ("What does recall mean?", None),
        ("Call the `search` tool.", None),  # not offered
        ("Rufe bitte das Tool `recall` auf.", "recall"),
        ("Verwende das Werkzeug recall", "recall"),
        ("Was macht recall eigentlich?", None),
        ("Utilise l'outil `recall`, s'il te plaît.", "recall"),
        ("Usa la herramienta recall para esto", "recall"),
        ("Usa o `recall` agora.", "recall"),
        ("Usa lo strumento recall", "recall"),
        ("Gebruik de tool recall", "recall"),
        ("Użyj narzędzia `recall`.", "recall"),
        ("Используй инструмент recall", "recall"),
        ("请调用`recall`工具", "recall"),
        ("recallツールを呼び出してください", "recall"),
        ("recallツールとは何ですか", None),
    ],
)
def test_an_imperative_naming_an_offered_tool_is_an_instruction(
    directive: str, tool: str | None
) -> None:
    assert unmet_tool_instruction(directive, OFFERED, [], LEX) == tool


def test_a_tool_that_was_called_is_no_unmet_instruction() -> None:
    assert unmet_tool_instruction("Call the `recall` tool now.", OFFERED, ["recall"], LEX) is None


@pytest.mark.parametrize(
    ("directive", "card"),
    [
        ("Show the copper price as a metric card.", "metric"),
        ("please emit a research.synthesis card on this", "research.synthesis"),
        ("show a table and a metric card", "metric"),
        ("What is a table card?", None),
        ("show me the prices", None),
        ("Zeig den Kupferpreis als Metrik-Karte.", "metric"),
        ("Erstelle eine Tabellenkarte der Einwohner", "table"),
        ("Was ist eine Tabellenkarte?", None),
        ("Affiche une carte graphique des ventes", "chart"),
        ("Muestra una tarjeta de cronología", "timeline"),
        ("Mostra um cartão de tabela", "table"),
        ("Mostra una scheda grafico", "chart"),
        ("Toon een tabelkaart", "table"),
        ("Pokaż kartę z wykresem", "chart"),
        ("Покажи карточку с таблицей", "table"),
        ("用表格卡片显示人口", "table"),
        ("グラフのカードで見せて", "chart"),
    ],
)
def test_a_required_card_is_an_imperative_naming_a_card_type(
    directive: str, card: str | None
) -> None:
    assert required_card(directive, TYPES, LEX) == card
