"""A turn that ends in an answer: the step budget, the "answer with it" and "answer now" steps.

Why it exists: measured on Qwen2.5-Coder 0.5B and 1.5B (issue #22), the value the user asked
for reached the model every time, yet no turn ended with an answer naming the file (0/6, 0/4):
turns ran 4 to 15 steps of tool calls, and the last text was often a raw JSON call. These
rules close that gap, each written to the ledger as a `Nudge` so what steered the turn reads
back. None of them quotes the directive: on the loopback double, and plausibly on a small
model, a nudge that repeats "Search my files for …" is read as the ask again, and searched.

- `[answer-check]`: the spec's explicit-instruction check, the other way round. A directive
  that asks for an action on the user's things (`context/planning/actions.py`) and a result of
  that action that found something: the next step is told to answer with that result (once a
  turn). The claimed-but-unperformed side is `rules.TurnRules._unperformed`.
- `[answer-grounding]`: an answer after it that says nothing of the find (`grounded`) gets one
  redo quoting the find again.
- `[answer-now]`: each profile has a step budget (`step_budget`: small models fewer); its last
  step is sent with this nudge and, on a local model, without tools, so it can only answer.
- `[plain-answer]`: a step whose text is not an answer (`not_an_answer`: a JSON call nobody
  could run, a schema, the tool list printed, the loop's own nudge echoed, a tool's name
  alone) is never shown as the answer: its text is kept in an Activity, not in the step. It
  is asked once more without tools; when that fails too — or the budget is spent — and a tool
  result of the turn holds what the directive asked for, the turn closes with an answer Vak
  composes from that result (`composed_answer`: the file, the line, the line's text), marked
  as composed; with no such result, a statement that says what happened.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from vak_desktop.context.capacity.profile import is_small
from vak_desktop.context.evidence.text_calls import find_text_calls, machine_text
from vak_desktop.context.evidence.windows import short_ref
from vak_desktop.context.payloads import Activity, CapacityProfile, ToolCall, ToolResult
from vak_desktop.context.planning.actions import ACTION_CHECK
from vak_desktop.context.request import ToolSpec

ANSWER_CHECK = "answer-check"
ANSWER_NOW = "answer-now"
ANSWER_GROUNDING = "answer-grounding"
PLAIN_ANSWER = "plain-answer"
REPEAT_CALL = "repeat-call"
# a small model's turn: the planted-fact case needs 2 (search, answer), 4 with a repair and a
# nudge; seen on the real 0.5B/1.5B before this budget: 4–15 (issue #22). Not tuned yet.
SMALL_STEPS = 6
STEPS = 24  # any other model: a runaway guard more than a budget
_TOKEN = re.compile(r"[\w][\w./-]*\w")
_NUMBER = re.compile(r"\d[\d.,:-]*")  # "46", "12:30": a value however short
_NAMED = re.compile(r'"(?:name|tool|tool_name)"\s*:\s*"([\w.\-]{1,64})"')
# a result's first line that says the tool found nothing (the file tools, recall, search)
_NOTHING = re.compile(r"\s*(?:no |nothing |none |0 |\(\S.* is empty\))", re.I)
# every tag this loop and the §6/§7 rules write into a Nudge: a step that repeats one echoes
# the machinery (measured on the 0.5B: "[answer-now] This turn has used its steps…" as answer)
_TAGS = (
    "answer-check|answer-now|answer-grounding|plain-answer|repeat-call|action-check|empty-step|"
    "freshness-check|steering-drift|topic-mismatch"
)
# a tag as the nudge writes it, or as a JSON key (the 0.5B answered `{"answer-check": "search24",
# "file": "notes/feb.txt", …}`, locker 2026-12-05)
_TAGGED = re.compile(rf'\[(?:{_TAGS})\]|"(?:{_TAGS})"\s*:')
# a reply of nothing but tag names, brackets or not (the 0.5B answered "answer-check")
_ONLY_TAGS = re.compile(rf"\W*(?:(?:{_TAGS})\W*)+", re.I)
_WORD = re.compile(r"\w+")
# a reply that opens with the chat template's own markup: the 1.5B answered a `find_tools`
# result back as "<tool_response>\nno tool matches 'painting' …" (LoCoMo conv-26, issue #22)
_TEMPLATE_TAG = re.compile(r"\s*</?(?:tool_response|tool_call|\|im_start\||\|im_end\|)", re.I)
ECHO_WORDS = 8  # a run of this many words of a nudge in a step's text is the nudge echoed
_GREP_LINE = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+): ?(?P<text>.*)$")


def step_budget(profile: CapacityProfile) -> int:
    """How many model calls a turn of this profile gets; the last one is `[answer-now]`."""
    return SMALL_STEPS if is_small(profile) else STEPS


def found(result: ToolResult) -> bool:
    """Whether a tool result holds something: not an error, not the tool saying "no …"."""
    first = result.content.lstrip().split("\n", 1)[0]
    return not result.is_error and bool(first.strip()) and not _NOTHING.match(first)


def lists_tools(text: str, descriptions: Sequence[str]) -> bool:
    """Whether `text` is the tool list printed back: the opening sentences of two or more of
    the offered tools' descriptions in it (measured: a 1.5B "answer" was the tool list)."""
    flat = " ".join(text.split()).lower()
    leads = {" ".join(d.split()).lower()[:40] for d in descriptions}
    return sum(1 for lead in leads if len(lead) >= 20 and lead in flat) >= 2


