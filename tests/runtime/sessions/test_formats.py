"""Other apps' exports, in their published shapes, imported through the ordinary import path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vak_desktop.context.payloads import Directive
from vak_desktop.context.planning.turns import split_turns
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.sessions.formats import UnknownFormat, detect, read_conversations
from vak_desktop.runtime.sessions.formats.markdown import export_markdown
from vak_desktop.runtime.sessions.importing import import_all
from vak_desktop.runtime.sessions.interchange import export_openai

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger.open(tmp_path / "l.sqlite3")


def _load(name: str) -> object:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def test_chatgpt_conversations_import_the_shown_branch_and_report_what_was_left_out(
    ledger: Ledger,
) -> None:
    document = _load("chatgpt_conversations.json")
    assert detect(document) == "chatgpt"
    report = import_all(ledger, read_conversations(document))
    assert report.total == 2 and len(report.imported) == 1
    session = report.imported[0].session
    assert ledger.session(session).title == "Sourdough starter"
    turns = split_turns(ledger.chain_to_root(session))
    assert [t.directive.text for t in turns] == [
        "How often should I feed a sourdough starter?",
        "Is this one bubbly enough?",
    ]
    assert turns[0].answer.startswith("Once or twice a day")  # not the regenerated one
    assert "ready to bake" in turns[1].answer
    assert all(t.directive.model == "gpt-4o" for t in turns)
    skipped = "\n".join(map(str, report.skipped))
    assert "“Sourdough starter”: skipped: image in message 3 (no file)" in skipped
    assert "“Only a greeting”: skipped: conversation in item 2" in skipped
    assert "no user message" in skipped
    assert "Imported 1 of 2 conversations" in report.summary()


def test_an_open_webui_export_imports_from_its_history_tree_and_its_flat_list(
    ledger: Ledger,
) -> None:
    document = _load("openwebui_export.json")
    assert detect(document) == "openwebui"
    report = import_all(ledger, read_conversations(document))
    assert len(report.imported) == 2 and report.format == "openwebui"
    lisbon, flat = (r.session for r in report.imported)
    turns = split_turns(ledger.chain_to_root(lisbon))
    assert len(turns) == 2 and "Santa Luzia" in turns[1].answer
    assert "regenerated" not in " ".join(t.answer for t in turns)
    assert turns[0].directive.model == "llama3.2:latest"
    assert "skipped: image in message 3 (not in the export)" in "\n".join(map(str, report.skipped))
    directives = [e.payload for e in ledger.chain_to_root(flat) if isinstance(e.payload, Directive)]
    assert directives[0].system == "You answer in French." and directives[0].text == "Say hello."
    # a single downloaded chat (no list around it) reads the same
    single = read_conversations(document[0])  # type: ignore[index]
    assert len(single.conversations) == 1


def test_openai_documents_round_trip_and_an_unknown_file_says_what_was_expected(
    ledger: Ledger,
) -> None:
    report = import_all(ledger, read_conversations(_load("openwebui_export.json")))
    exported = export_openai(ledger, report.imported[0].session)
    again = import_all(ledger, read_conversations(exported))
    assert again.format == "openai" and again.imported[0].turns == 2
    with pytest.raises(UnknownFormat, match=r"ChatGPT's conversations\.json"):
        detect({"something": "else"})


def test_markdown_export_has_each_turn_and_fences_tool_results(ledger: Ledger) -> None:
    report = import_all(ledger, read_conversations(_load("openwebui_export.json")))
    text = export_markdown(ledger, report.imported[1].session)
    assert text.startswith("# Flat list only\n")
    assert "## You\n\nSay hello." in text and "Bonjour !" in text
    assert "System prompt" in text
