//! `GET /metrics` against a real server on SQLite: after known traffic (REST requests, tool
//! calls that succeed and fail, a chat turn that fails for want of a model), the Prometheus text
//! shows each counter with the expected labels and values, histograms with buckets, and no raw
//! path or made-up tool name as a label.
//!
//! The recorder is process-wide, so this file holds a single test that does everything in order,
//! in a process of its own (`common::isolated`): the other tests would otherwise be counted.

use crate::common;

use std::{collections::BTreeMap, time::Duration};

use common::{Engine, TestDb, server::TestServer, sse::SseReader};
use serde_json::json;

/// One sample line of the text format: name, labels, value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

fn parse(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').unwrap();
            let value: f64 = value
                .parse()
                .unwrap_or_else(|_| panic!("bad value in {line:?}"));
            let (name, labels) = match series.split_once('{') {
                Some((name, rest)) => {
                    let inner = rest.strip_suffix('}').unwrap();
                    let labels = split_labels(inner)
                        .into_iter()
                        .map(|pair| {
                            let (k, v) = pair.split_once('=').unwrap();
                            (
                                k.to_string(),
                                v.trim_matches('"').replace("\\\"", "\"").to_string(),
                            )
                        })
                        .collect();
                    (name.to_string(), labels)
                }
                None => (series.to_string(), BTreeMap::new()),
            };
            Sample {
                name,
                labels,
                value,
            }
        })
        .collect()
}