def first_find(result: ToolResult) -> str:
    """The result's first line that is a find, not a header ("3 matching lines in …:")."""
    lines = [line.strip() for line in result.content.splitlines() if line.strip()]
    body = [line for line in lines if not line.endswith(":")] or lines
    line = body[0] if body else ""
    return line if len(line) <= 200 else line[:199] + "…"


def _grep_matches(result: ToolResult) -> list[re.Match[str]]:
    """A grep result's matching lines (`path:line: text`), in order."""
    lines = (line.strip() for line in result.content.splitlines())
    return [m for m in (_GREP_LINE.match(line) for line in lines if line) if m is not None]


def found_file(result: ToolResult) -> str:
    """The one file a grep result's matching lines are in ("" for none, or several)."""
    files = {m["file"] for m in _grep_matches(result)}
    return next(iter(files)) if len(files) == 1 else ""


def answer_check_nudge(
    tool: str, result: ToolResult, directive: str = "", context: ToolResult | None = None
) -> str:
    """`[answer-check]`: the find, said as where it is and what it says — not in grep's own
    `path:line:` form, which the 0.5B took for a pattern and searched again (issue #22) —
    and, when the found file was read (`context`), its lines that bear on the request: then
    those lead, as what to answer from (told "say what it found and where", the 0.5B
    answered the address line back to "how many guests does that message confirm")."""
    find = first_find(result)
    match = _GREP_LINE.match(find)
    lines = bearing_lines(context, directive, find) if context is not None else []
    if lines and match:
        return (
            f"[{ANSWER_CHECK}] The `{tool}` result above found it in {match['file']} (line "
            f"{match['line']}), and that file answers the request on {_quoted(lines)}. "
            "Answer the user now from those lines, and name the file. Call another tool only "
            "if they do not answer the request."
        )
    return (
        f"[{ANSWER_CHECK}] The `{tool}` result above holds what was asked for: {_said(find)}. "
        "Answer the user now from it: say what it found and where (the file's name and the "
        "line). Call another tool only if that result does not answer the request."
    )


