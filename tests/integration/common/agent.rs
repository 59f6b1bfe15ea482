//! Support for the agent-turn tests (`agent_turns.rs`, `agent_faults.rs`): a real server whose
//! agent talks to a mock LLM, chat and events helpers, and checks of a turn's event sequence.

use std::time::Duration;

use haico::{
    agent::{AgentConfig, providers::ProviderConfig},
    http::AppState,
};
use serde_json::{Value, json};

use crate::common::{
    Engine, TestDb,
    mock_llm::{MockLlm, Script},
    server::{Reply, TestServer},
    sse::{Frame, SseReader},
};

/// How long any single wait of these tests may take.
pub const WAIT: Duration = Duration::from_secs(15);

/// A test database, a mock LLM and a real server whose agent talks to it.
pub struct Setup {
    pub db: TestDb,
    pub mock: MockLlm,
    pub server: TestServer,
}

impl Setup {
    /// An OpenAI-compatible mock answering `scripts`, the default agent limits.
    pub async fn openai(engine: Engine, scripts: Vec<Script>) -> Self {
        Self::new(
            engine,
            MockLlm::openai(scripts).await,
            AgentConfig::default(),
            None,
        )
        .await
    }

    /// An Anthropic mock answering `scripts`, the default agent limits.
    pub async fn anthropic(engine: Engine, scripts: Vec<Script>) -> Self {
        Self::new(
            engine,
            MockLlm::anthropic(scripts).await,
            AgentConfig::default(),
            None,
        )
        .await
    }

    /// `mock` behind an agent with `config`; `provider` overrides the mock's provider config.
    pub async fn new(
        engine: Engine,
        mock: MockLlm,
        config: AgentConfig,
        provider: Option<ProviderConfig>,
    ) -> Self {
        let db = TestDb::new(engine).await;
        let provider = provider.unwrap_or_else(|| mock.config());
        let model = haico::agent::providers::build_model(&provider).expect("model builds");
        let state = AppState::with_model(db.db.clone(), model, config);
        let server = TestServer::with_state(state).await;
        Self { db, mock, server }
    }

    /// Opens a chat turn on `thread`; asserts the answer is an event stream.
    pub async fn chat(&self, thread: &str, message: &str) -> SseReader {
        chat(&self.server, thread, message).await
    }

    /// The thread's conversation (`GET …/messages`); asserts 200.
    pub async fn messages(&self, thread: &str) -> Vec<Value> {
        messages(&self.server, thread).await
    }

    pub async fn cleanup(self) {
        let Self { db, mock, server } = self;
        server.shutdown().await;
        drop(mock);
        db.cleanup().await;
    }
}

/// `POST /api/threads/{thread}/chat` with `{message}`, read as an event stream.
pub async fn chat(server: &TestServer, thread: &str, message: &str) -> SseReader {
    SseReader::post(
        &server.client,
        &server.url(&format!("/api/threads/{thread}/chat")),
        &json!({ "message": message }),
    )
    .await
}

/// `POST /api/threads/{thread}/chat` with any JSON body, for answers that are not a stream.
pub async fn chat_reply(server: &TestServer, thread: &str, body: &Value) -> Reply {
    server
        .post(&format!("/api/threads/{thread}/chat"), body)
        .await
}

/// `GET /api/threads/{thread}/messages`; asserts 200 and an array.
pub async fn messages(server: &TestServer, thread: &str) -> Vec<Value> {
    server
        .get(&format!("/api/threads/{thread}/messages"))
        .await
        .expect(200)
        .as_array()
        .expect("messages is an array")
        .clone()
}

/// Opens `GET /api/threads/{thread}/events`, optionally resuming after `last_event_id`.
pub async fn events(server: &TestServer, thread: &str, last_event_id: Option<i64>) -> SseReader {
    SseReader::open(
        &server.client,
        &server.url(&format!("/api/threads/{thread}/events")),
        last_event_id,
    )
    .await
}

