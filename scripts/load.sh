#!/usr/bin/env bash
# Mixed tool-call load test of `haico serve` on SQLite and/or PostgreSQL.
#
#   bash scripts/load.sh [sqlite|postgres|both] [duration-seconds]
#
# For each engine: a fresh database (a temporary SQLite file, or a PostgreSQL database
# `haico_load_<random>` that is dropped afterwards), a release server on a free loopback port
# with RUST_LOG=warn, a wait for /healthz, one haico-load run against it (with the server's PID
# so its CPU time is reported), then SIGTERM to the server. Everything is cleaned up on exit,
# also on Ctrl-C or failure.
#
# Environment:
#   CLIENTS             concurrent clients (default 32)
#   LOAD_ARGS           extra haico-load flags, e.g. "--workers 2 --warmup 2"
#   HAICO_LOAD_PG       PostgreSQL server URL without a database
#                       (default postgres://postgres@127.0.0.1:5432)
#   LOAD_RESULTS_DIR    where the JSON results go (default target/load)
#   HAICO_BIN           server binary to test (default target/release/haico), e.g. a saved
#                       copy for before/after comparisons
#   SKIP_BUILD=1        do not run cargo build first
#   LOAD_AS=member      call as a signed-in member (accounts made with `haico user add`, the
#                       member's personal token sent with every call, so every call is
#                       identified and its access checked) instead of in one-person mode
set -euo pipefail
cd "$(dirname "$0")/.."

engine=${1:-both}
duration=${2:-20}
clients=${CLIENTS:-32}
pg_base=${HAICO_LOAD_PG:-postgres://postgres@127.0.0.1:5432}
results_dir=${LOAD_RESULTS_DIR:-target/load}
haico_bin=${HAICO_BIN:-target/release/haico}
load_as=${LOAD_AS:-}

case "$load_as" in
  "" | member) ;;
  *)
    echo "LOAD_AS must be empty (one-person mode) or member, got '$load_as'" >&2
    exit 64
    ;;
esac
case "$engine" in
  sqlite | postgres | both) ;;
  *)
    echo "usage: bash scripts/load.sh [sqlite|postgres|both] [duration-seconds]" >&2
    exit 64
    ;;
