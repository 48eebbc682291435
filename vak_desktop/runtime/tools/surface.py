"""The tool surface (spec §5): which admitted tools a turn's requests carry.

Every admitted tool is callable; the surface decides only which schemas are loaded. At a turn's
first step it loads the always-loaded tools, the tools whose domains the directive's reading
meets, the tools that declare no domains, and the card tools (`emit_<type>_card`) the request
reads as. Everything else admitted is one line of the catalogue ("More tools") in the system
prompt: a loaded tool is named once, by its schema, never also as "not loaded yet".

Across a session the loaded set only grows (#22 item 6): a turn starts from the tools the
session's last request carried, in their order, and appends what its reading loads beyond them
(`sent_tools`), so a tool load never reorders or drops what the prefix cache holds; the system
text and the tools change together, only when a tool is added.

Within a turn the request only grows: `find_tools` appends the schemas it found after the ones
loaded at step 0, and the system text and those first schemas (the prefix) stay byte-identical.
A catalogue tool the model then uses — through `find_tools` or straight from the catalogue — is
a tool the reading did not predict: a *misread*, recorded as an Activity.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from vak_desktop.context.capacity.profile import (
    estimate_tokens,
    is_small,
    tokens_per_char,
    usable_horizon,
)
from vak_desktop.context.payloads import Activity, CapacityProfile, Receipt, ToolCall
from vak_desktop.context.planning.actions import requested_tools
from vak_desktop.context.planning.reading import MEMORY, Reading, reading_for
from vak_desktop.context.planning.turn_cards import is_card_tool, leading_sentence
from vak_desktop.context.request import ToolSpec
from vak_desktop.runtime.lexicons import lexicons
from vak_desktop.runtime.tools.find_tools import FIND_TOOLS, promoted_by
from vak_desktop.runtime.tools.registry import ToolRegistry, ToolTraits

MISREAD = "misread"
COMPACT_CATALOGUE = "More tools (find_tools loads them): "
CATALOGUE_HEADING = (
    "More tools (not loaded yet: call find_tools with what you need or their names, and "
    "you can call them from your next step on):"
)


def catalogue_text(registry: ToolRegistry, loaded: Collection[str] = ()) -> str:
    """ "More tools": `name — first sentence` per catalogue tool not `loaded`, sorted by name;
    "" if none."""
    specs = sorted(
        (spec for spec in registry.catalogue() if spec.name not in loaded),
        key=lambda spec: spec.name,
    )
    if not specs:
        return ""
    lines = [f"- {spec.name} — {leading_sentence(spec.description)}" for spec in specs]
    return "\n".join([CATALOGUE_HEADING, *lines])


def stable_system(base: str, registry: ToolRegistry, loaded: Collection[str] = ()) -> str:
    """The system text: the base prompt, the tools' own notes (skills …), the catalogue of the
    tools not `loaded`. A function of the prompt, the admitted set and the loaded set, which
    only grows within a session: byte-identical from one turn to the next until a tool loads."""
    parts = [base.rstrip(), *registry.prompt_sections(), catalogue_text(registry, loaded)]
    return "\n\n".join(part for part in parts if part)


def loads(spec: ToolSpec, traits: ToolTraits, reading: Reading) -> bool:
    """Whether the surface loads this admitted tool at a turn's first step."""
    if traits.always_loaded or reading.everything:
        return True
    if is_card_tool(spec.name):
        return reading.reads_as_card(spec.name) or reading.meets(traits.serves)
    return traits.undeclared or reading.meets(traits.serves)