/// Every frame up to and including the next `done`.
pub async fn until_done(reader: &mut SseReader) -> Vec<Frame> {
    let mut frames = Vec::new();
    loop {
        let frame = reader.next(WAIT).await;
        let done = frame.event == "done";
        frames.push(frame);
        if done {
            return frames;
        }
    }
}

/// Reads the whole chat answer: every frame through `done`, then asserts the stream ends.
pub async fn whole_turn(mut reader: SseReader) -> Vec<Frame> {
    let frames = until_done(&mut reader).await;
    reader.expect_end(WAIT).await;
    frames
}

/// Reads frames until one named `event` arrives; returns everything read, that one last.
pub async fn until_event(reader: &mut SseReader, event: &str) -> Vec<Frame> {
    let mut frames = Vec::new();
    loop {
        let frame = reader.next(WAIT).await;
        let hit = frame.event == event;
        frames.push(frame);
        if hit {
            return frames;
        }
    }
}

/// The event names with each run of `token`s shown once as `token…`.
pub fn shape(frames: &[Frame]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for frame in frames {
        if frame.event == "token" {
            if out.last().map(String::as_str) != Some("token…") {
                out.push("token…".to_string());
            }
        } else {
            out.push(frame.event.clone());
        }
    }
    out
}

/// The durable frames (those with an id).
pub fn durable(frames: &[Frame]) -> Vec<Frame> {
    frames.iter().filter(|f| f.id.is_some()).cloned().collect()
}

/// The concatenated text of the `token` frames.
pub fn token_text(frames: &[Frame]) -> String {
    frames
        .iter()
        .filter(|f| f.event == "token")
        .map(|f| f.data["text"].as_str().expect("token text").to_string())
        .collect()
}

/// The frames named `event`.
pub fn named<'a>(frames: &'a [Frame], event: &str) -> Vec<&'a Frame> {
    frames.iter().filter(|f| f.event == event).collect()
}

/// Asserts the ids of the durable frames are consecutive and that transient frames (tokens)
/// carry none; every event but `token` must be durable.
#[track_caller]
pub fn assert_ids(frames: &[Frame]) {
    let mut last: Option<i64> = None;
    for frame in frames {
        if frame.event == "token" {
            assert_eq!(frame.id, None, "tokens are transient: {frame:?}");
            continue;
        }
        let id = frame
            .id
            .unwrap_or_else(|| panic!("durable event without an id: {frame:?}"));
        if let Some(last) = last {
            assert_eq!(id, last + 1, "ids must increase one by one: {frame:?}");
        }
        last = Some(id);
    }
}

/// Checks the common shape of a `step` event; returns its data.
#[track_caller]
pub fn assert_step(frame: &Frame, tool: &str, turn_index: i64, success: bool) -> Value {
    assert_eq!(frame.event, "step", "{frame:?}");
    let data = &frame.data;
    assert_eq!(data["tool"], tool, "{data}");
    assert_eq!(data["turn_index"], turn_index, "{data}");
    assert_eq!(data["result"]["success"], success, "{data}");
    assert!(
        data["result"].is_object(),
        "result is the envelope object: {data}"
    );
    let ms = data["duration_ms"]
        .as_f64()
        .expect("duration_ms is a number");
    assert!((0.0..60_000.0).contains(&ms), "duration_ms {ms}");
    data.clone()
}

/// The turn with `turn_index` of a `/messages` answer.
#[track_caller]
pub fn turn_of(turns: &[Value], turn_index: i64) -> Value {
    turns
        .iter()
        .find(|t| t["turn_index"] == turn_index)
        .unwrap_or_else(|| panic!("no turn {turn_index} in {turns:?}"))
        .clone()
}

/// `(role, content)` of a recorded turn's messages.
pub fn roles_and_contents(turn: &Value) -> Vec<(String, String)> {
    turn["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            (
                m["role"].as_str().expect("role").to_string(),
                m["content"].as_str().expect("content").to_string(),
            )
        })
        .collect()
}

/// Waits until `check` holds, polling every 20 ms, for at most [`WAIT`].
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + WAIT;
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
