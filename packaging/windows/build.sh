#!/usr/bin/env bash
# Windows installer (Git Bash / MSYS, as on GitHub's windows runners): Inno Setup's iscc over
# packaging/windows/vak-desktop.iss -> dist/vak-desktop-VERSION-windows-x64-setup.exe.
# Then the bundle's own --self-test. ISCC: the compiler (default: on PATH, else Inno Setup 6's
# usual install folders).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
bundle=dist/vak-desktop
[ -f "$bundle/vak-desktop.exe" ] || { echo "no bundle at $bundle: run PyInstaller first" >&2; exit 1; }
version="$("$bundle/vak.exe" --version | awk '{print $2}' | tr -d '\r')"
iscc="${ISCC:-}"
if [ -z "$iscc" ]; then
    for candidate in "$(command -v iscc || true)" "/c/Program Files (x86)/Inno Setup 6/ISCC.exe" \
        "/c/Program Files/Inno Setup 6/ISCC.exe"; do
        if [ -n "$candidate" ] && [ -f "$candidate" ]; then iscc="$candidate"; break; fi
    done
fi
[ -n "$iscc" ] || { echo "make package: Inno Setup 6 (iscc) not found; choco install innosetup" >&2; exit 1; }
"$iscc" /Q "/DAppVersion=$version" "/DSourceDir=$(cygpath -w "$root/$bundle")" \
    "/DOutputDir=$(cygpath -w "$root/dist")" "$(cygpath -w "$root/packaging/windows/vak-desktop.iss")"
QT_QPA_PLATFORM=offscreen "$bundle/vak-desktop.exe" --self-test
ls -l "dist/vak-desktop-$version-windows-x64-setup.exe"
