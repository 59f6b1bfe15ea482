//! The report's Markdown and JSON shapes.

use super::*;
use crate::{eval::checks::CheckKind, eval::checks::CheckOutcome, eval::scenario::parse};

fn outcome(check: &str, kind: CheckKind, passed: bool, detail: &str) -> CheckOutcome {
    CheckOutcome {
        check: check.into(),
        kind,
        passed,
        detail: detail.into(),
    }
}

fn run(number: usize, passed: bool) -> RunResult {
    let checks = vec![
        outcome("objective_set", CheckKind::Task, true, "objective \"x\""),
        outcome(
            "tools_used",
            CheckKind::Task,
            passed,
            "not used: edit_document (never called)",
        ),
        outcome(
            "no_repeated_calls",
            CheckKind::Guard,
            true,
            "no call repeated",
        ),
    ];
    RunResult {
        run: number,
        passed,
        counts: Counts::of(&checks),
        checks,
        measures: Measures {
            turns: 1,
            wall_ms: 1500.0,
            tool_ms: 500.0,
            model_ms: 1000.0,
            tool_calls: 3,
            failed_calls: 0,
            ..Measures::default()
        },
        notes: Vec::new(),
        trace: Vec::new(),
    }
}

fn baseline() -> Baseline {
    let checks = vec![
        outcome(
            "objective_set",
            CheckKind::Task,
            false,
            "no objective is set",
        ),
        outcome("tools_used", CheckKind::Task, false, "not used"),
        outcome(
            "no_repeated_calls",
            CheckKind::Guard,
            true,
            "no call repeated",
        ),
    ];
    Baseline {
        counts: Counts::of(&checks),
        checks,
    }
}

fn scenario(name: &str) -> ScenarioReport {
    let mut parsed = parse(
        r#"{"name": "n", "description": "d", "messages": ["hi"], "checks": ["objective_set"]}"#,
    )
    .unwrap_or_else(|err| unreachable!("{err}"));
    parsed.name = name.into();
    parsed.path = format!("eval/{name}.json").into();
    ScenarioReport::new(&parsed, 25, baseline(), Vec::new())
}

fn with_runs(name: &str, runs: Vec<RunResult>) -> ScenarioReport {
    let base = scenario(name);
    let each: Vec<&Measures> = runs.iter().map(|r| &r.measures).collect();
    ScenarioReport {
        passed: runs.iter().all(|r| r.passed),
        runs_passed: runs.iter().filter(|r| r.passed).count(),
        counts: Counts::sum(runs.iter().map(|r| &r.counts)),
        measures: Totals::of(&each).sum,
        runs,
        ..base
    }
}

#[test]
fn the_markdown_has_a_row_per_scenario_an_overall_row_and_the_failures() {
    let report = Report::new(
        "replay".into(),
        true,
        Utc::now(),
        1,
        vec![
            with_runs("a|b", vec![run(1, true)]),
            with_runs("c", vec![run(1, false)]),
        ],
    );
    assert!(!report.passed());
    assert_eq!(report.overall.counts.all.passed, 5);
    assert_eq!(
        report.overall.baseline.all,
        Tally {
            passed: 2,
            total: 6
        }
    );
    let md = report.to_markdown();
    assert!(
        md.contains(
            "| a\\|b | ✓ | 2/2 | 1/1 | 3/3 | 1/3 | 1.50 | n/a | n/a | n/a | n/a | n/a | 3 | 0 |"
        ),
        "{md}"
    );
    assert!(md.contains("| c | ✗ | 1/2 | 1/1 | 2/3 | 1/3 |"), "{md}");
    assert!(
        md.contains("| **overall** | **1/2** | 3/4 | 2/2 | 5/6 | 2/6 | 3.00 |"),
        "{md}"
    );
    assert!(md.contains("Scenarios passed: 1/2 (50 %)."), "{md}");
    assert!(
        md.contains("Checks passed: 5/6 (83 %), do-nothing baseline 2/6 (33 %), +50 points."),
        "{md}"
    );
    assert!(
        md.contains("Task checks: 3/4 (75 %), baseline 0/4 (0 %); guards: 2/2 (100 %), baseline 2/2 (100 %)."),
        "{md}"
    );
    assert!(
        md.contains("- `c` · `tools_used` (task): not used: edit_document"),
        "{md}"
    );
    assert!(!md.contains("judges oddly"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&report.to_json().unwrap_or_default()).unwrap_or_default();
    assert_eq!(json["overall"]["pass_at_1"], 0.5);
    assert_eq!(json["overall"]["pass_hat_k"], 0.5);
    assert_eq!(json["overall"]["points_over_baseline"], 50.0);
    assert_eq!(json["overall"]["sum"]["tool_calls"], 6);
    assert_eq!(json["overall"]["median"]["wall_ms"], 1500.0);
    let first = &json["scenarios"][0];
    assert_eq!(first["counts"]["task"]["passed"], 2);
    assert_eq!(first["baseline"]["counts"]["guard"]["passed"], 1);
    assert_eq!(first["runs"][0]["checks"][2]["kind"], "guard");
    assert!(first["runs"][0]["measures"]["tokens"]["prompt_tokens"].is_null());
    // The JSON reads back (what --render-traces does).
    let back: Report = serde_json::from_str(&report.to_json().unwrap_or_default())
        .unwrap_or_else(|err| unreachable!("{err}"));
    assert_eq!(back, report);
}

#[test]
fn repeated_runs_report_pass_at_1_beside_pass_hat_k() {
    let report = Report::new(
        "replay".into(),
        true,
        Utc::now(),
        3,
        vec![
            with_runs("steady", vec![run(1, true), run(2, true), run(3, true)]),
            with_runs("flaky", vec![run(1, true), run(2, false), run(3, true)]),
        ],
    );
    assert_eq!(report.overall.runs, 6);
    assert_eq!(report.overall.runs_passed, 5);
    assert_eq!(report.overall.scenarios_passed, 1);
    let md = report.to_markdown();
    assert!(
        md.contains("| flaky | 2/3 | 5/6 | 3/3 | 8/9 | 1/3 |"),
        "{md}"
    );
    assert!(
        md.contains(
            "Runs passed (pass@1): 5/6 (83 %); scenarios whose 3 runs all passed (pass^3): 1/2 (50 %)."
        ),
        "{md}"
    );
    assert!(
        md.contains("Checks passed over all 6 runs: 17/18 (94 %)"),
        "{md}"
    );
    assert!(md.contains("- `flaky` run 2 · `tools_used` (task)"), "{md}");
}

#[test]
fn a_task_check_the_baseline_passes_is_pointed_out() {
    let mut odd = with_runs("odd", vec![run(1, true)]);
    odd.baseline.checks[0].passed = true;
    let report = Report::new("replay".into(), true, Utc::now(), 1, vec![odd]);
    let md = report.to_markdown();
    assert!(
        md.contains("- `odd` · `objective_set` (task) passes when nothing is done"),
        "{md}"
    );
}
