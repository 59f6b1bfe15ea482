"""Memory across cycles of event-stream subscribers (docs/BENCHMARKS.md).

    python3 scripts/sse_cycles.py PORT SERVER_PID SUBSCRIBERS CYCLES [THREADS]

Against a running `haico serve` on 127.0.0.1:PORT: creates threads mem0.., opens SUBSCRIBERS
raw-socket subscribers of their /events (spread over THREADS), prints the server's VmRSS,
closes them, waits 3 s, prints it again; CYCLES times. Needs `ulimit -n` above SUBSCRIBERS.
"""
import socket, sys, time, json, urllib.request
port, pid, n, cycles = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
threads = int(sys.argv[5]) if len(sys.argv) > 5 else 1
def rss():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"): return int(line.split()[1]) // 1024
base = f"http://127.0.0.1:{port}"
for t in range(threads):
    req = urllib.request.Request(base + "/api/threads", data=json.dumps({"id": f"mem{t}"}).encode(),
                                 headers={"content-type": "application/json"})
    try: urllib.request.urlopen(req).read()
    except Exception: pass
print("start", rss(), "MB", flush=True)
for c in range(cycles):
    socks = []
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(f"GET /api/threads/mem{i % threads}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        socks.append(s)
    for s in socks:
        s.settimeout(10)
        head = s.recv(4096)
        assert b"200 OK" in head, head
    connected = rss()
    for s in socks: s.close()
    time.sleep(3)
    print(f"cycle {c+1}: {connected} MB with {n} streams, {rss()} MB after", flush=True)
