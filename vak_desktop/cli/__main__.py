"""`python -m vak_desktop.cli`: the `vak` command."""

from vak_desktop.cli_start import main

raise SystemExit(main())
