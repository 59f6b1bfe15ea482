#!/usr/bin/env bash
# What exporting traces costs under load: the same release build with OTLP export off and on
# (to a local stand-in collector, scripts/otlp_sink.py), taking turns through scripts/ab.sh.
#
#   bash scripts/ab_otel.sh [rounds] [duration-seconds] ["sqlite postgres"]
#
# Prints ab.sh's table; the line to quote is "on … per-round ratio to off". The collector's
# request and byte counts are printed at the end, so a run whose spans never left is visible.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-4}
duration=${2:-10}
engines=${3:-"sqlite postgres"}
bin=${HAICO_BIN:-target/release/haico}
[[ -x $bin ]] || { echo "ab_otel.sh: build $bin first (cargo build --release)" >&2; exit 66; }

work=$(mktemp -d "${TMPDIR:-/tmp}/haico-ab-otel.XXXXXX")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 scripts/otlp_sink.py "$port" > "$work/sink.out" &
sink=$!
trap 'kill $sink 2>/dev/null || true; rm -rf "$work"' EXIT

# The "on" build is the same binary behind the standard variables.
cat > "$work/haico-otel" <<SH
#!/usr/bin/env bash
export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$port
export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf
exec "$(realpath "$bin")" "\$@"
SH
chmod +x "$work/haico-otel"

bash scripts/ab.sh off "$bin" on "$work/haico-otel" "$rounds" "$duration" "$engines"

kill -TERM $sink
wait $sink || true
read -r requests bytes < "$work/sink.out" || true
echo "collector received ${requests:-0} export requests, ${bytes:-0} bytes"
