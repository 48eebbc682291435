"""Before the QApplication: can Qt open a window on this Linux desktop? If not, say which
packages to install, instead of Qt's abort ("could not load the Qt platform plugin xcb").

Why it exists: PySide6's xcb plugin needs a dozen X11 libraries that stock Debian and Ubuntu
installs lack (libxcb-cursor0 first of all); Qt then aborts with an explanation only a Qt
developer can act on. We load the plugin ourselves first (the same file Qt would load, from
the wheel or the bundle) and, when that fails, probe each library the plugin links against and
print the distribution's package names. The table also gives the .deb its Depends
(`packaging/linux/build.sh`). Windows and macOS: Qt's plugins there need nothing the OS lacks.
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

from PySide6.QtCore import QLibraryInfo

# soname -> (Debian/Ubuntu, Fedora, Arch) package: what libqxcb.so and libQt6XcbQpa link against
XCB_LIBRARIES: dict[str, tuple[str, str, str]] = {
    "libxcb.so.1": ("libxcb1", "libxcb", "libxcb"),
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm", "xcb-util-wm"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image", "xcb-util-image"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms", "xcb-util-keysyms"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb", "libxcb"),
    "libxcb-render-util.so.0": (
        "libxcb-render-util0",
        "xcb-util-renderutil",
        "xcb-util-renderutil",
    ),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb", "libxcb"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util", "xcb-util"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb", "libxcb"),
    "libX11.so.6": ("libx11-6", "libX11", "libx11"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb", "libx11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11", "libxkbcommon-x11"),
    "libGL.so.1": ("libgl1", "libglvnd-glx", "libglvnd"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl", "libglvnd"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype", "freetype2"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2", "glib2"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs", "dbus"),
}
_INSTALLERS = ("sudo apt-get install", "sudo dnf install", "sudo pacman -S")


def debian_packages() -> list[str]:
    """Every Debian package the xcb plugin needs (the .deb's Depends)."""
    return sorted({packages[0] for packages in XCB_LIBRARIES.values()})


def _family(os_release: str) -> int:
    """0 Debian/Ubuntu, 1 Fedora/RHEL/openSUSE-like rpm, 2 Arch; Debian when unknown."""
    ids = ""
    for line in os_release.splitlines():
        key, _, value = line.partition("=")
        if key in ("ID", "ID_LIKE"):
            ids += " " + value.strip().strip('"').lower()
    words = set(ids.split())
    if words & {"fedora", "rhel", "centos"}:
        return 1
    if words & {"arch", "manjaro"}:
        return 2
    return 0


def _loads(library: str) -> str | None:
    """None when `library` loads (from the system, or from the bundle, which carries some of
    the build machine's), else the loader's message."""
    bundled = getattr(sys, "_MEIPASS", None)
    candidates = [library] + ([str(Path(bundled) / library)] if bundled else [])
    error = ""
    for candidate in candidates:
        try:
            ctypes.CDLL(candidate)
        except OSError as exc:
            error = error or str(exc)
        else:
            return None
    return error


def missing_libraries() -> tuple[list[str], str | None]:
    """The sonames of XCB_LIBRARIES that do not load, and the plugin's own load error (None
    when the plugin loads)."""
    plugin = (
        Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)) / "platforms" / "libqxcb.so"
    )
    error = _loads(str(plugin)) if plugin.is_file() else f"no xcb plugin at {plugin}"
    if error is None:
        return [], None
    return [name for name in XCB_LIBRARIES if _loads(name) is not None], error


def _uses_xcb(environ: os._Environ[str] | dict[str, str]) -> bool:
    platform = environ.get("QT_QPA_PLATFORM", "")
    if platform:
        return platform.startswith("xcb")
    return not environ.get("WAYLAND_DISPLAY")  # Qt prefers Wayland in a Wayland session


def display_problem(environ: os._Environ[str] | dict[str, str] | None = None) -> str | None:
    """What stops Qt from opening a window here, with what to do; None when nothing does."""
    env = os.environ if environ is None else environ
    if not sys.platform.startswith("linux") or not _uses_xcb(env):
        return None
    if not env.get("DISPLAY") and not env.get("QT_QPA_PLATFORM"):
        return (
            "vak-desktop: no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY "
            "is set). Start it from a desktop session, or set QT_QPA_PLATFORM=offscreen."
        )
    missing, error = missing_libraries()
    if error is None:
        return None
    if not missing:
        return f"vak-desktop: Qt's xcb platform plugin does not load: {error}"
    try:
        release = Path("/etc/os-release").read_text(encoding="utf-8")
    except OSError:
        release = ""
    family = _family(release)
    packages = sorted({XCB_LIBRARIES[name][family] for name in missing})
    return (
        f"vak-desktop: Qt cannot open a window: {', '.join(missing)} "
        f"{'is' if len(missing) == 1 else 'are'} missing. Install:\n"
        f"    {_INSTALLERS[family]} {' '.join(packages)}"
    )
