"""No first-class integrations (spec §9): production code and shipped data — the reading
lexicons included — never name a configured MCP server or a topic that once steered behaviour
during development. The audit is the one `vak eval` runs (`runtime/evaluation/integrations.py`);
here its banned words are the MCP server names of the operator settings fixture
(`tests/fixtures/operator_settings.toml`, read by the real settings loader) plus its topics.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vak_desktop.context.planning.kinds import taxonomy
from vak_desktop.runtime.evaluation.checks import no_integrations
from vak_desktop.runtime.evaluation.integrations import (
    TOPICS,
    audit,
    banned_words,
    shipped_texts,
    violations,
)
from vak_desktop.runtime.lexicons import lexicon_files
from vak_desktop.runtime.settings import load_settings

FIXTURE = Path(__file__).parent / "fixtures" / "operator_settings.toml"
PACKAGE = Path(__file__).resolve().parents[1] / "vak_desktop"


def fixture_servers() -> list[str]:
    names = [server.name for server in load_settings(FIXTURE).mcp_servers]
    assert names, f"{FIXTURE} configures no MCP servers"
    return names


def test_production_code_names_no_configured_server_and_no_fixture_topic() -> None:
    found, modules, files = audit(fixture_servers())
    assert not found, "first-class integrations in production code:\n" + "\n".join(found)
    assert modules == len([p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts]) - 1
    assert files >= len(lexicon_files()) + 2  # the lexicons, the card library, a chat template


def test_every_lexicon_file_is_audited() -> None:
    audited = {label for label, _ in shipped_texts()}
    for name, _ in lexicon_files():
        assert f"resources/lexicons/{name}" in audited


def test_the_dictionary_of_nouns_is_the_one_shipped_folder_left_out() -> None:
    """WordNet's nouns (passage recall's kinds) hold "weather" as every English noun: they
    rank recalled passages and decide no tool's loading, so they are not audited."""
    audited = {label.split("/")[1] for label, _ in shipped_texts() if label.count("/") > 1}
    assert "kinds" not in audited and {"lexicons", "chat_templates"} <= audited
    assert "weather" in taxonomy().senses


def test_a_topic_word_in_a_lexicon_is_caught() -> None:
    name, data = lexicon_files()[0]
    document = json.loads(data)
    document["domains"]["web"].append("noida")
    planted = json.dumps(document, ensure_ascii=False, indent=1)
    assert violations(f"lexicons/{name}", planted, banned_words(fixture_servers()), python=False)


def test_the_eval_check_passes_and_fails_on_what_it_finds() -> None:
    check = no_integrations(fixture_servers())
    assert check.ok and "lexicons included" in check.detail
    failing = no_integrations(["zeitstrahl"])  # a server named like a German lexicon cue
    assert not failing.ok and "resources/lexicons/de.json" in failing.detail


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ('def route(q):\n    if "weather" in q:\n        return "x"\n', True),
        ("NOIDA_DEFAULT = 1\n", True),
        ("def tavily_search():\n    pass\n", True),
        ('SERVER = "brave-search"\n', True),
        ('SERVER = f"{1}open_meteo"\n', True),
        ("x = 1  # the weather in Noida was a fixture once\n", False),
        ('"""A module about weather, in its docstring."""\n', False),
        ('def f():\n    """Noida, in a docstring."""\n    return 2\n', False),
    ],
)
def test_the_scan_reads_code_and_skips_comments_and_docstrings(source: str, caught: bool) -> None:
    banned = banned_words(fixture_servers())
    assert set(TOPICS) <= banned
    assert bool(violations("planted.py", source, banned, python=True)) is caught
