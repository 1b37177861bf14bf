#!/usr/bin/env bash
# The env file step of install.sh: prints the service's env file, the four settings install.sh
# owns (the admin token, the data dir, host and port, as given) first, then every other line of the
# env file already there (OLD, when it exists), in its order: the settings an operator added there
# (CAIRN_RATE_LIMIT, CAIRN_PROFILE, CAIRN_ALLOWED_HOSTS, …; the service reads no other place) and
# comments. Rewritten from the four alone, an upgrade dropped them, and the node came back with
# its defaults without a word.
#
#   installer/env-file.sh OLD TOKEN DATA_DIR HOST PORT
set -euo pipefail

[ $# -eq 5 ] || { echo "usage: env-file.sh OLD TOKEN DATA_DIR HOST PORT" >&2; exit 2; }
OLD=$1 TOKEN=$2 DATA_DIR=$3 HOST=$4 PORT=$5

printf '%s\n' "CAIRN_ADMIN_TOKEN=$TOKEN" "CAIRN_DATA_DIR=$DATA_DIR" "CAIRN_HOST=$HOST" "CAIRN_PORT=$PORT"
if [ -e "$OLD" ]; then
  [ -r "$OLD" ] || { echo "install.sh: cannot read $OLD, whose settings the new env file keeps: run as root" >&2; exit 1; }
  # A line setting one of the four (`export` before it, or spaces, as a shell would read it) is
  # replaced by the line above; every other line is kept as it is.
  grep -Ev '^[[:space:]]*(export[[:space:]]+)?CAIRN_(ADMIN_TOKEN|DATA_DIR|HOST|PORT)=' "$OLD" || [ $? -eq 1 ]
fi
