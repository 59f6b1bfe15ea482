#!/usr/bin/env bash
# The product against its limit, interleaved so both see the same machine.
#
#   bash scripts/limit.sh [rounds] [duration-seconds]
#
# Each round runs, one after another:
#   haico-limit --engine sqlite             the product's own storage path (haico-core's
#                                           workspace calls on haico-store's SQLite writer and
#                                           readers, set up as `haico serve` sets them up), no
#                                           server around it
#   load.sh sqlite                          the product over HTTP (32 clients, 50 threads)
#   haico-limit --engine sqlite --group 1   the same, each call committing on its own
#   haico-limit --engine postgres           the same path on PostgreSQL (the store's pool and
#                                           lender)
#   load.sh postgres                        the product over HTTP
# and prints, per configuration, the median calls/s over the rounds, p99, and the product's
# share of each limit. The limit sends the server's statements by construction: what it leaves
# out is HTTP, JSON, the tool runtime's checks and envelope. JSON results go to target/limit/.
#
# Environment: CLIENTS (default 32), HAICO_BIN (server binary, default target/release/haico),
# SKIP_BUILD=1 (do not build), HAICO_LOAD_PG (PostgreSQL server URL without a database).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
duration=${2:-15}
clients=${CLIENTS:-32}
pg_base=${HAICO_LOAD_PG:-postgres://postgres@127.0.0.1:5432}
out=target/limit
mkdir -p "$out"
rm -f "$out"/*.json

if [[ -z "${SKIP_BUILD:-}" ]]; then
  cargo build --release -p haico -p haico-load -p haico-limit
fi

limit() { # name args...
  local name=$1
  shift
  target/release/haico-limit --clients "$clients" -d "$duration" --postgres "$pg_base/postgres" \
    --json-out "$out/$name-$round.json" "$@" >/dev/null
}

product() { # engine
  LOAD_RESULTS_DIR="$out/load-$round" SKIP_BUILD=1 CLIENTS="$clients" \
    bash scripts/load.sh "$1" "$duration" >/dev/null
  cp "$out/load-$round/$1.json" "$out/product-$1-$round.json"
}

for round in $(seq 1 "$rounds"); do
  echo "round $round of $rounds" >&2
  limit limit-sqlite --engine sqlite
  product sqlite
  limit limit-sqlite-nogroup --engine sqlite --group 1
  limit limit-postgres --engine postgres
  product postgres
done

python3 - "$out" <<'PY'
import glob, json, statistics, sys
out = sys.argv[1]
def runs(name):
    return [json.load(open(p)) for p in sorted(glob.glob(f"{out}/{name}-[0-9]*.json"))]
def med(name, key):
    values = [key(r) for r in runs(name)]
    return statistics.median(values) if values else float("nan")
rate = lambda r: r["calls_per_sec"]
p99 = lambda r: r["latency_ms"]["p99"]
rows = [
    ("limit-sqlite", "SQLite limit (the server's store and settings)"),
    ("limit-sqlite-nogroup", "SQLite limit, each call its own commit"),
    ("product-sqlite", "haico over HTTP, SQLite"),
    ("limit-postgres", "PostgreSQL limit (the server's store and settings)"),
    ("product-postgres", "haico over HTTP, PostgreSQL"),
]
print(f"{'configuration':58} {'calls/s':>8} {'p99 ms':>7}  runs")
for name, label in rows:
    print(f"{label:58} {med(name, rate):8.0f} {med(name, p99):7.1f}  {len(runs(name))}")
def ratio(product, limit):
    pairs = list(zip(runs(product), runs(limit)))
    return statistics.median(rate(p) / rate(l) for p, l in pairs) if pairs else float("nan")
print()
print(f"product / limit (median of per-round ratios):")
print(f"  SQLite, over the limit               {ratio('product-sqlite', 'limit-sqlite'):.0%}")
print(f"  SQLite, over the limit without group  {ratio('product-sqlite', 'limit-sqlite-nogroup'):.0%}")
print(f"  PostgreSQL, over the limit           {ratio('product-postgres', 'limit-postgres'):.0%}")
PY
