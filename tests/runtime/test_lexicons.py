"""The shipped lexicons: every file matches the one documented schema, names its language, and
reads every card type of the library; a broken file is a clear error naming file and field."""

from __future__ import annotations

import json

import jsonschema
import pytest

from vak_desktop.runtime.lexicons import (
    LexiconError,
    lexicon_files,
    lexicon_validator,
    lexicons,
    parse_lexicon,
)
from vak_desktop.runtime.presentations import card_library
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
