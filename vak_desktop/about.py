"""Who the app is to the operating system: its name, its desktop id (the Linux desktop entry,
the AppStream id, Qt's desktop file name) and its version (from the installed distribution's
metadata, which the PyInstaller spec copies into the bundle), shared by both entry points, the
log file and the installers.
"""

from __future__ import annotations

from importlib import metadata

APP_NAME = "Vak"
DISTRIBUTION = "vak-desktop"
# resources/linux/org.vakdesktop.Vak.desktop and .metainfo.xml carry this id in their names
DESKTOP_ID = "org.vakdesktop.Vak"


def version() -> str:
    """The installed version, e.g. "0.1.0"."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # a source tree on sys.path without an install
        return "0+unknown"
