//! Event fan-out: 1,000 subscribers of one thread's events stream, each waiting for the
//! `workspace` event of a tool call made over HTTP. Runs a real `haico serve` (the release
//! binary cargo built for this bench) on a fresh SQLite file and measures, per delivery, the
//! time from sending the tool call to the subscriber receiving the event; and the server's
//! resident memory per idle subscriber.
//!
//! `cargo bench --bench fanout` — prints p50/p99/max delivery latency over several rounds and
//! the memory figure. Needs ~2,100 file descriptors (`ulimit -n`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::{
    net::TcpListener,
    process::{Child, Command, Stdio},
    sync::Arc,
    time::{Duration, Instant},
};

use futures::StreamExt;
use serde_json::json;
use tokio::sync::{Barrier, mpsc};

const SUBSCRIBERS: usize = 1_000;
const ROUNDS: usize = 5;

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(dir: &std::path::Path) -> Server {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(env!("CARGO_BIN_EXE_haico"))
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .env(
            "HAICO_DATABASE_URL",
            format!("sqlite:{}", dir.join("fanout.db").display()),
        )
        .env("RUST_LOG", "warn")
        .env_remove("HAICO_API_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Server {
        child,
        base: format!("http://127.0.0.1:{port}"),
    }
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn bench() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_server(dir.path());
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(4)
        .build()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while client
        .get(format!("{}/healthz", server.base))
        .send()
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "server did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let resp = client
        .post(format!("{}/api/threads", server.base))
        .json(&json!({"id": "fan"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let tool_url = format!("{}/api/threads/fan/tools/append_to_document", server.base);
    // Warm the server's paths once.
    client
        .post(&tool_url)
        .json(&json!({"text": "w", "action_and_reasoning": "Warm."}))
        .send()
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rss_before = rss_kib(server.child.id());

    // Each subscriber has its own connection (a browser tab would).
    let ready = Arc::new(Barrier::new(SUBSCRIBERS + 1));
    let (tx, mut rx) = mpsc::unbounded_channel::<(usize, Instant)>();
    let url = format!("{}/api/threads/fan/events", server.base);
    for _ in 0..SUBSCRIBERS {
        let ready = Arc::clone(&ready);
        let tx = tx.clone();
        let url = url.clone();
        tokio::spawn(async move {
            let own = reqwest::Client::new();
            let resp = own.get(&url).send().await.unwrap();
            assert_eq!(resp.status(), 200);
            let mut body = resp.bytes_stream();
            ready.wait().await;
            let mut buffer = String::new();
            let mut round = 0;
            while let Some(chunk) = body.next().await {
                buffer.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
                while let Some(end) = buffer.find("\n\n") {
                    let frame: String = buffer.drain(..end + 2).collect();
                    if frame.contains("event: workspace") {
                        let _ = tx.send((round, Instant::now()));
                        round += 1;
                        if round == ROUNDS {
                            return;
                        }
                    }
                }
            }
        });
    }
    drop(tx);
    ready.wait().await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_idle = rss_kib(server.child.id());

    let mut latencies = Vec::with_capacity(SUBSCRIBERS * ROUNDS);
    for round in 0..ROUNDS {
        let sent = Instant::now();
        let resp = client
            .post(&tool_url)
            .json(&json!({"text": "x", "action_and_reasoning": "Fan out."}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let mut got = 0;
        while got < SUBSCRIBERS {
            let (r, at) = tokio::time::timeout(Duration::from_secs(30), rx.recv())
                .await
                .expect("every subscriber receives the event within 30 s")
                .expect("subscribers alive");
            assert_eq!(r, round, "events arrive in order");
            latencies.push(at.duration_since(sent).as_secs_f64() * 1000.0);
            got += 1;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    latencies.sort_by(f64::total_cmp);
    println!(
        "fanout/sqlite: {SUBSCRIBERS} subscribers x {ROUNDS} rounds: delivery p50 {:.1} ms, p99 {:.1} ms, \
         max {:.1} ms (from sending the tool call)",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or(0.0),
    );
    println!(
        "fanout/sqlite: server RSS {rss_before} KiB before, {rss_idle} KiB with {SUBSCRIBERS} idle \
         subscribers: {:.1} KiB per subscriber",
        (rss_idle.saturating_sub(rss_before)) as f64 / SUBSCRIBERS as f64
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(bench());
}
