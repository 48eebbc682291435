"""The shipped reading lexicons (`resources/lexicons/<lang>.json`), loaded once per process.

The engine reads directives with `Lexicons` handed in as plain data (`context/planning/
lexicon.py`); this is where the files are read, validated against `lexicons/schema.json` and
parsed, so a broken lexicon is a clear error at the first reading, naming the file and the
field, never a silently English-only reading. jsonschema is imported at that first reading,
not at start-up (it was the largest import behind the window's first paint).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from vak_desktop.context.planning.lexicon import Lexicons, files_digest
from vak_desktop.shipped import shipped

if TYPE_CHECKING:
    import jsonschema

LEXICONS = "lexicons"
SCHEMA = "schema.json"


class LexiconError(ValueError):
    """A shipped lexicon that does not parse or does not match the schema."""


def lexicon_files() -> list[tuple[str, bytes]]:
    """(file name, bytes) of every shipped lexicon, in name order (the schema left out)."""
    folder = shipped(LEXICONS)
    return sorted(
        (node.name, node.read_bytes())
        for node in folder.iterdir()
        if node.name.endswith(".json") and node.name != SCHEMA
    )


def lexicon_validator() -> jsonschema.Draft202012Validator:
    """The schema every lexicon file is checked against (the schema itself checked first)."""
    import jsonschema

    schema = json.loads(shipped(f"{LEXICONS}/{SCHEMA}").read_text("utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def parse_lexicon(
    name: str, data: bytes, validator: jsonschema.Draft202012Validator
) -> dict[str, Any]:
    """One lexicon file's document, checked against the schema (and its file name)."""
    import jsonschema

    try:
        document = json.loads(data.decode("utf-8"))
        error = jsonschema.exceptions.best_match(validator.iter_errors(document))
        if error is not None:
            raise error
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LexiconError(f"lexicons/{name}: not JSON: {exc}") from None
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(top)"
        raise LexiconError(f"lexicons/{name}: {where}: {exc.message}") from None
    if name != f"{document['language']}.json":
        raise LexiconError(f"lexicons/{name}: holds language {document['language']!r}")
    checked: dict[str, Any] = document
    return checked


def load_lexicons(files: Sequence[tuple[str, bytes]]) -> Lexicons:
    """Lexicons from (file name, bytes) pairs, each checked against the schema; the digest
    covers the files' bytes."""
    if not files:
        raise LexiconError("no lexicons are shipped under resources/lexicons")
    validator = lexicon_validator()
    documents = [parse_lexicon(name, data, validator) for name, data in files]
    return Lexicons.from_json(documents, files_digest(files))


@functools.cache
def lexicons() -> Lexicons:
    """Every shipped lexicon, parsed once."""
    return load_lexicons(lexicon_files())
