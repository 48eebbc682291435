"""The rules that make a turn end in an answer (issue #22), TurnRules' half that judges answers.

`rules.TurnRules` asks these after each step: whether a text can be the answer, whether an
asked-for action (`context/planning/actions.py`) was performed, whether an answer says what
the turn's find found, and — when the model leaves it undone — what Vak does itself:

- the asked search: a grep for the value the request refers to (an earlier message's) or
  gives, run after one `[action-check]` repair, or on a small model (`small`) at once and
  when its own searches found nothing (measured on the 0.5B, issue #22: its repair step was
  a call in 0 of 6 tries on two cases, and cost up to 128 tokens of babble at ~1 token/s);
- on a small model, after the find, one step that can only answer when it calls again;
- on a small model, the file its search found, read whole when it is short (`READ_CHARS`), so
  the answer can use the lines around the match: "how many guests does that message
  confirm" is answered by the line after the address that was searched for;
- the composed answer (`answering.composed_answer`) when no step of the model answered.

Each is written as a runtime step (model "vak") with an Activity saying why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from vak_desktop.context.evidence.text_calls import machine_text
from vak_desktop.context.payloads import (
    Activity,
    AssistantStep,
    Nudge,
    ToolCall,
    ToolResult,
)
from vak_desktop.context.planning.actions import (
    ACTION_CHECK,
    action_statement,
    requested_tool,
    requested_tools,
)
from vak_desktop.context.planning.turns import Turn, split_turns
from vak_desktop.context.request import ToolSpec
from vak_desktop.ledger import Entry, Ledger
from vak_desktop.runtime.lexicons import lexicons
from vak_desktop.runtime.turn.answering import (
    ANSWER_CHECK,
    ANSWER_GROUNDING,
    ANSWER_NOW,
    answer_check_nudge,
    answer_now_nudge,
    bearing_lines,
    call_nudge,
    composed_answer,
    failed_call_statement,
    first_find,
    found,
    found_file,
    grounded,
    grounding_nudge,
    not_an_answer,
    own_value,
    referred_value,
)

FAILED_CLOSED = "failed_closed"  # Activity: a check failed after its one repair
READ_CHARS = 4_000  # a found file this short is read whole for a small model
READ_ID = "vak_read_"  # the id prefix of a read Vak makes itself
LISTING = "glob"  # the tool a "which file …" request asks for first: the answer names a file


@dataclass(frozen=True)
class Next:
    """What the turn does after a step: go on (maybe after a nudge), or close."""

    close: bool = False
    outcome: str = "completed"
    error: str = ""
    statement: str = ""  # a system-authored step written before closing
    nudge: Nudge | None = None
    drift: bool = False  # a model-drift event (the instruction-failure hook is told)
    failed_instruction: str = ""  # an explicit instruction not followed (horizon feedback)
    bare: bool = False  # the next step is sent without tools: it can only answer
    composed: bool = False  # the statement is an answer Vak composed from the turn's find
    required: bool = False  # the next step must call a tool (where the server can insist)
    run: ToolCall | None = None  # a call Vak runs itself (the asked search, after a repair)


CONTINUE = Next()


def turn_calls(turn: Turn) -> list[ToolCall]:
    """Every tool call of the turn's steps so far, in order (the model's and Vak's own)."""
    return [
        c
        for e in turn.entries
        if isinstance(e.payload, AssistantStep)
        for c in e.payload.tool_calls
    ]


def turn_results(turn: Turn) -> dict[str, ToolResult]:
    """The turn's tool results so far, by the id of the call each answers."""
    return {
        e.payload.tool_call_id: e.payload for e in turn.entries if isinstance(e.payload, ToolResult)
    }


def strikes(turn: Turn, tag: str) -> int:
    """How many times the turn was already intercepted by the check tagged `tag`."""
    marker = f"[{tag}]"
    count = 0
    for entry in turn.entries:
        payload = entry.payload
        if (isinstance(payload, ToolResult) and payload.is_error and marker in payload.content) or (
            isinstance(payload, Nudge) and payload.tag == tag
        ):
            count += 1
    return count


