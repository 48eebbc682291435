"""Skills: instructions the model loads by name when it needs them (spec §5).

A skill is a folder holding `SKILL.md`: a YAML front matter block (read with PyYAML's
`safe_load`, so folded `description: >` blocks, quotes and comments all work) with its `name`
and a `description`, then the body. The user's skills live in `<data dir>/skills/<name>/SKILL.md`.
The system prompt lists every skill's name and description once (in the stable prefix, so the
list is read when the tools are built and stays put for their lifetime); the `skill` tool reads
a body from its file when it is asked for, never before, so a body is never inlined.

    ---
    name: release-notes
    description: Write release notes from a list of merged changes.
    ---
    (the instructions)
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vak_desktop.context.request import ToolSpec
from vak_desktop.runtime.tools.registry import ToolContext, ToolFailure, ToolOutput

log = logging.getLogger(__name__)

SKILL_FILE = "SKILL.md"
SKILLS_FOLDER = "skills"  # under the data directory
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_FENCE = "---"


class SkillFileError(ValueError):
    """A SKILL.md that cannot be read as a skill; the message names the file and the fault."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: Path  # its SKILL.md


def split_front_matter(text: str, path: Path) -> tuple[dict[str, str], str]:
    """The YAML mapping between the opening and closing `---` (its text values), and the body."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != _FENCE:
        raise SkillFileError(f"{path}: does not open with a '---' front matter line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == _FENCE)
    except StopIteration:
        raise SkillFileError(f"{path}: the front matter has no closing '---'") from None
    import yaml  # here, not at start-up: 0.1 s of every window start, for a rare skill file

    try:
        loaded = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f":{where.line + 2}" if where is not None else ""
        problem = getattr(exc, "problem", None) or exc
        raise SkillFileError(f"{path}{at}: the front matter is not valid YAML: {problem}") from None
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        raise SkillFileError(f"{path}: the front matter must be `key: value` lines")
    fields = {
        str(key).strip().lower(): "" if value is None else str(value).strip()
        for key, value in loaded.items()
        if isinstance(value, str | int | float | None)
    }
    return fields, "\n".join(lines[end + 1 :]).strip("\n")


def read_skill(path: Path) -> Skill:
    """The skill described by the SKILL.md at `path` (its folder's name when it names none)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillFileError(f"{path}: cannot be read: {exc}") from None
    fields, _ = split_front_matter(text, path)
    name = fields.get("name") or path.parent.name
    if not _NAME.fullmatch(name):
        raise SkillFileError(
            f"{path}: the name {name!r} must be lower-case letters, digits, '.', '_' or '-'"
        )
    description = " ".join(fields.get("description", "").split())
    if not description:
        raise SkillFileError(f"{path}: the front matter has no `description`")
    return Skill(name, description, path)


def load_skills(folders: Iterable[Path]) -> tuple[Skill, ...]:
    """Every skill in `folders` (each holding `<name>/SKILL.md`), sorted by name; the first
    folder wins a name two of them use. A broken skill file is skipped and logged by name."""
    found: dict[str, Skill] = {}
    for folder in folders:
        if not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir()):
            path = entry / SKILL_FILE
            if not path.is_file():
                continue
            try:
                skill = read_skill(path)
            except SkillFileError as exc:
                log.warning("skill left out: %s", exc)
                continue
            found.setdefault(skill.name, skill)
    return tuple(sorted(found.values(), key=lambda s: s.name))


class SkillTool:
    """Loads one skill's body on demand. Admit it only when there are skills."""

    always_loaded = True

    def __init__(self, skills: Iterable[Skill]) -> None:
        self.skills = {skill.name: skill for skill in skills}
        names = sorted(self.skills)
        self.spec = ToolSpec(
            name="skill",
            description=(
                "Load a skill's instructions by name (the skills are listed in the system "
                "prompt). Load one before you do what it describes, then follow it."
            ),
            parameters={
                "type": "object",
                "properties": {"name": {"type": "string", "enum": names}},
                "required": ["name"],
            },
        )
        lines = [f"- {s.name}: {s.description}" for s in sorted(self.skills.values(), key=_name)]
        self.prompt_section = "\n".join(
            ["Skills (call skill with a name to load its instructions):", *lines]
        )

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolOutput:
        name = arguments.get("name")
        skill = self.skills.get(name) if isinstance(name, str) else None
        if skill is None:
            known = ", ".join(sorted(self.skills)) or "none"
            raise ToolFailure(f"there is no skill {name!r} (skills: {known})")
        try:
            text = skill.path.read_text(encoding="utf-8")
            _, body = split_front_matter(text, skill.path)
        except (OSError, UnicodeDecodeError, SkillFileError) as exc:
            raise ToolFailure(f"the skill {skill.name!r} cannot be loaded: {exc}") from None
        return ToolOutput(body or f"(the skill {skill.name!r} has no instructions)")


def _name(skill: Skill) -> str:
    return skill.name