def bearing_lines(
    read: ToolResult, directive: str, find: str, most: int = 2
) -> list[tuple[int, str]]:
    """The lines of a read file (numbered from 1) that share a word with the directive the
    find does not already say, best first by how many, then in the file's order."""
    asked = _tokens(directive) - _tokens(find)
    lines = [(n, line.strip()) for n, line in enumerate(read.content.splitlines(), 1)]
    scored = [(len(_tokens(text) & asked), n, text) for n, text in lines if text]
    best = sorted((s for s in scored if s[0]), key=lambda s: (-s[0], s[1]))[:most]
    return [(n, text) for _, n, text in sorted(best, key=lambda s: s[1])]


def _quoted(lines: Sequence[tuple[int, str]]) -> str:
    """Numbered lines as a nudge quotes them: `line 2: “…” line 3: “…”`."""
    return " ".join(f"line {n}: “{_clip(text)}”" for n, text in lines)


def _tokens(text: str) -> set[str]:
    found = {t.lower() for t in _TOKEN.findall(text) if len(t) >= 4 or _NUMBER.fullmatch(t)}
    return found | {part for t in found for part in re.split(r"[./-]", t) if len(part) >= 4}


def grounded(answer: str, find: str, directive: str) -> bool:
    """Whether an answer says something of what the find found: a word of four letters or
    more, or a number, of the find's line (a file name, a value) that the directive did not
    already say.
    Measured on Qwen2.5-Coder 1.5B (issue #22): an answer echoed an earlier turn's "Got it, …"
    after the search had found the file."""
    new = _tokens(find) - _tokens(directive)
    return not new or bool(new & _tokens(answer))


def call_nudge(asked: Sequence[str], specs: Sequence[ToolSpec], directive: str) -> str:
    """`[action-check]`: the request asks for an action on the user's things and no tool did
    it. Names the tool and its required arguments in words, and quotes the request (this
    nudge asks for the action, so the request read again is wanted here). No JSON template:
    measured on the 0.5B (issue #22), "Call the `glob` tool now" drew the reply `glob`, and a
    template with a placeholder drew the placeholder copied five times over. grep comes
    first where it is asked at all: its lines hold the content and name the file, which
    answers "which file has …" too, where a glob listing gives only names."""
    by_name = {s.name: s for s in specs}
    tools = sorted(asked, key=lambda t: t != "grep") or ["grep"]
    spec = by_name.get(tools[0])
    required = [str(r) for r in (spec.parameters.get("required") or ())] if spec else []
    needs = " and ".join(f"`{r}`" for r in required)
    argued = f" with {needs} set to what the request is about" if needs else ""
    others = f" (or `{tools[1]}`)" if len(tools) > 1 else ""
    short = " ".join(directive.split())[:160]
    return (
        f"[{ACTION_CHECK}] The request (“{short}”) asks you to look at the user's files, and "
        f"nothing in this turn has done it, so nothing can be reported as found yet. Call the "
        f"`{tools[0]}` tool{others} now{argued}."
    )


def grounding_nudge(result: ToolResult, lines: Sequence[tuple[int, str]] = ()) -> str:
    """`[answer-grounding]`: the find again, or the read file's lines that bear on the
    request when those are what the answer left out."""
    if lines:
        return (
            f"[{ANSWER_GROUNDING}] That answer does not say what the file says on "
            f"{_quoted(lines)}. Answer the user's request with it."
        )
    return (
        f"[{ANSWER_GROUNDING}] That answer does not say what the result above found: "
        f"“{first_find(result)}”. Answer the user with it: what it found and where."
    )


def answer_now_nudge(
    find: tuple[ToolCall, ToolResult] | None = None,
    directive: str = "",
    context: ToolResult | None = None,
) -> str:
    """`[answer-now]`, the one step left that can only answer. With the turn's `find` it says
    the find again, as `[answer-check]` did, with the lines of the read file (`context`) that
    bear on the request: told only "from what the tool results above show", the 0.5B answered
    "there are 1 matching lines in 1 file with the shipment code …", naming no file; told only
    the address line that led to the file, it was not told the line that answers "how many
    guests" (efficacy, 2026-12-05)."""
    if find is not None:
        found = first_find(find[1])
        said = _said(found)
        lines = bearing_lines(context, directive, found) if context is not None else []
        if lines:
            said += f", and the file answers the request on {_quoted(lines)}"
        return (
            f"[{ANSWER_NOW}] This turn has used its steps. The `{find[0].name}` result above "
            f"holds what was asked for: {said}. Answer the user now from it, in plain words: "
            "say what it found and where. No more tool calls."
        )
    return (
        f"[{ANSWER_NOW}] This turn has used its steps. Answer the user now, in plain words, "
        "from what the tool results above show, and say plainly what was not found. No more "
        "tool calls."
    )


