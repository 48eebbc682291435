"""The bundle's `vak` executable (packaging/vak-desktop.spec): the command line, and the
embedded engine's child process (`vak --vak-embedded-engine CONFIG`)."""

import sys

from vak_desktop.runtime.providers.embedded import serve_if_engine_child

serve_if_engine_child()

from vak_desktop.cli import main  # noqa: E402 (after the engine child's early exit)

sys.exit(main())
