"""What may be shown as a turn's answer, judged on texts Qwen2.5-Coder 0.5B really wrote.

Each recorded text below is a step's whole text from `bench/efficacy.py --out` on the real
0.5B (llama.cpp, the locker and venue cases, 2026-12-02), or the shapes issue #22 quotes.
"""

from __future__ import annotations

from vak_desktop.context.evidence.text_calls import find_text_calls
from vak_desktop.context.payloads import ToolCall, ToolResult
from vak_desktop.runtime import default_tools
from vak_desktop.runtime.settings import Settings
from vak_desktop.runtime.turn.answering import (
    COMPOSED,
    answer_check_nudge,
    answer_now_nudge,
    call_nudge,
    composed_answer,
    grounded,
    not_an_answer,
    own_value,
    plain_answer_nudge,
)

SPECS = default_tools(Settings(workspace=("/nonexistent-workspace",))).specs()
OFFERED = [s.name for s in SPECS]
DESCRIBED = [s.description for s in SPECS]
# a real grep result of the locker case's workspace (decoy in mar.txt)
GREP = (
    "2 matching lines in 2 files:\n"
    "notes/feb.txt:1: Gym: the blue locker, combination 38-14-92. Bring a towel.\n"
    "notes/mar.txt:1: Old gym (closed): locker combination 38-14-29, key returned."
)


def _judged(text: str, nudges: tuple[str, ...] = ()) -> str:
    return not_an_answer(text, nudges, DESCRIBED, OFFERED)


def test_recorded_replies_that_are_no_answer_are_named() -> None:
    # after "[action-check] … Call the `glob` tool now": the tool's name alone (locker, try 1)
    assert _judged("glob") == "a tool's name alone"
    # after the same nudge for grep: its description said back (venue, try 2)
    described = (
        "grep searches the text files in the user's workspace folders for a regular "
        "expression (Python syntax); each match comes back as path:line: text."
    )
    assert _judged(described) == "a tool's description repeated"
    # the loop's own nudges echoed as the answer (issue #22's sampled answers)
    assert _judged(answer_now_nudge()) == "the turn's own instructions repeated"
    hit = ToolResult("c1", "grep", GREP, "e", len(GREP))
    check = answer_check_nudge("grep", hit)
    echoed = "The `grep` result above holds what was asked for: answer the user now from that"
    assert _judged(echoed, (check,)) == "the turn's own instructions repeated"
    # a raw JSON call and the tool list printed
    assert _judged('{"name": "grep", "arguments": {"pattern": "38-14-92"}}')
    listed = "\n".join(f"- {s.name}: {s.description}" for s in SPECS)
    assert _judged(listed) == "the tool list printed back"
    # a find_tools result answered back in the template's markup (the 1.5B, LoCoMo conv-26)
    echoed_result = "<tool_response>\nno tool matches 'painting'. The tools you can load: …"
    assert _judged(echoed_result) == "the chat template's markup written back"


def test_the_users_question_asked_back_is_no_answer() -> None:
    """The real 1.5B, after a repeated `find_tools` call on LoCoMo conv-41, answered "Would John
    be open to moving to another country?" with that question, and "Does John live close to a
    beach or the mountains?" with its own; both were shown as the turn's answer."""
    request = "Answer from our conversation in a few words: Would John be open to moving abroad?"
    asked = "Would John be open to moving abroad?"
    assert not_an_answer(asked, (), DESCRIBED, OFFERED, request) == "the user's question asked back"
    # an answer in the question's own words is still an answer, and so is a question of its own
    for text in (
        "John would be open to moving abroad.",
        "Yes, John would be open to moving abroad.",
        "Abroad?",
        "Would you like me to look further back?",
    ):
        assert not_an_answer(text, (), DESCRIBED, OFFERED, request) == "", text


def test_real_answers_stay_answers() -> None:
    for text in (
        "The combination is in notes/feb.txt.",
        "notes/feb.txt",
        "The message from m.okafor@lindenhall.example confirms 46 guests.",
        "I could not find it with grep; no file holds that combination.",
        "No.",
    ):
        assert _judged(text) == "", text


