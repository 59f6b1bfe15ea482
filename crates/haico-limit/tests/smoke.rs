//! The limit benchmark must keep running the product's statements against the product's
//! schema: a migration that renames a column breaks it here, not months later in a
//! performance run. Each engine runs briefly and every call must succeed.
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
        report["failures"], 0,
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
fn sqlite_through_sqlx() {
    check(&run(&["--engine", "sqlite"]), "sqlite");
}

#[test]
fn sqlite_through_the_synchronous_driver_with_and_without_group_commit() {
    check(&run(&["--engine", "sqlite-sync"]), "sqlite-sync");
    check(
        &run(&["--engine", "sqlite-sync", "--group", "8"]),
        "sqlite-sync",
    );
    check(
        &run(&[
            "--engine",
            "sqlite-sync",
            "--group",
            "8",
            "--checkpoint-thread",
        ]),
        "sqlite-sync",
    );
}

#[test]
fn postgres_through_sqlx() {
    check(&run(&["--engine", "postgres"]), "postgres");
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
