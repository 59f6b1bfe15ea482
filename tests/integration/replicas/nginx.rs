//! Three replicas behind a real nginx running `deploy/nginx.conf` (round-robin, no
//! stickiness): a browser-like client — REST, the events stream, a chat answer streamed as it
//! is written, a cancel — and an MCP session work through it although consecutive requests land
//! on different replicas.

use crate::common;
use crate::common::mcp as mcp_support;

use std::{
    path::Path,
    time::{Duration, Instant},
};

use common::{
    cluster::*,
    mock_llm::{Script, call},
    nginx,
    sse::SseReader,
};
use mcp_support::{Lifecycle, call_ok, http_client, read_json};
use serde_json::{Value, json};

/// The deploy config with this test's ports, and the paths a process without root needs.
fn config(port: u16, upstreams: &[String], dir: &Path) -> String {
    let deploy =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/nginx.conf")).unwrap();
    let mut servers = Vec::new();
    let mut out = String::new();
    for line in deploy.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("server 127.0.0.1:") {
            servers.push(line);
            if servers.len() == 1 {
                for upstream in upstreams {
                    out.push_str(&format!(
                        "        server {upstream} max_fails=1 fail_timeout=5s;\n"
                    ));
                }
            }
            continue;
        }
        if trimmed == "listen 8080;" {
            out.push_str(&format!("        listen 127.0.0.1:{port};\n"));
            continue;
        }
        if trimmed.starts_with("worker_processes") {
            out.push_str("worker_processes 1;\n");
            continue;
        }
        out.push_str(line);
        out.push('\n');
        if trimmed == "http {" {
            out.push_str(&nginx::http_paths(dir));
        }
    }
    assert_eq!(
        servers.len(),
        3,
        "deploy/nginx.conf lists three upstream servers"
    );
    format!("{}{out}", nginx::main_context(dir))
}

async fn start_nginx(port: u16, upstreams: &[String]) -> nginx::Nginx {
    let dir = tempfile::tempdir().unwrap();
    let conf = config(port, upstreams, dir.path());
    nginx::start(dir, &conf, &[port]).await
}

