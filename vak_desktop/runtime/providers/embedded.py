"""The embedded engine: a llama.cpp server the app starts itself, for a GGUF file the user picks.

Why it exists: a user without Ollama (or any other runner) can still chat. The optional
`xllamacpp` package (`pip install 'vak-desktop[embedded]'`) is a prebuilt llama.cpp with its
HTTP server; we start that server on 127.0.0.1 and talk to it through the same
`OpenAICompatibleProvider` as any llama.cpp server, so nothing downstream knows it is ours.

The server runs in a child process (`python -m vak_desktop.runtime.providers.embedded`), not in ours:
its compute threads never compete with the window's event loop for the interpreter, a crash
in native code cannot take the app down, and stopping it is ending a process. The child lets
llama.cpp pick a free port and reports the address on its first stdout line. It ends at once
when its stdin closes, which `stop()` does and the app's death does however it dies, without
llama.cpp's own shutdown (that would first finish the prompt under way, for no one). Two
watches cover what stdin cannot (decision 0114): on Linux the kernel kills the child with its
parent, even while a model load holds the child's interpreter; on any POSIX system the child
ends when its parent pid changes, should a forked process keep the pipe open. Its log
(llama.cpp writes a great deal) goes to a file whose tail is quoted when the engine fails to
start.

    engine = await start_engine(EngineConfig(Path("model.gguf"), n_ctx=8192))
    provider = engine.provider(client)          # an OpenAICompatibleProvider
    ...
    await engine.stop()
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from vak_desktop.providers.client import http_client
from vak_desktop.providers.openai_compatible import OpenAICompatibleProvider
from vak_desktop.shipped import shipped

INSTALL_HINT = "pip install 'vak-desktop[embedded]'"
DEFAULT_STARTUP_TIMEOUT_S = 180.0  # loading a few GB from a slow disk takes a while
STOP_GRACE_S = 10.0
# a PyInstaller bundle has no `python -m`: its entry scripts hand this flag to `main` instead
ENGINE_CHILD_FLAG = "--vak-embedded-engine"
_GGUF_MAGIC = b"GGUF"


class EmbeddedEngineError(RuntimeError):
    """The embedded engine could not be used: not installed, no such model, failed to start."""


def chat_template(name: str) -> Path:
    """A chat template shipped in `resources/chat_templates/` (e.g. "qwen2.5-tools")."""
    ref = shipped(f"chat_templates/{name}.jinja")
    path = Path(str(ref))
    if not path.is_file():
        raise EmbeddedEngineError(f"no chat template named {name!r} ({path})")
    return path


@dataclass(frozen=True)
class EngineConfig:
    """What to serve and how. `chat_template` is a Jinja file replacing the GGUF's own
    template (None keeps the model's); `threads` None lets llama.cpp choose; `temperature` and
    `seed` set the server's sampling defaults (None keeps llama.cpp's) for requests that do not
    name their own; `max_output_tokens` bounds a reply that names no limit (None: until the
    window is full). `prompt_ram_mib` bounds the prompts llama.cpp keeps in RAM beside its
    slot and restores when a request shares a longer prefix with one of them (None: its
    default; 0: only the slot's last prompt is cached, as a benchmark of cold requests needs)."""

    model_path: Path
    n_ctx: int = 8_192
    chat_template: Path | None = None
    threads: int | None = None
    temperature: float | None = None
    seed: int | None = None
    max_output_tokens: int | None = None  # per request that names no max_tokens
    prompt_ram_mib: int | None = None
    startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S


def engine_available() -> bool:
    """Whether the optional `xllamacpp` package is installed."""
    return importlib.util.find_spec("xllamacpp") is not None


# no console window flashes up for the child on Windows (0, which POSIX requires, elsewhere)
_NO_WINDOW = getattr(subprocess, "CREATE_NO_WINDOW", 0)


def engine_command(*arguments: str) -> list[str]:
    """The engine child's command line: this interpreter running this module, or in a frozen
    bundle its console executable `vak` (a windowed executable may have no stdio on Windows)
    with ENGINE_CHILD_FLAG, which `serve_if_engine_child` there answers."""
    if getattr(sys, "frozen", False):
        cli = Path(sys.executable).with_name("vak.exe" if sys.platform == "win32" else "vak")
        return [str(cli), ENGINE_CHILD_FLAG, *arguments]
    return [sys.executable, "-m", "vak_desktop.runtime.providers.embedded", *arguments]


def serve_if_engine_child() -> None:
    """In a bundle's entry script, before anything else: when started as the engine's child,
    be that child and exit."""
    if len(sys.argv) > 1 and sys.argv[1] == ENGINE_CHILD_FLAG:
        sys.exit(main(sys.argv[2:]))


def check_engine_binary(timeout_s: float = 60.0) -> str:
    """Load llama.cpp in a child exactly as a model would be served, without a model; return
    xllamacpp's version. Raises EmbeddedEngineError saying what failed (for --self-test)."""
    try:
        done = subprocess.run(
            engine_command("--check"),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            creationflags=_NO_WINDOW,
        )
    except subprocess.TimeoutExpired:
        raise EmbeddedEngineError(f"the engine check took over {timeout_s:.0f} s") from None
    for line in done.stdout.splitlines():
        with contextlib.suppress(ValueError):
            message = json.loads(line)
            if isinstance(message, dict) and "engine" in message:
                return str(message["engine"])
            if isinstance(message, dict) and "error" in message:
                raise EmbeddedEngineError(str(message["error"]))
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    raise EmbeddedEngineError(f"the engine check exited {done.returncode}: {tail}")


def check_model_file(path: Path) -> None:
    """Refuse, with a sentence a user can act on, a path that is not a readable GGUF file."""
    if not path.exists():
        raise EmbeddedEngineError(f"no model file at {path}")
    if not path.is_file():
        raise EmbeddedEngineError(f"{path} is a folder, not a GGUF model file")
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise EmbeddedEngineError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if magic != _GGUF_MAGIC:
        raise EmbeddedEngineError(f"{path} is not a GGUF model file (it does not start with GGUF)")


class EmbeddedEngine:
    """A running llama.cpp server in a child process. Use `start_engine` to make one."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        base_url: str,
        config: EngineConfig,
        log_path: Path,
    ) -> None:
        self.process = process
        self.base_url = base_url
        self.config = config
        self.log_path = log_path

    @property
    def model(self) -> str:
        """The name requests carry (the server serves one model and accepts any name)."""
        return self.config.model_path.stem

    @property
    def running(self) -> bool:
        return self.process.returncode is None

    def provider(self, client: httpx.AsyncClient) -> OpenAICompatibleProvider:
        """An OpenAI-compatible provider talking to this engine, like any other provider."""
        return OpenAICompatibleProvider(client, self.base_url)

    async def stop(self, grace_s: float = STOP_GRACE_S) -> int:
        """Ask the server to exit (close its stdin), then terminate, then kill. Returns the
        exit code (0: it exited cleanly, and its log is removed). Safe to call twice."""
        process = self.process
        if process.returncode is None:
            if process.stdin is not None and not process.stdin.is_closing():
                process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), grace_s)
            except TimeoutError:
                process.terminate()
                try:
                    await asyncio.wait_for(process.wait(), grace_s)
                except TimeoutError:
                    process.kill()
                    await process.wait()
        code = process.returncode if process.returncode is not None else -1
        if code == 0:  # a clean exit leaves nothing worth reading
            self.log_path.unlink(missing_ok=True)
        return code

    async def __aenter__(self) -> EmbeddedEngine:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def start_engine(config: EngineConfig) -> EmbeddedEngine:
    """Start the server for `config` and return once it answers `/health` as ready.

    Raises EmbeddedEngineError when the model file is not a GGUF file, xllamacpp is missing
    (naming the install command), the server exits while starting (quoting its log), or it is
    not ready within `config.startup_timeout_s` (then it is stopped)."""
    check_model_file(config.model_path)  # the file the user just picked is checked first
    if not engine_available():
        raise EmbeddedEngineError(
            f"the embedded engine needs the xllamacpp package; install it with {INSTALL_HINT}"
        )
    if config.chat_template is not None and not config.chat_template.is_file():
        raise EmbeddedEngineError(f"no chat template file at {config.chat_template}")
    log_fd, log_name = tempfile.mkstemp(prefix="vak-engine-", suffix=".log")
    log_path = Path(log_name)
    arguments = json.dumps(asdict(config), default=str)
    try:
        process = await asyncio.create_subprocess_exec(
            *engine_command(arguments),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=log_fd,
            creationflags=_NO_WINDOW,
        )
    finally:
        os.close(log_fd)
    engine = EmbeddedEngine(process, "", config, log_path)
    deadline = time.monotonic() + config.startup_timeout_s
    try:
        engine.base_url = await _announced_address(engine, deadline)
        await _until_healthy(engine, deadline)
    except BaseException:
        await engine.stop(grace_s=2.0)
        raise
    return engine


async def _announced_address(engine: EmbeddedEngine, deadline: float) -> str:
    """The address the child announces: its first stdout line that is our JSON message."""
    assert engine.process.stdout is not None
    timeout = engine.config.startup_timeout_s
    while True:
        try:
            line = await asyncio.wait_for(
                engine.process.stdout.readline(), max(0.0, deadline - time.monotonic())
            )
        except TimeoutError:
            raise EmbeddedEngineError(
                f"the embedded engine did not start within {timeout:.0f} s "
                f"(loading {engine.config.model_path.name}); its log is {engine.log_path}"
            ) from None
        if not line:  # stdout closed: the child has exited
            await engine.process.wait()
            raise EmbeddedEngineError(
                f"the embedded engine exited while starting (code "
                f"{engine.process.returncode}): {_log_tail(engine.log_path)}"
            )
        try:
            message = json.loads(line)
        except ValueError:
            continue  # native code printing to stdout; not our message
        if isinstance(message, dict) and isinstance(message.get("listening"), str):
            return str(message["listening"])
        if isinstance(message, dict) and "error" in message:
            await engine.process.wait()
            raise EmbeddedEngineError(
                f"the embedded engine could not start: {message['error']} "
                f"(log: {_log_tail(engine.log_path, 3)})"
            )


async def _until_healthy(engine: EmbeddedEngine, deadline: float) -> None:
    """Poll `/health` until the server says it is ready (llama.cpp answers 503 while loading)."""
    async with http_client() as client:
        while True:
            if not engine.running:
                raise EmbeddedEngineError(
                    f"the embedded engine exited while loading: {_log_tail(engine.log_path)}"
                )
            with contextlib.suppress(httpx.TransportError):
                response = await client.get(engine.base_url + "/health", timeout=2.0)
                if response.status_code == 200:
                    return
            if time.monotonic() >= deadline:
                raise EmbeddedEngineError(
                    f"the embedded engine at {engine.base_url} was not ready within "
                    f"{engine.config.startup_timeout_s:.0f} s; its log is {engine.log_path}"
                )
            await asyncio.sleep(0.25)


def _log_tail(path: Path, lines: int = 8) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    tail = [line for line in text.splitlines() if line.strip()][-lines:]
    return " | ".join(tail) or "(the log is empty)"


# -- the child process ------------------------------------------------------------------------


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
ORPHAN_CHECK_S = 1.0


def _end_with_parent() -> None:
    """End this process with its parent where stdin cannot tell. Linux: the kernel sends
    SIGKILL when the parent thread that started us exits (the app's event loop runs on its
    main thread), even while native code holds our interpreter. POSIX: a thread ends us when
    the parent pid changes. Windows has neither and relies on stdin alone."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # should it fail, the watches remain
    if os.name == "posix":
        threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True).start()


