#!/usr/bin/env bash
# The app step of install.sh: puts a built checkout's app (package files, dist, docs, production
# node_modules, the native engine, and a copied Node.js when one is given) at PREFIX, owned by
# OWNER. The tree at PREFIX is always exactly the new release: it is built in a fresh sibling,
# PREFIX.new, and swapped in with renames, the old tree kept as PREFIX.old until the new one is in
# place. Copying over the old tree (`cp -a`) left files the release no longer has, a stale module
# among them that could still be loaded; and a copy that fails now leaves the working install as it
# was. A PREFIX that exists but holds no Cairn install (say /usr/local) is refused: it is replaced
# whole. `--dry-run` prints each step and changes nothing.
#
#   installer/install-app.sh [--dry-run] SRC PREFIX OWNER [NODE_TO_COPY]
set -euo pipefail

DRY_RUN=0
if [ "${1:-}" = --dry-run ]; then DRY_RUN=1; shift; fi
[ $# -ge 3 ] && [ $# -le 4 ] || { echo "usage: install-app.sh [--dry-run] SRC PREFIX OWNER [NODE_TO_COPY]" >&2; exit 2; }
SRC=$1 PREFIX=${2%/} OWNER=$3 NODE_TO_COPY=${4:-}
NEW=$PREFIX.new
OLD=$PREFIX.old

die() { echo "install.sh: $*" >&2; exit 1; }
[ -n "$PREFIX" ] || die "the prefix cannot be /: the install replaces the whole prefix"
run() {
  if [ "$DRY_RUN" = 1 ]; then printf '    would run:'; printf ' %q' "$@"; echo; else "$@"; fi
}

# Only a former install is replaced: its package.json names the app.
if [ -e "$PREFIX" ] && [ -n "$(ls -A "$PREFIX" 2>/dev/null)" ] &&
  ! grep -qs '"name": "cairn"' "$PREFIX/package.json"; then
  die "$PREFIX holds files that are not a Cairn install, and the install replaces the whole prefix: choose an empty or new --prefix (e.g. /opt/cairn)"
fi

# Left by a run that stopped part-way: PREFIX.new is an unfinished copy; PREFIX.old is the previous
# release, which is still the install when PREFIX is missing (the run stopped between the renames).
[ -e "$NEW" ] && run rm -rf "$NEW"
if [ -e "$OLD" ]; then
  if [ -e "$PREFIX" ]; then run rm -rf "$OLD"; else run mv "$OLD" "$PREFIX"; fi
fi

run mkdir -p "$NEW"
run cp -a "$SRC/package.json" "$SRC/package-lock.json" "$SRC/dist" "$SRC/docs" "$SRC/node_modules" "$NEW/"
run cp "$SRC/ts/native/cairn.linux-x64-gnu.node" "$NEW/dist/native/"
if [ -n "$NODE_TO_COPY" ]; then
  run install -D -m 0755 "$NODE_TO_COPY" "$NEW/bin/node"
  # A build that needs libraries from beside it in that home would not start: say so now.
  [ "$DRY_RUN" = 1 ] || "$NEW/bin/node" -e '' ||
    die "the copy of $NODE_TO_COPY does not run on its own; install a system Node.js 20+ (e.g. /usr/bin/node)"
fi
run npm prune --omit=dev --ignore-scripts --no-audit --no-fund --prefix "$NEW"
run chown -R "$OWNER" "$NEW"

# The swap: the old tree stays whole until the new one is in place, then goes.
HAD_OLD=0
[ -e "$PREFIX" ] && HAD_OLD=1
[ "$HAD_OLD" = 0 ] || run mv "$PREFIX" "$OLD"
run mv "$NEW" "$PREFIX"
[ "$HAD_OLD" = 0 ] || run rm -rf "$OLD"
