#!/bin/sh
# Remove what install-desktop.sh installed. Takes the same PREFIX, XDG_DATA_HOME and DESTDIR.
# Your data (database, logs: ~/.local/share/Tebiki) and keyring entries are kept.
set -eu

APP=tebiki
PREFIX=${PREFIX:-${HOME:?HOME is not set}/.local}
DESTDIR=${DESTDIR:-}
libdir=$PREFIX/lib/$APP
bindir=$PREFIX/bin
datadir=${XDG_DATA_HOME:-$PREFIX/share}
appdir=$datadir/applications
icondir=$datadir/icons/hicolor
exe=$libdir/$APP

removed=0
say_removed() { echo "removed: $1"; removed=1; }

link=$DESTDIR$bindir/$APP
if [ -L "$link" ] && [ "$(readlink "$link")" = "$exe" ]; then
  rm -f "$link" && say_removed "$link"
fi

desktop=$DESTDIR$appdir/$APP.desktop
if [ -f "$desktop" ]; then
  rm -f "$desktop" && say_removed "$desktop"
fi

for icon in "$DESTDIR$icondir"/*/apps/"$APP.png" "$DESTDIR$icondir/scalable/apps/$APP.svg"; do
  if [ -f "$icon" ]; then
    rm -f "$icon" && say_removed "$icon"
  fi
done

# Only a folder that holds the Tebiki executable is deleted, whatever PREFIX says.
target=$DESTDIR$libdir
if [ -d "$target" ]; then
  if [ -x "$target/$APP" ] && [ -d "$target/_internal" ]; then
    rm -rf "$target" && say_removed "$target"
  else
    echo "warning: $target does not look like a Tebiki install; left alone." >&2
  fi
fi

if [ -z "$DESTDIR" ]; then
  touch "$icondir" 2>/dev/null || true
  if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$icondir/index.theme" ]; then
    gtk-update-icon-cache -q -t -f "$icondir" 2>/dev/null || true
  fi
  if command -v update-desktop-database >/dev/null 2>&1 && [ -d "$appdir" ]; then
    update-desktop-database -q "$appdir" 2>/dev/null || true
  fi
fi
if [ "$removed" = 1 ]; then
  echo "Tebiki is uninstalled (your data in ~/.local/share/Tebiki is kept)."
else
  echo "Nothing to remove: Tebiki is not installed under $PREFIX / $datadir."
fi