class AnswerRules:
    """The answer half of one turn's rules; `TurnRules` is the rest (a new one per turn)."""

    ledger: Ledger
    session: str
    specs: tuple[ToolSpec, ...]
    offered: tuple[str, ...]
    described: tuple[str, ...]
    small: bool = False  # the bound profile is a small model's (`is_small`)

    def _turn(self) -> tuple[list[Entry], Turn]:
        chain = self.ledger.chain_to_root(self.session)
        return chain, split_turns(chain)[-1]

    def answer_now(self, turn: Turn | None = None) -> str:
        """The `[answer-now]` nudge, with the turn's find when it has one."""
        turn = turn or self._turn()[1]
        hit = self.turn_find(turn)
        context = self._read_of(turn, found_file(hit[1])) if hit is not None else None
        return answer_now_nudge(hit, turn.directive.text, context)

    def not_an_answer(self, text: str, turn: Turn | None = None) -> str:
        """Why `text`, a step's whole text, cannot be the answer ("" when it can)."""
        if turn is None:
            turn = self._turn()[1]
        nudges = [e.payload.text for e in turn.entries if isinstance(e.payload, Nudge)]
        return not_an_answer(text, nudges, self.described, self.offered, turn.directive.text)

    def withheld(self, text: str) -> str:
        """Why a step's text (a step without tool calls) is kept out of the answer: it is no
        answer (`not_an_answer`), or it reports results of an asked-for action that nothing in
        the turn performed (the 0.5B "found" `/home/user/documents/logs/auth12.log`)."""
        turn = self._turn()[1]
        why = self.not_an_answer(text, turn)
        if why or not text.strip():
            return why
        tool = requested_tool(turn.directive.text, self.offered, lexicons())
        if tool is not None and not self._performed(turn, tool):
            return "a report of a search no tool call made"
        return ""

    def _performed(self, turn: Turn, tool: str) -> bool:
        called = {c.name for c in turn_calls(turn)}
        return bool(called & {"grep", "glob", "read", tool})

    def unanswered(self, turn: Turn | None, text: str, why: str) -> Next:
        """The turn ends without a usable answer from the model: with the answer Vak composes
        from the turn's find when a result holds what was asked for, else a statement."""
        if turn is None:
            turn = self._turn()[1]
        hit = self.turn_find(turn)
        if hit is not None:
            return Next(
                close=True,
                outcome="degraded",
                error=f"the model's answer was {why}; Vak composed it from the `{hit[0].name}` "
                "result",
                statement=composed_answer(
                    hit[0],
                    hit[1],
                    why,
                    turn.directive.text,
                    self._said_before(turn),
                    self._read_of(turn, found_file(hit[1])),
                ),
                composed=True,
            )
        if machine_text(text):
            statement = failed_call_statement(text)
        else:
            statement = (
                f"The model's reply was {why}, not an answer, and no tool result of this turn "
                "holds what was asked for. Ask again, or try another model."
            )
        return Next(
            close=True,
            outcome="degraded",
            error=f"the model's answer was {why}",
            statement=statement,
        )

    def _said_before(self, turn: Turn) -> list[str]:
        """What the user said in earlier turns (their directives), oldest first."""
        chain = self.ledger.chain_to_root(self.session)
        return [t.directive.text for t in split_turns(chain)[:-1] if t.turn_id != turn.turn_id]

    def turn_find(self, turn: Turn) -> tuple[ToolCall, ToolResult] | None:
        """The turn's first tool result that performed the asked-for action and found
        something (`_find` over every call of the turn so far)."""
        return self._find(turn, turn_calls(turn), turn_results(turn))

    def _answer_due(
        self, turn: Turn, calls: Sequence[ToolCall], results: dict[str, ToolResult]
    ) -> Next:
        """The asked-for action was performed and found something: the next step is told to
        answer with it (`[answer-check]`, once a turn; `answering.py`). On a small model,
        calls after that get one step that can only answer (`[answer-now]`, without tools),
        and searches of its own that found nothing get the search Vak can make for it.
        Measured on the 0.5B (shipment, issue #22): after `[answer-check]` it ran the same
        grep, the read and `recall` until the step budget; or it called grep without a
        pattern four times over."""
        if strikes(turn, ANSWER_CHECK):
            if self.small and not strikes(turn, ANSWER_NOW):
                return Next(nudge=Nudge(ANSWER_NOW, self.answer_now(turn)), bare=True)
            return CONTINUE
        if any(c.id.startswith(READ_ID) for c in calls):  # Vak read what the search found
            hit = self.turn_find(turn)
        else:
            hit = self._find(turn, calls, results)
        if hit is None:
            searched = self._search_for_model(turn) if self.small else None
            if searched is not None and searched.id not in {c.id for c in turn_calls(turn)}:
                return Next(run=searched)
            return CONTINUE
        reading = self._read_for_model(turn, *hit)
        if reading is not None:
            return Next(run=reading)
        context = self._read_of(turn, found_file(hit[1]))
        nudge = answer_check_nudge(hit[0].name, hit[1], turn.directive.text, context)
        return Next(nudge=Nudge(ANSWER_CHECK, nudge))

    def _find(
        self, turn: Turn, calls: Sequence[ToolCall], results: dict[str, ToolResult]
    ) -> tuple[ToolCall, ToolResult] | None:
        """The first result of `calls` that performed the asked-for action and found
        something: the action's most fitting tool, or a file read (a glob listing is no
        answer to "search my files for …", though glob performs the search). When the
        request names the value it is after (`_sought`), a result without it found nothing:
        the 0.5B listed `**/*.md` for "Which file has 38-14-92?", and the listing was
        answered as the find."""
        asked = requested_tools(turn.directive.text, self.offered, lexicons())
        if not asked:
            return None
        # grep's lines hold content whichever tool the words ask for first ("which file has
        # …" is a listing's words; a glob listing of names answers it only when asked first)
        acting = {asked[0], "read"} | ({"grep"} & set(asked))
        finds = [
            (c, results[c.id])
            for c in calls
            if c.name in acting and c.id in results and found(results[c.id])
        ]
        if not finds:  # the sought value reads the session's earlier turns: only when needed
            return None
        sought = (self._sought(turn) or "").lower()
        return next(((c, r) for c, r in finds if sought in r.content.lower()), None)

    def _sought(self, turn: Turn) -> str | None:
        """The value the request is after: the one value of the earlier message it refers
        to (`answering.referred_value`), else the one value it gives (`own_value`)."""
        directive = turn.directive.text
        return referred_value(directive, self._said_before(turn)) or own_value(directive)

    def _ungrounded(self, turn: Turn, text: str) -> Next | None:
        """After `[answer-check]`, an answer that says nothing of the find: one redo."""
        if strikes(turn, ANSWER_CHECK) == 0:
            return None
        hit = self.turn_find(turn)
        if hit is None:
            return None
        call, result = hit
        directive, find = turn.directive.text, first_find(result)
        asked_of = " ".join(str(v) for v in call.arguments.values())  # a read's path, say
        context = self._read_of(turn, found_file(result))
        lines = bearing_lines(context, directive, find) if context is not None else []
        said = " ".join(line for _, line in lines)  # what the read file adds: it is asked
        # the lines that bear on the request answer it when there are any (recorded, 1.5B
        # venue: "The hall is booked for 46 guests" was the answer; the address line that
        # led to the file need not be said again); else the find itself
        answered = (
            grounded(text, said, f"{directive} {find}")
            if said
            else grounded(text, f"{find} {asked_of}", directive)
        )
        if self._names_file(turn, result, text) and answered:
            return None
        if strikes(turn, ANSWER_GROUNDING) == 0:
            return Next(nudge=Nudge(ANSWER_GROUNDING, grounding_nudge(result, lines)))
        return self.unanswered(turn, text, "silent on what the search found")

    def _unperformed(self, chain: list[Entry], turn: Turn, directive: str) -> Next | None:
        """An asked-for action (`context/planning/actions.py`) the turn never performed: the
        search Vak can make for the model (on a small model at once, else after one nudge
        naming the tool), else that nudge, then the degraded outcome; each feeds the horizon
        feedback."""
        tool = requested_tool(directive, self.offered, lexicons())
        if tool is None or self._performed(turn, tool):
            return None
        instruction = f"call the `{tool}` tool the request asks for"
        nudged = strikes(turn, ACTION_CHECK) > 0
        searched = self._search_for_model(turn) if self.small or nudged else None
        if searched is not None:  # a small model's repair step is rarely a call (issue #22)
            return Next(run=searched, failed_instruction=instruction)
        if not nudged:
            asked = requested_tools(directive, self.offered, lexicons())
            nudge = Nudge(ACTION_CHECK, call_nudge(asked, self.specs, directive))
            return Next(nudge=nudge, failed_instruction=instruction, required=True)
        self.ledger.append(
            self.session,
            Activity(
                type=FAILED_CLOSED,
                message=f"the asked-for `{tool}` call was not made after one repair",
                detail={"check": ACTION_CHECK, "turn": turn.turn_id},
            ),
        )
        return Next(
            close=True,
            outcome="degraded",
            error=f"the model did not call `{tool}` after one repair",
            statement=action_statement(tool),
            failed_instruction=instruction,
        )

    def _search_for_model(self, turn: Turn) -> ToolCall | None:
        """The asked-for search Vak runs itself when the model has not made it: grep for
        the value the request is after (`_sought`), if grep is offered and there is one —
        and only for a request that asks for an action on the user's things: "Which country
        was Evan visiting in May 2023?" asked of a chat is no search for "2023" (1.5B, LoCoMo
        conv-49)."""
        directive = turn.directive.text
        if (
            "grep" not in self.offered
            or requested_tool(directive, self.offered, lexicons()) is None
        ):
            return None
        value = self._sought(turn)
        if value is None:
            return None
        return ToolCall(f"vak_search_{turn.turn_id[-12:]}", "grep", {"pattern": re.escape(value)})

    def _read_for_model(self, turn: Turn, call: ToolCall, result: ToolResult) -> ToolCall | None:
        """On a small model, a grep find in one file not read yet this turn: a read of that
        file, when the tool is offered. Whether it is short enough is the read's own
        business (`_read_of` uses it only when it is)."""
        file = found_file(result)
        if not (self.small and call.name == "grep" and file and "read" in self.offered):
            return None
        if self._reads(turn, file):  # read already (or tried): once a turn
            return None
        return ToolCall(f"{READ_ID}{turn.turn_id[-12:]}", "read", {"path": file})

    def _reads(self, turn: Turn, file: str) -> set[str]:
        """The ids of the turn's read calls of `file`."""
        return {
            c.id
            for c in turn_calls(turn)
            if c.name == "read" and str(c.arguments.get("path", "")).removeprefix("./") == file
        }

    def _read_of(self, turn: Turn, file: str) -> ToolResult | None:
        """The turn's successful read of `file`, whole and short (`READ_CHARS`), if any."""
        reads = self._reads(turn, file) if file else set()
        return next(
            (
                r
                for r in turn_results(turn).values()  # in the ledger's order
                if r.tool_call_id in reads and not r.is_error and len(r.content) <= READ_CHARS
            ),
            None,
        )

    def _names_file(self, turn: Turn, result: ToolResult, answer: str) -> bool:
        """A "which file …" request (its first tool the listing's) is answered only by an
        answer that names the file the find is in; any other request, by any grounded one."""
        asked = requested_tools(turn.directive.text, self.offered, lexicons())
        file = found_file(result)
        if not asked or asked[0] != LISTING or not file:
            return True
        return PurePosixPath(file).name.lower() in answer.lower()