def _exit_when_orphaned(parent: int) -> None:
    while os.getppid() == parent:  # an orphan is adopted by init or a subreaper
        time.sleep(ORPHAN_CHECK_S)
    os._exit(0)


def _serve(config: dict[str, Any]) -> int:
    """Serve until stdin closes or the parent dies. Prints {"listening": url} or {"error": why}."""
    _end_with_parent()
    try:
        import xllamacpp  # optional: the `embedded` extra
    except ImportError:
        print(json.dumps({"error": f"xllamacpp is not installed; {INSTALL_HINT}"}), flush=True)
        return 2
    params = xllamacpp.CommonParams()
    params.model.path = str(config["model_path"])
    params.n_ctx = int(config["n_ctx"])
    params.n_parallel = 1  # one conversation at a time keeps the whole window and one cache
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # llama.cpp binds a free port; we read it back
    params.cache_prompt = True
    if config.get("threads"):
        params.cpuparams.n_threads = int(config["threads"])
        params.cpuparams_batch.n_threads = int(config["threads"])
    if config.get("max_output_tokens"):
        params.n_predict = int(config["max_output_tokens"])
    if config.get("temperature") is not None:
        params.sampling.temp = float(config["temperature"])
    if config.get("seed") is not None:
        params.sampling.seed = int(config["seed"])
    if config.get("prompt_ram_mib") is not None:
        params.cache_ram_mib = int(config["prompt_ram_mib"])
    if config.get("chat_template"):
        params.use_jinja = True
        params.chat_template = Path(config["chat_template"]).read_text(encoding="utf-8")
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:  # the native side reports a bad model or no memory this way
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
        return 1
    print(json.dumps({"listening": server.listening_address}), flush=True)
    sys.stdin.read()  # returns when the parent closes our stdin or dies
    # Not `del server`: its destructor waits for llama.cpp to finish the prompt under way (a
    # 7k-token prefill held a killed parent's engine 41 s); the server keeps nothing to save.
    os._exit(0)


def _check() -> int:
    """Load the native library and print {"engine": version} or {"error": why}."""
    try:
        import xllamacpp  # optional: the `embedded` extra
    except ImportError as exc:
        print(json.dumps({"error": f"xllamacpp does not load ({exc}); {INSTALL_HINT}"}))
        return 2
    if not (hasattr(xllamacpp, "Server") and hasattr(xllamacpp, "CommonParams")):
        print(json.dumps({"error": "xllamacpp has no Server/CommonParams"}))
        return 1
    print(json.dumps({"engine": getattr(xllamacpp, "__version__", "unknown")}))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve a GGUF model with llama.cpp (internal).")
    parser.add_argument("config", nargs="?", help="the EngineConfig as JSON")
    parser.add_argument("--check", action="store_true", help="load llama.cpp, serve nothing")
    args = parser.parse_args(argv)
    if args.check:
        return _check()
    if args.config is None:
        parser.error("the EngineConfig is required")
    return _serve(json.loads(args.config))


if __name__ == "__main__":
    sys.exit(main())
