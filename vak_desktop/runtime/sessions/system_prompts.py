"""A chat's own system prompt, and the named presets a new chat starts from.

The system prompt is the head of the stable prefix (spec §6): the same bytes every turn, so the
provider's prefix cache hits. A chat changes it by appending one `Activity` of type
`system_prompt_set` (the text and the preset it came from): the change is a ledger fact, the
prefix digest changes at that turn and then stays, and a replay reads it back through each
Directive's `system`. No payload class changes for it.

Presets live in `system_prompts.json` in the data directory (not in the settings file: they are
the user's texts, edited in the window, and hold no secret); one of them may be the default a
new chat starts with. Written whole to a temporary file and renamed, so a crash never leaves
half a file.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vak_desktop.context.payloads import Activity
from vak_desktop.ledger import Entry, Ledger

SYSTEM_PROMPT_SET = "system_prompt_set"
PRESETS_FILENAME = "system_prompts.json"
MAX_PROMPT_CHARS = 50_000  # a prompt longer than this is a pasted document, not a prompt


def system_prompt_of(chain: Sequence[Entry], fallback: str) -> str:
    """The system prompt the branch `chain` set last, else `fallback` (the runner's)."""
    for entry in reversed(chain):
        payload = entry.payload
        if isinstance(payload, Activity) and payload.type == SYSTEM_PROMPT_SET:
            return str(payload.detail.get("text", "")) or fallback
    return fallback


def check_prompt(text: str) -> str:
    """The prompt as it will be sent (trailing blanks trimmed); ValueError when unusable."""
    text = text.strip()
    if not text:
        raise ValueError("a system prompt cannot be empty")
    if len(text) > MAX_PROMPT_CHARS:
        raise ValueError(
            f"a system prompt is at most {MAX_PROMPT_CHARS:,} characters ({len(text):,} given)"
        )
    return text


def set_system_prompt(
    ledger: Ledger, session: str, text: str, fallback: str, preset: str = ""
) -> bool:
    """Give `session` the system prompt `text` from its next turn on. False (nothing written)
    when it already has it: the prefix changes once per real change."""
    text = check_prompt(text)
    if system_prompt_of(ledger.chain_to_root(session), fallback) == text:
        return False
    detail: dict[str, Any] = {"text": text}
    if preset:
        detail["preset"] = preset
    message = f"system prompt set from preset {preset!r}" if preset else "system prompt set"
    ledger.append(session, Activity(type=SYSTEM_PROMPT_SET, message=message, detail=detail))
    return True


@dataclass(frozen=True)
class Preset:
    name: str
    text: str


@dataclass
class PresetStore:
    """The named presets and which one a new chat starts with ('' : the built-in prompt)."""

    path: Path
    presets: list[Preset] = field(default_factory=list)
    default: str = ""

    @classmethod
    def open(cls, directory: Path) -> PresetStore:
        """The presets of `directory` (none yet: an empty store; a damaged file: ValueError
        naming it, and the file is left as it is)."""
        path = directory / PRESETS_FILENAME
        if not path.exists():
            return cls(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            presets = [Preset(str(p["name"]), str(p["text"])) for p in data.get("presets", [])]
            default = str(data.get("default", ""))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path} is not a presets file ({exc})") from exc
        return cls(path, presets, default if any(p.name == default for p in presets) else "")

    def names(self) -> list[str]:
        return [p.name for p in self.presets]

    def get(self, name: str) -> Preset | None:
        return next((p for p in self.presets if p.name == name), None)

    def default_text(self, fallback: str) -> str:
        """What a new chat starts with: the default preset's text, else `fallback`."""
        preset = self.get(self.default)
        return preset.text if preset is not None else fallback

    def put(self, name: str, text: str) -> Preset:
        """Create or replace the preset `name` and save."""
        name = name.strip()
        if not name:
            raise ValueError("a preset needs a name")
        preset = Preset(name, check_prompt(text))
        kept = [p for p in self.presets if p.name != name]
        at = next((i for i, p in enumerate(self.presets) if p.name == name), len(kept))
        self.presets = [*kept[:at], preset, *kept[at:]]
        self.save()
        return preset

    def remove(self, name: str) -> None:
        self.presets = [p for p in self.presets if p.name != name]
        if self.default == name:
            self.default = ""
        self.save()

    def set_default(self, name: str) -> None:
        """Make `name` the preset new chats start with ('' : the built-in prompt)."""
        if name and self.get(name) is None:
            raise ValueError(f"there is no preset named {name!r}")
        self.default = name
        self.save()

    def save(self) -> None:
        data = {"default": self.default, "presets": [p.__dict__ for p in self.presets]}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(data, out, ensure_ascii=False, indent=2)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
