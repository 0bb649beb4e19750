#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests, on a loopback port, as an unprivileged user.
#
#   source Tools/postgres.sh; postgres_start; ...; postgres_stop
#
# postgres_start installs `postgresql` with apt when its server programs are missing, creates a cluster in a
# temporary folder (trust authentication for the test role on 127.0.0.1 only, plus a password role for the
# wrong-password tests; TLS with a self-signed certificate exported as SWITCHYARD_PG_CA), starts it on a free
# port and exports SWITCHYARD_POSTGRES_URL. When
# SWITCHYARD_POSTGRES_URL is already set, it uses that server and starts nothing. postgres_stop stops the
# cluster and removes its folder.

source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
postgres_bin_dir() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  return 1
}

postgres_start() {
  if [ -n "${SWITCHYARD_POSTGRES_URL:-}" ]; then
    # The tests create and drop schemas: only ever on this machine.
    local host
    host=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.urlsplit(sys.argv[1]).hostname or "")' "$SWITCHYARD_POSTGRES_URL")
    if ! [[ "$host" == localhost || "$host" == ::1 || "$host" =~ ^127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]]; then
      echo "postgres: start failed: SWITCHYARD_POSTGRES_URL names host '$host'; the tests only use a server on this machine (127.0.0.1, ::1, localhost)" >&2
      return 1
    fi
    echo "postgres: using the server at SWITCHYARD_POSTGRES_URL"
    return 0
  fi
  local bin
  if ! bin=$(postgres_bin_dir); then
    echo "postgres: installing postgresql"
    apt_install postgresql
    bin=$(postgres_bin_dir) || { echo "postgres: start failed: no initdb after installing postgresql" >&2; return 1; }
  fi
  # PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` user the package made.
  local run=()
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    run=(runuser -u postgres --)
  fi
  SWITCHYARD_PG_DIR=$(mktemp -d /tmp/switchyard-pg.XXXXXX)
  chmod 755 "$SWITCHYARD_PG_DIR"
  [ "$(id -u)" -eq 0 ] && chown postgres "$SWITCHYARD_PG_DIR"
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
  "${run[@]}" "$bin/initdb" -D "$SWITCHYARD_PG_DIR/data" -U switchyard --auth-local=trust --auth-host=trust \
    -E UTF8 --locale=C.UTF-8 >"$SWITCHYARD_PG_DIR/initdb.log" 2>&1 \
    || { cat "$SWITCHYARD_PG_DIR/initdb.log" >&2; echo "postgres: start failed: initdb" >&2; return 1; }
  # The wrong-password tests need one role that must give a password (scram over TCP).
  cat >"$SWITCHYARD_PG_DIR/data/pg_hba.conf" <<'EOF'
local all all trust
host all switchyard_pw 127.0.0.1/32 scram-sha-256
host all all 127.0.0.1/32 trust
EOF
  # TLS with a self-signed certificate for 127.0.0.1, which the TLS tests trust through SWITCHYARD_PG_CA.
  openssl req -new -x509 -days 30 -nodes -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
    -keyout "$SWITCHYARD_PG_DIR/data/server.key" -out "$SWITCHYARD_PG_DIR/data/server.crt" >"$SWITCHYARD_PG_DIR/openssl.log" 2>&1 \
    || { cat "$SWITCHYARD_PG_DIR/openssl.log" >&2; echo "postgres: start failed: openssl (the TLS certificate)" >&2; return 1; }
  cp "$SWITCHYARD_PG_DIR/data/server.crt" "$SWITCHYARD_PG_DIR/ca.pem"
  chmod 600 "$SWITCHYARD_PG_DIR/data/server.key"
  [ "$(id -u)" -eq 0 ] && chown postgres "$SWITCHYARD_PG_DIR/data/server.key" "$SWITCHYARD_PG_DIR/data/server.crt"
  # In postgresql.conf, so the tests that stop and start the server start it the same way.
  cat >>"$SWITCHYARD_PG_DIR/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$SWITCHYARD_PG_DIR'
max_connections = 300
fsync = on
ssl = on
EOF
  "${run[@]}" "$bin/pg_ctl" -D "$SWITCHYARD_PG_DIR/data" -l "$SWITCHYARD_PG_DIR/server.log" -w -t 60 \
    start >/dev/null \
    || { cat "$SWITCHYARD_PG_DIR/server.log" >&2; echo "postgres: start failed: pg_ctl start" >&2; return 1; }
  "${run[@]}" "$bin/psql" -h 127.0.0.1 -p "$port" -U switchyard -d postgres -q -v ON_ERROR_STOP=1 \
    -c "CREATE DATABASE switchyard_test" -c "CREATE ROLE switchyard_pw LOGIN PASSWORD 'right-password'" \
    -c "GRANT CREATE ON DATABASE switchyard_test TO switchyard_pw" >/dev/null \
    || { echo "postgres: start failed: creating the test database" >&2; return 1; }
  export SWITCHYARD_PG_DIR SWITCHYARD_PG_BIN="$bin" SWITCHYARD_PG_PORT="$port" SWITCHYARD_PG_CA="$SWITCHYARD_PG_DIR/ca.pem"
  export SWITCHYARD_POSTGRES_URL="postgres://switchyard@127.0.0.1:$port/switchyard_test"
  echo "postgres: throwaway cluster on 127.0.0.1:$port ($SWITCHYARD_PG_DIR)"
}

postgres_stop() {
  [ -n "${SWITCHYARD_PG_DIR:-}" ] || return 0
  local run=()
  [ "$(id -u)" -eq 0 ] && run=(runuser -u postgres --)
  "${run[@]}" "$SWITCHYARD_PG_BIN/pg_ctl" -D "$SWITCHYARD_PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$SWITCHYARD_PG_DIR"
  unset SWITCHYARD_PG_DIR SWITCHYARD_POSTGRES_URL SWITCHYARD_PG_CA
}
