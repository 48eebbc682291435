"""`python -m vak_desktop`: the window (`vak-desktop`), with the same options."""

import sys

from vak_desktop.app import main

if __name__ == "__main__":
    sys.exit(main())
