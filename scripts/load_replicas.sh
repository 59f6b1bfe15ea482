#!/usr/bin/env bash
# The mixed tool-call load across 1, 2 and 3 `haico serve` replicas on one PostgreSQL database,
# round-robin per call (like a load balancer without stickiness), with the cross-replica event
# lag measured alongside; then the same deterministic single-client run against 1 and 3
# replicas, whose final states must be identical.
#
#   bash scripts/load_replicas.sh [duration-seconds]
#
# Environment:
#   REPLICAS      which replica counts to run (default "1 2 3")
#   CLIENTS       concurrent clients (default 32)
#   NOTIFY        "auto" (default) or "off": HAICO_LISTEN_NOTIFY of the replicas, to measure
#                 what LISTEN/NOTIFY costs
#   CHECK_CALLS   calls of the deterministic consistency run (default 2000; 0 skips it)
#   HAICO_LOAD_PG PostgreSQL server URL without a database (default
#                 postgres://postgres@127.0.0.1:5432)
#   LOAD_RESULTS_DIR  where the JSON results go (default target/load)
#   SKIP_BUILD=1  do not build first
set -euo pipefail
cd "$(dirname "$0")/.."

duration=${1:-20}
replica_counts=${REPLICAS:-1 2 3}
clients=${CLIENTS:-32}
notify=${NOTIFY:-auto}
check_calls=${CHECK_CALLS:-2000}
pg_base=${HAICO_LOAD_PG:-postgres://postgres@127.0.0.1:5432}
results_dir=${LOAD_RESULTS_DIR:-target/load}
haico_bin=${HAICO_BIN:-target/release/haico}

log() { printf '\n==> %s\n' "$*" >&2; }

workdir=$(mktemp -d "${TMPDIR:-/tmp}/haico-load-replicas.XXXXXX")
pids=()
pg_db=""

stop_servers() {
  local pid
  for pid in "${pids[@]:-}"; do
    [[ -n "$pid" ]] && kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]:-}"; do
    [[ -n "$pid" ]] && wait "$pid" 2>/dev/null || true
  done
  pids=()
}

drop_pg_db() {
  if [[ -n "$pg_db" ]]; then
    psql "$pg_base/postgres" -qAt -c "DROP DATABASE IF EXISTS \"$pg_db\" WITH (FORCE)" \
      >/dev/null 2>&1 || echo "could not drop database $pg_db; drop it by hand" >&2
  fi
  pg_db=""
}

cleanup() {
  stop_servers
  drop_pg_db
  rm -rf "$workdir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
  local port
  for _ in $(seq 1 200); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

# Starts $1 replicas on $2; sets `urls` (comma-separated) and `pids`.
start_replicas() {
  local count=$1 url=$2 i port list=()
  for i in $(seq 1 "$count"); do
    port=$(free_port)
    RUST_LOG=warn HAICO_DATABASE_URL="$url" HAICO_BIND="127.0.0.1:$port" \
      HAICO_REPLICA_ID="load-$i" HAICO_LISTEN_NOTIFY="$notify" \
      HAICO_DB_MAX_CONNECTIONS="$((16 / count > 4 ? 16 / count : 4))" \
      "$haico_bin" serve >"$workdir/replica-$i.log" 2>&1 &
    pids+=($!)
    list+=("http://127.0.0.1:$port")
    for _ in $(seq 1 300); do
      curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break
      sleep 0.1
    done
    curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" || {
      echo "replica $i did not come up:" >&2
      tail -n 20 "$workdir/replica-$i.log" >&2
      return 1
    }
  done
  urls=$(IFS=,; echo "${list[*]}")
}

fresh_db() {
  drop_pg_db
  pg_db="haico_loadr_$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n')"
  psql "$pg_base/postgres" -qAt -v ON_ERROR_STOP=1 -c "CREATE DATABASE \"$pg_db\"" >/dev/null
  db_url="$pg_base/$pg_db"
}

check_logs() {
  if grep -qiE 'panic|error' "$workdir"/replica-*.log; then
    echo "replica logs have errors:" >&2
    grep -iE 'panic|error' "$workdir"/replica-*.log | head -n 20 >&2
    return 1
  fi
}

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  log "building (cargo build --release -p haico -p haico-load)"
  cargo build --release -p haico -p haico-load
fi
mkdir -p "$results_dir"
overall=0

for count in $replica_counts; do
  fresh_db
  start_replicas "$count" "$db_url"
  server_pids=$(IFS=,; echo "${pids[*]}")
  log "$count replica(s), NOTIFY=$notify: $clients clients for $duration s over $urls"
  target/release/haico-load --url "$urls" --clients "$clients" --duration "$duration" \
    --server-pid "$server_pids" --lag-probe \
    --json-out "$results_dir/replicas-$count-$notify.json" || overall=1
  stop_servers
  check_logs || overall=1
done

if [[ "$check_calls" != 0 ]]; then
  for count in 1 3; do
    fresh_db
    start_replicas "$count" "$db_url"
    log "consistency: $check_calls calls of one client (seed 7) over $count replica(s)"
    target/release/haico-load --url "$urls" --clients 1 --warmup 0 --requests "$check_calls" \
      --duration 600 --seed 7 --threads 10 --state-out "$workdir/state-$count.json" \
      >/dev/null || overall=1
    stop_servers
    check_logs || overall=1
  done
  if cmp -s "$workdir/state-1.json" "$workdir/state-3.json"; then
    log "consistency: the final state over 3 replicas is identical to the one over 1"
  else
    echo "consistency: the final states differ:" >&2
    diff <(head -c 200000 "$workdir/state-1.json") <(head -c 200000 "$workdir/state-3.json") | head -n 20 >&2
    overall=1
  fi
fi
exit "$overall"
