"""Skills: listed once in the stable prefix, their bodies loaded only when asked for."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runtime.scripted import Scripted, ScriptedProvider
from tests.runtime.tools.helpers import call
from vak_desktop.context.payloads import ToolResult
from vak_desktop.ledger import Ledger
from vak_desktop.runtime import ModelBinding, TurnRunner, default_tools
from vak_desktop.runtime.tools.skill import SKILLS_FOLDER, load_skills

NOTES_BODY = "1. List the changes.\n2. Group them by area.\n3. Say what users will notice."


def _skill(folder: Path, name: str, text: str) -> Path:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    skills = tmp_path / "data" / SKILLS_FOLDER
    _skill(
        skills,
        "release-notes",
        "---\nname: release-notes\ndescription: Write release notes from merged changes.\n---\n"
        + NOTES_BODY
        + "\n",
    )
    _skill(skills, "haiku", "---\ndescription: 'Answer in a haiku.'\n---\nFive, seven, five.\n")
    return tmp_path / "data"


async def test_the_prompt_lists_skills_and_the_tool_loads_a_body_on_demand(
    data_dir: Path, ledger: Ledger
) -> None:
    tools = default_tools(data_directory=data_dir, cards=False)
    provider = ScriptedProvider(
        Scripted(calls=[("skill", {"name": "release-notes"})]), Scripted(text="Notes: …")
    )
    session = ledger.create_session().id
    binding = ModelBinding(provider="scripted", model="m", details=None)
    runner = TurnRunner(ledger, provider, tools)
    _ = [e async for e in runner.run(session, "write the release notes", binding)]
    system = provider.requests[0].messages[0].content
    assert system.endswith(
        "Skills (call skill with a name to load its instructions):\n"
        "- haiku: Answer in a haiku.\n"
        "- release-notes: Write release notes from merged changes."
    )
    assert NOTES_BODY not in system  # never inlined
    result = next(
        e.payload for e in ledger.chain_to_root(session) if isinstance(e.payload, ToolResult)
    )
    assert result.content == NOTES_BODY
    assert provider.requests[1].messages[0].content == system
    skill_spec = next(t for t in provider.requests[0].tools if t.name == "skill")
    assert skill_spec.parameters["properties"]["name"]["enum"] == ["haiku", "release-notes"]


async def test_an_edited_body_is_read_at_call_time_and_unknown_names_are_errors(
    data_dir: Path, ledger: Ledger
) -> None:
    tools = default_tools(data_directory=data_dir, cards=False)
    session = ledger.create_session().id
    path = data_dir / SKILLS_FOLDER / "haiku" / "SKILL.md"
    path.write_text("---\ndescription: Answer in a haiku.\n---\nSeventeen syllables.\n")
    assert (
        await call(tools, ledger, session, "skill", name="haiku")
    ).content == "Seventeen syllables."
    unknown = await call(tools, ledger, session, "skill", name="sonnet")
    assert (
        unknown.is_error and "no skill 'sonnet' (skills: haiku, release-notes)" in unknown.content
    )
    path.unlink()
    gone = await call(tools, ledger, session, "skill", name="haiku")
    assert gone.is_error and "cannot be loaded" in gone.content


@pytest.mark.allow_log_warnings  # a broken skill file is logged by name
def test_a_broken_skill_file_is_left_out_and_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _skill(tmp_path, "no-fence", "just text\n")
    _skill(tmp_path, "no-description", "---\nname: no-description\n---\nbody\n")
    _skill(tmp_path, "Bad Name", "---\nname: Bad Name\ndescription: x\n---\n")
    _skill(tmp_path, "fine", "---\ndescription: Fine.\n---\nok\n")
    assert [s.name for s in load_skills([tmp_path])] == ["fine"]
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "does not open with a '---'" in messages and "no `description`" in messages
    assert "must be lower-case" in messages


def test_no_skills_no_skill_tool(tmp_path: Path) -> None:
    assert "skill" not in default_tools(data_directory=tmp_path)
    assert "skill" not in default_tools()


def test_front_matter_is_yaml_a_folded_description_included(tmp_path: Path) -> None:
    """Issue 23: a valid YAML `description: >` block was refused (`expected key: value`)."""
    _skill(
        tmp_path,
        "folded",
        "---\nname: folded\ndescription: >\n  Write release notes\n  from merged changes.\n"
        "tags: [notes, writing]  # a list, not text: ignored\n---\nbody\n",
    )
    [skill] = load_skills([tmp_path])
    assert skill.description == "Write release notes from merged changes."


@pytest.mark.allow_log_warnings
def test_front_matter_that_is_not_yaml_is_named_with_its_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _skill(tmp_path, "broken", "---\nname: broken\ndescription: [unclosed\n---\nbody\n")
    _skill(tmp_path, "listed", "---\n- just\n- a list\n---\nbody\n")
    assert load_skills([tmp_path]) == ()
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert f"{Path('broken', 'SKILL.md')}:3: the front matter is not valid YAML" in messages
    assert f"{Path('listed', 'SKILL.md')}: the front matter must be `key: value` lines" in messages
