"""Draws the app icon and writes every size each OS asks for: `python tools/make_icons.py`.

The icon is drawn with QPainter (vector shapes, so each size is drawn, not scaled): a blue
rounded square (the theme's accent), a white speech bubble, and in it three ledger lines, the
last one short and blue, for a conversation kept as an append-only record. Written to
`resources/icons/`:

    vak-desktop-{16..1024}.png  Linux hicolor sizes and the window icon (Qt picks the size)
    vak-desktop.ico             Windows: 16, 24, 32, 48, 64, 128, 256 as PNG entries
    vak-desktop.icns            macOS: 16 to 1024 (icp4 … ic10) as PNG entries

ICO and ICNS are both a small header and a directory of PNG blobs; they are written here so no
imaging library is needed. The output is committed; run this again only when the drawing changes.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QImage,
    QLinearGradient,
    QPainter,
    QPainterPath,
)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "resources" / "icons"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512, 1024)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# ICNS entry types holding PNG data, by pixel size (the @2x types reuse the larger images)
ICNS_TYPES = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"icp6", 64),
    (b"ic07", 128),
    (b"ic08", 256),
    (b"ic09", 512),
    (b"ic10", 1024),
    (b"ic11", 32),
    (b"ic12", 64),
    (b"ic13", 256),
    (b"ic14", 512),
)


def draw(size: int) -> QImage:
    """The icon at `size`×`size` pixels, transparent outside the rounded square."""
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.scale(size / 100, size / 100)  # draw on a 100×100 grid
    p.setPen(Qt.PenStyle.NoPen)

    gradient = QLinearGradient(QPointF(0, 0), QPointF(0, 100))
    gradient.setColorAt(0, QColor("#3b82f6"))
    gradient.setColorAt(1, QColor("#1d4ed8"))
    p.setBrush(gradient)
    p.drawRoundedRect(QRectF(4, 4, 92, 92), 22, 22)

    bubble = QPainterPath()
    bubble.addRoundedRect(QRectF(18, 20, 64, 48), 12, 12)
    tail = QPainterPath()
    tail.moveTo(30, 64)
    tail.lineTo(26, 82)
    tail.lineTo(46, 66)
    tail.closeSubpath()
    p.setBrush(QColor("#ffffff"))
    p.drawPath(bubble.united(tail))

    line_height = 7 if size >= 32 else 9  # thicker at the smallest sizes, so they still read
    for y, width, color in ((30, 44, "#9db4d9"), (41, 44, "#9db4d9"), (52, 26, "#2563eb")):
        p.setBrush(QColor(color))
        p.drawRoundedRect(QRectF(28, y, width, line_height), line_height / 2, line_height / 2)
    p.end()
    return image


def png_bytes(image: QImage) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise RuntimeError("Qt could not encode a PNG")
    buffer.close()
    return bytes(data.data())


def ico(pngs: dict[int, bytes]) -> bytes:
    """An ICO file (Vista and later read PNG entries) holding the ICO_SIZES images."""
    header = struct.pack("<HHH", 0, 1, len(ICO_SIZES))
    directory = b""
    blobs = b""
    offset = 6 + 16 * len(ICO_SIZES)
    for size in ICO_SIZES:
        blob = pngs[size]
        side = 0 if size >= 256 else size  # 0 means 256 in an ICO directory
        directory += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(blob), offset)
        blobs += blob
        offset += len(blob)
    return header + directory + blobs


def icns(pngs: dict[int, bytes]) -> bytes:
    """An ICNS file: 'icns', total length, then (type, length, PNG) entries."""
    body = b"".join(
        kind + struct.pack(">I", 8 + len(pngs[size])) + pngs[size] for kind, size in ICNS_TYPES
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    OUT.mkdir(parents=True, exist_ok=True)
    pngs = {size: png_bytes(draw(size)) for size in PNG_SIZES}
    for size, blob in pngs.items():
        (OUT / f"vak-desktop-{size}.png").write_bytes(blob)
    (OUT / "vak-desktop.ico").write_bytes(ico(pngs))
    (OUT / "vak-desktop.icns").write_bytes(icns(pngs))
    print(f"wrote {len(pngs)} PNGs, vak-desktop.ico and vak-desktop.icns to {OUT}")
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
