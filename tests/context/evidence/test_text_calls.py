"""The recogniser of tool calls written as text: what counts as a call, and what never does."""

from __future__ import annotations

from vak_desktop.context.evidence.text_calls import (
    TEXT_FORM_CALL,
    adopt_text_calls,
    find_text_calls,
    text_call_id,
)
from vak_desktop.context.payloads import ToolCall
from vak_desktop.context.request import ToolSpec

READ = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
GREP = {
    "type": "object",
    "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
    "required": ["pattern"],
}
ADMITTED = {"read": READ, "grep": GREP, "recall": {"type": "object", "properties": {}}}
SPECS = tuple(ToolSpec(name, f"the {name} tool", schema) for name, schema in ADMITTED.items())


def calls(text: str) -> list[tuple[str, dict[str, object]]]:
    return [(c.name, c.arguments) for c in find_text_calls(text, ADMITTED)]


def test_json_calls_bare_fenced_and_in_qwen_tags_are_recognised() -> None:
    bare = '{"name": "read", "arguments": {"path": "notes.txt"}}'
    assert calls(bare) == [("read", {"path": "notes.txt"})]
    fenced = (
        'I will read it.\n```json\n{\n  "name": "read",\n  "arguments": {"path": "a.md"}\n}\n```'
    )
    assert calls(fenced) == [("read", {"path": "a.md"})]
    tagged = '<tool_call>\n{"name": "grep", "arguments": {"pattern": "TODO"}}\n</tool_call>'
    assert calls(tagged) == [("grep", {"pattern": "TODO"})]


def test_openai_shapes_lists_and_string_arguments_are_recognised() -> None:
    text = (
        '[{"type": "function", "function": {"name": "read", "arguments": "{\\"path\\": \\"x\\"}"}},'
        ' {"name": "recall"}]'
    )
    assert calls(text) == [("read", {"path": "x"}), ("recall", {})]
    wrapped = '{"tool_calls": [{"function": {"name": "grep", "arguments": {"pattern": "a"}}}]}'
    assert calls(wrapped) == [("grep", {"pattern": "a"})]
    assert calls('{"tool": "read", "parameters": {"path": "y"}}') == [("read", {"path": "y"})]


def test_function_form_takes_keywords_one_object_or_the_sole_parameter() -> None:
    assert calls('read(path="notes.txt")') == [("read", {"path": "notes.txt"})]
    assert calls("Sure: grep(pattern='x', path=\"src\")") == [
        ("grep", {"pattern": "x", "path": "src"})
    ]
    assert calls('read({"path": "a"})') == [("read", {"path": "a"})]
    assert calls('read("only.txt")') == [("read", {"path": "only.txt"})]  # its one required
    assert calls("recall()") == [("recall", {})]
    assert calls("grep(pattern='a(b)c', path=null)") == [
        ("grep", {"pattern": "a(b)c", "path": None})
    ]


def test_unknown_tools_malformed_json_and_mentions_are_not_calls() -> None:
    assert calls('{"name": "delete_everything", "arguments": {}}') == []
    assert calls('{"name": "read", "arguments": {"path": "x"} and then') == []  # never closed
    assert calls('{"name": "read", "arguments": {"path": "x') == []  # broken off in a string
    assert calls('{"name": "read", "arguments": ["x"]}') == []  # arguments not an object
    assert calls('{"name": "read", "arguments": "not json"}') == []
    assert calls("I could read the file, or grep for it.") == []
    assert calls("read(") == []
    assert calls("read(path)") == []  # a variable, not a literal
    assert calls('read("a", "b")') == []  # two positional values for one parameter
    assert calls("thread(path='x')") == []  # another word that ends in a tool's name
    assert calls("os.read(path='x')") == []


def test_a_call_the_step_ended_one_bracket_short_of_is_completed() -> None:
    # measured on a 0.5B model: the step stopped before the last brace in 1 of 6 tries
    stopped = '{"name": "grep", "arguments": {"pattern": "ZX-4471-Q", "path": "shipping"}'
    assert calls(stopped) == [("grep", {"pattern": "ZX-4471-Q", "path": "shipping"})]
    assert calls('Reading it: {"name": "read", "arguments": {"path": "a}b"\n') == [
        ("read", {"path": "a}b"})
    ]
    assert calls('{"name": "read", "arguments": {"path": "x"]') == []  # a wrong bracket


