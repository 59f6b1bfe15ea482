#!/usr/bin/env python3
"""Sorts the samples of a `perf record --call-graph dwarf` profile of `haico serve` into buckets.

    perf script -i perf.data -F ip,sym,dso | python3 scripts/perf_buckets.py

A sample whose leaf is in the kernel counts for the system call it is under (send, recv,
epoll_wait, futex; none: interrupts and the scheduler). Otherwise it counts for the first frame,
from the leaf up, that belongs to one of the libraries below, in their order (malloc and memcpy
count for their caller). docs/BENCHMARKS.md says how to read its output.
"""
import sys, re, collections
cats = [
 ("sqlx (PostgreSQL protocol, encode/decode, statement cache)", re.compile(r'sqlx')),
 ("JSON (serde_json)", re.compile(r'serde_json|serde::')),
 ("tracing", re.compile(r'^tracing|<tracing|tracing_subscriber|tracing_core')),
 ("metrics", re.compile(r'metrics')),
 ("HTTP (hyper, axum, tower, compression)", re.compile(r'hyper|axum|tower|^http::|<http::|flate2|compression')),
 ("haico store (lender, query, change log)", re.compile(r'haico::store')),
 ("haico tools/workspace/people", re.compile(r'haico::')),
 ("tokio runtime (scheduler, timers, I/O driver)", re.compile(r'tokio|mio')),
]
samples = collections.Counter()
total = 0
def flush(stack):
    global total
    if not stack: return
    total += 1
    leaf_kernel = stack[0][1]
    if leaf_kernel:
        sc = next((f for f,k in stack if k and f.startswith('__x64_sys_')), None)
        name = {'__x64_sys_sendto':'send','__x64_sys_recvfrom':'recv','__x64_sys_epoll_wait':'epoll_wait','__x64_sys_futex':'futex (thread wake/park)','__x64_sys_write':'write','__x64_sys_read':'read'}.get(sc, sc or 'interrupts/scheduler')
        samples['kernel: '+name] += 1; return
    for f,k in stack:
        if k: continue
        for c,rx in cats:
            if rx.search(f):
                samples[c] += 1; return
    samples['other user (libc, std)'] += 1
stack = []
for line in sys.stdin:
    line=line.rstrip('\n')
    if not line.strip():
        flush(stack); stack=[]; continue
    if line.startswith((' ','\t')):
        m = re.match(r'\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)$', line)
        if m:
            stack.append((m.group(1), 'kernel.kallsyms' in m.group(2)))
flush(stack)
for c,n in samples.most_common():
    print(f"{100*n/total:5.1f}%  {c}")
print("samples", total)