esac
if ! [[ "$duration" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  echo "duration must be a number of seconds, got '$duration'" >&2
  exit 64
fi

log() { printf '\n==> %s\n' "$*" >&2; }

workdir=$(mktemp -d "${TMPDIR:-/tmp}/haico-load.XXXXXX")
server_pid=""
pg_db=""

stop_server() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$server_pid" 2>/dev/null; then
      echo "server $server_pid ignored SIGTERM for 10 s; killing it" >&2
      kill -KILL "$server_pid" 2>/dev/null || true
    fi
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}

drop_pg_db() {
  if [[ -n "$pg_db" ]]; then
    psql "$pg_base/postgres" -qAt -v ON_ERROR_STOP=1 \
      -c "DROP DATABASE IF EXISTS \"$pg_db\" WITH (FORCE)" >/dev/null 2>&1 ||
      echo "could not drop database $pg_db; drop it by hand" >&2
  fi
  pg_db=""
}

cleanup() {
  stop_server
  drop_pg_db
  rm -rf "$workdir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A loopback port nothing listens on.
free_port() {
  local port
  for _ in $(seq 1 200); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  echo "no free port found" >&2
  return 1
}

start_server() { # url
  local url=$1 port attempt
  # A port found free can be taken before the server binds it (another run, another test):
  # then the server exits at once saying so, and a fresh port is tried.
  for attempt in 1 2 3; do
    port=$(free_port)
    RUST_LOG=warn HAICO_DATABASE_URL="$url" HAICO_BIND="127.0.0.1:$port" \
      "$haico_bin" serve >"$workdir/server.log" 2>&1 &
    server_pid=$!
    base_url="http://127.0.0.1:$port"
    for _ in $(seq 1 300); do
      if ! kill -0 "$server_pid" 2>/dev/null; then
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
        if grep -q "in use" "$workdir/server.log" && [[ $attempt -lt 3 ]]; then
          echo "port $port was taken before the server bound it; trying another" >&2
          continue 2
        fi
        echo "the server exited during start-up:" >&2
        tail -n 20 "$workdir/server.log" >&2
        return 1
      fi
      if curl -sf -o /dev/null "$base_url/healthz"; then
        return 0
      fi
      sleep 0.1
    done
    echo "the server did not answer /healthz within 30 s:" >&2
    tail -n 20 "$workdir/server.log" >&2
    return 1
  done
}

run_engine() { # engine
  local name=$1 url status=0
  case "$name" in
    sqlite)
      url="sqlite:$workdir/haico-load.db"
      rm -f "$workdir"/haico-load.db*
      ;;
    postgres)
      command -v psql >/dev/null || {
        echo "psql is needed for the PostgreSQL run" >&2
        return 1
      }
      pg_db="haico_load_$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n')"
      psql "$pg_base/postgres" -qAt -v ON_ERROR_STOP=1 -c "CREATE DATABASE \"$pg_db\"" >/dev/null
      url="$pg_base/$pg_db"
      ;;
  esac
  local token_args=()
  if [[ $load_as == member ]]; then
    # An administrator first (the first account adopts the threads nobody owns), then the
    # member whose token makes the calls and who owns the threads haico-load makes.
    local token=""
    if HAICO_DATABASE_URL="$url" "$haico_bin" user add load-admin --admin >/dev/null 2>"$workdir/user.log"; then
      token=$(HAICO_DATABASE_URL="$url" "$haico_bin" user add load-member 2>"$workdir/user.log") || token=""
    fi
    if [[ -z $token ]]; then
      echo "$name: could not make the accounts for LOAD_AS=member:" >&2
      cat "$workdir/user.log" >&2
      drop_pg_db
      return 1
    fi
    token_args=(--token "$token")
  fi
  log "$name: starting the server (RUST_LOG=warn)"
  start_server "$url" || {
    stop_server
    drop_pg_db
    return 1
  }
  log "$name: $clients clients for $duration s against $base_url (server pid $server_pid)"
  mkdir -p "$results_dir"
  # PostgreSQL's own CPU too, when it runs on this machine: its backends, not haico, are what
  # fills the two cores.
  local database_args=()
  if [[ $name == postgres ]]; then
    local postmaster
    postmaster=$(pgrep -o -x postgres || true)
    if [[ -n $postmaster && $pg_base =~ @(127\.0\.0\.1|localhost)(:|/|$) ]]; then
      database_args=(--database-pid "$postmaster")
    fi
  fi
  # shellcheck disable=SC2086 # LOAD_ARGS is a list of flags on purpose
  target/release/haico-load --url "$base_url" --clients "$clients" --duration "$duration" \
    --server-pid "$server_pid" "${database_args[@]}" "${token_args[@]}" --json-out "$results_dir/$name.json" \
    ${LOAD_ARGS:-} || status=$?
  stop_server
  if grep -qiE 'panic|error' "$workdir/server.log"; then
    echo "server log of the $name run has errors:" >&2
    grep -iE 'panic|error' "$workdir/server.log" | head -n 20 >&2
    if [[ $status -eq 0 ]]; then status=1; fi
  fi
  drop_pg_db
  if [[ $status -ne 0 ]]; then
    echo "$name: haico-load exited with status $status (2 means some calls failed)" >&2
  else
    echo "$name: results in $results_dir/$name.json" >&2
  fi
  return "$status"
}

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  log "building (cargo build --release -p haico -p haico-load)"
  cargo build --release -p haico -p haico-load
fi
[[ -x "$haico_bin" ]] || {
  echo "no server binary at $haico_bin" >&2
  exit 1
}

overall=0
if [[ "$engine" == sqlite || "$engine" == both ]]; then
  run_engine sqlite || overall=1
fi
if [[ "$engine" == postgres || "$engine" == both ]]; then
  run_engine postgres || overall=1
fi
exit "$overall"
