//! The official MCP Python SDK as haico's client, over stdio (`haico mcp`) and streamable HTTP
//! (`/mcp/{thread_id}`): a `chart_generator` result carries the chart as a PNG `image` that
//! decodes (1600×960, opaque, many colours) beside the envelope, and the chart's `chart.png`
//! resource is the same image. The client is `tests/fixtures/mcp/chart_client.py`; it decodes
//! the PNG with Python's standard library and prints what it found. Both engines.

use crate::common;

use std::{path::PathBuf, process::Stdio, time::Duration};

use common::{TestDb, server::TestServer};
use serde_json::{Value, json};

/// Starting Python, the SDK and (over stdio) haico, drawing a chart and decoding it in pure
/// Python takes a few seconds; a debug build on a busy machine may take several times that.
const WITHIN: Duration = Duration::from_secs(120);

/// Runs the fixture client with `args`; returns the JSON line it printed.
async fn chart_client(args: &[&str]) -> Value {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/chart_client.py");
    let child = tokio::process::Command::new("python3")
        .arg(script)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 starts");
    let out = tokio::time::timeout(WITHIN, child.wait_with_output())
        .await
        .expect("the Python client finishes in time")
        .expect("the Python client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python client failed ({}):\n{stderr}\n{stdout}",
        out.status
    );
    let line = stdout
        .lines()
        .last()
        .unwrap_or_else(|| panic!("no output; stderr:\n{stderr}"));
    serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}\nstderr:\n{stderr}"))
}

/// What the client must have found, whatever the transport.
fn assert_decoded_chart(found: &Value, transport: &str) {
    assert_eq!(found["transport"], transport, "{found}");
    assert_eq!(found["is_error"], json!(false), "{found}");
    assert_eq!(found["envelope_success"], json!(true), "{found}");
    assert!(
        found["artifact_id"].as_i64().is_some_and(|id| id > 0),
        "{found}"
    );
    assert_eq!(found["content_types"], json!(["text", "image"]), "{found}");
    assert_eq!(found["mime_type"], "image/png", "{found}");
    assert_eq!(
        (found["width"].as_u64(), found["height"].as_u64()),
        (Some(1600), Some(960)),
        "{found}"
    );
    assert_eq!(found["opaque"], json!(true), "{found}");
    // White, text grey, grid lines, two series' colours and their anti-aliased edges.
    assert!(
        found["colours"].as_u64().is_some_and(|n| n > 10),
        "not blank: {found}"
    );
    assert_eq!(found["resource_mime_type"], "image/png", "{found}");
    assert_eq!(found["resource_is_the_image"], json!(true), "{found}");
}

backend_tests! {
    async fn the_python_sdk_gets_a_chart_png_over_stdio(engine) {
        needs!(python_mcp);
        let db = TestDb::new(engine).await;
        let found = chart_client(&["stdio", env!("CARGO_BIN_EXE_haico"), &db.url, "py-png-stdio"]).await;
        assert_decoded_chart(&found, "stdio");
        db.cleanup().await;
    }

    async fn the_python_sdk_gets_a_chart_png_over_http(engine) {
        needs!(python_mcp);
        let db = TestDb::new(engine).await;
        let server = TestServer::start(&db.db).await;
        let found = chart_client(&["http", &server.url("/mcp/py-png-http")]).await;
        assert_decoded_chart(&found, "http");
        // The chart is the thread's, as any other client sees it.
        let id = found["artifact_id"].as_i64().unwrap();
        let artifact = server.get(&format!("/api/threads/py-png-http/artifacts/{id}")).await.expect(200);
        assert_eq!(artifact["artifact_type"], "bar_chart");
        server.shutdown().await;
        db.cleanup().await;
    }
}
