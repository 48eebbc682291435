#!/usr/bin/env bash
# macOS: dist/Vak.app (PyInstaller's BUNDLE, with packaging/macos/Info.plist and the .icns) in
# dist/vak-desktop-VERSION-macos-ARCH.dmg, signed and notarised when the credentials are given:
#
#   MACOS_SIGNING_IDENTITY   "Developer ID Application: NAME (TEAMID)" in the keychain -> codesign
#   APPLE_ID, APPLE_TEAM_ID, APPLE_APP_PASSWORD   with the identity -> notarytool + stapler
#
# Without them each step is skipped with a message saying so (the .dmg then opens only after
# the user allows it in System Settings > Privacy & Security). Then the app's --self-test.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
app=dist/Vak.app
[ -x "$app/Contents/MacOS/vak-desktop" ] || { echo "no $app: run PyInstaller first" >&2; exit 1; }
version="$("$app/Contents/MacOS/vak" --version | awk '{print $2}')"
dmg="dist/vak-desktop-$version-macos-$(uname -m).dmg"

if [ -n "${MACOS_SIGNING_IDENTITY:-}" ]; then
    echo "signing $app as $MACOS_SIGNING_IDENTITY"
    codesign --force --deep --options runtime --timestamp \
        --entitlements packaging/macos/entitlements.plist \
        --sign "$MACOS_SIGNING_IDENTITY" "$app"
    codesign --verify --deep --strict --verbose=2 "$app"
else
    echo "codesign skipped: MACOS_SIGNING_IDENTITY is not set (the app keeps PyInstaller's ad-hoc signature)"
fi

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
cp -R "$app" "$stage/"
ln -s /Applications "$stage/Applications"
rm -f "$dmg"
hdiutil create -volname "Vak $version" -srcfolder "$stage" -fs HFS+ -format UDZO -ov "$dmg"

if [ -n "${MACOS_SIGNING_IDENTITY:-}" ]; then
    codesign --force --timestamp --sign "$MACOS_SIGNING_IDENTITY" "$dmg"
fi
if [ -n "${MACOS_SIGNING_IDENTITY:-}" ] && [ -n "${APPLE_ID:-}" ] && [ -n "${APPLE_TEAM_ID:-}" ] \
    && [ -n "${APPLE_APP_PASSWORD:-}" ]; then
    echo "notarising $dmg"
    xcrun notarytool submit "$dmg" --apple-id "$APPLE_ID" --team-id "$APPLE_TEAM_ID" \
        --password "$APPLE_APP_PASSWORD" --wait
    xcrun stapler staple "$dmg"
else
    echo "notarisation skipped: it needs MACOS_SIGNING_IDENTITY, APPLE_ID, APPLE_TEAM_ID and APPLE_APP_PASSWORD"
fi

QT_QPA_PLATFORM=offscreen "$app/Contents/MacOS/vak-desktop" --self-test
ls -l "$dmg"
