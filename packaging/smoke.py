"""The smoke test for a built bundle: `python packaging/smoke.py DIST_DIR [--model FILE.gguf]`.

Runs what a user's first minute runs, on the bundle's own executables (DIST_DIR holds
`vak-desktop` and `vak`, `.exe` on Windows; on macOS `Vak.app/Contents/MacOS`):

1. `vak-desktop --self-test`: every resource, the engine's binary, the window (offscreen).
2. `vak import` of a two-turn conversation into a temporary ledger, then
   `vak ledger verify --json`: the ledger the bundle writes verifies.
3. With `--model` (or $VAK_SMOKE_MODEL): `vak-desktop --self-test --self-test-model FILE`, in
   which the app's own `start_engine` serves the GGUF file with the bundled llama.cpp engine
   (its child is the bundle's `vak --vak-embedded-engine CONFIG`), gets one answer and stops
   it. It waits for any other model server on the machine to end first (never two at once)
   and gives up after --wait seconds.

Prints one JSON line with what it checked and the timings; exits 1 naming the step that failed.
Only the standard library is used.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ENGINE_CHILD_FLAG = "--vak-embedded-engine"  # vak_desktop.runtime.providers.embedded
CONVERSATION = {
    "messages": [
        {"role": "user", "content": "What is a ledger?"},
        {"role": "assistant", "content": "An append-only record."},
        {"role": "user", "content": "And a hash chain?"},
        {"role": "assistant", "content": "Each entry names the hash of the one before it."},
    ]
}


class SmokeFailure(Exception):
    pass


def executable(dist: Path, name: str) -> Path:
    for folder in (dist, dist / "Vak.app" / "Contents" / "MacOS", dist / "vak-desktop"):
        for candidate in (folder / name, folder / f"{name}.exe"):
            if candidate.is_file():
                return candidate
    raise SmokeFailure(f"no {name} executable under {dist}")


def run(command: list[str], env: dict[str, str], timeout: float) -> str:
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SmokeFailure(f"{command[0]} {command[1]} took over {timeout:.0f} s") from None
    if done.returncode != 0:
        raise SmokeFailure(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def other_model_servers() -> list[str]:
    """Command lines of running processes that look like a model server (as `pgrep -af llama`)."""
    if not Path("/proc").is_dir():
        return []
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if (
            "llama" in cmdline.lower() or ENGINE_CHILD_FLAG in cmdline
        ) and "smoke.py" not in cmdline:
            found.append(f"{proc.name} {cmdline.strip()[:120]}")
    return found


def wait_for_other_model_servers(wait_s: float) -> None:
    deadline = time.monotonic() + wait_s
    while busy := other_model_servers():
        if time.monotonic() > deadline:
            raise SmokeFailure(f"another model server is running: {busy}")
        time.sleep(5)


def smoke(dist: Path, model: Path | None, wait_s: float) -> dict[str, Any]:
    window, vak = executable(dist, "vak-desktop"), executable(dist, "vak")
    checked: dict[str, Any] = {"bundle": str(window.parent)}
    with tempfile.TemporaryDirectory(prefix="vak-smoke-") as temp:
        env = {**os.environ, "VAK_LOG_DIR": str(Path(temp) / "log"), "QT_QPA_PLATFORM": "offscreen"}
        started = time.monotonic()
        report = json.loads(run([str(window), "--self-test"], env, 300).strip().splitlines()[-1])
        if not report["ok"]:
            raise SmokeFailure(f"self-test: {report['missing']}")
        checked["self_test"] = {"s": round(time.monotonic() - started, 2), **report["checked"]}

        data = Path(temp) / "data"
        conversation = Path(temp) / "conversation.json"
        conversation.write_text(json.dumps(CONVERSATION), encoding="utf-8")
        run([str(vak), "--data-dir", str(data), "import", str(conversation)], env, 120)
        verify = json.loads(
            run([str(vak), "--data-dir", str(data), "--json", "ledger", "verify"], env, 120)
        )
        if not verify.get("ok") or not verify.get("entries"):
            raise SmokeFailure(f"ledger verify: {verify}")
        checked["ledger_verify"] = verify

        if model is not None:
            wait_for_other_model_servers(wait_s)
            command = [str(window), "--self-test", "--self-test-model", str(model)]
            report = json.loads(run(command, env, 600).strip().splitlines()[-1])
            if not report["ok"]:
                raise SmokeFailure(f"self-test with {model.name}: {report['missing']}")
            checked["engine_answer"] = report["checked"]["engine_answer"]
        else:
            checked["engine_answer"] = "skipped: no --model (nor VAK_SMOKE_MODEL) given"
    return checked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dist", type=Path, help="the folder holding the bundle's executables")
    parser.add_argument("--model", type=Path, default=os.environ.get("VAK_SMOKE_MODEL") or None)
    parser.add_argument("--wait", type=float, default=600, help="for another model server (s)")
    args = parser.parse_args(argv)
    if args.model is not None and not args.model.is_file():
        print(f"smoke: no model file at {args.model}", file=sys.stderr)
        return 1
    try:
        checked = smoke(args.dist, args.model, args.wait)
    except SmokeFailure as exc:
        print(json.dumps({"ok": False, "failed": str(exc)}))
        print(f"smoke: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({"ok": True, **checked}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