def _said(find: str) -> str:
    """A find said as where it is and what it says, not in grep's `path:line:` form."""
    match = _GREP_LINE.match(find)
    return f"{match['file']}, line {match['line']}: “{match['text']}”" if match else f"“{find}”"


def repeat_call_nudge(calls: Sequence[ToolCall], directive: str) -> str:
    """`[repeat-call]`: a step asked again for calls this turn already made, of tools whose
    result cannot have changed (`pure`). The request is quoted: after a few results and
    nudges the 1.5B had lost it ("I don't have any information about what you were asking",
    LoCoMo conv-26, issue #22)."""
    named = ", ".join(dict.fromkeys(f"`{c.name}`" for c in calls))
    short = " ".join(directive.split())[:200]
    return (
        f"[{REPEAT_CALL}] You asked for the same {named} call again. This turn already made "
        "it, and its result above has not changed, so it was not run again. Answer the "
        f"user's request now, in plain words, from the results above: “{short}”"
    )


def repeat_result(earlier: ToolResult) -> str:
    """What a repeated call gets instead of running again: where its result already is."""
    return (
        f"not run again: this turn already made this call, and its result (above, "
        f"[evidence:{short_ref(earlier.evidence)}]) has not changed"
    )


def plain_answer_nudge(why: str) -> str:
    """The redo's nudge, saying what the last message was (`not_an_answer`'s reason)."""
    return (
        f"[{PLAIN_ANSWER}] Your last message was {why}; it is not an answer. Answer the user "
        "in plain words from what the earlier turns and results above show."
    )


def failed_call_statement(text: str) -> str:
    """What the user is shown instead of a JSON call the model left as its answer."""
    written = find_text_calls(text, {}, invented=True)
    named = _NAMED.search(text)
    if written:
        call = written[0]
        arguments = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)[:160]
        what = f"a call of `{call.name}` {arguments} written as text"
    elif named is not None:
        what = f"a call of `{named.group(1)}` written as text"
    else:
        what = "tool machinery (JSON) instead of words"
    return (
        f"The model answered with {what}; it was not run and is not an answer. Ask again, "
        "or try another model."
    )


def not_an_answer(
    text: str,
    nudges: Sequence[str] = (),
    descriptions: Sequence[str] = (),
    offered: Sequence[str] = (),
    request: str = "",
) -> str:
    """Why a step's text (a step with no tool call) cannot be shown as the turn's answer, or
    "" when it can: a call or schema written as JSON (`machine_text`), the chat template's
    markup, the tool list printed (`lists_tools`), the loop's own nudges echoed (a `[tag]` of
    theirs, or a run of `ECHO_WORDS` words of one of `nudges`), a tool's name with at most
    two other words, or the `request`'s own question asked back (`asks_back`).
    Each seen on Qwen2.5-Coder 0.5B/1.5B (issue #22): 5 of 11 final answers were one of them."""
    if not text.strip():
        return ""
    if asks_back(text, request):
        return "the user's question asked back"
    if machine_text(text):
        return "a tool call written as text"
    if _TEMPLATE_TAG.match(text):
        return "the chat template's markup written back"
    if lists_tools(text, descriptions):
        return "the tool list printed back"
    if _quotes_description(text, descriptions):
        return "a tool's description repeated"
    if (
        _TAGGED.search(text)
        or _ONLY_TAGS.fullmatch(text)
        or any(_echoes(text, nudge) for nudge in nudges)
    ):
        return "the turn's own instructions repeated"
    words = [w.lower() for w in _WORD.findall(text)]
    named = {name.lower() for name in offered}
    if words and len(words) <= 3 and any(w in named for w in words):
        return "a tool's name alone"
    return ""


