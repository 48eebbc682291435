"""A plain `pip install` of the project, without extras, into a fresh venv: every module of
vak_desktop imports, `vak-desktop --self-test` passes, and both entry points print the version.

This is what a user of `pip install vak-desktop` gets; it catches a run-time import that is not
a declared dependency (markdown-it-py was one) and a shipped file left out of the wheel. pip
may reuse wheels from its cache; the install is bounded by a timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from vak_desktop.about import version

ROOT = Path(__file__).resolve().parents[1]
INSTALL_TIMEOUT_S = 900

IMPORT_EVERY_MODULE = """
import importlib, json, pkgutil, vak_desktop
names = [m.name for m in pkgutil.walk_packages(vak_desktop.__path__, "vak_desktop.")
         if not m.name.endswith("__main__")]  # entry points: importing one runs it
for name in names:
    importlib.import_module(name)
print(json.dumps({"modules": names, "file": vak_desktop.__file__}))
"""


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.mark.slow
def test_pip_install_without_extras_imports_everything_and_passes_the_self_test(
    tmp_path: Path,
) -> None:
    target = tmp_path / "venv"
    venv.create(target, with_pip=True)
    bin_dir = target / ("Scripts" if sys.platform == "win32" else "bin")
    python = str(bin_dir / "python")
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")},
        "QT_QPA_PLATFORM": "offscreen",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    _run([python, "-m", "pip", "install", "--quiet", str(ROOT)], tmp_path, env, INSTALL_TIMEOUT_S)

    report = json.loads(_run([python, "-c", IMPORT_EVERY_MODULE], tmp_path, env, 300))
    assert Path(report["file"]).is_relative_to(target)  # the installed copy, not the checkout
    source = {
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for p in (ROOT / "vak_desktop").rglob("*.py")
        if p.name != "__main__.py"
    }
    assert source <= {"vak_desktop", *report["modules"]}

    self_test = json.loads(_run([str(bin_dir / "vak-desktop"), "--self-test"], tmp_path, env, 300))
    assert self_test["ok"], self_test
    assert self_test["checked"]["engine"].startswith("not installed")  # no extras asked for
    for command in (
        [python, "-m", "vak_desktop", "--version"],
        [str(bin_dir / "vak"), "--version"],
    ):
        assert _run(command, tmp_path, env, 60).split()[-1] == version()
