#!/usr/bin/env bash
# The agent's evaluation on a real local model, with what its server measured: runs
# `haico eval` over the scenarios against llama.cpp's server (../shared/tools/local-llm/) and
# reads the server's own log for the prompt tokens it evaluated per call and how long that took.
#
#   bash scripts/eval_local.sh [SCENARIOS…]      default: eval/
#   EACH=1 bash scripts/eval_local.sh eval/      one `haico eval` per scenario file, so every
#                                                finished scenario's report is kept (a long run
#                                                can be stopped and resumed: files already
#                                                reported are skipped), then one table of all
#                                                (scripts/eval_table.py)
#   REPEAT=3 bash scripts/eval_local.sh eval/    every scenario three times (pass@1, pass^3)
#
# Each scenario run's trace (every model call with its tool calls and their envelopes) is
# written as Markdown under $OUT/traces/.
#
# Settings (environment): HAICO_BIN (default: target/release/haico, built if missing),
# LLM_DIR (/opt/local-llm), LLM_PORT (18081), OUT (target/eval-local), and any HAICO_LLM_* to
# override the model settings. Starts the server when nothing answers on LLM_PORT and stops it
# at the end; a server already running is used as it is, and its log is read when LLM_LOG
# names it (only what it printed during this run).
set -euo pipefail
cd "$(dirname "$0")/.."
LLM_DIR=${LLM_DIR:-/opt/local-llm}
LLM_PORT=${LLM_PORT:-18081}
OUT=${OUT:-target/eval-local}
HAICO_BIN=${HAICO_BIN:-target/release/haico}
mkdir -p "$OUT"
[ -x "$HAICO_BIN" ] || cargo build --release --bin haico

started=""
log=${LLM_LOG:-$OUT/llama-server.log}
if ! curl -sf "http://127.0.0.1:$LLM_PORT/health" >/dev/null 2>&1; then
  [ -x "$LLM_DIR/llama.cpp/build/bin/llama-server" ] || {
    echo "no llama-server in $LLM_DIR: run sh ../shared/tools/local-llm/setup.sh first" >&2; exit 1; }
  sh ../shared/tools/local-llm/start.sh "$LLM_DIR" "$LLM_PORT" >"$log" 2>&1 &
  started=$!
  trap '[ -n "$started" ] && kill "$started" 2>/dev/null' EXIT
  for _ in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$LLM_PORT/health" >/dev/null 2>&1 && break
    sleep 1
  done
fi

export HAICO_LLM_PROVIDER=${HAICO_LLM_PROVIDER:-openai}
export HAICO_LLM_BASE_URL=${HAICO_LLM_BASE_URL:-http://127.0.0.1:$LLM_PORT/v1}
export HAICO_LLM_MODEL=${HAICO_LLM_MODEL:-qwen2.5-coder-1.5b-instruct}
export HAICO_LLM_TIMEOUT_SECS=${HAICO_LLM_TIMEOUT_SECS:-600}
# A 1.5B model sometimes repeats itself until its context is full; 1,024 tokens is room for
# a document section and bounds a call at about a minute of writing.
export HAICO_LLM_MAX_TOKENS=${HAICO_LLM_MAX_TOKENS:-1024}
# Repeatable runs (llama.cpp samples at 0.8 unless told otherwise) and every small-model aid
# (README: HAICO_LLM_AIDS; `all` leaves out `checklist`, which measured worse); set
# HAICO_LLM_AIDS=none to measure the agent without them, or all,checklist to add it.
export HAICO_LLM_TEMPERATURE=${HAICO_LLM_TEMPERATURE:-0}
export HAICO_LLM_SEED=${HAICO_LLM_SEED:-42}
export HAICO_LLM_AIDS=${HAICO_LLM_AIDS:-all}
REPEAT=${REPEAT:-1}
status=0
offset=$( [ -f "$log" ] && wc -c <"$log" || echo 0 )
if [ "${EACH:-0}" = 1 ]; then
  mkdir -p "$OUT/each"
  files=()
  for path in "${@:-eval/}"; do
    if [ -d "$path" ]; then files+=("$path"/*.json); else files+=("$path"); fi
  done
  for file in "${files[@]}"; do
    name=$(basename "$file" .json)
    [ -f "$OUT/each/$name.json" ] && continue
    echo "== $name"
    "$HAICO_BIN" eval "$file" --json "$OUT/each/$name.json" --markdown "$OUT/each/$name.md" \
      --traces "$OUT/traces" --repeat "$REPEAT" || status=$?
  done
  table_log=()
  if [ -n "$started" ] || [ -n "${LLM_LOG:-}" ]; then table_log=(--llama-log "$log" --from "$offset"); fi
  python3 scripts/eval_table.py "$OUT"/each/*.json "${table_log[@]}" | tee "$OUT/eval.md"
  exit "$status"
fi
"$HAICO_BIN" eval "${@:-eval/}" --json "$OUT/eval.json" --markdown "$OUT/eval.md" \
  --traces "$OUT/traces" --repeat "$REPEAT" || status=$?
cat "$OUT/eval.md"

if [ -n "$started" ] || [ -n "${LLM_LOG:-}" ]; then
  # llama.cpp prints, per request, "prompt eval time = X ms / N tokens": the tokens it read
  # (the rest of the prompt came from its cache) and the time it took.
  python3 - "$log" "$offset" <<'EOF'
import re, statistics, sys
with open(sys.argv[1], "rb") as f:
    f.seek(int(sys.argv[2]))
    text = f.read().decode("utf-8", "replace")
calls = [(float(ms), int(n)) for ms, n in re.findall(
    r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens", text)]
if calls:
    secs = [ms / 1000 for ms, _ in calls]
    toks = [n for _, n in calls]
    print(f"\nllama.cpp: {len(calls)} requests; prompt tokens evaluated per request: "
          f"median {statistics.median(toks):.0f} (min {min(toks)}, max {max(toks)}); "
          f"prompt evaluation: median {statistics.median(secs):.1f} s, total {sum(secs):.0f} s")
EOF
fi
exit "$status"
