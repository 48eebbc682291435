#!/usr/bin/env bash
# Linux installers from the one-folder bundle dist/vak-desktop/ (see packaging/vak-desktop.spec):
#
#   dist/vak-desktop_VERSION_amd64.deb        /opt/vak-desktop, /usr/bin/{vak-desktop,vak},
#                                             the desktop entry, icons and AppStream metadata;
#                                             Depends: the X11/xcb libraries Qt's xcb plugin
#                                             needs (vak_desktop/ui/platform_check.py)
#   dist/vak-desktop-VERSION-linux-x86_64.tar.gz  the same files under vak-desktop-VERSION/
#
# Then each artefact is unpacked into a temporary folder and its `vak-desktop --self-test`
# must pass. PYTHON: a Python with the project installed (for the Depends list).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
PYTHON="${PYTHON:-.venv/bin/python}"
bundle=dist/vak-desktop
id=org.vakdesktop.Vak
[ -x "$bundle/vak-desktop" ] || { echo "no bundle at $bundle: run PyInstaller first" >&2; exit 1; }
version="$("$bundle/vak" --version | awk '{print $2}')"
arch="$(dpkg --print-architecture 2>/dev/null || echo amd64)"
machine="$(uname -m)"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

# the file tree both artefacts share, rooted at $1 (prefix $2 for the launchers' target)
lay_out() {
    local top="$1" prefix="$2"
    mkdir -p "$top$prefix" "$top/usr/bin" "$top/usr/share/applications" "$top/usr/share/metainfo"
    cp -a "$bundle/." "$top$prefix/"
    ln -s "$prefix/vak-desktop" "$top/usr/bin/vak-desktop"
    ln -s "$prefix/vak" "$top/usr/bin/vak"
    install -m 644 "resources/linux/$id.desktop" "$top/usr/share/applications/$id.desktop"
    install -m 644 "resources/linux/$id.metainfo.xml" "$top/usr/share/metainfo/$id.metainfo.xml"
    for size in 16 24 32 48 64 128 256 512; do
        install -D -m 644 "resources/icons/vak-desktop-$size.png" \
            "$top/usr/share/icons/hicolor/${size}x${size}/apps/$id.png"
    done
}

# -- .deb
deb_root="$stage/deb"
lay_out "$deb_root" /opt/vak-desktop
depends="$("$PYTHON" -c 'from vak_desktop.ui.platform_check import debian_packages; print(", ".join(debian_packages()))')"
mkdir -p "$deb_root/DEBIAN"
cat > "$deb_root/DEBIAN/control" <<CONTROL
Package: vak-desktop
Version: $version
Architecture: $arch
Maintainer: Vak developers <vak@vakdesktop.org>
Section: utils
Priority: optional
Installed-Size: $(du -sk "$deb_root" | cut -f1)
Depends: $depends
Recommends: libwayland-client0, libwayland-cursor0, libwayland-egl1, libgtk-3-0
Homepage: https://vakdesktop.org
Description: chat with local language models, measured and never silently cut
 Vak is a desktop chat app for local language models (Ollama, llama.cpp, and GGUF
 files it runs with its bundled llama.cpp engine) and hosted APIs. Each model is
 measured, the conversation lives in an append-only hash-chained ledger, and every
 request is planned from the ledger against the model's measured capacity.
CONTROL
deb="dist/vak-desktop_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$deb_root" "$deb" >/dev/null

# -- .tar.gz (the same tree, relative: unpack anywhere, run vak-desktop-VERSION/vak-desktop)
tar_top="$stage/tar/vak-desktop-$version"
mkdir -p "$tar_top"
cp -a "$bundle/." "$tar_top/"
mkdir -p "$tar_top/share"
cp -a "$deb_root/usr/share/." "$tar_top/share/"
tarball="dist/vak-desktop-$version-linux-$machine.tar.gz"
tar -C "$stage/tar" -czf "$tarball" "vak-desktop-$version"

# -- each artefact, unpacked, passes its self-test
check="$stage/check"
mkdir -p "$check/deb" "$check/tar"
dpkg-deb -x "$deb" "$check/deb"
tar -C "$check/tar" -xzf "$tarball"
for app in "$check/deb/opt/vak-desktop/vak-desktop" "$check/tar/vak-desktop-$version/vak-desktop"; do
    VAK_LOG_DIR="$check/log" timeout 300 "$app" --self-test >"$check/report.json" || {
        cat "$check/report.json" >&2
        echo "make package: $app failed its self-test" >&2
        exit 1
    }
    echo "self-test passed: ${app#"$check/"}: $(cat "$check/report.json")"
done
ls -l "$deb" "$tarball"