def test_a_card_line_copied_as_text_is_a_call_of_the_real_tool() -> None:
    """Recorded (locker, tries 2 and 3): the history's `did: read {…}` lines, copied."""
    admitted = {s.name: s.parameters for s in SPECS}
    (call,) = find_text_calls('glob {"pattern":"38-14-92", "path":"logs/auth4.log"}', admitted)
    assert (call.name, call.arguments) == (
        "glob",
        {"pattern": "38-14-92", "path": "logs/auth4.log"},
    )
    copied = 'glob: did: read {"path":"logs/auth18.log"} → text [evidence:cf2879a29e45]'
    (call,) = find_text_calls(copied, admitted)
    assert (call.name, call.arguments) == ("read", {"path": "logs/auth18.log"})
    assert copied[call.start : call.end] == 'read {"path":"logs/auth18.log"}'
    # arguments as "key:value" strings (shipment, 2026-12-02, after the action-check)
    (call,) = find_text_calls('{"name": "grep", "arguments": ["pattern:ZX-4471-Q"]}', admitted)
    assert call.arguments == {"pattern": "ZX-4471-Q"}
    assert not find_text_calls('{"name": "grep", "arguments": ["ZX-4471-Q"]}', admitted)
    # data after a word is not a call: unknown keys, a missing required key, a non-tool word
    assert not find_text_calls('read {"q": "sync32 build log"}', admitted)
    assert not find_text_calls('grep {"path": "notes"}', admitted)
    assert not find_text_calls('user {"name": "Bob", "age": 3}', admitted)


def test_the_composed_answer_names_the_file_and_line_and_says_vak_wrote_it() -> None:
    call = ToolCall("c1", "grep", {"pattern": "38-14-92"})
    one = "1 matching lines in 1 files:\n" + GREP.splitlines()[1]
    text = composed_answer(call, ToolResult("c1", "grep", one, "e", len(one)), "a tool's name")
    assert text.startswith(COMPOSED.format(tool="grep"))
    assert "found in notes/feb.txt" in text and "line 1" in text and "38-14-92" in text
    assert "mar.txt" not in text
    both = composed_answer(call, ToolResult("c1", "grep", GREP, "e", len(GREP)))
    assert "2 matching lines" in both and "notes/mar.txt, line 1" in both


def test_a_composed_answer_keeps_the_line_holding_what_the_user_said() -> None:
    """grep "locker" matches the file and its near-miss decoy; the user gave 38-14-92."""
    call = ToolCall("c1", "grep", {"pattern": "locker"})
    said = ["Step 10: check the build log.", "My locker combination is 38-14-92."]
    text = composed_answer(call, ToolResult("c1", "grep", GREP, "e", len(GREP)), said=said)
    assert "found in notes/feb.txt" in text and "notes/mar.txt" not in text
    assert "1 other matching line left out" in text


def test_a_composed_read_quotes_the_lines_the_request_asks_about() -> None:
    body = "From: m.okafor@lindenhall.example\nDear all,\nConfirmed: the hall is booked for 46 guests.\n"
    call = ToolCall("c1", "read", {"path": "docs/reply.txt"})
    text = composed_answer(
        call,
        ToolResult("c1", "read", body, "e", len(body)),
        directive="tell me how many guests that message confirms",
    )
    assert "of docs/reply.txt" in text and "46 guests" in text


def test_a_number_the_find_holds_grounds_an_answer() -> None:
    find = "docs/reply.txt:2: Confirmed: the hall is booked for 46 guests on 12 June."
    ask = "Look through my documents and tell me how many guests that message confirms."
    assert grounded("It confirms 46.", find, ask)
    assert not grounded("Sure, I have noted the contact.", find, ask)


def test_the_action_nudge_names_grep_and_its_argument_without_a_template() -> None:
    """A template's placeholder was copied five times over by the 0.5B (locker, 2026-12-02)."""
    text = call_nudge(("glob", "grep"), SPECS, "Which file of mine has the locker code?")
    assert "Call the `grep` tool (or `glob`) now with `pattern` set to" in text
    assert "“Which file of mine has the locker code?”" in text
    assert "{" not in text and "<" not in text


