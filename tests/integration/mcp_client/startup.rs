//! `HAICO_MCP_SERVERS` with the real binary: a bad file stops start-up naming the file and the
//! entry (and never printing a secret); a good one leaves start-up unblocked, the servers are
//! connected in the background, and their children end with haico, even a haico killed with
//! `kill -9`.

use std::time::Duration;

use serde_json::json;

use super::python_entry;
use crate::common::child::{ChildServer, start_fails};

#[test]
fn a_bad_servers_file_stops_start_up_naming_the_file_and_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("never.db").display());
    let path = dir.path().join("servers.json");
    std::fs::write(
        &path,
        json!({"mcpServers": {
            "good": {"command": "x", "env": {"API_KEY": "do-not-print-me"}},
            "Bad.Name": {"command": "x"}
        }})
        .to_string(),
    )
    .unwrap();
    let path_text = path.display().to_string();
    // Backtraces asked for in the environment still leave the one line that says what to fix.
    let (_, output) = start_fails(
        &db,
        &[
            ("HAICO_MCP_SERVERS", path_text.as_str()),
            ("RUST_BACKTRACE", "1"),
            ("RUST_LIB_BACKTRACE", "1"),
        ],
        Duration::from_secs(20),
    );
    assert!(
        output.contains(&path_text) && output.contains("Bad.Name"),
        "{output}"
    );
    assert!(!output.contains("do-not-print-me"), "{output}");
    assert!(output.trim_start().starts_with("error: "), "{output}");
    assert!(!output.to_lowercase().contains("backtrace"), "{output}");

    let missing = dir.path().join("absent.json").display().to_string();
    let (_, output) = start_fails(
        &db,
        &[("HAICO_MCP_SERVERS", missing.as_str())],
        Duration::from_secs(20),
    );
    assert!(
        output.contains(&missing) && output.contains("cannot read"),
        "{output}"
    );
    assert!(!dir.path().join("never.db").exists(), "nothing was opened");
}

/// The waits of external calls and of approvals are refused out of their range, naming the
/// setting and the range, before anything is opened.
#[test]
fn out_of_range_waits_stop_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("never.db").display());
    for (setting, value, names) in [
        ("HAICO_APPROVAL_TIMEOUT_SECS", "0", "1..=86400"),
        (
            "HAICO_APPROVAL_TIMEOUT_SECS",
            "soon",
            "approval-timeout-secs",
        ),
        ("HAICO_MCP_CALL_TIMEOUT_SECS", "0", "1..=3600"),
        ("HAICO_MCP_CALL_TIMEOUT_SECS", "86401", "1..=3600"),
    ] {
        let (_, output) = start_fails(&db, &[(setting, value)], Duration::from_secs(20));
        assert!(output.contains(names), "{setting}={value}: {output}");
    }
    assert!(!dir.path().join("never.db").exists(), "nothing was opened");
}

/// The processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            String::from_utf8_lossy(&cmdline)
                .contains(marker)
                .then_some(pid)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_connect_in_the_background_and_end_with_haico() {
    needs!(python_mcp);
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("--marker=haico-test-{}", std::process::id());
    let path = dir.path().join("servers.json");
    std::fs::write(
        &path,
        json!({"mcpServers": {
            "tools": python_entry(&[marker.as_str()]),
            "missing": {"command": "/nonexistent/mcp-server"}
        }})
        .to_string(),
    )
    .unwrap();
    let db = format!("sqlite:{}", dir.path().join("haico.db").display());
    let path_text = path.display().to_string();
    let mut server = ChildServer::start(&db, &[("HAICO_MCP_SERVERS", path_text.as_str())]).await;
    let deadline = tokio::time::Instant::now() + super::READY_WITHIN;
    let statuses = loop {
        let all = server.get_json("/api/mcp-servers").await;
        if all[1]["status"] == "ready" {
            break all;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{all}\n{}",
            server.log_tail(30)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(statuses[0]["name"], "missing");
    assert_eq!(statuses[0]["status"], "failed");
    assert_eq!(processes_with(&marker).len(), 1, "one child runs");
    let log = server.log_text();
    assert!(
        !log.contains("k-123"),
        "the child's env is not logged:\n{log}"
    );

    server.kill();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while !processes_with(&marker).is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the MCP server outlived haico: {:?}",
            processes_with(&marker)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
