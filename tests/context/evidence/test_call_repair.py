"""Invented tool names and arguments (issue #22): mapped onto a real tool only when exactly one
fits, recorded with both forms; anything else is left for the registry's error result."""

from __future__ import annotations

from vak_desktop.context.evidence.call_repair import (
    TOOL_CALL_REPAIRED,
    real_name,
    repair_call,
    repair_calls,
    repaired_arguments,
)
from vak_desktop.context.evidence.text_calls import find_text_calls, machine_text
from vak_desktop.context.payloads import ToolCall
from vak_desktop.context.request import ToolSpec

READ = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "range": {"type": "array"}},
    "required": ["path"],
}
SEARCH = {
    "type": "object",
    "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
    "required": ["pattern"],
}
TOOLS = (
    ToolSpec("read", "Read a file.", READ),
    ToolSpec("glob", "List files.", SEARCH),
    ToolSpec("grep", "Search files.", SEARCH),
    ToolSpec("recall", "Recall a turn.", {"type": "object", "properties": {"turn": {}}}),
    ToolSpec("session_search", "Search chats.", {"type": "object", "properties": {"query": {}}}),
)


def test_names_small_models_invent_map_onto_the_one_real_tool() -> None:
    seen = {
        "read_file": "read",
        "readFile": "read",
        "functions.read": "read",
        "Grep": "grep",
        "open_file": "read",
        "get_file_contents": "read",
        "search_files": "grep",
        "grep_search": "grep",
        "list_dir": "glob",
        "find_files": "glob",
        "search_session": "session_search",
        "recall_turn": "recall",
    }
    assert {name: real_name(name, TOOLS) for name in seen} == seen


def test_a_name_that_fits_no_tool_or_two_is_not_guessed() -> None:
    for name in ("write_file", "delete_all", "read_and_grep", "file", "python", ""):
        assert real_name(name, TOOLS) is None, name
    # a verb whose tool is not offered is no match either
    assert real_name("read_file", TOOLS[1:]) is None


def test_arguments_move_onto_the_properties_they_stand_for() -> None:
    assert repaired_arguments({"q": "ZX"}, SEARCH) == {"pattern": "ZX"}
    assert repaired_arguments({"query": "ZX", "directory": "src"}, SEARCH) == {
        "pattern": "ZX",
        "path": "src",
    }
    assert repaired_arguments({"file_path": "a.md"}, READ) == {"path": "a.md"}
    assert repaired_arguments({"name": "a.md"}, READ) == {"path": "a.md"}  # the lone required
    # a key the schema has is never overwritten, and a right call is left alone
    assert repaired_arguments({"pattern": "a", "q": "b"}, SEARCH) == {"pattern": "a", "q": "b"}
    assert repair_call(ToolCall("c", "grep", {"pattern": "a"}), TOOLS) is None


def test_each_repair_is_recorded_with_what_was_written_and_what_ran() -> None:
    calls = [
        ToolCall("c1", "search_files", {"q": "ZX-4471-Q"}),
        ToolCall("c2", "write_file", {"path": "x", "content": "y"}),
        ToolCall("c3", "read", {"path": "notes.md"}),
    ]
    fixed, activity = repair_calls(calls, TOOLS, step=2)
    assert [(c.id, c.name, c.arguments) for c in fixed] == [
        ("c1", "grep", {"pattern": "ZX-4471-Q"}),
        ("c2", "write_file", {"path": "x", "content": "y"}),  # left for the registry's error
        ("c3", "read", {"path": "notes.md"}),
    ]
    assert activity is not None and activity.type == TOOL_CALL_REPAIRED
    assert activity.detail["step"] == 2 and len(activity.detail["repairs"]) == 1
    assert repair_calls(calls[2:], TOOLS, step=0) == (calls[2:], None)


def test_invented_calls_written_as_text_are_found_in_the_shapes_qwen_writes() -> None:
    admitted = {t.name: t.parameters for t in TOOLS}

    def found(text: str) -> list[tuple[str, dict[str, object]]]:
        return [(c.name, c.arguments) for c in find_text_calls(text, admitted, invented=True)]

    call = {"name": "read_file", "arguments": {"path": "a.md"}}
    bare = '{"name": "read_file", "arguments": {"path": "a.md"}}'
    assert found(bare) == [("read_file", call["arguments"])]
    assert found(f"```json\n{bare}\n```") == [("read_file", call["arguments"])]
    assert found(f"<tool_call>\n{bare}\n</tool_call>") == [("read_file", call["arguments"])]
    openai = '{"type": "function", "function": {"name": "list_dir", "arguments": "{}"}}'
    assert found(openai) == [("list_dir", {})]
    # without `invented`, and for data that only looks like a name, nothing is a call
    assert find_text_calls(bare, admitted) == ()
    assert found('{"name": "Bob", "age": 3}') == []
    assert found('{"name": "Bob"}') == []
    assert found('{"name": "two words", "arguments": {}}') == []


def test_machinery_is_told_from_an_answer() -> None:
    assert machine_text('{"name": "grep", "arguments": ["ZX"]}')
    assert machine_text(
        '```json\n[{"name": "grep", "description": "Search", "parameters": {}}]\n```'
    )
    assert machine_text('<tool_call>\n{"name": "grep"\n')
    assert machine_text('Here: {"name": "write_file", "arguments": {"path": "x"}}')
    # recorded on the 1.5B (issue #22, LoCoMo conv-49): cut off inside a string, a tool named
    # under "function", and keys without their quotes
    assert machine_text('{"name": "recipe_request", "arguments": {"recipe": " marinaded veg')
    assert machine_text('```json\n{"function": "recall", "arguments": {"turn": 76}}\n```')
    assert machine_text('{function: session_search, arguments: {"query": "roadtrips", "limit": 1}}')
    assert not machine_text("The code is in shipping/manifest.txt.")
    assert not machine_text('The file has {"name": "Bob", "age": 3} in it, on line 4 of data.json.')
    answer = 'I searched with {"name": "grep", "arguments": {"pattern": "ZX"}} and found it in a.md'
    assert not machine_text(answer + ", line 3, where the shipment code is written out.")
