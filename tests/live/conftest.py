"""The live tier: a real model served by a real llama.cpp server. Run it with `make test-live`.

Plain `pytest` never collects this folder (`--ignore=tests/live` in pyproject's addopts): it
downloads a ~470 MB model the first time and takes minutes on a laptop CPU. The model is the
one `tools/fetch-test-model.sh` fetches and verifies (Qwen2.5-Coder-0.5B-Instruct Q4_K_M),
cached in `~/.cache/vak-desktop/models` (`VAK_MODEL_DIR` moves it); `VAK_LIVE_MODEL` names a
GGUF file to use instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def model_path() -> Path:
    """The GGUF file the live tests serve: fetched (and verified) on first use."""
    named = os.environ.get("VAK_LIVE_MODEL")
    if named:
        return Path(named)
    script = ROOT / "tools" / "fetch-test-model.sh"
    done = subprocess.run(
        ["bash", str(script)],
        env={**os.environ, "PYTHON": sys.executable},
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"could not fetch the test model (exit {done.returncode}); see stderr above")
    return Path(done.stdout.strip().splitlines()[-1])
