"""The `vak` command's entry point: a Ctrl-C at any moment of start-up is one line, exit 130.

Importing the command line (httpx, sqlite-utils, the runtime) takes a second or more on a cold
disk, and a Ctrl-C meanwhile printed a `KeyboardInterrupt` traceback (issue 24): `vak_desktop.cli`
catches it only once its own `main` runs. This module imports nothing heavy, so the whole of
start-up, the import included, runs inside the one handler.
"""

from __future__ import annotations

import signal
import sys


def main() -> int:
    try:
        from vak_desktop.cli import main as run

        return run()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # a second Ctrl-C now just ends it
        try:
            sys.stderr.write("\nvak: stopped\n")
            sys.stderr.flush()
        except OSError:
            pass
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
