"""The app's icon for Qt (window, taskbar, dock), from the PNGs in `resources/icons/`."""

from __future__ import annotations

from PySide6.QtGui import QIcon, QPixmap

from vak_desktop.shipped import shipped

ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512, 1024)  # tools/make_icons.py draws these
PLATFORM_ICONS = ("vak-desktop.ico", "vak-desktop.icns")  # the Windows and macOS installers'


def icon_pixmaps() -> dict[int, QPixmap]:
    """Each size's pixmap; raises FileNotFoundError naming a PNG that is missing or unreadable."""
    pixmaps = {}
    for size in ICON_SIZES:
        name = f"icons/vak-desktop-{size}.png"
        pixmap = QPixmap()
        if not pixmap.loadFromData(shipped(name).read_bytes(), "PNG") or pixmap.width() != size:
            raise FileNotFoundError(f"{name} is not a {size}px PNG")
        pixmaps[size] = pixmap
    return pixmaps


def app_icon() -> QIcon:
    icon = QIcon()
    for pixmap in icon_pixmaps().values():
        icon.addPixmap(pixmap)
    return icon