/// How many requests to `route` each replica answered, from its own `/metrics`.
async fn answered(cluster: &Cluster, route: &str) -> Vec<u64> {
    let mut counts = Vec::new();
    for replica in &cluster.replicas {
        let text = replica
            .http
            .get(replica.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let needle = format!("route=\"{route}\"");
        let count: f64 = text
            .lines()
            .filter(|l| l.starts_with("haico_http_requests_total{") && l.contains(&needle))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum();
        counts.push(count as u64);
    }
    counts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_like_client_and_an_mcp_session_work_through_nginx_without_stickiness() {
    needs!(nginx, postgres);
    let port = common::free_port();
    let public = format!("127.0.0.1:{port}");
    let cluster = Cluster::start(
        3,
        vec![
            Script::tool_calls(vec![call(
                "set_objective",
                json!({"objective": "Ship it", "action_and_reasoning": "Setting the goal."}),
            )]),
            Script::text("word by word, the answer arrives while it is written")
                .chunk_delay(Duration::from_millis(60)),
            Script::text("this one never ends").stall_after(3),
        ],
        &[("HAICO_PUBLIC_HOSTS", public.as_str())],
    )
    .await;
    let upstreams: Vec<String> = cluster
        .replicas
        .iter()
        .map(|r| r.base.trim_start_matches("http://").to_string())
        .collect();
    let _nginx = start_nginx(port, &upstreams).await;
    let base = format!("http://{public}");
    let origin = base.clone();
    // What a browser sends: its page's origin on every request.
    let browser = reqwest::Client::builder()
        .default_headers(
            [(reqwest::header::ORIGIN, origin.parse().unwrap())]
                .into_iter()
                .collect(),
        )
        .build()
        .unwrap();
    let post = |path: &str, body: Value| {
        let request = browser.post(format!("{base}{path}")).json(&body);
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            (
                status,
                response.json::<Value>().await.unwrap_or(Value::Null),
            )
        }
    };

    assert_eq!(
        post("/api/threads", json!({"id": "via-proxy"})).await.0,
        201
    );
    let mut stream = SseReader::open(
        &browser,
        &format!("{base}/api/threads/via-proxy/events"),
        None,
    )
    .await;
    for n in 0..9 {
        let (status, body) = post(
            "/api/threads/via-proxy/todos",
            json!({"text": format!("step {n}")}),
        )
        .await;
        assert_eq!(status, 201, "{body}");
    }
    let mut ids = Vec::new();
    for _ in 0..9 {
        let frame = stream.next(WAIT).await;
        assert_eq!(frame.event, "workspace");
        ids.push(frame.id.unwrap());
    }
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "{ids:?}");
    // Round-robin: every replica took some of the writes.
    let writes = answered(&cluster, "/api/threads/{thread_id}/todos").await;
    assert_eq!(writes.iter().sum::<u64>(), 9, "{writes:?}");
    assert!(writes.iter().all(|&n| n > 0), "no stickiness: {writes:?}");

    // A chat answer streams through the proxy as it is written, not at the end.
    let sent = Instant::now();
    let mut chat = SseReader::post(
        &browser,
        &format!("{base}/api/threads/via-proxy/chat"),
        &json!({"message": "Plan my launch"}),
    )
    .await;
    let mut first_token = None;
    let mut frames = Vec::new();
    loop {
        let frame = chat.next(WAIT).await;
        if frame.event == "token" && first_token.is_none() {
            first_token = Some(sent.elapsed());
        }
        let done = frame.event == "done";
        frames.push(frame);
        if done {
            break;
        }
    }
    let total = sent.elapsed();
    let first_token = first_token.expect("tokens streamed");
    assert!(
        first_token + Duration::from_millis(500) < total,
        "the first token came at {first_token:?}, the end at {total:?}: buffered by the proxy?"
    );
    assert_eq!(frames.last().unwrap().data["status"], "completed");
    // The events stream (on whichever replica) saw the same turn.
    let mut seen = Vec::new();
    while seen.last().map(|f: &common::sse::Frame| f.event.as_str()) != Some("done") {
        seen.push(stream.next(WAIT).await);
    }
    assert!(seen.iter().any(|f| f.event == "message"), "{seen:#?}");

    // A turn that hangs, cancelled through the proxy (likely on another replica).
    let mut hanging = SseReader::post(
        &browser,
        &format!("{base}/api/threads/via-proxy/chat"),
        &json!({"message": "Go on"}),
    )
    .await;
    while hanging.next(WAIT).await.event != "token" {}
    assert_eq!(
        post("/api/threads/via-proxy/cancel", json!({})).await,
        (202, json!({"cancelled": true}))
    );
    let mut end = Vec::new();
    while end.last().map(|f: &common::sse::Frame| f.event.as_str()) != Some("done") {
        end.push(hanging.next(WAIT).await);
    }
    assert_eq!(end.last().unwrap().data["status"], "cancelled");

    // An MCP session through the proxy: its requests spread over the replicas.
    let before = answered(&cluster, "/mcp/{thread_id}").await;
    let (client, _notes) =
        http_client(&format!("{base}/mcp/via-proxy"), Lifecycle::Initialize).await;
    for n in 0..4 {
        call_ok(
            &client,
            "add_todos",
            json!({"steps": [{"text": format!("mcp {n}")}], "action_and_reasoning": "Adding a step."}),
        )
        .await;
    }
    let plan = read_json(&client, "haico://thread/via-proxy/plan").await;
    assert!(plan.to_string().contains("mcp 3"), "{plan}");
    let after = answered(&cluster, "/mcp/{thread_id}").await;
    let spread = before.iter().zip(&after).filter(|(b, a)| a > b).count();
    assert!(
        spread >= 2,
        "the session's requests reached one replica only: {before:?} → {after:?}"
    );
    client.cancel().await.unwrap();
    cluster.cleanup().await;
}
