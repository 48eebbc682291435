"""Real MCP servers for the `mcp` tool's tests, and a way to see their processes.

The stdio server is `mcp-server-time` from PyPI (the test extra installs it), run as
`python -m mcp_server_time`. The same package's server object is served over streamable HTTP
on loopback by the SDK's own HTTP transport (uvicorn), since the package itself only speaks
stdio.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vak_desktop.runtime.settings import McpServer

TIME_MODULE = "mcp_server_time"


def time_server(name: str = "time", *extra: str) -> McpServer:
    """`mcp-server-time` over stdio, its local timezone pinned so results are predictable."""
    return McpServer(name, (sys.executable, "-m", TIME_MODULE, "--local-timezone", "UTC", *extra))


def server_processes(marker: str = TIME_MODULE) -> list[int]:
    """Pids of this test process's children whose command line contains `marker`."""
    me = os.getpid()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # it ended while we looked
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
        state, ppid = fields[0], int(fields[1])
        if ppid == me and marker in cmdline and state != "Z":
            found.append(int(proc.name))
    return sorted(found)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def time_server_over_http() -> Iterator[tuple[str, int]]:
    """`mcp-server-time`'s tools over streamable HTTP on loopback; yields (endpoint URL, pid)."""
    port = free_port()
    script = (
        "from mcp_server_time.server import create_server; "
        f"create_server('UTC').run('streamable-http', host='127.0.0.1', port={port})"
    )
    # uvicorn logs every request: a file, not a pipe that could fill up; closed below
    log = tempfile.TemporaryFile("w+")  # noqa: SIM115
    process = subprocess.Popen([sys.executable, "-c", script], stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"the HTTP MCP server exited: {log.read()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the HTTP MCP server did not listen within 30 s") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", process.pid
    finally:
        process.terminate()
        process.wait(10)
        log.close()
