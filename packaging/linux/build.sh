#!/usr/bin/env bash
# Linux installers from the one-folder bundle dist/vak-desktop/ (see packaging/vak-desktop.spec):
#
#   dist/vak-desktop_VERSION_amd64.deb        /opt/vak-desktop, /usr/bin/{vak-desktop,vak},
#                                             the desktop entry, icons and AppStream metadata;
#                                             Depends: the X11/xcb libraries Qt's xcb plugin
#                                             needs (vak_desktop/ui/shell/platform_check.py) and
#                                             libc6 (>= the newest GLIBC_x.y the bundle's files
#                                             need, read by packaging/linux/elf.py glibc)
#   dist/vak-desktop-VERSION-linux-x86_64.tar.gz  the same files under vak-desktop-VERSION/,
#                                             with install.sh / uninstall.sh for the menu entry
#
# LICENSE and THIRD-PARTY-NOTICES.txt: at the bundle's top, and in the .deb also as
# /usr/share/doc/vak-desktop/copyright. The sizes and the compressors' times are printed.
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
    sed -i "s/<release version=\"[^\"]*\"/<release version=\"$version\"/" \
        "$top/usr/share/metainfo/$id.metainfo.xml"  # the version is pyproject.toml's
    install -D -m 644 LICENSE "$top/usr/share/doc/vak-desktop/copyright"
    install -m 644 THIRD-PARTY-NOTICES.txt "$top/usr/share/doc/vak-desktop/THIRD-PARTY-NOTICES.txt"
    for size in 16 24 32 48 64 128 256 512; do
        install -D -m 644 "resources/icons/vak-desktop-$size.png" \
            "$top/usr/share/icons/hicolor/${size}x${size}/apps/$id.png"
    done
}

# -- .deb
deb_root="$stage/deb"
lay_out "$deb_root" /opt/vak-desktop
depends="$("$PYTHON" -c 'from vak_desktop.ui.shell.platform_check import debian_packages; print(", ".join(debian_packages()))')"
glibc="$("$PYTHON" packaging/linux/elf.py glibc "$bundle")"
depends="libc6 (>= $glibc), $depends"
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

# -- .tar.gz (the same tree, relative: unpack anywhere, run vak-desktop-VERSION/vak-desktop)
tar_top="$stage/tar/vak-desktop-$version"
mkdir -p "$tar_top"
cp -a "$bundle/." "$tar_top/"
mkdir -p "$tar_top/share"
cp -a "$deb_root/usr/share/." "$tar_top/share/"
install -m 755 packaging/linux/install.sh "$tar_top/install.sh"
ln -s install.sh "$tar_top/uninstall.sh"
tarball="dist/vak-desktop-$version-linux-$machine.tar.gz"

# -- both compressed at once (one core each): the compressors' time is the longer of the two
now() { "$PYTHON" -c "import time; print(time.time())"; }
since() { "$PYTHON" -c "import time; print(round(time.time() - $1, 1))"; }
started=$(now)
if command -v pigz >/dev/null 2>&1; then gzip_=(pigz -6); else gzip_=(gzip -6); fi
(tar -C "$stage/tar" -cf - "vak-desktop-$version" | "${gzip_[@]}" >"$tarball" && since "$started" >"$stage/tar_s") &
tar_job=$!
# zstd -9: 70.4 MB from this bundle in 15 s, where xz took 394 s for 58.9 MB (on 2 busy cores);
# dpkg reads zstd since 1.21 (Debian 12, Ubuntu 22.04), which the glibc floor requires anyway
dpkg-deb --root-owner-group -Zzstd -z9 --build "$deb_root" "$deb" >/dev/null
deb_s=$(since "$started")
wait "$tar_job"
tar_s=$(cat "$stage/tar_s")
compress_s=$(since "$started")

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
mib() { "$PYTHON" -c "print(f'{$1 / 1048576:.2f}')"; }
echo "size: one-dir $(mib "$(du -sb "$bundle" | cut -f1)") MiB (goal <= 171.66 MiB = 180 MB)," \
    "deb $(mib "$(stat -c %s "$deb")") MiB, tar.gz $(mib "$(stat -c %s "$tarball")") MiB (goal <= 76.29 MiB = 80 MB)"
echo "compressors: ${compress_s} s in all (deb, zstd -9: ${deb_s} s; tar.gz, ${gzip_[0]}: ${tar_s} s, side by side); Depends: libc6 (>= $glibc)"