def asks_back(text: str, request: str) -> bool:
    """`text` is a question of three words or more, every one of them the `request`'s: the
    question repeated, not answered (the real 1.5B, told to answer "Would John be open to
    moving to another country?", wrote that sentence back as its answer; LoCoMo conv-41)."""
    if not text.rstrip().endswith(("?", "？")) or len(text) > 4 * len(request):
        return False
    said = [w.lower() for w in _WORD.findall(text)]
    if len(said) < 3:
        return False
    asked = {w.lower() for w in _WORD.findall(request)}
    return all(w in asked for w in said)


def _quotes_description(text: str, descriptions: Sequence[str]) -> bool:
    """A run of `ECHO_WORDS` words of a tool's description in the text (the 0.5B answered
    "grep searches the text files in the user's workspace folders for a regular …")."""
    return any(_shares_run(text, d) for d in descriptions)


_QUOTED = re.compile(r"“[^”]*”")  # what a nudge quotes: the request, a find's line
_NAMED_FIND = re.compile(r"“[^”]*”|\S*\w[/.]\w\S*")  # that, and the paths it names


def _echoes(text: str, nudge: str) -> bool:
    """`text` repeats the nudge: a run of `ECHO_WORDS` of its words (`_shares_run`), or a
    shorter text of two words or more made of its own words and nothing else (the 0.5B, told
    its reply was "the turn's own instructions repeated", answered `["The instructions
    repeated"]`). The lines and paths a nudge names are the find's words, not its own."""
    words = [w.lower() for w in _WORD.findall(text)]
    if 2 <= len(words) < ECHO_WORDS:
        return set(words) <= {w.lower() for w in _WORD.findall(_NAMED_FIND.sub(" ", nudge))}
    return _shares_run(text, nudge)


def _shares_run(text: str, nudge: str) -> bool:
    """A run of `ECHO_WORDS` words of the nudge's own words in `text`. What the nudge quotes
    is not its own: an answer that repeats the find it was told to answer with is an answer
    (measured on the 0.5B: the found line, answered back, was withheld as an echo)."""
    said = [w.lower() for w in _WORD.findall(_QUOTED.sub(" ", nudge))]
    runs = {" ".join(said[i : i + ECHO_WORDS]) for i in range(len(said) - ECHO_WORDS + 1)}
    if not runs:
        return False
    words = [w.lower() for w in _WORD.findall(text)]
    return any(
        " ".join(words[i : i + ECHO_WORDS]) in runs for i in range(len(words) - ECHO_WORDS + 1)
    )


COMPOSED = "Vak composed this answer from the `{tool}` result"  # never the model's words


