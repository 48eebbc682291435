#!/bin/sh
# The .tar.gz's menu entry: `./install.sh` puts Vak's .desktop file, icons and AppStream data
# in ~/.local/share (or $XDG_DATA_HOME), pointing at this folder, and links vak-desktop and vak
# into ~/.local/bin; `./uninstall.sh` (a link to this script) removes exactly those files.
# The folder itself stays where it was unpacked; move it, then run ./install.sh again.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
id=org.vakdesktop.Vak
data="${XDG_DATA_HOME:-$HOME/.local/share}"
bin="$HOME/.local/bin"
desktop="$data/applications/$id.desktop"
case "$(basename "$0")" in
uninstall.sh)
    rm -f "$desktop" "$data/metainfo/$id.metainfo.xml"
    for icon in "$data"/icons/hicolor/*/apps/"$id".png; do rm -f "$icon"; done
    cache="$data/icons/hicolor/icon-theme.cache"
    if [ -z "$(find "$data/icons/hicolor" -type f -name '*.png' 2>/dev/null | head -n 1)" ]; then
        rm -f "$cache"  # the index install.sh made, of icons now gone
    elif [ -f "$cache" ] && command -v gtk-update-icon-cache >/dev/null 2>&1; then
        gtk-update-icon-cache -q -t "$data/icons/hicolor" || true
    fi
    for name in vak-desktop vak; do
        [ "$(readlink "$bin/$name" 2>/dev/null)" = "$here/$name" ] && rm -f "$bin/$name"
    done
    echo "Vak's menu entry, icons and links removed (this folder is left as it is)"
    ;;
*)
    mkdir -p "$data/applications" "$data/metainfo" "$bin"
    sed -e "s|^Exec=vak-desktop|Exec=\"$here/vak-desktop\"|" -e "s|^TryExec=.*|TryExec=$here/vak-desktop|" \
        "$here/share/applications/$id.desktop" >"$desktop"
    cp "$here/share/metainfo/$id.metainfo.xml" "$data/metainfo/"
    for folder in "$here"/share/icons/hicolor/*/apps; do
        size="$(basename "$(dirname "$folder")")"
        mkdir -p "$data/icons/hicolor/$size/apps"
        cp "$folder/$id.png" "$data/icons/hicolor/$size/apps/"
    done
    ln -sf "$here/vak-desktop" "$bin/vak-desktop"
    ln -sf "$here/vak" "$bin/vak"
    command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$data/applications" || true
    command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$data/icons/hicolor" || true
    echo "Vak is in the applications menu ($desktop); vak-desktop and vak are in $bin"
    ;;
esac
