"""Windows' standard library, simulated on Linux: a pytest plugin (`-p tests.no_posix`).

A call to a POSIX-only function (`os.pread`, `fcntl.flock`, `signal.SIGKILL` …) outside a
platform branch works on Linux and macOS and raises AttributeError or ImportError on Windows,
where no CI test runs before a release is built. Loaded as a plugin, before anything of the app
is imported, this hides every name Windows' Python lacks from the app's modules and the tests:
each `import os` / `import signal` made by a module of `vak_desktop` or `tests` gets a view of
the real module without those names (`hasattr(os, "pread")` is False, `from os import pread`
fails), and importing a POSIX-only module (`fcntl`, `termios`, `pwd` …) from them fails.
The rest of the interpreter (the standard library, pytest, httpx) keeps the real modules.

A module that uses a POSIX-only name inside its own platform branch (`if sys.platform ==
"win32": msvcrt … else: fcntl …`) names it in PLATFORM_BRANCHES: the simulation still runs on
Linux, so it takes the POSIX branch. Run through tests/test_portable.py.
"""

from __future__ import annotations

import builtins
import os
import signal
import types
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Names the CPython 3.11+ of Windows does not have (checked against its `dir(os)`/`dir(signal)`)
HIDDEN: dict[str, frozenset[str]] = {
    "os": _names(
        """pread pwrite preadv pwritev fork forkpty getuid geteuid getgid getegid getgroups
        setuid seteuid setgid setegid setsid getsid setpgid getpgid getpgrp killpg chown
        lchown fchown fdatasync sync statvfs fstatvfs mkfifo mknod nice getloadavg uname
        sysconf pathconf fpathconf confstr openpty ttyname ctermid wait3 wait4 WNOHANG
        posix_spawn posix_spawnp posix_fadvise posix_fallocate sched_getaffinity
        sched_setaffinity sendfile pipe2 O_NOFOLLOW O_DIRECTORY O_CLOEXEC O_NONBLOCK O_NOCTTY
        O_SYNC O_DSYNC O_ASYNC O_PATH register_at_fork fwalk"""
    ),
    "signal": _names(
        """SIGKILL SIGSTOP SIGCONT SIGHUP SIGQUIT SIGALRM SIGUSR1 SIGUSR2 SIGCHLD SIGPIPE SIGTSTP
        SIGTTIN SIGTTOU SIGWINCH SIGVTALRM SIGPROF SIGIO SIGURG SIGXCPU SIGXFSZ SIGSYS SIGTRAP
        SIGBUS alarm pause setitimer getitimer siginterrupt pthread_kill pthread_sigmask
        sigpending sigwait sigwaitinfo sigtimedwait ITIMER_REAL ITIMER_VIRTUAL ITIMER_PROF
        SIG_BLOCK SIG_UNBLOCK SIG_SETMASK"""
    ),
}
POSIX_MODULES = _names(
    "fcntl termios tty pty pwd grp resource posix syslog crypt spwd nis readline"
)
# module -> the POSIX-only modules or names it uses inside its own platform branch
PLATFORM_BRANCHES: dict[str, frozenset[str]] = {
    "vak_desktop.ledger.writers": frozenset({"fcntl"}),
}

ROOT = Path(__file__).resolve().parents[1]
WATCHED = (str(ROOT / "vak_desktop"), str(ROOT / "tests"))
_real_import = builtins.__import__


class _Without(types.ModuleType):
    """The real module `real` without the names in `hidden`."""

    def __init__(self, real: types.ModuleType, hidden: frozenset[str]) -> None:
        super().__init__(real.__name__, real.__doc__)
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_hidden", hidden)

    def __getattr__(self, name: str) -> Any:
        if name in self._hidden:
            raise AttributeError(
                f"module {self._real.__name__!r} has no attribute {name!r} on Windows "
                "(simulated by tests/no_posix.py)"
            )
        return getattr(self._real, name)

    def __setattr__(self, name: str, value: Any) -> None:  # monkeypatch.setattr(os, ...)
        setattr(self._real, name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self._real, name)

    def __dir__(self) -> list[str]:
        return [name for name in dir(self._real) if name not in self._hidden]


_views: dict[tuple[str, str], _Without] = {}


def _watched(module_globals: Mapping[str, Any] | None) -> str | None:
    """The importing module's name when it is one of the app's or the tests' modules."""
    if not module_globals:
        return None
    file = module_globals.get("__file__") or ""
    return str(module_globals.get("__name__")) if file.startswith(WATCHED) else None


def _import(
    name: str,
    globals: Mapping[str, Any] | None = None,  # builtins.__import__'s signature
    locals: Mapping[str, Any] | None = None,
    fromlist: Sequence[str] = (),
    level: int = 0,
) -> types.ModuleType:
    module = _real_import(name, globals, locals, fromlist, level)
    importer = _watched(globals) if level == 0 else None
    if importer is None:
        return module
    allowed = PLATFORM_BRANCHES.get(importer, frozenset())
    top = name.partition(".")[0]
    if top in POSIX_MODULES and top not in allowed:
        raise ImportError(f"{importer} imports {top}, which Windows does not have")
    if top in HIDDEN and (not fromlist or name == top):
        key = (importer, top)
        if key not in _views:
            _views[key] = _Without(module, HIDDEN[top] - allowed)
        return _views[key]
    return module


def hidden_here() -> int:
    """How many POSIX-only names this process really has that the simulation hides."""
    real = {"os": os, "signal": signal}
    return sum(hasattr(real[module], name) for module, names in HIDDEN.items() for name in names)


builtins.__import__ = _import


def pytest_terminal_summary(terminalreporter: Any) -> None:
    terminalreporter.write_line(
        f"no_posix: {hidden_here()} POSIX-only names hidden from vak_desktop and tests"
    )
