"""A folder the model made up (issue #22: "invoices", "my files", "path/to/your/files", a
Windows home folder): the file tools search the whole workspace and say so, and the system
text names the workspace folders; a real place outside the workspace is still refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runtime.tools.helpers import SECRET, Tree, call, make_tree
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.tools import ToolRegistry, file_tools


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return make_tree(tmp_path)


@pytest.fixture
def tools(tree: Tree) -> ToolRegistry:
    return ToolRegistry(file_tools([str(tree.root)]))


@pytest.mark.parametrize(
    "invented", ["invoices", "my files", "path/to/your/files", "C:\\Users\\John\\Documents"]
)
async def test_grep_and_glob_in_an_invented_folder_search_the_workspace(
    tools: ToolRegistry, ledger: Ledger, invented: str
) -> None:
    session = ledger.create_session().id
    grep = await call(tools, ledger, session, "grep", pattern="plumber", path=invented)
    assert not grep.is_error and "notes.md:3: TODO: call the plumber" in grep.content
    assert f"no folder {invented!r}: searched every workspace folder instead" in grep.content
    glob = await call(tools, ledger, session, "glob", pattern="*.py", path=invented)
    assert not glob.is_error and "src/app.py" in glob.content and "no folder" in glob.content


async def test_a_nonexistent_absolute_folder_is_searched_for_in_the_workspace_too(
    tools: ToolRegistry, ledger: Ledger, tree: Tree
) -> None:
    session = ledger.create_session().id
    made_up = str(tree.root.parent / "home" / "user" / "files")
    grep = await call(tools, ledger, session, "grep", pattern="plumber", path=made_up)
    assert not grep.is_error and "notes.md:3:" in grep.content


@pytest.mark.allow_log_warnings  # the refusal is logged, as it should be
async def test_a_real_folder_outside_is_still_refused(
    tools: ToolRegistry, ledger: Ledger, tree: Tree, caplog: pytest.LogCaptureFixture
) -> None:
    session = ledger.create_session().id
    with caplog.at_level("WARNING"):
        grep = await call(tools, ledger, session, "grep", pattern="SECRET", path=str(tree.outside))
    assert grep.is_error and "refused" in grep.content and SECRET not in grep.content
    assert any("refused" in r.getMessage() for r in caplog.records)


async def test_read_of_a_file_in_an_invented_folder_says_where_that_name_is(
    tools: ToolRegistry, ledger: Ledger
) -> None:
    session = ledger.create_session().id
    read = await call(tools, ledger, session, "read", path="invoices/app.py")
    assert read.is_error and "files named 'app.py' in the workspace: src/app.py" in read.content
    nowhere = await call(tools, ledger, session, "read", path="my files/taxes.pdf")
    assert nowhere.is_error and "no file named 'taxes.pdf' anywhere" in nowhere.content


def test_the_system_text_note_names_the_workspace_folders(
    tools: ToolRegistry, ledger: Ledger, tree: Tree
) -> None:
    session = ledger.create_session().id
    (note,) = tools.session_notes(ledger, session)  # three file tools, one note
    assert str(tree.root.resolve()) in note and "leave `path` out" in note
    assert ToolRegistry(file_tools()).session_notes(ledger, session) == ()  # no folders: none
