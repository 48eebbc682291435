"""Presentation cards: their definitions, payload validation, and the digest a TurnCard shows.

The definitions (`resources/presentations.json`, read by the runtime and handed in as a dict)
are a library, not instances: each card type has a JSON Schema for its payload, the field that
is its title, and its *identity* — the fields a later turn sees of the card through its
TurnCard (spec §10: a metric card is its own digest; a research synthesis shows its takeaways
and source titles/URLs, never the snippets). The full payload stays one `recall({presentation})`
away.

A model without tool calling writes a card as a fenced block tagged `vak` holding
`{"type": …, …payload}`; this module finds those fences, and drops the ones that repeat a card
already written in the turn from what the model sees of its own text (the duplicate rule).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vak_desktop.context.presentations.digest import payload_digest

FENCE_TAG = "vak"
_FENCE = re.compile(r"```vak[ \t]*\n(.*?)\n?```[ \t]*\n?", re.DOTALL)
_SHOWS = ("value", "count", "first", "count_of")


class CardDefinitionError(ValueError):
    """presentations.json (or a definition handed in) is not a valid card library."""


@dataclass(frozen=True)
class IdentityField:
    """One part of a card's digest: a field, and how it is shown."""

    field: str
    show: str = "value"  # value | count | first | count_of
    label: str = ""
    of: str = ""  # count_of: the sub-array counted in every element
    pluck: tuple[str, ...] = ()  # for arrays of objects: keep only these fields of each


@dataclass(frozen=True)
class CardDefinition:
    type: str  # the semantic type: metric, table, research.synthesis …
    schema_version: int
    description: str
    title_field: str
    identity: tuple[IdentityField, ...] | None  # None: every field (the card is its digest)
    schema: Mapping[str, Any]

    @property
    def tool_name(self) -> str:
        return tool_name(self.type)

    def errors(self, payload: Any) -> list[str]:
        """What is wrong with `payload`, one line per problem, each naming where it is."""
        from jsonschema import Draft202012Validator  # at the first card checked, not at start

        validator = Draft202012Validator(dict(self.schema))
        found = sorted(validator.iter_errors(payload), key=lambda e: list(e.absolute_path))
        return [f"{_where(e.absolute_path)}: {e.message}" for e in found]

    def title_of(self, payload: Mapping[str, Any]) -> str:
        return str(payload.get(self.title_field, ""))

    def digest(self, payload: Mapping[str, Any]) -> str:
        """The schema-driven digest of a payload: its identity fields, compactly."""
        if self.identity is None:
            return "; ".join(f"{k}: {_show(payload[k])}" for k in sorted(payload))
        parts = []
        for part in self.identity:
            if part.field not in payload:
                continue
            value = payload[part.field]
            name = part.label or part.field
            if part.show == "count":
                parts.append(f"{_count(value)} {name}")
            elif part.show == "first":
                first = value[0] if isinstance(value, list) and value else None
                if first is not None:
                    parts.append(f"{name}: {_show(first)}")
            elif part.show == "count_of":
                total = sum(_count(v.get(part.of)) for v in value if isinstance(v, dict))
                parts.append(f"{total} {name}")
            else:
                if part.pluck and isinstance(value, list):
                    value = [_pluck(v, part.pluck) for v in value]
                parts.append(f"{name}: {_show(value)}")
        return "; ".join(parts)


@dataclass(frozen=True)
class CardLibrary:
    """Every card definition, by semantic type."""

    library: str
    version: str
    cards: Mapping[str, CardDefinition]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CardLibrary:
        """The library from presentations.json's content; raises CardDefinitionError."""
        try:
            cards = {d.type: d for d in map(_definition, data["cards"])}
            return cls(str(data["library"]), str(data["version"]), cards)
        except (KeyError, TypeError) as exc:
            raise CardDefinitionError(f"card library is missing {exc}") from None

    def by_tool(self, name: str) -> CardDefinition | None:
        return next((d for d in self.cards.values() if d.tool_name == name), None)

    def types(self) -> list[str]:
        return sorted(self.cards)


def tool_name(semantic_type: str) -> str:
    """The emit tool of a card type: `research.synthesis` → `emit_research_synthesis_card`."""
    return "emit_" + re.sub(r"\W", "_", semantic_type) + "_card"


