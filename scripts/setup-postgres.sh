#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests of the PostgreSQL store.
#
#   bash scripts/setup-postgres.sh [start|stop|restart|status|url]
#
# Installs Debian's `postgresql` when no server binaries are found, creates a
# cluster in $TOOLGATE_PG_DIR (default: ${TMPDIR:-/tmp}/toolgate-pg) owned by a
# non-root user (the server refuses to run as root; as root the script uses
# the `postgres` account the package creates), and starts it on 127.0.0.1:
# $TOOLGATE_PG_PORT (default 55432) and a unix socket in the cluster directory.
# The superuser `toolgate` logs in with scram-sha-256 over TCP; its password is
# in $TOOLGATE_PG_DIR/password (mode 0600, owned by the caller). The URL the
# tests read (TOOLGATE_TEST_PG_URL; the password file is
# TOOLGATE_TEST_PG_PASSWORD_FILE) is printed and written to
# $TOOLGATE_PG_DIR/env, which `scripts/test` sources. Idempotent: a running
# cluster is left running.
set -euo pipefail

action="${1:-start}"
dir="${TOOLGATE_PG_DIR:-${TMPDIR:-/tmp}/toolgate-pg}"
port="${TOOLGATE_PG_PORT:-55432}"
cluster="$dir/cluster"
url="postgres://toolgate@127.0.0.1:$port/postgres"

find_bin() {
    local found
    found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
    if [ -n "$found" ] && [ -x "$found/initdb" ]; then
        echo "$found"
    fi
}

bin="$(find_bin)"
if [ -z "$bin" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup-postgres: no PostgreSQL server found; install Debian's postgresql (as root: apt-get install postgresql)" >&2
        exit 1
    fi
    echo "setup-postgres: installing Debian's postgresql" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null ||
        { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null; }
    bin="$(find_bin)"
    [ -n "$bin" ] || { echo "setup-postgres: postgresql installed but no initdb found" >&2; exit 1; }
fi

# The server runs as a non-root account.
if [ "$(id -u)" -eq 0 ]; then
    owner=postgres
    id -u "$owner" >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/bash "$owner"
    as_owner() { runuser -u "$owner" -- "$@"; }
else
    owner="$(id -un)"
    as_owner() { "$@"; }
fi

pg_ctl_() { as_owner "$bin/pg_ctl" -D "$cluster" "$@"; }

running() { [ -d "$cluster" ] && pg_ctl_ status >/dev/null 2>&1; }

start() {
    mkdir -p "$dir"
    chmod 0755 "$dir"
    if [ ! -s "$dir/password" ]; then
        (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$dir/password")
    fi
    if [ ! -f "$cluster/PG_VERSION" ]; then
        rm -rf "$cluster"
        mkdir -p "$cluster"
        chown "$owner" "$cluster"
        chmod 0700 "$cluster"
        pwfile="$(mktemp)"
        cp "$dir/password" "$pwfile"
        chown "$owner" "$pwfile"
        as_owner "$bin/initdb" -D "$cluster" -U toolgate --pwfile="$pwfile" \
            --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --no-locale >/dev/null
        rm -f "$pwfile"
    fi
    if ! running; then
        # fsync stays on: the tests kill writers and restart the server.
        pg_ctl_ -w -t 60 -l "$cluster/server.log" \
            -o "-p $port -k $cluster -c listen_addresses=127.0.0.1 -c max_connections=300" \
            start >/dev/null
    fi
    cat >"$dir/env" <<EOF
export TOOLGATE_TEST_PG_URL='$url'
export TOOLGATE_TEST_PG_PASSWORD_FILE='$dir/password'
export TOOLGATE_TEST_PG_DIR='$dir'
EOF
    echo "$url"
}

case "$action" in
start) start ;;
stop) if running; then pg_ctl_ -w -m fast stop >/dev/null; fi ;;
restart) if running; then pg_ctl_ -w -m fast stop >/dev/null; fi; start ;;
status) if running; then echo "running: $url"; else echo "stopped"; exit 3; fi ;;
url) echo "$url" ;;
*) echo "usage: setup-postgres.sh [start|stop|restart|status|url]" >&2; exit 2 ;;
esac
