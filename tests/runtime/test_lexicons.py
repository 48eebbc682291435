"""The shipped lexicons: every file matches the one documented schema, names its language, and
reads every card type of the library; a broken file is a clear error naming file and field."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest

from vak_desktop.context.planning.assemble import prefix_digest
from vak_desktop.context.planning.lexicon import Lexicons
from vak_desktop.context.planning.reading import read_directive
from vak_desktop.runtime import DEFAULT_SYSTEM_PROMPT, default_tools
from vak_desktop.runtime.lexicons import (
    LexiconError,
    lexicon_files,
    lexicon_validator,
    lexicons,
    load_lexicons,
    parse_lexicon,
)
from vak_desktop.runtime.presentations import card_library
from vak_desktop.runtime.tools.surface import tool_surface
from vak_desktop.shipped import shipped

SHIPPED = {"en", "de", "fr", "es", "pt", "it", "nl", "pl", "ru", "zh", "ja"}


def test_the_schema_is_a_valid_json_schema_that_documents_every_field() -> None:
    schema = json.loads(shipped("lexicons/schema.json").read_text("utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert "description" in schema
    for name, field in schema["properties"].items():
        assert "description" in field or "$ref" in field or name == "name", name
        for sub, spec in field.get("properties", {}).items():
            assert "description" in spec, f"{name}.{sub}"


@pytest.mark.parametrize("name", [name for name, _ in lexicon_files()])
def test_every_shipped_lexicon_matches_the_schema(name: str) -> None:
    data = dict(lexicon_files())[name]
    document = json.loads(data)
    schema = json.loads(shipped("lexicons/schema.json").read_text("utf-8"))
    jsonschema.validate(document, schema)
    assert name == f"{document['language']}.json"
    prefixes = {t.split(".")[0] for t in card_library().types()}
    assert set(document["cards"]["types"]) == prefixes, "every card type, in every language"
    for cues in document["live"]["senses"].keys() if "senses" in document["live"] else ():
        assert cues in document["live"]["deixis"], "a sense belongs to a deixis word"


def test_at_least_the_issue_languages_are_shipped() -> None:
    assert {lex.language for lex in lexicons().languages} >= SHIPPED


def test_a_broken_lexicon_is_named_with_its_field() -> None:
    validator = lexicon_validator()
    name, data = lexicon_files()[0]
    document = json.loads(data)
    document["live"]["deixis"].append(" padded ")
    with pytest.raises(LexiconError, match=rf"lexicons/{name}: live/deixis/\d+: "):
        parse_lexicon(name, json.dumps(document).encode(), validator)
    with pytest.raises(LexiconError, match="not JSON"):
        parse_lexicon(name, b"{", validator)
    with pytest.raises(LexiconError, match="holds language"):
        parse_lexicon("xx.json", data, validator)


def test_the_digest_covers_every_file() -> None:
    assert lexicons().digest.startswith("b3:") and lexicons() is lexicons()


def _edited(name: str, edit: Callable[[dict[str, Any]], None]) -> Lexicons:
    """The shipped lexicons with one file's document edited, loaded as the files would be."""
    files = []
    for file_name, data in lexicon_files():
        if file_name == name:
            document = json.loads(data)
            edit(document)
            data = json.dumps(document, ensure_ascii=False).encode("utf-8")
        files.append((file_name, data))
    return load_lexicons(files)


def _prefix(lex: Lexicons, directive: str) -> tuple[str, str]:
    """The system text and the prefix digest of the turn a directive opens, read by `lex`."""
    surface = tool_surface(
        default_tools(None), DEFAULT_SYSTEM_PROMPT, directive, read_directive(directive, lex)
    )
    return surface.system, prefix_digest(surface.system, surface.prefix)


def test_a_lexicon_change_moves_the_prefix_digest_exactly_when_it_changes_the_prefix() -> None:
    """docs/decisions/0070-lexicon-digest.md: the lexicons reach the model's prefix only
    through the tools the reading loads, which the prefix digest covers; the file digest is
    no input of its own. A change the directive's reading does not see changes nothing."""
    directive = "Tabulate the planets and their moons"
    shipped_system, shipped_digest = _prefix(lexicons(), directive)

    def drop_tabulate(document: dict[str, Any]) -> None:
        document["cards"]["types"]["table"].remove("tabulate")

    def more_recall(document: dict[str, Any]) -> None:
        document["conversation"]["recall"].append("a while ago")

    def more_german_tables(document: dict[str, Any]) -> None:
        document["cards"]["types"]["table"].append("übersicht")

    seen = _edited("en.json", drop_tabulate)
    unseen = [_edited("en.json", more_recall), _edited("de.json", more_german_tables)]
    for edited in (seen, *unseen):
        assert edited.digest != lexicons().digest  # every edit is a different lexicon
    system, digest = _prefix(seen, directive)
    assert digest != shipped_digest  # the table card is gone: not loaded, so in the catalogue
    assert "- emit_table_card — " in system and "- emit_table_card — " not in shipped_system
    for edited in unseen:
        assert _prefix(edited, directive) == (shipped_system, shipped_digest)
