"""The bundle's `vak-desktop` executable (packaging/vak-desktop.spec): the window."""

import sys

from vak_desktop.runtime.providers.embedded import serve_if_engine_child

serve_if_engine_child()

from vak_desktop.app import main  # noqa: E402 (after the engine child's early exit)

sys.exit(main())
