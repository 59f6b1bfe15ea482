//! Several real `haico serve` replicas on one fresh PostgreSQL schema, with a mock model,
//! and the requests tests make of them (see tests/integration/replicas/cluster.rs, tests/integration/replicas/nginx.rs).

use std::time::Duration;

use serde_json::{Value, json};

use super::{
    Engine, TestDb,
    child::ChildServer,
    mock_llm::{MockLlm, Script},
    sse::{Frame, SseReader},
};

pub const WAIT: Duration = Duration::from_secs(10);

/// A mock model and `n` replicas on one fresh PostgreSQL schema.
pub struct Cluster {
    pub db: TestDb,
    pub mock: MockLlm,
    pub replicas: Vec<ChildServer>,
}

impl Cluster {
    /// `n` replicas with `env` on top of their defaults.
    pub async fn start(n: usize, scripts: Vec<Script>, env: &[(&str, &str)]) -> Self {
        let db = TestDb::new(Engine::Postgres).await;
        let mock = MockLlm::openai(scripts).await;
        let mut replicas = Vec::new();
        for i in 0..n {
            replicas.push(start_replica(&db, &mock, i, env).await);
        }
        Self { db, mock, replicas }
    }

    pub async fn cleanup(self) {
        drop(self.replicas);
        self.db.cleanup().await;
    }
}

/// Replica `i` (id `replica-{i}`) over `db`, thinking with `mock`, with `extra` settings.
pub async fn start_replica(
    db: &TestDb,
    mock: &MockLlm,
    i: usize,
    extra: &[(&str, &str)],
) -> ChildServer {
    let id = format!("replica-{i}");
    let base = mock.base_url();
    let mut env = vec![
        ("HAICO_REPLICA_ID", id.as_str()),
        ("HAICO_LLM_PROVIDER", "openai"),
        ("HAICO_LLM_BASE_URL", base.as_str()),
        ("HAICO_LLM_MODEL", "mock-model"),
        ("HAICO_LLM_API_KEY", "test-key"),
        ("HAICO_LLM_TIMEOUT_SECS", "120"),
        ("HAICO_DB_MAX_CONNECTIONS", "4"),
    ];
    env.extend_from_slice(extra);
    let server = ChildServer::start(&db.url, &env).await;
    // Each replica hears the others by LISTEN/NOTIFY.
    let health = server.get_json("/healthz").await;
    assert_eq!(
        health,
        json!({"status": "ok", "events": {"mode": "listen", "ok": true}}),
        "{}",
        server.log_tail(20)
    );
    server
}

pub async fn post(server: &ChildServer, path: &str, body: Value) -> (u16, Value) {
    let response = server
        .http
        .post(server.url(path))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, body)
}

pub async fn get(server: &ChildServer, path: &str) -> Value {
    let response = server.http.get(server.url(path)).send().await.unwrap();
    assert_eq!(response.status(), 200, "GET {path}");
    response.json().await.unwrap()
}

pub async fn events(server: &ChildServer, thread: &str, after: Option<i64>) -> SseReader {
    SseReader::open(
        &stream_client(),
        &server.url(&format!("/api/threads/{thread}/events")),
        after,
    )
    .await
}

/// Frames until one named `name` (inclusive).
pub async fn until(stream: &mut SseReader, name: &str) -> Vec<Frame> {
    let mut seen = Vec::new();
    loop {
        let frame = stream.next(Duration::from_secs(40)).await;
        let done = frame.event == name;
        seen.push(frame);
        if done {
            return seen;
        }
    }
}

/// Durable frames (with an id) until `last` has been seen.
pub async fn durable_until(stream: &mut SseReader, last: i64) -> Vec<i64> {
    let mut ids = Vec::new();
    while ids.last() != Some(&last) {
        let frame = stream.next(WAIT).await;
        if let Some(id) = frame.id {
            ids.push(id);
        }
    }
    ids
}

/// A client for streams, which may stay open longer than the servers' clients allow.
pub fn stream_client() -> reqwest::Client {
    reqwest::Client::new()
}

pub fn chat_url(server: &ChildServer, thread: &str) -> String {
    server.url(&format!("/api/threads/{thread}/chat"))
}

pub async fn turn_status(server: &ChildServer, thread: &str, turn: i64) -> Value {
    let turns = get(server, &format!("/api/threads/{thread}/messages")).await;
    turns
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["turn_index"] == turn)
        .cloned()
        .unwrap_or(Value::Null)
}