/// Splits `a="x",b="y,z"` at the commas between labels (not those inside values).
fn split_labels(inner: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut escaped = false;
    for c in inner.chars() {
        match c {
            '\\' if quoted && !escaped => {
                escaped = true;
                current.push(c);
                continue;
            }
            '"' if !escaped => quoted = !quoted,
            ',' if !quoted => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        escaped = false;
        current.push(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The value of the series `name` with exactly these labels (0 when absent).
fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    let want: BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let found: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.name == name && s.labels == want)
        .collect();
    assert!(found.len() <= 1, "duplicate series {name} {want:?}");
    found.first().map_or(0.0, |s| s.value)
}

async fn scrape(server: &TestServer) -> (String, Vec<Sample>) {
    let response = server
        .client
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        content_type.starts_with("text/plain") && content_type.contains("version=0.0.4"),
        "{content_type}"
    );
    let text = response.text().await.unwrap();
    let samples = parse(&text);
    (text, samples)
}

const TOOL_ROUTE: &str = "/api/threads/{thread_id}/tools/{tool_name}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_requests_tool_calls_turns_and_model_calls() {
    if !common::isolated::alone(&test_name!(
        "metrics_count_requests_tool_calls_turns_and_model_calls"
    )) {
        return;
    }
    let tdb = TestDb::new(Engine::Sqlite).await;
    let server = TestServer::start(&tdb.db).await;

    // REST traffic: a thread, three reads of it, one 404, a path the router does not know.
    server.create_thread("metrics-thread").await;
    for _ in 0..3 {
        server.get("/api/threads/metrics-thread").await.expect(200);
    }
    server.get("/api/threads/no-such-thread").await.error(404);
    server.get("/no/such/path/metrics-raw").await.error(404);

    // Tool calls: one success, two failures of different kinds, one name that is no tool.
    server
        .tool_ok(
            "metrics-thread",
            "set_objective",
            json!({"action_and_reasoning": "Set the goal.", "objective": "Count things"}),
        )
        .await;
    let failed = server
        .tool(
            "metrics-thread",
            "set_objective",
            json!({"objective": "No reasoning given"}),
        )
        .await;
    assert_eq!(failed["success"], json!(false));
    server
        .post(
            "/api/threads/ghost-thread/tools/set_objective",
            &json!({"action_and_reasoning": "Try.", "objective": "x"}),
        )
        .await
        .error(404);
    server
        .post(
            "/api/threads/metrics-thread/tools/made_up_tool",
            &json!({"action_and_reasoning": "Try."}),
        )
        .await
        .error(404);

    // A chat turn: no model is configured, so it ends with an error event.
    let mut chat = SseReader::post(
        &server.client,
        &server.url("/api/threads/metrics-thread/chat"),
        &json!({"message": "Hello"}),
    )
    .await;
    let mut names = Vec::new();
    loop {
        let frame = chat.next(Duration::from_secs(30)).await;
        names.push(frame.event.clone());
        if frame.event == "done" {
            assert_eq!(frame.data["status"], json!("failed"), "{frame:?}");
            break;
        }
    }
    assert!(names.contains(&"error".to_string()), "{names:?}");

    let (text, samples) = scrape(&server).await;

    // HTTP requests: by method, route template and status; a latency histogram beside.
    let requests = |method: &str, route: &str, status: &str| {
        value(
            &samples,
            "haico_http_requests_total",
            &[("method", method), ("route", route), ("status", status)],
        )
    };
    assert_eq!(requests("POST", "/api/threads", "201"), 1.0, "{text}");
    assert_eq!(requests("GET", "/api/threads/{thread_id}", "200"), 3.0);
    assert_eq!(requests("GET", "/api/threads/{thread_id}", "404"), 1.0);
    assert_eq!(requests("GET", "unmatched", "404"), 1.0);
    assert_eq!(requests("POST", TOOL_ROUTE, "200"), 2.0);
    assert_eq!(requests("POST", TOOL_ROUTE, "404"), 2.0);
    assert_eq!(
        requests("POST", "/api/threads/{thread_id}/chat", "200"),
        1.0
    );
    let latency = |suffix: &str, extra: &[(&str, &str)]| {
        let mut labels = vec![
            ("method", "GET"),
            ("route", "/api/threads/{thread_id}"),
            ("status", "200"),
        ];
        labels.extend_from_slice(extra);
        value(
            &samples,
            &format!("haico_http_request_duration_seconds{suffix}"),
            &labels,
        )
    };
    assert_eq!(latency("_count", &[]), 3.0);
    assert_eq!(latency("_bucket", &[("le", "+Inf")]), 3.0);
    assert!(latency("_sum", &[]) > 0.0);
    assert!(text.contains("# TYPE haico_http_request_duration_seconds histogram"));
    assert!(text.contains("# TYPE haico_http_requests_total counter"));
    assert!(text.contains("# HELP haico_http_requests_total"));

    // Tool calls by tool and outcome, with durations.
    let tool_calls = |tool: &str, outcome: &str| {
        value(
            &samples,
            "haico_tool_calls_total",
            &[("tool", tool), ("outcome", outcome)],
        )
    };
    assert_eq!(tool_calls("set_objective", "success"), 1.0);
    assert_eq!(tool_calls("set_objective", "invalid_arguments"), 1.0);
    assert_eq!(tool_calls("set_objective", "unknown_thread"), 1.0);
    assert_eq!(
        value(
            &samples,
            "haico_tool_call_duration_seconds_count",
            &[("tool", "set_objective"), ("outcome", "success")],
        ),
        1.0
    );
    assert_eq!(
        value(
            &samples,
            "haico_tool_call_duration_seconds_bucket",
            &[
                ("tool", "set_objective"),
                ("outcome", "success"),
                ("le", "+Inf")
            ],
        ),
        1.0
    );
    assert!(text.contains("# TYPE haico_tool_call_duration_seconds histogram"));

    // The turn: started, finished as failed; the model call failed as not configured.
    assert_eq!(value(&samples, "haico_agent_turns_started_total", &[]), 1.0);
    assert_eq!(
        value(
            &samples,
            "haico_agent_turns_finished_total",
            &[("status", "failed")]
        ),
        1.0
    );
    assert_eq!(
        value(&samples, "haico_model_calls_total", &[("outcome", "error")]),
        1.0
    );
    assert_eq!(
        value(
            &samples,
            "haico_model_call_errors_total",
            &[("kind", "not_configured")]
        ),
        1.0
    );
    assert_eq!(
        value(
            &samples,
            "haico_model_call_duration_seconds_count",
            &[("outcome", "error")]
        ),
        1.0
    );

    // Bounded labels: no raw path, thread id or made-up tool name anywhere.
    for raw in [
        "metrics-thread",
        "no-such-thread",
        "ghost-thread",
        "metrics-raw",
        "made_up_tool",
    ] {
        assert!(!text.contains(raw), "`{raw}` leaked into a label:\n{text}");
    }

    // A second server in the same process shares the one recorder (installing it again does
    // not panic) and keeps counting into it.
    let second = TestServer::start(&tdb.db).await;
    second.get("/api/threads/metrics-thread").await.expect(200);
    let (_, after) = scrape(&second).await;
    assert_eq!(
        value(
            &after,
            "haico_http_requests_total",
            &[
                ("method", "GET"),
                ("route", "/api/threads/{thread_id}"),
                ("status", "200")
            ],
        ),
        4.0
    );
    // The first scrape is counted too, under its own route.
    assert!(
        value(
            &after,
            "haico_http_requests_total",
            &[("method", "GET"), ("route", "/metrics"), ("status", "200")],
        ) >= 1.0
    );

    second.shutdown().await;
    server.shutdown().await;
    tdb.cleanup().await;
}