def composed_answer(
    call: ToolCall,
    result: ToolResult,
    why: str = "",
    directive: str = "",
    said: Sequence[str] = (),
    context: ToolResult | None = None,
) -> str:
    """The answer Vak writes itself from the tool result that holds what was asked for, when
    the model's last step left nothing usable: which file and line matched and the line's
    text, quoted — opening with a mark that says Vak, not the model, wrote it. `said`: what
    the user said earlier in the conversation; when some matching lines hold one of its
    values (a code, an address, a number) and others do not, only those are shown, and
    the others counted (a near-miss "38-14-29" is not the "38-14-92" the user gave).
    `context`: the matched file, read whole; its lines that bear on the request follow."""
    lines = [line.strip() for line in result.content.splitlines() if line.strip()]
    matches = _grep_matches(result)
    values = {t for text in said for t in _values(text)}
    holding = [m for m in matches if values & _values(m["text"])]
    left_out = len(matches) - len(holding) if holding else 0
    matches = holding or matches
    mark = COMPOSED.format(tool=call.name) + (f" (the model's reply was {why})" if why else "")
    if matches:
        files = list(dict.fromkeys(m["file"] for m in matches))
        head = f"found in {files[0]}" if len(files) == 1 else f"{len(matches)} matching lines"
        shown = [f"- {m['file']}, line {m['line']}: “{_clip(m['text'])}”" for m in matches[:3]]
        if len(matches) > len(shown):
            shown.append(f"- … and {len(matches) - len(shown)} more")
        if left_out:
            shown.append(
                f"({left_out} other matching line{'s' if left_out > 1 else ''} left out: "
                "none holds a value said earlier in this conversation)"
            )
        if context is not None and len(files) == 1:
            matched = " ".join(m["text"] for m in matches)
            shown += [
                f"- {files[0]}, line {n}: “{_clip(text)}”"
                for n, text in bearing_lines(context, directive, matched)
                if str(n) not in {m["line"] for m in matches}
            ]
        return "\n".join([f"{mark}: {head}.", *shown])
    where = next((str(v) for k, v in sorted(call.arguments.items()) if k in ("path", "file")), "")
    asked = _tokens(directive)
    ranked = sorted(  # the lines sharing most words with the directive, in the file's order
        range(len(lines)), key=lambda i: (-len(_tokens(lines[i]) & asked), i)
    )[:3]
    quoted = [f"- “{_clip(lines[i])}”" for i in sorted(ranked)]
    source = f"of {where} " if where else ""
    return "\n".join([f"{mark}: the `{call.name}` result {source}shows", *quoted])


_VALUE = re.compile(r"[\w.+-]*(?:\d|@)[\w.@+-]*\w")


def _values(text: str) -> set[str]:
    """The value-like words of a text: with a digit or an @, four characters or more."""
    return {v.lower() for v in _VALUE.findall(text) if len(v) >= 4}


def referred_value(directive: str, said: Sequence[str]) -> str | None:
    """The value a refer-back directive means ("the locker combination I mentioned"): the one
    value-like word (`_values`) of the earlier user message sharing most words (two or more,
    of four letters or more) with the directive, and not in the directive itself; None when
    no message shares enough, two share as much, or it holds no single such value."""
    asked = _tokens(directive)
    scored = sorted(((len(_tokens(text) & asked), i) for i, text in enumerate(said)), reverse=True)
    if not scored or scored[0][0] < 2 or (len(scored) > 1 and scored[1][0] == scored[0][0]):
        return None
    return _one_value(said[scored[0][1]], known=_values(directive))


def own_value(directive: str) -> str | None:
    """The one value-like word (`_values`) the directive itself gives, if exactly one:
    "Which file of mine has the locker combination 38-14-92?" searches for 38-14-92."""
    return _one_value(directive)


def _one_value(text: str, known: AbstractSet[str] = frozenset()) -> str | None:
    """The text's one value-like word not in `known` (lowercased), or None for none or more."""
    values = sorted({v for v in _VALUE.findall(text) if len(v) >= 4 and v.lower() not in known})
    return values[0] if len({v.lower() for v in values}) == 1 else None


RUNTIME_SEARCH = "runtime_search"  # Activity: Vak ran the asked-for search the model did not
RUNTIME_READ = "runtime_read"  # Activity: Vak read the file a small model's search found


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


WITHHELD = "answer_withheld"  # Activity: a step's text kept here, not shown as the answer


def withheld_activity(text: str, why: str, step: int) -> Activity:
    """A step's text that is no answer (`not_an_answer`), kept whole for the record while
    its AssistantStep carries none: it is not shown, and the next request does not teach
    the model its shape again."""
    return Activity(
        type=WITHHELD,
        message=f"step {step}'s text was {why}: kept here, not shown as the answer",
        detail={"step": step, "why": why, "text": text},
    )
