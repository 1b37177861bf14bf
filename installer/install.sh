#!/usr/bin/env bash
# Installs a built Cairn checkout as a system service (DESIGN.md §4): the app under a prefix, a
# dedicated system user, a data directory on ext4 or xfs, the admin token in an env file only root
# reads, a hardened systemd unit, and a SUCCESS banner with the token once the node answers.
# Run again over an install, it upgrades: the prefix is replaced by the new release (install-app.sh)
# and a running service restarted.
# `--dry-run` prints every step and changes nothing (no root needed).
#
#   sudo installer/install.sh [--dry-run] [--prefix /opt/cairn] [--data-dir /var/lib/cairn]
#                             [--user cairn] [--host 127.0.0.1] [--port 4000]
set -euo pipefail

PREFIX=/opt/cairn
DATA_DIR=/var/lib/cairn
SERVICE_USER=cairn
HOST=127.0.0.1
PORT=4000
DRY_RUN=0
ENV_DIR=/etc/cairn
ENV_FILE=$ENV_DIR/cairn.env
UNIT_FILE=/etc/systemd/system/cairn.service
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() { echo "install.sh: $*" >&2; exit 1; }
# The usage: asked for (--help) on stdout with exit 0, after a bad option on stderr with exit 2.
usage() { sed -n '9,10p' "$0" | sed 's/^# *//'; }
# Bad usage (an unknown option, a bad or missing value): said with the usage, exit 2, before any step.
bad() { echo "install.sh: $*" >&2; usage >&2; exit 2; }
# The value of option $1, given as $2 (which may be missing): refused when missing or empty.
value() { [ -n "${2:-}" ] || bad "$1 needs $3"; printf '%s' "$2"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --prefix) PREFIX=$(value "$1" "${2:-}" "a path") || exit 2; shift ;;
    --data-dir) DATA_DIR=$(value "$1" "${2:-}" "a path") || exit 2; shift ;;
    --user) SERVICE_USER=$(value "$1" "${2:-}" "a name") || exit 2; shift ;;
    --host) HOST=$(value "$1" "${2:-}" "an address") || exit 2; shift ;;
    --port) PORT=$(value "$1" "${2:-}" "a number") || exit 2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) bad "unknown option $1" ;;
  esac
  shift