def test_a_tool_definition_copied_back_is_not_a_call() -> None:
    # a small model sometimes echoes a schema from the prompt's <tools> block
    echoed = (
        '{"type": "function", "function": {"name": "grep", "description": "Search files", '
        '"parameters": {"type": "object", "properties": {"pattern": {"type": "string"}}}}}'
    )
    assert calls(echoed) == []


def test_a_json_value_that_is_data_does_not_yield_its_inner_objects() -> None:
    data = '{"example": {"name": "read", "arguments": {"path": "x"}}, "note": "read(path=\'y\')"}'
    assert calls(data) == []


def test_calls_come_in_written_order_with_their_spans() -> None:
    text = (
        'First read(path="a") then\n```json\n{"name": "grep", "arguments": {"pattern": "b"}}\n```'
    )
    found = find_text_calls(text, ADMITTED)
    assert [c.name for c in found] == ["read", "grep"]
    assert [c.form for c in found] == ["function", "json"]
    assert text[found[0].start : found[0].end] == 'read(path="a")'
    assert text[found[1].start : found[1].end].startswith("```json")
    assert text[found[1].end :] == ""


def test_inline_code_goes_with_the_call() -> None:
    text = 'Running `read(path="a.txt")` now.'
    (found,) = find_text_calls(text, ADMITTED)
    assert text[found.start : found.end] == '`read(path="a.txt")`'


def test_adoption_synthesises_ids_keeps_the_prose_and_records_the_text() -> None:
    text = (
        'Let me look.\n<tool_call>\n{"name": "read", "arguments": {"path": "n.txt"}}\n</tool_call>'
    )
    adopted = adopt_text_calls(text, (), SPECS, key="turn-1:0", step=0)
    assert adopted is not None
    assert adopted.calls == (ToolCall(text_call_id("turn-1:0", 0), "read", {"path": "n.txt"}),)
    assert adopted.text == "Let me look."
    assert adopted.activity.type == TEXT_FORM_CALL
    assert adopted.activity.detail["text"] == text
    assert adopted.activity.detail["calls"][0]["form"] == "json"
    again = adopt_text_calls(text, (), SPECS, key="turn-1:0", step=0)
    assert again == adopted  # deterministic: a replay gives the same ids
    assert text_call_id("turn-1:1", 0) != text_call_id("turn-1:0", 0)


def test_a_call_repeated_with_the_same_arguments_runs_once() -> None:
    one, other = '{"name": "read", "arguments": {"path": "a"}}', 'read(path="b")'
    text = f"{one}\n{other}\n{one}\n{one}\n{other}\n"
    adopted = adopt_text_calls(text, (), SPECS, key="k", step=1)
    assert adopted is not None
    assert [c.arguments for c in adopted.calls] == [{"path": "a"}, {"path": "b"}]
    assert adopted.activity.detail["repeats_dropped"] == 3
    assert adopted.text == ""  # every copy was a call, so no prose is left


def test_native_calls_win_over_text() -> None:
    native = (ToolCall("c1", "grep", {"pattern": "x"}),)
    assert adopt_text_calls('read(path="a")', native, SPECS, key="k", step=0) is None
    assert adopt_text_calls("no calls here", (), SPECS, key="k", step=0) is None


def test_what_follows_a_call_is_not_the_steps_text() -> None:
    """Recorded on the 0.5B (locker, 2026-12-02): a call, then flags to the output cap. What
    follows a call was written before its result existed; the Activity keeps it whole."""
    text = 'Searching.\ngrep {"pattern": "38-14-92"} --no-heading --path "logs" --glob "a.log"'
    adopted = adopt_text_calls(text, (), SPECS, key="k", step=1, invented=True)
    assert adopted is not None and adopted.text == "Searching."
    assert adopted.activity.detail["text"] == text


def test_marks_without_a_letter_before_a_call_are_no_text() -> None:
    """Recorded on the 0.5B (venue, 2026-12-05): ">" before each call, and the turn's answer
    began ">\\n\\n>\\n\\n". Prose before a call stays; punctuation alone does not."""
    for before in (">", "```", " - ", "…\n>"):
        adopted = adopt_text_calls(
            f'{before}{{"name": "read", "arguments": {{"path": "docs/reply.txt"}}}}',
            (),
            SPECS,
            key="k",
            step=4,
        )
        assert adopted is not None and adopted.text == ""
    kept = adopt_text_calls('Ok:\nread(path="a")', (), SPECS, key="k", step=0)
    assert kept is not None and kept.text == "Ok:"