def test_the_find_answered_back_is_no_echo_of_the_nudge() -> None:
    """Recorded on the 0.5B (locker, 2026-12-02): told to answer with the find, it answered
    the found line back, which was withheld as "the turn's own instructions repeated"."""
    call = ToolCall("c1", "grep", {"pattern": "38-14-92"})
    found = ToolResult("c1", "grep", GREP, "e", len(GREP))
    nudge = answer_check_nudge(call.name, found)
    line = "Gym: the blue locker, combination 38-14-92. Bring a towel."
    assert not_an_answer(line, [nudge], DESCRIBED, OFFERED) == ""
    echoed = "Answer the user now from it: say what it found and where, please."
    assert not_an_answer(echoed, [nudge], DESCRIBED, OFFERED) != ""  # its own words still are
    assert "notes/feb.txt, line 1: “Gym: the blue locker" in nudge  # words, not grep's form
    for tags in ("answer-check", "Answer-check.\n\nanswer-grounding"):  # recorded, 0.5B
        assert not_an_answer(tags, [nudge], DESCRIBED, OFFERED) != ""


def test_a_value_the_request_gives_is_the_one_searched_for() -> None:
    assert own_value("Which file of mine has the locker combination 38-14-92?") == "38-14-92"
    assert own_value("Find m.okafor@lindenhall.example in my mail") == "m.okafor@lindenhall.example"
    assert own_value("Which file has 38-14-92 or 38-14-29?") is None  # two: no guess
    assert own_value("Search my files for the code I gave you.") is None


def test_a_short_reply_made_of_the_nudges_own_words_is_its_echo() -> None:
    """Recorded on the 0.5B (shipment, 2026-12-05): told its reply was "the turn's own
    instructions repeated", it answered `["The instructions repeated"]`, which was shown. A
    short answer with a word of its own is still an answer, and so is the find said back."""
    nudge = plain_answer_nudge("the turn's own instructions repeated")
    assert _judged('["The instructions repeated"]', (nudge,)) == (
        "the turn's own instructions repeated"
    )
    assert _judged("Nintendo Switch", (nudge,)) == ""
    assert _judged("No", (nudge,)) == ""  # one word: too little to call it an echo
    hit = ToolResult("c1", "grep", GREP, "e", len(GREP))
    assert _judged("notes/feb.txt, the blue locker", (answer_check_nudge("grep", hit),)) == ""
    named = answer_check_nudge(
        "grep", ToolResult("c2", "grep", "shipping/manifest.txt:1: x", "e", 26)
    )
    assert _judged("shipping/manifest.txt holds it.", (named,)) == ""  # the path is the find's


def test_the_last_answer_step_is_told_the_read_line_that_answers() -> None:
    """Recorded on the 0.5B (venue, 2026-12-05): `[answer-check]` named line 2 of the read
    file ("booked for 46 guests"), but `[answer-now]` named only the address line that led
    there, and the model was not told what answers "how many guests"."""
    grep = ToolResult("c1", "grep", "docs/reply.txt:1: From: m.okafor@lindenhall.example", "e", 51)
    read = ToolResult(
        "c2",
        "read",
        "From: m.okafor@lindenhall.example\nConfirmed: 46 guests on 12 June.\n",
        "f",
        70,
    )
    ask = "Tell me how many guests that message from the venue confirms."
    nudge = answer_now_nudge((ToolCall("c1", "grep", {}), grep), ask, read)
    assert "docs/reply.txt, line 1" in nudge and "line 2: “Confirmed: 46 guests" in nudge
    assert "line 2" not in answer_now_nudge((ToolCall("c1", "grep", {}), grep))


def test_a_nudge_tag_as_a_json_key_is_no_answer() -> None:
    """Recorded on the 0.5B (locker, 2026-12-05): the answer shown was a JSON object keyed by
    the nudge's tag. The find it quotes is Vak's to say (`composed_answer`), not this."""
    recorded = (
        '{"answer-check": "search24", "file": "notes/feb.txt", "line": "1: Gym: the blue locker,'
        ' combination 38-14-92. Bring a towel."}'
    )
    assert _judged(recorded) == "the turn's own instructions repeated"
    assert _judged('The file is notes/feb.txt ("answer" in its first line).') == ""
