#!/usr/bin/env python3
"""One table from several `haico eval --json` reports (e.g. one per scenario, as
`EACH=1 bash scripts/eval_local.sh` writes them), with the llama.cpp server's own prompt
evaluation per request when its log is given.

    python3 scripts/eval_table.py REPORT.json... [--llama-log LOG --from BYTE]
"""
import json
import re
import statistics
import sys


def main(argv):
    log, start, reports = None, 0, []
    args = iter(argv)
    for arg in args:
        if arg == "--llama-log":
            log = next(args)
        elif arg == "--from":
            start = int(next(args))
        else:
            reports.append(arg)
    rows = []
    for path in reports:
        with open(path) as f:
            report = json.load(f)
        rows.extend(report["scenarios"])
    if not rows:
        sys.exit("no scenarios in the reports given")
    print("| scenario | pass | checks | wall s | model calls | prompt tokens | cached | "
          "read anew after 1st call | TTFT after 1st call s | tool calls | failed |")
    print("| --- | :-: | --: | --: | --: | --: | --: | --: | --: | --: | --: |")
    for s in sorted(rows, key=lambda s: s["name"]):
        m, t = s["measures"], s["measures"]["tokens"]
        ok = sum(c["passed"] for c in s["checks"])
        later = m.get("later_uncached_share")
        ttft = m.get("later_first_token_ms")
        print(f"| {s['name']} | {'✓' if s['passed'] else '✗'} | {ok}/{len(s['checks'])} "
              f"| {m['wall_ms'] / 1000:.0f} | {t['model_calls']} | {t['prompt_tokens']} "
              f"| {100 * m['cached_share']:.0f}% "
              f"| {'n/a' if later is None else f'{100 * later:.0f}%'} "
              f"| {'n/a' if ttft is None else f'{ttft / 1000:.1f}'} "
              f"| {m['tool_calls']} | {m['failed_calls']} |")
    passed = sum(s["passed"] for s in rows)
    checks = sum(len(s["checks"]) for s in rows)
    checks_ok = sum(c["passed"] for s in rows for c in s["checks"])
    later = [s["measures"]["later_uncached_share"] for s in rows
             if s["measures"].get("later_uncached_share") is not None]
    ttft = [s["measures"]["later_first_token_ms"] for s in rows
            if s["measures"].get("later_first_token_ms") is not None]
    print(f"\nScenarios passed: {passed}/{len(rows)}; checks passed: {checks_ok}/{checks}"
          f" ({100 * checks_ok / checks:.0f}%).")
    if later:
        print(f"Prompt read anew after a turn's first call (median over scenarios): "
              f"{100 * statistics.median(later):.1f}%; time to first token then: "
              f"{statistics.median(ttft) / 1000:.1f} s.")
    failing = {}
    for s in rows:
        for c in s["checks"]:
            if not c["passed"]:
                failing[c["check"]] = failing.get(c["check"], 0) + 1
    if failing:
        print("Checks failed, by how many scenarios: " + ", ".join(
            f"`{name}` {n}" for name, n in sorted(failing.items(), key=lambda kv: -kv[1])) + ".")
    if log:
        with open(log, "rb") as f:
            f.seek(start)
            text = f.read().decode("utf-8", "replace")
        calls = [(float(ms), int(n)) for ms, n in re.findall(
            r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens", text)]
        if calls:
            secs = sorted(ms / 1000 for ms, _ in calls)
            toks = sorted(n for _, n in calls)
            print(f"llama.cpp: {len(calls)} requests; prompt tokens evaluated per request: "
                  f"median {statistics.median(toks):.0f} (min {toks[0]}, max {toks[-1]}); "
                  f"prompt evaluation per request: median {statistics.median(secs):.1f} s "
                  f"(max {secs[-1]:.1f} s), total {sum(secs):.0f} s.")


if __name__ == "__main__":
    main(sys.argv[1:])
