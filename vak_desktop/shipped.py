"""What the app ships beside its code (the card library, chat templates, lexicons, icons), found
the same way from a source checkout, an installed wheel and a frozen bundle.

The files live in the top-level `resources/` folder, which setup.py ships as the data-only
package `vak_desktop.resources`: in the wheel it is `site-packages/vak_desktop/resources/`, an
editable install maps the package name onto the checkout's `resources/`, and the PyInstaller
spec collects it under the same name. Every read of a shipped file goes through
`shipped(path)`; nothing opens a path relative to the source tree. Any layer may import this module: it reads files that are part of the program, not
the user's data.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable


def shipped(path: str) -> Traversable:
    """The shipped file or folder at `path` (slash-separated, e.g. "chat_templates/x.jinja")."""
    node = resources.files("vak_desktop.resources")
    for part in filter(None, path.split("/")):  # "" is the resources folder itself
        node = node / part
    return node
