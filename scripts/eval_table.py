#!/usr/bin/env python3
"""One table from several `haico eval --json` reports (e.g. one per scenario, as
`EACH=1 bash scripts/eval_local.sh` writes them): per scenario the runs passed, task checks,
guards and all checks beside the do-nothing baseline, and the measures; then the overall
lines (pass@1 and pass^k with repeated runs, checks against the baseline), the checks that
failed most, and the llama.cpp server's own prompt evaluation per request when its log is
given. Reports written before task checks and guards (no `runs` per scenario) are read too,
without the new columns.

    python3 scripts/eval_table.py REPORT.json... [--llama-log LOG --from BYTE]
"""
import json
import re
import statistics
import sys


def tally(passed=0, total=0):
    return {"passed": passed, "total": total}


def add(a, b):
    return {"passed": a["passed"] + b["passed"], "total": a["total"] + b["total"]}


def frac(t):
    return f"{t['passed']}/{t['total']}"


def share(t):
    return t["passed"] / t["total"] if t["total"] else 0.0


def with_share(t):
    return f"{frac(t)} ({100 * share(t):.0f} %)"


def known(n):
    return "n/a" if n is None else n


# The checks that hold when nothing is done (`Check::kind` in src/eval/checks.rs), for
# reports written before each check carried its kind.
GUARDS = {"locked_preferences_untouched", "no_locked_attempts", "no_repeated_calls",
          "max_failed_calls", "ended_by_model", "plan_no_duplicates", "document_keeps"}


def counts_of(checks):
    out = {"task": tally(), "guard": tally(), "all": tally()}
    for c in checks:
        kind = c.get("kind") or ("guard" if c["check"] in GUARDS else "task")
        out[kind] = add(out[kind], tally(int(c["passed"]), 1))
        out["all"] = add(out["all"], tally(int(c["passed"]), 1))
    return out


def normalise(s):
    """A scenario of either report version, as {name, runs: [{passed, checks}], counts,
    baseline (or None), measures}."""
    if "runs" in s:
        return s
    # Before task checks and guards: one run, no baseline, no kinds.
    run = {"passed": s["passed"], "checks": s["checks"], "measures": s["measures"]}
    return {"name": s["name"], "passed": s["passed"], "runs_passed": int(s["passed"]),
            "runs": [run], "counts": counts_of(s["checks"]), "baseline": None,
            "measures": s["measures"]}


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
        rows.extend(normalise(s) for s in report["scenarios"])
    if not rows:
        sys.exit("no scenarios in the reports given")
    repeat = max(len(s["runs"]) for s in rows)
    print("| scenario | pass | task | guards | checks | do-nothing | wall s | model calls "
          "| prompt tokens | cached | read anew after 1st call | TTFT after 1st call s "
          "| tool calls | failed |")
    print("| --- | :-: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |")
    for s in sorted(rows, key=lambda s: s["name"]):
        m, t = s["measures"], s["measures"]["tokens"]
        c = s["counts"]
        base = frac(s["baseline"]["counts"]["all"]) if s["baseline"] else "n/a"
        runs = len(s["runs"])
        passed = ("✓" if s["passed"] else "✗") if runs == 1 else f"{s['runs_passed']}/{runs}"
        later = m.get("later_uncached_share")
        ttft = m.get("later_first_token_ms")
        cached = m.get("cached_share")
        print(f"| {s['name']} | {passed} | {frac(c['task'])} | {frac(c['guard'])} "
              f"| {frac(c['all'])} | {base} "
              f"| {m['wall_ms'] / 1000:.0f} | {known(t['model_calls'])} "
              f"| {known(t['prompt_tokens'])} "
              f"| {'n/a' if cached is None else f'{100 * cached:.0f}%'} "
              f"| {'n/a' if later is None else f'{100 * later:.0f}%'} "
              f"| {'n/a' if ttft is None else f'{ttft / 1000:.1f}'} "
              f"| {m['tool_calls']} | {m['failed_calls']} |")
    runs = [r for s in rows for r in s["runs"]]
    runs_passed = sum(r["passed"] for r in runs)
    scenarios_passed = sum(all(r["passed"] for r in s["runs"]) for s in rows)
    if repeat == 1:
        print(f"\nScenarios passed: {with_share(tally(scenarios_passed, len(rows)))}.")
    else:
        print(f"\nRuns passed (pass@1): {with_share(tally(runs_passed, len(runs)))}; "
              f"scenarios whose runs all passed (pass^{repeat}): "
              f"{with_share(tally(scenarios_passed, len(rows)))}.")
    total = {"task": tally(), "guard": tally(), "all": tally()}
    for s in rows:
        for k in total:
            total[k] = add(total[k], s["counts"][k])
    with_base = [s for s in rows if s["baseline"]]
    if len(with_base) == len(rows):
        base = {"task": tally(), "guard": tally(), "all": tally()}
        for s in rows:
            for k in base:
                base[k] = add(base[k], s["baseline"]["counts"][k])
        points = round(100 * (share(total["all"]) - share(base["all"])))
        print(f"Checks passed: {with_share(total['all'])}, do-nothing baseline "
              f"{with_share(base['all'])}, {points:+d} points.")
        print(f"Task checks: {with_share(total['task'])}, baseline {with_share(base['task'])}; "
              f"guards: {with_share(total['guard'])}, baseline {with_share(base['guard'])}.")
    else:
        print(f"Checks passed: {with_share(total['all'])} (no do-nothing baseline in "
              f"{len(rows) - len(with_base)} of the reports: written before it existed).")
    later = [s["measures"]["later_uncached_share"] for s in rows
             if s["measures"].get("later_uncached_share") is not None]
    ttft = [s["measures"]["later_first_token_ms"] for s in rows
            if s["measures"].get("later_first_token_ms") is not None]
    if later:
        print(f"Prompt read anew after a turn's first call (median over scenarios): "
              f"{100 * statistics.median(later):.1f}%; time to first token then: "
              f"{statistics.median(ttft) / 1000:.1f} s.")
    failing = {}
    for s in rows:
        for r in s["runs"]:
            for c in r["checks"]:
                if not c["passed"]:
                    failing[c["check"]] = failing.get(c["check"], 0) + 1
    if failing:
        print("Checks failed, by how many runs: " + ", ".join(
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
