//! The limit benchmark must keep running the product's own storage path: a change of the
//! workspace's or the store's API breaks its build, and a broken call fails here, not months
//! later in a performance run. Each engine runs briefly and no call may fail but by a
//! refusal of the workspace's rules (what the server answers the same arguments with).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use serde_json::Value;

fn run(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_haico-limit"))
        .args([
            "--duration",
            "1",
            "--warmup",
            "0.2",
            "--threads",
            "3",
            "--clients",
            "4",
        ])
        .args(args)
        .output()
        .expect("haico-limit runs");
    assert!(
        out.status.success(),
        "haico-limit {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("haico-limit prints JSON")
}

fn check(report: &Value, engine: &str) {
    assert_eq!(report["engine"], engine, "{report}");
    assert_eq!(
        report["errors"], 0,
        "calls failed: {}",
        report["failure_samples"]
    );
    let calls = report["total_calls"].as_u64().unwrap();
    assert!(calls > 20, "only {calls} calls in a second: {report}");
    // The mix reaches writes and reads alike.
    for op in [
        "append_to_document",
        "toggle_todos",
        "list_todos",
        "chart_generator",
    ] {
        assert!(
            report["ops"][op].as_u64().unwrap() > 0,
            "no {op} call: {report}"
        );
    }
}

#[test]
fn sqlite_with_and_without_group_commit() {
    check(&run(&["--engine", "sqlite"]), "sqlite");
    let alone = run(&["--engine", "sqlite", "--group", "1"]);
    check(&alone, "sqlite");
    assert_eq!(alone["group"], 1, "{alone}");
}

#[test]
fn postgres() {
    let report = run(&["--engine", "postgres"]);
    check(&report, "postgres");
    // Every call reaches PostgreSQL through the store's lender, which counts its round trips.
    assert!(
        report["round_trips_per_call"].as_f64().unwrap() >= 1.0,
        "{report}"
    );
}

#[test]
fn prepare_runs_after_the_migrations() {
    let report = run(&["--engine", "sqlite", "--prepare", "PRAGMA user_version = 7"]);
    check(&report, "sqlite");
    let out = Command::new(env!("CARGO_BIN_EXE_haico-limit"))
        .args([
            "--engine",
            "sqlite",
            "-d",
            "1",
            "--prepare",
            "DROP TABLE nosuch",
        ])
        .output()
        .expect("haico-limit runs");
    assert!(!out.status.success(), "a failing --prepare was ignored");
}

#[test]
fn bad_settings_are_refused_with_the_reason_before_any_database_is_made() {
    for args in [
        &["--engine", "sqlite", "--clients", "0"][..],
        &["--engine", "sqlite", "--duration=-1"][..],
        &["--engine", "nosuch"][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_haico-limit"))
            .args(args)
            .output()
            .expect("haico-limit runs");
        assert!(!out.status.success(), "{args:?} was accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--clients")
                || stderr.contains("--duration")
                || stderr.contains("nosuch"),
            "{args:?}: the error does not name the setting: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?} printed results");
    }
}
