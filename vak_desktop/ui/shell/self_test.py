"""`vak-desktop --self-test`: does this build have everything it needs? For any install — a
wheel, an editable checkout, a PyInstaller bundle — and for `make package` and CI.

It reads every shipped resource through the one loader (the card library, the chat templates,
the reading lexicons, the icons, the desktop entry and AppStream file, the model catalogue), loads the embedded llama.cpp engine in its own
child process as a GGUF would be served (no model), and runs the real window startup
(`run_window`) on a temporary data directory, offscreen, closing the window once it is shown.
It prints one JSON line: {"ok", "version", "frozen", "checked": {what: detail}, "missing":
[what: why]} and returns 0, or 1 when anything is missing. The engine is optional in a pip
install (the `embedded` extra) and required in a bundle, which ships it. With
`--self-test-model FILE.gguf` it also serves that file through `start_engine`, the way Tools →
Run a GGUF file does, and asks it for one short answer (`packaging/smoke.py` uses this).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from argparse import Namespace
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from PySide6.QtWidgets import QApplication

from vak_desktop.about import DESKTOP_ID, version
from vak_desktop.runtime.lexicons import lexicon_files, lexicons
from vak_desktop.runtime.presentations import card_library
from vak_desktop.runtime.providers.catalogue import load_catalogue
from vak_desktop.runtime.providers.embedded import (
    EngineConfig,
    check_engine_binary,
    engine_available,
    start_engine,
)
from vak_desktop.shipped import shipped
from vak_desktop.ui.shell.app_icon import PLATFORM_ICONS, icon_pixmaps
from vak_desktop.ui.shell.event_loop import new_event_loop
from vak_desktop.ui.shell.main_window import MainWindow

WINDOW_TIMEOUT_S = 60.0
UNREACHABLE_HOST = "http://127.0.0.1:9"  # the discard port: refused at once, nothing is asked

RunWindow = Callable[..., Awaitable[None]]


def _chat_templates() -> str:
    names = sorted(n.name for n in shipped("chat_templates").iterdir() if n.name.endswith(".jinja"))
    if not names:
        raise FileNotFoundError("no chat templates in chat_templates/")
    for name in names:
        if not shipped(f"chat_templates/{name}").read_text(encoding="utf-8").strip():
            raise ValueError(f"chat_templates/{name} is empty")
    return ", ".join(names)


def _icons() -> str:
    sizes = icon_pixmaps()
    for name in PLATFORM_ICONS:
        if shipped(f"icons/{name}").read_bytes()[:4] not in (b"\0\0\1\0", b"icns"):
            raise ValueError(f"icons/{name} is not an icon file")
    return f"{len(sizes)} PNG sizes, {', '.join(PLATFORM_ICONS)}"


def _desktop_files() -> str:
    names = [f"linux/{DESKTOP_ID}.desktop", f"linux/{DESKTOP_ID}.metainfo.xml"]
    for name in names:
        if DESKTOP_ID not in shipped(name).read_text(encoding="utf-8"):
            raise ValueError(f"{name} does not name {DESKTOP_ID}")
    return ", ".join(names)


def _engine() -> str:
    if not engine_available() and not getattr(sys, "frozen", False):
        return "not installed (optional in a pip install: the `embedded` extra)"
    return f"xllamacpp {check_engine_binary()}"


async def _window(app: QApplication, run_window: RunWindow) -> str:
    seen: dict[str, Any] = {}

    def shown(window: MainWindow) -> None:
        seen.update(visible=window.isVisible(), title=window.windowTitle())
        asyncio.get_running_loop().call_soon(window.close)

    with tempfile.TemporaryDirectory(prefix="vak-self-test-") as data:
        args = Namespace(data_dir=data, host=UNREACHABLE_HOST)
        async with asyncio.timeout(WINDOW_TIMEOUT_S):
            await run_window(app, args, on_shown=shown)
    if not seen.get("visible"):
        raise RuntimeError("the main window was built but not shown")
    return f"shown and closed ({seen['title']!r})"


async def _engine_answer(model: Path) -> str:
    started = time.monotonic()
    config = EngineConfig(model, n_ctx=2048, temperature=0.0, seed=1, max_output_tokens=16)
    engine = await start_engine(config)
    try:
        loaded = time.monotonic() - started
        async with httpx.AsyncClient(base_url=engine.base_url, timeout=120) as client:
            reply = await client.post(
                "/v1/chat/completions",
                json={"model": engine.model, "messages": [{"role": "user", "content": "Hello!"}]},
            )
            reply.raise_for_status()
            text = str(reply.json()["choices"][0]["message"]["content"])
    finally:
        code = await engine.stop()
    if not text.strip():
        raise RuntimeError(f"{model.name} answered with nothing")
    return f"{model.name} loaded in {loaded:.1f} s, answered {text.strip()[:60]!r}, exit {code}"


def run_self_test(
    app: QApplication, run_window: RunWindow, log_file: Path | None, model: Path | None = None
) -> int:
    """Check everything, print the JSON line, return the exit code."""
    app.setQuitOnLastWindowClosed(False)  # closing the window must not stop the runner's loop
    checked: dict[str, str] = {}
    missing: list[str] = []
    checks: list[tuple[str, Callable[[], str]]] = [
        ("card_library", lambda: f"{len(card_library().cards)} card types"),
        ("chat_templates", _chat_templates),
        (
            "lexicons",
            lambda: f"{len(lexicons().languages)} languages of {len(lexicon_files())} files",
        ),
        ("icons", _icons),
        ("desktop_entry", _desktop_files),
        ("model_catalogue", lambda: f"{len(load_catalogue())} downloadable models"),
        ("engine", _engine),
        ("log_file", lambda: str(log_file) if log_file else _raise("cannot write the log file")),
    ]
    for name, check in checks:
        try:
            checked[name] = check()
        except Exception as exc:  # each failure is reported by name, and the others still run
            missing.append(f"{name}: {exc}")
    try:
        with asyncio.Runner(loop_factory=lambda: new_event_loop(app)) as runner:
            checked["main_window"] = runner.run(_window(app, run_window))
            if model is not None:
                checked["engine_answer"] = runner.run(_engine_answer(model))
    except Exception as exc:
        what = "engine_answer" if "main_window" in checked else "main_window"
        missing.append(f"{what}: {type(exc).__name__}: {exc}")
    report = {
        "ok": not missing,
        "version": version(),
        "frozen": bool(getattr(sys, "frozen", False)),
        "checked": checked,
        "missing": missing,
    }
    print(json.dumps(report), flush=True)
    for line in missing:
        print(f"vak-desktop --self-test: missing {line}", file=sys.stderr)
    return 0 if not missing else 1


def _raise(message: str) -> str:
    raise FileNotFoundError(message)
