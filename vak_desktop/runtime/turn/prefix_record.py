"""The stable prefix each step sent, kept in the ledger: its system text and tool schemas.

A Receipt carries only digests of the prefix (`system_digest`, `tool_digests`), and the prefix is
a function of many things that change later — the profile a probe measures (the compact form of
a small model), the tools a session has loaded so far, its own prompt, its workspace folders,
the registry itself. Re-deriving it from today's state is a guess (issue #25: after a probe the
inspector rebuilt a 1,179-character system text where 353 went out). So the first step that
sends a system text or a tool schema the session has not recorded yet appends one `prefix_sent`
Activity holding exactly those parts, keyed by the receipt's own digests; every later step that
sends them again records nothing (written after the step's Receipt). The replay
(`runtime/inspection/replay.py`) reads them back: a digest names its bytes, so any record of
the branch serves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from vak_desktop.context.capacity.cache_watch import system_digest, tool_digests
from vak_desktop.context.payloads import Activity
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Entry

PREFIX_SENT = "prefix_sent"


@dataclass
class RecordedPrefix:
    """Every system text and tool schema a session's steps recorded, by digest."""

    systems: dict[str, str] = field(default_factory=dict)
    tools: dict[str, ToolSpec] = field(default_factory=dict)

    @classmethod
    def of(cls, chain: Iterable[Entry]) -> RecordedPrefix:
        recorded = cls()
        for entry in chain:
            payload = entry.payload
            if isinstance(payload, Activity) and payload.type == PREFIX_SENT:
                recorded.systems.update(payload.detail.get("systems", {}))
                for digest, spec in payload.detail.get("tools", {}).items():
                    recorded.tools[digest] = ToolSpec(
                        str(spec["name"]), str(spec["description"]), dict(spec["parameters"])
                    )
        return recorded

    def note(self, system: str, tools: Sequence[ToolSpec]) -> Activity | None:
        """The Activity recording what of (`system`, `tools`) is new, or None; remembered."""
        digest = system_digest(system)
        systems = {} if digest in self.systems else {digest: system}
        new = {
            d: spec
            for d, spec in zip(tool_digests(tools), tools, strict=True)
            if d not in self.tools
        }
        if not systems and not new:
            return None
        self.systems.update(systems)
        self.tools.update(new)
        detail = {
            "systems": systems,
            "tools": {
                d: {"name": s.name, "description": s.description, "parameters": s.parameters}
                for d, s in new.items()
            },
        }
        return Activity(type=PREFIX_SENT, detail=detail)

    def sent(self, system: str, digests: Sequence[str]) -> tuple[str, tuple[ToolSpec, ...]] | None:
        """The system text and tools of digests `system` and `digests`, or None when any part
        was never recorded (a step written before this record existed)."""
        if system not in self.systems or any(d not in self.tools for d in digests):
            return None
        return self.systems[system], tuple(self.tools[d] for d in digests)
