"""The planted-fact cases of `bench/efficacy.py`, and their success rules, fixed before any run.

Why it exists: one case (a code in turn 3, "search my files for the code I gave you earlier")
was what the engine was built around. A case here is a generated session with one fact planted
at one turn, a workspace of files, a directive that needs both, and the rules a try is judged
by — written down here so no run can move them:

- first call right: the turn's first step calls a file tool (grep, glob, read) whose arguments
  carry one of `search_keys` (case-insensitive) — the value, or the words that lead to its file.
- final answer right (the final-answer rule): the turn's final answer, as `vak show` has it,
  contains every string of `answer_all`, none of `answer_none`, and is not a raw JSON call.
  A turn that runs out of its time is undecided, not wrong.

Cases:
    shipment  the original (`vak eval --live`'s): a code in turn 3 of 40; the answer names the
              manifest file it was found in
    locker    a combination (digits and dashes) in turn 11 of 30 (seed 2); files named by month
              so no name gives it away, a near-miss decoy (38-14-29 in an old file); the
              directive asks for the file's name in other words
    venue     an e-mail address in turn 27 of 34 (seed 3); a decoy from a near-miss address;
              the imported history calls a tool this session does not have (`read_file` with
              `q`); the directive asks for a value the file holds (the guests it confirms)
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vak_desktop.context.payloads import ToolCall
from vak_desktop.runtime.evaluation.live import CODE, generated_session, shipment_files

FILE_TOOLS = ("grep", "glob", "read")


@dataclass(frozen=True)
class Case:
    name: str
    ask: str  # the directive, referring back to the planted fact
    fresh_ask: str  # the same with the fact in it: a new chat's baseline
    value: str  # the planted fact's value (did the request carry it?)
    search_keys: tuple[str, ...]
    answer_all: tuple[str, ...]
    answer_none: tuple[str, ...]
    session: Callable[[], dict[str, Any]]
    files: Callable[[Path], Path]

    def first_call_right(self, calls: Sequence[ToolCall]) -> tuple[bool, bool]:
        """(a file tool was called, one of them carried a search key)."""
        files = [c for c in calls if c.name in FILE_TOOLS]
        keys = [k.lower() for k in self.search_keys]
        return bool(files), any(k in json.dumps(c.arguments).lower() for c in files for k in keys)

    def answer_right(self, answer: str) -> bool:
        text = answer.lower()
        return (
            not raw_call(answer)
            and all(a.lower() in text for a in self.answer_all)
            and not any(n.lower() in text for n in self.answer_none)
        )


def raw_call(text: str) -> bool:
    """A tool call written as JSON left as the answer (`{"name": …, "arguments": …}`)."""
    stripped = text.strip().strip("`").removeprefix("json").strip()
    return bool(re.match(r"^[\[{]", stripped)) and '"name"' in stripped


def planted_session(
    turns: int,
    plant_at: int,
    fact: str,
    noted: str,
    seed: int,
    *,
    absent_tool: bool = False,
) -> dict[str, Any]:
    """An OpenAI chat document: `turns` turns of build chatter with tool results (every 8th
    over 30k characters), `fact` said at turn `plant_at`. `absent_tool`: the history's calls
    are another app's `read_file {"q": …}`, a tool this session does not have."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful assistant."}]
    for n in range(1, turns + 1):
        if n == plant_at:
            messages += [{"role": "user", "content": fact}, {"role": "assistant", "content": noted}]
            continue
        module = rng.choice(("parser", "billing", "auth", "search", "export", "sync")) + str(n)
        messages.append({"role": "user", "content": f"Step {n}: check the build log of {module}."})
        if n % 4 in (0, 1):
            if absent_tool:
                tool, arguments = "read_file", {"q": f"{module} build log"}
            elif n % 4 == 0:
                tool, arguments = "read", {"path": f"logs/{module}.log"}
            else:
                tool, arguments = "grep", {"pattern": module}
            call = {
                "id": f"call{n}",
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(arguments)},
            }
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
            lines = 900 if n % 8 == 0 else 40
            body = "\n".join(
                f"[{i:04}] {module}: compiled unit {i} in {rng.randint(1, 97)} ms"
                for i in range(lines)
            )
            messages.append({"role": "tool", "tool_call_id": f"call{n}", "content": body})
        warnings = rng.randint(0, 6)
        messages.append(
            {
                "role": "assistant",
                "content": f"{module} builds cleanly; {warnings} warnings remain.",
            }
        )
    return {"messages": messages}


def _write(root: Path, files: dict[str, str]) -> Path:
    folder = root / "files"
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


SHIPMENT = CODE
LOCKER = "38-14-92"
VENUE = "m.okafor@lindenhall.example"

CASES = {
    "shipment": Case(
        name="shipment",
        ask="Search my files for the shipment code I gave you earlier.",
        fresh_ask=f"Search my files for the shipment code {SHIPMENT}.",
        value=SHIPMENT,
        search_keys=(SHIPMENT,),
        answer_all=("manifest",),
        answer_none=(),
        session=generated_session,  # `vak eval --live`'s own session and files
        files=shipment_files,
    ),
    "locker": Case(
        name="locker",
        ask="Which file of mine has the locker combination I mentioned a while ago? "
        "Tell me the file's name.",
        fresh_ask=f"Which file of mine has the locker combination {LOCKER}? "
        "Tell me the file's name.",
        value=LOCKER,
        search_keys=(LOCKER, "locker", "combination"),
        answer_all=("feb.txt",),
        answer_none=("mar.txt",),
        session=lambda: planted_session(
            30,
            11,
            f"By the way, my locker combination at the gym is {LOCKER}.",
            "Got it, I will remember that.",
            2,
        ),
        files=lambda root: _write(
            root,
            {
                "notes/jan.txt": "Groceries: oats, lemons.\nCall the plumber on Tuesday.\n",
                "notes/feb.txt": f"Gym: the blue locker, combination {LOCKER}. Bring a towel.\n",
                "notes/mar.txt": "Old gym (closed): locker combination 38-14-29, key returned.\n",
                "misc/todo.md": "- renew passport\n- back up photos\n",
            },
        ),
    ),
    "venue": Case(
        name="venue",
        ask="Look through my documents for the reunion venue's contact address from earlier "
        "and tell me how many guests that message confirms.",
        fresh_ask=f"Look through my documents for the message from {VENUE} "
        "and tell me how many guests it confirms.",
        value=VENUE,
        search_keys=("okafor", "lindenhall", "reunion", "venue"),
        answer_all=("46",),
        answer_none=(),
        session=lambda: planted_session(
            34,
            27,
            f"For the reunion, the venue contact is {VENUE}. Keep it handy.",
            "Sure, I have noted the contact.",
            3,
            absent_tool=True,
        ),
        files=lambda root: _write(
            root,
            {
                "docs/letter-draft.md": "Dear all,\ndetails to follow soon.\n",
                "docs/reply.txt": f"From: {VENUE}\nConfirmed: the hall is booked for 46 "
                "guests on 12 June.\n",
                "docs/reply-old.txt": "From: m.okafor@lindenhal.example\nTentative: 40 guests, "
                "date still open.\n",
                "docs/budget.csv": "item,cost\nhall,900\ncatering,1200\n",
            },
        ),
    ),
}