def _definition(raw: Mapping[str, Any]) -> CardDefinition:
    schema = raw["schema"]
    kind = raw["type"]
    from jsonschema import Draft202012Validator  # when the library is first read, not at start

    try:
        Draft202012Validator.check_schema(schema)
    except Exception as exc:
        raise CardDefinitionError(f"the schema of card {kind!r} is invalid: {exc}") from None
    identity: tuple[IdentityField, ...] | None = None
    if raw.get("identity", "all") != "all":
        identity = tuple(
            IdentityField(
                field=str(i["field"]),
                show=str(i.get("show", "value")),
                label=str(i.get("label", "")),
                of=str(i.get("of", "")),
                pluck=tuple(i.get("pluck", ())),
            )
            for i in raw["identity"]
        )
        bad = [i.show for i in identity if i.show not in _SHOWS]
        if bad:
            raise CardDefinitionError(f"card {kind!r}: unknown identity display {bad[0]!r}")
    return CardDefinition(
        type=str(kind),
        schema_version=int(raw.get("schema_version", 1)),
        description=str(raw.get("description", "")),
        title_field=str(raw.get("title_field", "title")),
        identity=identity,
        schema=schema,
    )


def _where(path: Iterable[Any]) -> str:
    parts = list(path)
    return "/" + "/".join(str(p) for p in parts) if parts else "the card"


def _count(value: Any) -> int:
    return len(value) if isinstance(value, list | dict) else 0


def _pluck(value: Any, keys: tuple[str, ...]) -> Any:
    if not isinstance(value, dict):
        return value
    kept = [value[k] for k in keys if k in value]
    return kept[0] if len(kept) == 1 else " — ".join(_show(k) for k in kept)


def _show(value: Any) -> str:
    """A value as a digest line shows it: scalars verbatim, lists joined with ` | `."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " | ".join(_show(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={_show(v)}" for k, v in value.items())
    return json.dumps(value, ensure_ascii=False)


# -- the inline fence fallback ------------------------------------------------------------------


@dataclass(frozen=True)
class Fence:
    """One ```vak block in assistant text: where it is, and the card it holds if it parses."""

    start: int
    end: int
    semantic_type: str = ""
    payload: Mapping[str, Any] | None = None
    problem: str = ""  # why it is not a card (bad JSON, no type …)

    @property
    def digest(self) -> str:
        return payload_digest(self.payload) if self.payload is not None else ""


def find_fences(text: str) -> list[Fence]:
    """Every `vak` fence in `text`, in order."""
    fences = []
    for match in _FENCE.finditer(text):
        start, end = match.span()
        try:
            data = json.loads(match.group(1))
        except json.JSONDecodeError as exc:
            fences.append(Fence(start, end, problem=f"the block is not JSON: {exc}"))
            continue
        if not isinstance(data, dict) or not isinstance(data.get("type"), str):
            fences.append(Fence(start, end, problem='the block needs {"type": …, …payload}'))
            continue
        payload = {k: v for k, v in data.items() if k != "type"}
        fences.append(Fence(start, end, data["type"], payload))
    return fences


def without_fences(text: str, drop: Iterable[Fence]) -> str:
    """`text` with the given fences cut out (surrounding blank lines tidied)."""
    out, at = [], 0
    for fence in sorted(drop, key=lambda f: f.start):
        out.append(text[at : fence.start])
        at = fence.end
    out.append(text[at:])
    return re.sub(r"\n{3,}", "\n\n", "".join(out)).strip() if at else text


def projected_text(text: str, earlier: set[str]) -> str:
    """A step's text as the model sees it again: a card fence whose payload digest was already
    written earlier in the turn (`earlier`), or earlier in the same text, is dropped."""
    if "```" + FENCE_TAG not in text:
        return text
    seen = set(earlier)
    drop = []
    for fence in find_fences(text):
        if fence.payload is None:
            continue
        if fence.digest in seen:
            drop.append(fence)
        seen.add(fence.digest)
    return without_fences(text, drop)


def narration_text(text: str) -> str:
    """The prose around the cards: every fence that holds a card removed."""
    if "```" + FENCE_TAG not in text:
        return text
    return without_fences(text, [f for f in find_fences(text) if f.payload is not None])


def fence_guide(library: CardLibrary) -> str:
    """What a model that cannot call tools is told about cards: write them as ```vak fences.
    Part of its system prompt (stable across turns: it depends on the library alone)."""
    lines = [
        "You cannot call tools in this conversation. To show the user a card, write one block "
        f"fenced with ```{FENCE_TAG} holding a JSON object: "
        '{"type": "<card type>", ...the card\'s fields}. Card types and their fields '
        "(? = optional):"
    ]
    for kind in library.types():
        schema = library.cards[kind].schema
        required = set(schema.get("required", ()))
        fields = [f if f in required else f + "?" for f in schema.get("properties", {})]
        lines.append(f"- {kind}: {', '.join(fields)}")
    return "\n".join(lines)
