#!/usr/bin/env bash
# `make package`, after PyInstaller has built dist/vak-desktop/: the installer of this OS.
#   Linux    packaging/linux/build.sh    .deb and .tar.gz, then --self-test on both
#   macOS    packaging/macos/build.sh    Vak.app in a .dmg, signed and notarised when asked
#   Windows  packaging/windows/build.sh  an Inno Setup installer
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
case "$(uname -s)" in
    Linux) exec "$here/linux/build.sh" ;;
    Darwin) exec "$here/macos/build.sh" ;;
    MINGW* | MSYS* | CYGWIN* | Windows_NT) exec "$here/windows/build.sh" ;;
    *) echo "make package: no installer for $(uname -s)" >&2; exit 2 ;;
esac