done
case "$PREFIX$DATA_DIR" in *[[:space:]]*) bad "paths with spaces are not supported" ;; esac
[[ "$PREFIX" == /* && "$DATA_DIR" == /* ]] || bad "--prefix and --data-dir must be absolute paths"
[[ "$PORT" =~ ^[0-9]+$ && "$PORT" -ge 1 && "$PORT" -le 65535 ]] || bad "--port must be 1-65535"
[[ "$SERVICE_USER" =~ ^[a-z_][a-z0-9_-]*$ ]] || bad "--user must be a plain user name"
# DESIGN.md §4: a dedicated user. Root (or any user id 0) would run the node with every privilege.
if [ "$SERVICE_USER" = root ] || [ "$(id -u "$SERVICE_USER" 2>/dev/null)" = 0 ]; then
  bad "--user $SERVICE_USER is root: the service runs as a dedicated unprivileged user (the default, cairn, is made for it)"
fi
# Written into the env file as CAIRN_HOST: an IP address (v4, or v6 with or without brackets) or a
# host name, nothing a shell or the node would split.
[[ "$HOST" =~ ^[][A-Za-z0-9.:%_-]+$ ]] || bad "--host must be an address or host name to listen on, got '$HOST'"

step=0
say() { step=$((step + 1)); echo "[$step] $*"; }
# Runs a command, or in a dry run shows it.
run() {
  if [ "$DRY_RUN" = 1 ]; then printf '    would run:'; printf ' %q' "$@"; echo; else "$@"; fi
}
# Writes stdin to a file with a mode and owner, or in a dry run shows it.
put() {
  local file=$1 mode=$2 owner=$3 body
  body=$(cat)
  if [ "$DRY_RUN" = 1 ]; then
    echo "    would write $file (mode $mode, owner $owner):"
    sed 's/^/      | /' <<<"$body"
  else
    install -m "$mode" -o "${owner%%:*}" -g "${owner##*:}" /dev/null "$file"
    printf '%s\n' "$body" >"$file"
  fi
}

say "checks"
if [ "$DRY_RUN" = 0 ] && [ "$(id -u)" != 0 ]; then die "run as root (sudo), or --dry-run to see the steps"; fi
command -v systemctl >/dev/null || die "systemd (systemctl) is required"
command -v npm >/dev/null || die "npm is required (it prunes the copied app to its production dependencies)"
NODE=$(command -v node) || die "Node.js 20.19+ or 22.13+ is required (node not found)"
# A Node.js under a home directory (nvm, fnm, volta, `npx node@22`) is out of the service's reach
# (ProtectHome hides homes; the service user may not enter them): its executable (the real one,
# not a version manager's shim or link) is copied into the prefix and the service runs that.
# `$NODE` runs this script's own steps; the service runs `$SERVICE_NODE`.
SERVICE_NODE=$NODE
NODE_COPIED_FROM=
case "$NODE" in
  /root/*|/home/*)
    NODE_COPIED_FROM=$("$NODE" -p 'process.execPath')
    SERVICE_NODE=$PREFIX/bin/node ;;
esac
[ -f "$SRC/dist/cli/main.js" ] && [ -f "$SRC/ts/native/cairn.linux-x64-gnu.node" ] ||
  die "$SRC is not built: run npm install there first"
# The versions the build's own rule accepts (ts/cli/node-version.ts says why those).
NODE_VERSION=$("$NODE" -p 'process.versions.node')
"$NODE" -e 'import(process.argv[1]).then((m) => process.exit(m.nodeSupported(process.argv[2]) ? 0 : 1))' \
  "$SRC/dist/cli/node-version.js" "$NODE_VERSION" ||
  die "Node.js $NODE_VERSION is not supported: Cairn needs Node.js 20.19 or a later 20, or 22.13 or later"
if [ -n "$NODE_COPIED_FROM" ]; then
  echo "    node $NODE_COPIED_FROM (v$("$NODE_COPIED_FROM" -p 'process.versions.node'), under a home directory: copied to $SERVICE_NODE); app from $SRC"
else
  echo "    node $NODE ($("$NODE" --version)); app from $SRC"
fi

# A service already running is an upgrade: `enable --now` does not restart an active unit, so the
# old process would keep serving the old code (and pass the health check): it is restarted once
# the new files are in place. Asked read-only, in a dry run too.
WAS_ACTIVE=0
if systemctl is-active --quiet cairn.service 2>/dev/null; then
  WAS_ACTIVE=1
  echo "    cairn.service is running: an upgrade (it is restarted once the new files are in place)"
fi
APP_VERSION=$("$NODE" -p 'require(process.argv[1]).version' "$SRC/package.json")

# The store's durability rests on fsync semantics checked on ext4 and xfs.
probe=$DATA_DIR
while [ ! -e "$probe" ]; do probe=$(dirname "$probe"); done
FSTYPE=$( (findmnt -no FSTYPE --target "$probe" 2>/dev/null || stat -f -c %T "$probe") | head -n1)
case "$FSTYPE" in
  ext4|xfs) echo "    data dir $DATA_DIR is on $FSTYPE" ;;
  *) die "the data dir $DATA_DIR would be on $FSTYPE; Cairn's store needs ext4 or xfs (choose --data-dir)" ;;
esac

say "the app in $PREFIX (dist, production node_modules, the native engine)"
# Built beside the old tree and swapped in, so the prefix holds exactly this release.
app=("$SRC" "$PREFIX" root:root "$NODE_COPIED_FROM")
[ "$DRY_RUN" = 0 ] || app=(--dry-run "${app[@]}")
bash "$SRC/installer/install-app.sh" "${app[@]}"

say "the system user $SERVICE_USER"
if id -u "$SERVICE_USER" >/dev/null 2>&1; then
  echo "    exists"
else
  run useradd --system --home-dir "$DATA_DIR" --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER"
fi

say "the data dir $DATA_DIR (0700, owned by $SERVICE_USER)"
run mkdir -p "$DATA_DIR"
run chown "$SERVICE_USER:$SERVICE_USER" "$DATA_DIR"
run chmod 0700 "$DATA_DIR"

say "the admin token in $ENV_FILE (0600, root only; systemd reads it before dropping privileges)"
TOKEN=
KEPT_TOKEN=
# The env file there (an upgrade's) is kept: its token and the settings added to it.
KEEP_FROM=$ENV_FILE
if { [ -d "$ENV_DIR" ] && [ ! -x "$ENV_DIR" ]; } || { [ -f "$ENV_FILE" ] && [ ! -r "$ENV_FILE" ]; }; then
  # Only a dry run gets here (a real run is root's): what the file holds, if it is there, is not known.
  echo "    only root may read $ENV_FILE: a run as root keeps its token and its other settings when it is there"
  KEEP_FROM=/dev/null
elif [ -f "$ENV_FILE" ]; then
  TOKEN=$(sed -n 's/^CAIRN_ADMIN_TOKEN=//p' "$ENV_FILE" 2>/dev/null || true)
  KEPT_TOKEN=$TOKEN
  [ -n "$TOKEN" ] && echo "    keeps the token already there"
  echo "    keeps its other lines (settings added there, comments); the data dir, host and port are this run's"
fi
if [ -z "$TOKEN" ] && [ "$KEEP_FROM" = "$ENV_FILE" ] && [ -f "$DATA_DIR/data.cairn" ]; then
  # The store has its own tokens; a new CAIRN_ADMIN_TOKEN would be ignored (it only seeds an empty store).
  die "$DATA_DIR already holds a store: put its admin token in $ENV_FILE as CAIRN_ADMIN_TOKEN=... and run again"
fi
if [ "$DRY_RUN" = 1 ]; then
  if [ -n "$TOKEN" ]; then
    SHOWN_TOKEN="cairn_<the token kept from $ENV_FILE>"
  elif [ "$KEEP_FROM" = /dev/null ]; then
    SHOWN_TOKEN="cairn_<the token kept from $ENV_FILE, or generated at install>"
  else
    SHOWN_TOKEN='cairn_<generated at install>'
  fi
fi
if [ -z "$TOKEN" ]; then
  TOKEN=cairn_$("$NODE" -e 'process.stdout.write(require("node:crypto").randomBytes(32).toString("base64url"))')
fi
[ "$DRY_RUN" = 1 ] || SHOWN_TOKEN=$TOKEN
run mkdir -p "$ENV_DIR"
run chmod 0700 "$ENV_DIR"
ENV_BODY=$(bash "$SRC/installer/env-file.sh" "$KEEP_FROM" "$SHOWN_TOKEN" "$DATA_DIR" "$HOST" "$PORT")
put "$ENV_FILE" 0600 root:root <<<"$ENV_BODY"

say "the systemd unit $UNIT_FILE"
put "$UNIT_FILE" 0644 root:root <<EOF
[Unit]
Description=Cairn memory node
Documentation=file://$PREFIX/docs/operations.md
After=network.target

[Service]
Type=simple
User=$SERVICE_USER
Group=$SERVICE_USER
EnvironmentFile=$ENV_FILE
ExecStart=$SERVICE_NODE $PREFIX/dist/cli/main.js serve
Restart=on-failure
RestartSec=2
TimeoutStopSec=30
UMask=0077
NoNewPrivileges=true
ProtectSystem=strict
ProtectHome=true
PrivateTmp=true
ReadWritePaths=$DATA_DIR

[Install]
WantedBy=multi-user.target
EOF

if [ "$WAS_ACTIVE" = 1 ]; then
  say "restart the running service on the new files"
  run systemctl daemon-reload
  run systemctl enable cairn.service
  run systemctl restart cairn.service
else
  say "start the service"
  run systemctl daemon-reload
  run systemctl enable --now cairn.service
fi
# The health check and the banner reach the node on loopback for a wildcard bind; IPv6 in brackets.
case "$HOST" in
  0.0.0.0) URL="http://127.0.0.1:$PORT" ;;
  ::|'[::]') URL="http://[::1]:$PORT" ;;
  *:*) URL="http://[${HOST#[}" && URL="${URL%]}]:$PORT" ;;
  *) URL="http://$HOST:$PORT" ;;
esac
# The node that answers must be the one just installed: its /health names the app's version.
healthy() {
  "$NODE" -e 'fetch(process.argv[1] + "/health").then((r) => (r.ok ? r.json() : {})).then(
    (b) => process.exit(b.version === process.argv[2] ? 0 : 1), () => process.exit(1))' "$URL" "$APP_VERSION"
}
if [ "$DRY_RUN" = 0 ]; then
  for _ in $(seq 1 60); do
    if healthy; then break; fi
    sleep 0.5
  done
  healthy || die "the service did not answer at $URL/health as version $APP_VERSION: see journalctl -u cairn"
else
  echo "    then waits for $URL/health to answer as version $APP_VERSION"
fi

# The CLI as the service user, with the env file's settings (the admin token among them) read by
# root, which alone may read it: the token is never on a command line (ps, shell history).
CLI_AS_SERVICE="sudo sh -c 'set -a; . $ENV_FILE; exec runuser -u $SERVICE_USER -- $SERVICE_NODE $PREFIX/dist/cli/main.js"
# A token kept from the env file was shown when it was made: an upgrade does not print it again
# (into a terminal's scrollback or a deploy log) and says where it is.
if [ -n "$KEPT_TOKEN" ]; then
  TOKEN_LINES="  admin token:        unchanged, in $ENV_FILE (root only)"
else
  TOKEN_LINES="  admin token (shown once here; kept in $ENV_FILE):
    $SHOWN_TOKEN"
fi
BANNER=$(cat <<EOF

SUCCESS: Cairn runs as the systemd service cairn at $URL (MCP: $URL/v1/mcp).
$TOKEN_LINES
  make agent tokens:  $CLI_AS_SERVICE token create --agent NAME'
                      (root reads $ENV_FILE; the command runs as $SERVICE_USER, whose data dir it is)
  upgrade:            run this script again from the new checkout (the service is restarted)
  logs:               journalctl -u cairn
EOF
)
if [ "$DRY_RUN" = 1 ]; then
  echo "    then prints:"
  sed 's/^/      | /' <<<"$BANNER"
  echo
  echo "dry run: nothing was changed"
  exit 0
fi
printf '%s\n' "$BANNER"
