"""The bundle's one program (packaging/vak-desktop.spec), named by how it is called:
`vak-desktop` is the window; `vak` (on Linux and macOS a link to the same file, on Windows a
second executable) is the command line, and the embedded engine's child process
(`vak --vak-embedded-engine CONFIG`). One program, so one copy of the Python modules."""

import os
import sys

from vak_desktop.runtime.providers.embedded import serve_if_engine_child

serve_if_engine_child()

if os.path.basename(sys.argv[0]).lower().removesuffix(".exe") == "vak":
    from vak_desktop.cli_start import main  # a Ctrl-C during the import is exit 130
else:
    from vak_desktop.app import main

sys.exit(main())
