"""A 200 MB import in bounded memory (issue 24 item 5): a list file is read one conversation
at a time (`runtime/sessions/json_items.py`), so `vak import` of 200 one-megabyte conversations
peaks well under 300 MB resident. The audit's build read, decoded and parsed the file whole:
it ran 300 s at 730 MB without finishing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONVERSATIONS, MEGABYTE = 200, 1 << 20


def _export(path: Path) -> int:
    """A list of OpenAI-shape conversations, each one user message of about a megabyte."""
    line = "a line of an imported conversation, long enough to add up quickly. " * 14 + "\n"
    text = line * (MEGABYTE // len(line))
    with open(path, "w") as out:
        out.write("[\n")
        for i in range(CONVERSATIONS):
            conversation = {
                "title": f"conversation {i}",
                "messages": [
                    {"role": "user", "content": f"{i}: {text}"},
                    {"role": "assistant", "content": f"answer {i}"},
                ],
            }
            out.write(("," if i else "") + json.dumps(conversation) + "\n")
        out.write("]\n")
    return path.stat().st_size


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status")
def test_a_200_mb_import_peaks_under_300_mb_resident(tmp_path: Path) -> None:
    source = tmp_path / "conversations.json"
    size = _export(source)
    assert size >= 200 * 1_000_000
    peak_file = tmp_path / "peak"
    # the child's own peak: VmHWM of its memory map (getrusage's maxrss survives exec, so it
    # counted this test process's size at the fork)
    measured = (
        "import runpy, sys\n"
        "sys.argv = ['vak', *sys.argv[1:]]\n"
        "try:\n"
        "    runpy.run_module('vak_desktop.cli', run_name='__main__')\n"
        "finally:\n"
        "    status = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
        f"    open({str(peak_file)!r}, 'w').write(status)\n"
    )
    argv = ["import", str(source), "--json", "--data-dir", str(tmp_path / "data")]
    done = subprocess.run(
        [sys.executable, "-c", measured, *argv],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["conversations"] == CONVERSATIONS and len(report["sessions"]) == CONVERSATIONS
    peak_mb = int(peak_file.read_text()) / 1024  # kB
    print(f"\nimport of {size / 1e6:.0f} MB: peak {peak_mb:.0f} MB resident")
    assert peak_mb < 300