@dataclass(frozen=True)
class ToolSurface:
    """One turn's surface: the system text, the schemas loaded at step 0 (the prefix), and the
    ones `find_tools` added since, in the order they were found."""

    system: str
    reading: Reading
    prefix: tuple[ToolSpec, ...]
    catalogue: tuple[ToolSpec, ...]
    promoted: tuple[ToolSpec, ...] = ()
    misread: frozenset[str] = frozenset()  # tools already recorded as misreads this turn

    @property
    def tools(self) -> tuple[ToolSpec, ...]:
        """What the next request carries: the prefix, then the tools found during the turn."""
        return self.prefix + self.promoted

    def load(self, names: Sequence[str]) -> ToolSurface:
        """The surface with these catalogue tools loaded from the next step on, appended after
        what is loaded already (a runtime nudge that names a card tool loads it this way)."""
        known = {spec.name for spec in self.tools}
        by_name = {spec.name: spec for spec in self.catalogue}
        extra: list[ToolSpec] = []
        for name in names:
            if name in by_name and name not in known:
                extra.append(by_name[name])
                known.add(name)
        return dataclasses.replace(self, promoted=self.promoted + tuple(extra))

    def after(self, calls: Sequence[ToolCall]) -> tuple[ToolSurface, list[Activity]]:
        """The surface after a step's calls ran, and the misreads they reveal (one per tool
        per turn). Calls are taken in call order, as their results were appended."""
        predicted = {spec.name for spec in self.prefix}
        deferred = {spec.name for spec in self.catalogue}
        surface, activities = self, []
        for call in calls:
            if call.name == FIND_TOOLS:
                found = promoted_by(call.arguments, self.catalogue)
                surface = surface.load([spec.name for spec in found])
                continue
            if call.name in predicted or call.name not in deferred or call.name in surface.misread:
                continue
            via = (
                "find_tools" if any(s.name == call.name for s in surface.promoted) else "catalogue"
            )
            activities.append(self._misread(call.name, via))
            surface = dataclasses.replace(surface, misread=surface.misread | {call.name})
        return surface, activities

    def _misread(self, tool: str, via: str) -> Activity:
        return Activity(
            type=MISREAD,
            message=f"{tool} was used, but the reading of the request did not load it",
            detail={"tool": tool, "via": via, "reading": self.reading.to_json()},
        )


def sent_tools(chain: Sequence[object]) -> tuple[str, ...]:
    """The tool names the newest request of a chain carried, in order (its Receipt's)."""
    for entry in reversed(chain):
        payload = getattr(entry, "payload", None)
        if isinstance(payload, Receipt):
            return tuple(d.split("=", 1)[0] for d in payload.tool_digests)
    return ()


def _grown(
    earlier: Sequence[str], wanted: Sequence[ToolSpec], registry: ToolRegistry
) -> tuple[ToolSpec, ...]:
    """The session's tools so far (`earlier`, still admitted, in their order), then the ones
    of `wanted` beyond them: append-only, so the prefix cache keeps what it holds."""
    admitted = {spec.name: spec for spec in registry.specs()}
    kept = [admitted[name] for name in dict.fromkeys(earlier) if name in admitted]
    names = {spec.name for spec in kept}
    return (*kept, *(spec for spec in wanted if spec.name not in names))


def tool_surface(
    registry: ToolRegistry,
    base_system: str,
    directive: str,
    reading: Reading | None = None,
    *,
    earlier: Sequence[str] = (),
) -> ToolSurface:
    """The surface of a turn whose directive is `directive` (read here unless `reading` is
    given): the tools the session carried so far (`earlier`, `sent_tools`), then those the
    reading loads beyond them in admitted order, and the system text whose catalogue names the
    rest."""
    reading = reading if reading is not None else reading_for(directive, lexicons())
    wanted = [spec for spec in registry.specs() if loads(spec, registry.traits(spec.name), reading)]
    prefix = _grown(earlier, wanted, registry)
    loaded = {spec.name for spec in prefix}
    catalogue = tuple(spec for spec in registry.catalogue() if spec.name not in loaded)
    return ToolSurface(stable_system(base_system, registry, loaded), reading, prefix, catalogue)


COMPACT_SYSTEM = (
    "You are a helpful assistant on the user's own machine. Use the tools when the user asks "
    "for an action. Earlier turns may be cards or a summary; recall brings any back in full."
)


