//! Tests of process-wide state (the metrics recorder counts every request of the process; the
//! tracing subscriber is installed once per process) cannot share the test binary's process
//! with the others. Such a test starts with `if !alone(name) { return; }`: run by the harness,
//! it re-runs this binary for exactly itself, in a process of its own, and passes when that
//! run passes; in that process, `alone` says yes and the test body runs.

use std::process::Command;

/// The variable naming the one test a re-run process is for.
const ALONE: &str = "HAICO_TEST_ALONE";

/// `test`: the test's full name without the crate, e.g. `http::metrics::counts`. Returns
/// `true` in the process made for `test`; otherwise runs that process, fails when the test
/// failed or did not run there, and returns `false`.
pub fn alone(test: &str) -> bool {
    if std::env::var(ALONE).is_ok_and(|name| name == test) {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new(exe)
        .args([test, "--exact", "--test-threads=1", "--nocapture"])
        .env(ALONE, test)
        .output()
        .unwrap_or_else(|e| panic!("re-running the test binary for {test}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{test} failed in its own process:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("1 passed"),
        "{test} did not run in its own process:\n{stdout}\n{stderr}"
    );
    false
}

/// The full name of a test function in the calling module, as the harness filters it.
#[macro_export]
macro_rules! test_name {
    ($($segment:expr),+) => {{
        let module = module_path!();
        let module = module.split_once("::").map_or("", |(_, rest)| rest);
        [module $(, $segment)+].join("::")
    }};
}
