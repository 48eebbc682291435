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
    # inside out, without --deep (Apple: it signs everything alike and hides what is missed):
    # every library and plug-in in the bundle, then the executables, then the app itself
    echo "signing $app as $MACOS_SIGNING_IDENTITY"
    sign() { codesign --force --options runtime --timestamp --sign "$MACOS_SIGNING_IDENTITY" "$@"; }
    find "$app/Contents" -type f \( -name '*.dylib' -o -name '*.so' \) -print0 |
        while IFS= read -r -d '' library; do sign "$library"; done
    find "$app/Contents/Frameworks" -type d -name '*.framework' -prune -print0 2>/dev/null |
        while IFS= read -r -d '' framework; do sign "$framework"; done
    sign --entitlements packaging/macos/entitlements.plist "$app/Contents/MacOS/vak-desktop"
    sign --entitlements packaging/macos/entitlements.plist "$app"
    codesign --verify --strict --verbose=2 "$app"
else
    # the spec added the notices and the `vak` link after PyInstaller's ad-hoc signature: seal
    # the app again, ad hoc (no identity), so `codesign --verify` holds
    echo "codesign skipped: MACOS_SIGNING_IDENTITY is not set (the app is signed ad hoc)"
    codesign --force --sign - "$app/Contents/MacOS/vak-desktop"
    codesign --force --sign - "$app"
    codesign --verify --strict --verbose=2 "$app"
fi

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
cp -R "$app" "$stage/"
ln -s /Applications "$stage/Applications"
rm -f "$dmg"
# hosted runners often fail with "hdiutil: create failed - Resource busy": retry, 5 times
for attempt in 1 2 3 4 5; do
    if hdiutil create -volname "Vak $version" -srcfolder "$stage" -fs HFS+ -format UDZO -ov "$dmg"; then
        break
    fi
    [ "$attempt" -lt 5 ] || { echo "hdiutil failed 5 times" >&2; exit 1; }
    echo "hdiutil failed (attempt $attempt), retrying in $((attempt * 5)) s" >&2
    sleep $((attempt * 5))
done

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
echo "minimum macOS: $(/usr/libexec/PlistBuddy -c 'Print :LSMinimumSystemVersion' "$app/Contents/Info.plist"), $(uname -m)"
ls -l "$dmg"
