#!/usr/bin/env bash
# Server builds against each other, taking turns, so all see the same machine.
#
#   bash scripts/ab.sh NAME_A BIN_A NAME_B BIN_B [NAME_C BIN_C ...] [rounds] [duration-seconds] ["sqlite postgres"]
#
# Each round runs scripts/load.sh once per engine with each build in turn (HAICO_BIN,
# SKIP_BUILD=1), and keeps the JSON results in target/ab/. At the end it prints, per engine and
# build, the median calls/s, p50, p99, server CPU per call (and PostgreSQL's, when it runs on this
# machine), and every run's calls/s; then, for each build after the first, the median of its
# per-round ratios to the first build (the figure to quote on a machine whose pace drifts).
# Copy each build aside first, e.g. `cp target/release/haico /tmp/haico-before`.
set -euo pipefail
cd "$(dirname "$0")/.."

names=() bins=()
while [[ $# -ge 2 && ! $1 =~ ^[0-9]+$ ]]; do
  names+=("$1") bins+=("$2")
  shift 2
done
if [[ ${#names[@]} -lt 2 ]]; then
  echo "usage: bash scripts/ab.sh NAME_A BIN_A NAME_B BIN_B [NAME BIN ...] [rounds] [seconds] [engines]" >&2
  exit 64
fi
for bin in "${bins[@]}"; do
  [[ -x $bin ]] || { echo "ab.sh: $bin is not an executable server build" >&2; exit 66; }
done
rounds=${1:-3}
duration=${2:-15}
engines=${3:-"sqlite postgres"}
out=target/ab
rm -rf "$out"
mkdir -p "$out"

for round in $(seq 1 "$rounds"); do
  for engine in $engines; do
    for i in "${!names[@]}"; do
      name=${names[$i]} bin=${bins[$i]}
      echo "round $round: $engine, $name" >&2
      LOAD_RESULTS_DIR="$out/tmp" SKIP_BUILD=1 HAICO_BIN="$bin" \
        bash scripts/load.sh "$engine" "$duration" >/dev/null
      cp "$out/tmp/$engine.json" "$out/$name-$engine-$round.json"
    done
  done
done

python3 - "$out" "$engines" "${names[@]}" <<'PY'
import glob, json, statistics, sys
out, engines, names = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
med = statistics.median
for engine in engines:
    for name in names:
        runs = [json.load(open(p)) for p in sorted(glob.glob(f"{out}/{name}-{engine}-*.json"))]
        print(f"{engine:9} {name:12} calls/s {med(r['calls_per_sec'] for r in runs):7.0f}"
              f"  p50 {med(r['latency_ms']['p50'] for r in runs):5.1f}"
              f"  p99 {med(r['latency_ms']['p99'] for r in runs):5.1f}"
              f"  server µs/call {med(r['server_cpu']['cpu_us_per_call'] for r in runs):4.0f}"
              + (f"  database µs/call {med(r['database_cpu']['cpu_us_per_call'] for r in runs):4.0f}"
                 if all(r.get('database_cpu') for r in runs) else "") +
              f"  failures {sum(r['failures'] for r in runs)}"
              f"  runs {[round(r['calls_per_sec']) for r in runs]}")
    # The machine's pace drifts between rounds, so each build is compared with the first one
    # of the same round, and the median of those ratios is what to quote.
    def load(name, round_):
        return json.load(open(f"{out}/{name}-{engine}-{round_}.json"))
    rounds = sorted(int(p.rsplit("-", 1)[1][:-5]) for p in glob.glob(f"{out}/{names[0]}-{engine}-*.json"))
    metrics = [("calls/s", lambda r: r["calls_per_sec"]),
               ("server µs/call", lambda r: r["server_cpu"]["cpu_us_per_call"]),
               ("database µs/call", lambda r: (r.get("database_cpu") or {}).get("cpu_us_per_call"))]
    for name in names[1:]:
        parts = []
        for label, get in metrics:
            ratios = []
            for round_ in rounds:
                a, b = get(load(names[0], round_)), get(load(name, round_))
                if a and b:
                    ratios.append(b / a)
            if ratios:
                higher = sum(r > 1 for r in ratios)
                parts.append(f"{label} {med(ratios):.3f} (higher in {higher}/{len(ratios)})")
        print(f"{engine:9} {name:12} per-round ratio to {names[0]}: " + ", ".join(parts))
PY
