#!/usr/bin/env python3
"""A stand-in OTLP/HTTP collector for load runs: it takes `POST /v1/traces`, answers 200 with an
empty ExportTraceServiceResponse (a zero-length protobuf message), and counts what it got. It
does not decode: it measures what exporting costs haico, not what a collector costs.

    python3 scripts/otlp_sink.py PORT        # prints "requests bytes" on SIGTERM/SIGINT
"""
import http.server
import signal
import sys
import threading

counts = {"requests": 0, "bytes": 0}
lock = threading.Lock()


class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        self.rfile.read(length)
        with lock:
            counts["requests"] += 1
            counts["bytes"] += length
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 4318
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Sink)

    def stop(*_):
        print(f"{counts['requests']} {counts['bytes']}", flush=True)
        threading.Thread(target=server.shutdown).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.serve_forever()


if __name__ == "__main__":
    main()
