#!/bin/sh
# Install a Tebiki bundle for the current user and register it with the desktop.
#
#   install-desktop.sh [BUNDLE_DIR]
#
# BUNDLE_DIR is a PyInstaller one-dir bundle (the folder holding the `tebiki` executable and
# `_internal/`). Default: this script's own folder when it sits in a bundle (as in the release
# tarball), else <repo>/dist/tebiki (what `make package` builds).
#
# Where things go (nothing needs root):
#   $PREFIX/lib/tebiki/                           the bundle            (PREFIX default: ~/.local)
#   $PREFIX/bin/tebiki                            launcher symlink
#   $XDG_DATA_HOME/applications/tebiki.desktop    the menu entry        (default: $PREFIX/share)
#   $XDG_DATA_HOME/icons/hicolor/<size>/apps/     the icons
# DESTDIR, if set, is prepended to every path written (for staging/packaging); the paths written
# into the .desktop file and the symlink stay without it.
set -eu

APP=tebiki
here=$(CDPATH="" cd -- "$(dirname -- "$0")" && pwd -P)

if [ $# -ge 1 ]; then
  bundle=$1
elif [ -x "$here/$APP" ] && [ -d "$here/_internal" ]; then
  bundle=$here
else
  bundle=$here/../../dist/$APP
fi
if [ ! -x "$bundle/$APP" ] || [ ! -d "$bundle/_internal" ]; then
  echo "error: no Tebiki bundle at '$bundle' (expected $APP and _internal/ there)." >&2
  echo "Build one with 'make package', or pass the bundle folder as the first argument." >&2
  exit 1
fi
bundle=$(CDPATH="" cd -- "$bundle" && pwd -P)
resources=$bundle/_internal/resources
if [ ! -f "$resources/$APP.desktop" ]; then
  echo "error: $resources/$APP.desktop is missing; rebuild the bundle." >&2
  exit 1
fi

PREFIX=${PREFIX:-${HOME:?HOME is not set}/.local}
DESTDIR=${DESTDIR:-}
libdir=$PREFIX/lib/$APP
bindir=$PREFIX/bin
datadir=${XDG_DATA_HOME:-$PREFIX/share}
appdir=$datadir/applications
icondir=$datadir/icons/hicolor
exe=$libdir/$APP

case $PREFIX$datadir in
  /*) ;;
  *) echo "error: PREFIX and XDG_DATA_HOME must be absolute paths." >&2; exit 1 ;;
esac
# The Exec key is unquoted when the path is plain, double-quoted when it holds spaces; the
# characters that would need escaping inside quotes are refused rather than half-handled.
case $exe in
  *[\"\`\$\\]*) echo "error: install path '$exe' contains \", \`, \$ or \\; choose another PREFIX." >&2
                exit 1 ;;
  *[!A-Za-z0-9_./+-]*) exec_key="\"$exe\"" ;;
  *) exec_key=$exe ;;
esac

# 1. The bundle: copy next to the old one, then swap, so a failed copy leaves the old install.
target=$DESTDIR$libdir
if [ -d "$target" ] && [ "$(cd "$target" && pwd -P)" = "$bundle" ]; then
  echo "bundle already in place: $target"
else
  mkdir -p "$(dirname -- "$target")"
  staging=$target.new.$$
  rm -rf "$staging"
  trap 'rm -rf "$staging"' EXIT
  cp -RP "$bundle" "$staging"
  if [ -e "$target" ]; then
    if [ ! -x "$target/$APP" ]; then
      echo "error: $target exists but is not a Tebiki install; not replacing it." >&2
      exit 1
    fi
    rm -rf "$target"
  fi
  mv "$staging" "$target"
  trap - EXIT
  echo "installed bundle: $target"
fi
# Keep the uninstaller next to the installed app (release bundles already carry it).
if [ ! -f "$target/uninstall-desktop.sh" ] && [ -f "$here/uninstall-desktop.sh" ]; then
  cp "$here/uninstall-desktop.sh" "$target/uninstall-desktop.sh"
  chmod 755 "$target/uninstall-desktop.sh"
fi

# 2. The launcher, unless something else (e.g. a pipx install) already owns that name.
mkdir -p "$DESTDIR$bindir"
link=$DESTDIR$bindir/$APP
if [ -L "$link" ] || [ ! -e "$link" ]; then
  ln -sfn "$exe" "$link"
  echo "launcher: $link -> $exe"
else
  echo "note: $link exists and is not a symlink; left alone (the menu entry does not need it)."
fi

# 3. Icons: every rendered size, plus the SVG for scalable lookups.
found_icon=0
for png in "$resources/icons/$APP"-*.png; do
  [ -f "$png" ] || continue
  size=${png##*/"$APP"-}
  size=${size%.png}
  mkdir -p "$DESTDIR$icondir/${size}x${size}/apps"
  cp "$png" "$DESTDIR$icondir/${size}x${size}/apps/$APP.png"
  chmod 644 "$DESTDIR$icondir/${size}x${size}/apps/$APP.png"
  found_icon=1
done
if [ -f "$resources/icons/$APP.svg" ]; then
  mkdir -p "$DESTDIR$icondir/scalable/apps"
  cp "$resources/icons/$APP.svg" "$DESTDIR$icondir/scalable/apps/$APP.svg"
  chmod 644 "$DESTDIR$icondir/scalable/apps/$APP.svg"
fi
[ "$found_icon" = 1 ] || echo "warning: no icons in $resources/icons" >&2
echo "icons: $DESTDIR$icondir/<size>/apps/$APP.png"

# 4. The menu entry, from the template with Exec/TryExec pointing at the installed bundle.
mkdir -p "$DESTDIR$appdir"
desktop=$DESTDIR$appdir/$APP.desktop
sed -e "s|^Exec=.*|Exec=$exec_key %F|" -e "s|^TryExec=.*|TryExec=$exe|" \
  "$resources/$APP.desktop" > "$desktop.tmp"
chmod 644 "$desktop.tmp"
mv "$desktop.tmp" "$desktop"
echo "menu entry: $desktop"

# 5. Refresh the desktop's caches (only for a live install; all optional).
if [ -z "$DESTDIR" ]; then
  touch "$icondir" 2>/dev/null || true
  if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$icondir/index.theme" ]; then
    gtk-update-icon-cache -q -t -f "$icondir" 2>/dev/null || true
  fi
  if command -v update-desktop-database >/dev/null 2>&1; then
    update-desktop-database -q "$appdir" 2>/dev/null || true
  fi
  case ":${PATH:-}:" in
    *":$bindir:"*) ;;
    *) echo "note: $bindir is not on PATH; start Tebiki from the menu or run $exe" ;;
  esac
fi
echo "Tebiki is installed. Uninstall with: $libdir/uninstall-desktop.sh"
