"""The symlink swap race (issue 24 F2): a second process swaps a workspace folder for a link to
an outside folder and back, as fast as it can, while `read` and `grep` run. The audit's build
checked the name, then opened it again by name: 188 of 34,919 reads and 96 of 18,390 greps
returned the outside file. Each call here must return the inside file or an error, never a
byte of the outside one. Prints its figures (run with `-s`).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from vak_desktop.runtime.tools.files import GrepTool, ReadTool
from vak_desktop.runtime.tools.registry import ToolFailure
from vak_desktop.runtime.tools.workspace import Workspace

READS, GREPS = 25_000, 5_000
SWAPPER = """
import os, sys, traceback
ws, outside = sys.argv[1], sys.argv[2]
sub, parked = os.path.join(ws, "sub"), os.path.join(ws, "sub.d")
try:
    while True:
        os.rename(sub, parked)
        os.symlink(outside, sub)
        os.unlink(sub)
        os.rename(parked, sub)
        for _ in range(10000):  # the folder stays a while, so that most calls can get in
            pass
except BaseException:
    with open(os.path.join(ws, "..", "swapper.err"), "w") as out:
        traceback.print_exc(file=out)
    raise
"""


@pytest.mark.timeout(400)
@pytest.mark.allow_log_warnings  # a read that lands on the link is refused, with a warning
def test_a_folder_swapped_for_a_link_out_never_leaks_a_byte(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "sub").mkdir(parents=True)
    outside.mkdir()
    (ws / "sub" / "notes.txt").write_text("inside text\n")
    (outside / "notes.txt").write_text("OUTSIDE-SECRET\n")
    workspace = Workspace((ws.resolve(),))
    read, grep = ReadTool(), GrepTool()
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(ws), str(outside)])
    leaks = {"read": 0, "grep": 0}
    answered = {"read": 0, "grep": 0}
    started = time.monotonic()
    try:
        time.sleep(0.2)  # swapping
        for i in range(READS + GREPS):
            tool, arguments = (
                (read, {"path": "sub/notes.txt"})
                if i % 6
                else (grep, {"pattern": "SECRET|inside", "path": "sub" if i % 12 else ""})
            )
            name = tool.spec.name
            try:
                text = tool.work(arguments, workspace).content
            except (ToolFailure, OSError):
                continue  # no such file (mid-swap), refused: never a leak
            answered[name] += "inside" in text
            leaks[name] += "OUTSIDE" in text
        assert swapper.poll() is None, (tmp_path / "swapper.err").read_text()
    finally:
        swapper.kill()
        swapper.wait(timeout=10)
    took = time.monotonic() - started
    print(
        f"\nswap race: {READS} reads ({answered['read']} answered from inside, "
        f"{leaks['read']} leaks), {GREPS} greps ({answered['grep']} answered, "
        f"{leaks['grep']} leaks) in {took:.1f} s"
    )
    assert leaks == {"read": 0, "grep": 0}
    assert answered["read"] > 50 and answered["grep"] > 50  # calls got in between swaps
