"""The smoke test for a built bundle: `python packaging/smoke.py DIST_DIR [--model FILE.gguf]`.

Runs what a user's first minute runs, on the bundle's own executables (DIST_DIR holds
`vak-desktop` and `vak`, `.exe` on Windows; on macOS `Vak.app/Contents/MacOS`):

1. `vak-desktop --self-test`: every resource, the engine's binary, the window (offscreen).
2. `vak import` of a two-turn conversation into a temporary ledger, then
   `vak ledger verify --json`: the ledger the bundle writes verifies.
3. With `--model` (or $VAK_SMOKE_MODEL): `vak-desktop --self-test --self-test-model FILE`, in
   which the app's own `start_engine` serves the GGUF file with the bundled llama.cpp engine
   (its child is the bundle's `vak --vak-embedded-engine CONFIG`), gets one answer and stops
   it. The engine it started is found by PID (a descendant of that self-test process whose
   arguments hold the engine flag) and must be gone when the self-test ends. Before starting,
   it waits for another Vak engine (a process with that flag, not its own) to end, giving up
   after --wait seconds; other programs (`ollama serve`, anything named "llama") are not Vak's
   engine and are not waited for.

Prints one JSON line with what it checked and the timings; exits 1 naming the step that failed.
Only the standard library is used.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
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


def processes() -> dict[int, tuple[int, list[str]]]:
    """Every process this user can see: pid -> (parent pid, arguments). Linux reads /proc,
    macOS and the BSDs `ps`; elsewhere (Windows) nothing, and the PID checks are skipped."""
    table: dict[int, tuple[int, list[str]]] = {}
    if Path("/proc/self/stat").is_file():
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                stat = (proc / "stat").read_text(errors="replace")
                argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
            except OSError:
                continue
            parent = int(stat.rpartition(")")[2].split()[1])  # the field after the state
            table[int(proc.name)] = (parent, [arg for arg in argv if arg])
    elif shutil.which("ps"):
        listing = subprocess.run(
            ["ps", "-A", "-o", "pid=", "-o", "ppid=", "-o", "command="],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        for line in listing.splitlines():
            pid, parent, *argv = line.split()
            table[int(pid)] = (int(parent), argv)
    return table


def descendants(root: int, table: dict[int, tuple[int, list[str]]]) -> set[int]:
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, (parent, _) in table.items() if parent in frontier} - found
        found |= frontier
    return found


def engines(table: dict[int, tuple[int, list[str]]]) -> set[int]:
    """The processes that are a Vak embedded engine: ENGINE_CHILD_FLAG is one of their
    arguments (a name containing "llama" is not enough: `ollama serve` is not one)."""
    return {pid for pid, (_, argv) in table.items() if ENGINE_CHILD_FLAG in argv[1:]}


def wait_for_other_engines(wait_s: float) -> None:
    deadline = time.monotonic() + wait_s
    while busy := engines(processes()) - {os.getpid()}:
        if time.monotonic() > deadline:
            raise SmokeFailure(f"another Vak engine is running: pid {sorted(busy)}")
        time.sleep(2)


def answer_with_model(window: Path, model: Path, env: dict[str, str], temp: Path) -> Any:
    """`vak-desktop --self-test --self-test-model FILE`, watching for its own engine by PID."""
    command = [str(window), "--self-test", "--self-test-model", str(model)]
    out_path, err_path = temp / "model.out", temp / "model.err"
    own: set[int] = set()
    with out_path.open("w") as out, err_path.open("w") as err:
        child = subprocess.Popen(command, env=env, stdout=out, stderr=err, text=True)
        deadline = time.monotonic() + 600
        while child.poll() is None:
            table = processes()
            own |= engines(table) & descendants(child.pid, table)
            if time.monotonic() > deadline:
                child.kill()
                child.wait()
                raise SmokeFailure("the self-test with a model took over 600 s")
            time.sleep(0.5)
    left = own & set(processes())
    for pid in left:  # the app must stop its engine; never leave one running
        os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
    if left:
        raise SmokeFailure(f"the engine (pid {sorted(left)}) outlived the app")
    if child.returncode != 0:
        raise SmokeFailure(
            f"{' '.join(command)} exited {child.returncode}: {err_path.read_text()[-2000:]}"
        )
    report = json.loads(out_path.read_text().strip().splitlines()[-1])
    if not report["ok"]:
        raise SmokeFailure(f"self-test with {model.name}: {report['missing']}")
    return {"answer": report["checked"]["engine_answer"], "engine_pids": sorted(own)}


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
            wait_for_other_engines(wait_s)
            checked["engine_answer"] = answer_with_model(window, model, env, Path(temp))
        else:
            checked["engine_answer"] = "skipped: no --model (nor VAK_SMOKE_MODEL) given"
    return checked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dist", type=Path, help="the folder holding the bundle's executables")
    parser.add_argument("--model", type=Path, default=os.environ.get("VAK_SMOKE_MODEL") or None)
    parser.add_argument("--wait", type=float, default=600, help="for another Vak engine (s)")
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