def compact_surface(
    surface: ToolSurface,
    registry: ToolRegistry,
    *,
    own_prompt: str = "",
    focus: Sequence[str] = (),
    earlier: Sequence[str] = (),
) -> ToolSurface:
    """The same surface in its compact form, for a small model or one whose horizon the full
    prefix would crowd (issue #17: the prefix within a third of the horizon): the short system
    text, the catalogue as one line of names, every loaded schema described by its first
    sentence. `focus`, the tools an asked-for action needs ("search my files …" → grep, glob):
    when given, they are the only schemas loaded besides the card tools the reading loaded —
    measured on a 0.5B model, look-alike tools (find_tools, session_search) drew the call
    away from the file search it was asked for. A function of the admitted set and the
    reading only, so it is byte-stable for a profile. `own_prompt`, a session's own system
    prompt, stands in for the short system text. `earlier`: the tools the session carried so
    far, kept first whatever the focus (append-only, as `tool_surface`)."""
    loaded = surface.prefix
    if focus:
        cards = {s.name for s in surface.prefix if is_card_tool(s.name)}
        wanted = [s for s in registry.specs() if s.name in focus or s.name in cards]
        loaded = _grown(earlier, wanted, registry)
    names = {spec.name for spec in loaded}
    listed = sorted(spec.name for spec in registry.catalogue() if spec.name not in names)
    parts = [own_prompt or COMPACT_SYSTEM, *registry.prompt_sections()]
    if listed:
        parts.append(COMPACT_CATALOGUE + ", ".join(listed) + ".")
    prefix = tuple(
        dataclasses.replace(spec, description=leading_sentence(spec.description)) for spec in loaded
    )
    catalogue = tuple(spec for spec in registry.catalogue() if spec.name not in names)
    return dataclasses.replace(
        surface, system="\n\n".join(parts), prefix=prefix, catalogue=catalogue
    )


def memory_tools(reading: Reading, registry: ToolRegistry) -> tuple[str, ...]:
    """The tools a question about the conversation's own past needs, and no others: those
    serving memory (`recall`, `session_search`), when a cue read the directive as about memory
    alone ("do you remember …", "from our conversation: …"); () for any other reading. The
    planner answers such a question from the passages it recalls (`assemble`'s focused plan);
    the file tools beside them cost a small model ~400 tokens of schemas and draw its call to a
    search of the user's folders (decision 0120)."""
    if reading.orienting or reading.everything or reading.domains != {MEMORY}:
        return ()
    return tuple(s.name for s in registry.specs() if MEMORY in registry.traits(s.name).serves)


def fitted_surface(
    registry: ToolRegistry,
    system: str,
    directive: str,
    profile: CapacityProfile,
    *,
    own_prompt: str = "",
    earlier: Sequence[str] = (),
) -> ToolSurface:
    """The surface a turn sends to the model of `profile`: the full one, or its compact form
    for a small model (with only the asked-for action's tools) or when the full prefix — the
    system text and the floor's schemas — would pass a third of the horizon. Decided on the
    floor surface and the profile, so the choice and its bytes hold while the profile does.
    `earlier`: the tools the session's last request carried (`sent_tools`), kept first."""
    surface = tool_surface(registry, system, directive, earlier=earlier)
    floor = tool_surface(registry, system, "")
    chars = len(floor.system) + sum(spec.chars() for spec in floor.prefix)
    crowded = estimate_tokens(chars, tokens_per_char(profile)) * 3 > usable_horizon(profile)
    small = is_small(profile)
    if not (small or crowded):
        return surface
    offered = [spec.name for spec in registry.specs()]
    focus = requested_tools(surface.reading, offered, lexicons()) if small else ()
    if small and not focus:
        focus = memory_tools(surface.reading, registry)
    return compact_surface(surface, registry, own_prompt=own_prompt, focus=focus, earlier=earlier)
