//! Mock LLM servers for tests: an OpenAI-compatible Chat Completions endpoint and an Anthropic
//! Messages endpoint on a random local port, answering from a queue of [`Script`]s in the
//! providers' real SSE wire formats, and recording every request they receive.
//!
//! ```ignore
//! let mock = MockLlm::openai(vec![
//!     Script::tool_calls(vec![call("set_objective", json!({"objective": "x"}))]),
//!     Script::text("Done."),
//! ]).await;
//! let model = build_model(&mock.config())?;      // or point HAICO_LLM_BASE_URL at mock.base_url()
//! …
//! let second = &mock.requests()[1];              // the body, headers and path it received
//! ```
//!
//! Text and tool-call arguments are split into small pieces (3 characters by default) so that
//! every answer takes many chunks. Faults: HTTP statuses, 429 with `Retry-After`, a hang before
//! or after the response head, a connection cut after N events, a stall after N events, and
//! malformed JSON data. A request with no script left gets a 418 naming the problem.

use std::{
    collections::{HashMap, VecDeque},
    convert::Infallible,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use axum::{
    Router,
    body::{Body, Bytes},
    extract::State,
    http::{HeaderMap, StatusCode, Uri},
    response::Response,
    routing::post,
};
use futures::StreamExt;
use haico::agent::{
    model::{ModelEvent, ModelStream, ProviderError},
    providers::{ProviderConfig, ProviderKind},
};
use serde_json::{Value, json};

mod wire;

pub use wire::anthropic_event;

/// Which wire format a mock speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    OpenAi,
    Anthropic,
}

/// A tool call a script makes the model produce.
#[derive(Debug, Clone)]
pub struct Call {
    pub name: String,
    /// Raw arguments text, sent in pieces exactly as given.
    pub arguments: String,
}

/// A tool call with JSON arguments.
pub fn call(name: &str, arguments: Value) -> Call {
    Call {
        name: name.to_string(),
        arguments: arguments.to_string(),
    }
}

/// A tool call whose arguments text is sent verbatim (e.g. malformed JSON).
pub fn raw_call(name: &str, arguments: &str) -> Call {
    Call {
        name: name.to_string(),
        arguments: arguments.to_string(),
    }
}

/// What the mock does with one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A streamed answer: text first, then the tool calls.
    Answer { text: String, calls: Vec<Call> },
    /// A plain HTTP error.
    Status {
        code: u16,
        body: String,
        headers: Vec<(String, String)>,
    },
    /// Never sends the response head.
    Hang,
    /// Sends `200` and the SSE headers, then nothing.
    HangAfterHead,
    /// Starts a valid answer, then sends an event whose JSON is cut short.
    Malformed,
    /// These SSE frames verbatim (each a complete `event:`/`data:` block ending in a blank line).
    Raw(Vec<String>),
}

/// One scripted reply and how to deliver it.
#[derive(Debug, Clone)]
pub struct Script {
    pub reply: Reply,
    /// Pause before each SSE frame.
    pub chunk_delay: Duration,
    /// Characters per text or argument piece.
    pub chunk_chars: usize,
    /// Send this many frames, then abort the connection.
    pub cut_after: Option<usize>,
    /// Send this many frames, then go silent with the connection open.
    pub stall_after: Option<usize>,
    /// `(input_tokens, output_tokens)` reported.
    pub usage: (u32, u32),
    /// Of the input tokens, how many the provider says it took from its prompt cache.
    pub cached: Option<u32>,
    /// Report the counts as llama.cpp's server does: `timings` (`prompt_n`, `cache_n`,
    /// `predicted_n`) beside a `usage` without cache details.
    pub llama_timings: bool,
}

impl Script {
    fn new(reply: Reply) -> Self {
        Self {
            reply,
            chunk_delay: Duration::ZERO,
            chunk_chars: 3,
            cut_after: None,
            stall_after: None,
            usage: (42, 7),
            cached: None,
            llama_timings: false,
        }
    }

    /// This script reporting `cached` of its input tokens as served from the prompt cache.
    pub fn cached(self, cached: u32) -> Self {
        Self {
            cached: Some(cached),
            ..self
        }
    }

    /// A plain text answer.
    pub fn text(text: &str) -> Self {
        Self::new(Reply::Answer {
            text: text.to_string(),
            calls: Vec::new(),
        })
    }

    /// An answer made of tool calls only.
    pub fn tool_calls(calls: Vec<Call>) -> Self {
        Self::new(Reply::Answer {
            text: String::new(),
            calls,
        })
    }

    /// Text followed by tool calls.
    pub fn text_and_tool_calls(text: &str, calls: Vec<Call>) -> Self {
        Self::new(Reply::Answer {
            text: text.to_string(),
            calls,
        })
    }

    /// An HTTP error with a JSON body shaped like the providers' own.
    pub fn status(code: u16, message: &str) -> Self {
        Self::new(Reply::Status {
            code,
            body: json!({"error": {"type": "mock_error", "message": message}}).to_string(),
            headers: Vec::new(),
        })
    }

    /// A 429 asking to retry after `seconds`.
    pub fn rate_limited(seconds: u64) -> Self {
        Self::new(Reply::Status {
            code: 429,
            body: json!({"error": {"type": "rate_limit_error", "message": "slow down"}})
                .to_string(),
            headers: vec![("retry-after".into(), seconds.to_string())],
        })
    }

    /// No response at all.
    pub fn hang() -> Self {
        Self::new(Reply::Hang)
    }

    /// A response head, then silence.
    pub fn hang_after_head() -> Self {
        Self::new(Reply::HangAfterHead)
    }

    /// A stream with a malformed JSON event.
    pub fn malformed() -> Self {
        Self::new(Reply::Malformed)
    }

    /// Verbatim SSE frames.
    pub fn raw(frames: Vec<String>) -> Self {
        Self::new(Reply::Raw(frames))
    }

    /// Aborts the connection after `frames` SSE frames.
    pub fn cut_after(mut self, frames: usize) -> Self {
        self.cut_after = Some(frames);
        self
    }

    /// Goes silent after `frames` SSE frames.
    pub fn stall_after(mut self, frames: usize) -> Self {
        self.stall_after = Some(frames);
        self
    }

    /// Waits `delay` before each frame.
    pub fn chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = delay;
        self
    }
}

/// One request the mock received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub path: String,
    /// Header names in lower case.
    pub headers: HashMap<String, String>,
    /// The JSON body (`Value::Null` if it was not JSON).
    pub body: Value,
    pub received_at: Instant,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

#[derive(Default)]
struct MockState {
    flavor: Option<Flavor>,
    scripts: Mutex<VecDeque<Script>>,
    requests: Mutex<Vec<RecordedRequest>>,
    aborted_bodies: AtomicUsize,
    call_ids: AtomicUsize,
}

/// A running mock LLM server; it stops when dropped.
pub struct MockLlm {
    pub flavor: Flavor,
    pub addr: std::net::SocketAddr,
    state: Arc<MockState>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MockLlm {
    /// An OpenAI-compatible server answering `POST /v1/chat/completions`.
    pub async fn openai(scripts: Vec<Script>) -> Self {
        Self::start(Flavor::OpenAi, scripts).await
    }

    /// An Anthropic server answering `POST /v1/messages`.
    pub async fn anthropic(scripts: Vec<Script>) -> Self {
        Self::start(Flavor::Anthropic, scripts).await
    }

    async fn start(flavor: Flavor, scripts: Vec<Script>) -> Self {
        let state = Arc::new(MockState {
            flavor: Some(flavor),
            scripts: Mutex::new(scripts.into()),
            ..MockState::default()
        });
        let path = match flavor {
            Flavor::OpenAi => "/v1/chat/completions",
            Flavor::Anthropic => "/v1/messages",
        };
        let app = Router::new()
            .route(path, post(handle))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            flavor,
            addr,
            state,
            task,
        }
    }

    /// The base URL a provider is configured with (`…/v1` for OpenAI, the root for Anthropic).
    pub fn base_url(&self) -> String {
        match self.flavor {
            Flavor::OpenAi => format!("http://{}/v1", self.addr),
            Flavor::Anthropic => format!("http://{}", self.addr),
        }
    }

    /// A provider configuration pointing at this mock: model `mock-model`, key `test-key`,
    /// 5 s timeout, 2 retries with a short back-off.
    pub fn config(&self) -> ProviderConfig {
        ProviderConfig {
            kind: Some(match self.flavor {
                Flavor::OpenAi => ProviderKind::Openai,
                Flavor::Anthropic => ProviderKind::Anthropic,
            }),
            base_url: Some(self.base_url()),
            model: Some("mock-model".into()),
            api_key: Some("test-key".into()),
            timeout: Duration::from_secs(5),
            max_retries: 2,
            retry_backoff: Duration::from_millis(20),
            replay_script: None,
        }
    }

    /// Queues another reply.
    pub fn push(&self, script: Script) {
        self.state.scripts.lock().unwrap().push_back(script);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests.lock().unwrap().clone()
    }

    pub fn request_count(&self) -> usize {
        self.state.requests.lock().unwrap().len()
    }

    /// How many streamed bodies were dropped before their last frame (client went away).
    pub fn aborted_bodies(&self) -> usize {
        self.state.aborted_bodies.load(Ordering::SeqCst)
    }
}

async fn handle(
    State(state): State<Arc<MockState>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let recorded = RecordedRequest {
        path: uri.path().to_string(),
        headers: headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_string(),
                    value.to_str().unwrap_or_default().to_string(),
                )
            })
            .collect(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        received_at: Instant::now(),
    };
    state.requests.lock().unwrap().push(recorded);
    let script = state.scripts.lock().unwrap().pop_front();
    let Some(script) = script else {
        return plain(418, "mock LLM: no script left for this request");
    };
    let flavor = state.flavor.unwrap_or(Flavor::OpenAi);
    let frames = match &script.reply {
        Reply::Status {
            code,
            body,
            headers,
        } => {
            let mut response = plain(*code, body);
            for (name, value) in headers {
                response.headers_mut().insert::<axum::http::HeaderName>(
                    name.parse().unwrap(),
                    value.parse().unwrap(),
                );
            }
            return response;
        }
        Reply::Hang => return std::future::pending::<Response>().await,
        Reply::HangAfterHead => {
            return sse_response(Body::from_stream(futures::stream::pending::<
                Result<Bytes, Infallible>,
            >()));
        }
        Reply::Answer { text, calls } => {
            let ids: Vec<String> = calls
                .iter()
                .map(|_| {
                    let n = state.call_ids.fetch_add(1, Ordering::SeqCst) + 1;
                    match flavor {
                        Flavor::OpenAi => format!("call_mock_{n}"),
                        Flavor::Anthropic => format!("toolu_mock_{n}"),
                    }
                })
                .collect();
            match flavor {
                Flavor::OpenAi => wire::openai_frames(text, calls, &ids, &script),
                Flavor::Anthropic => wire::anthropic_frames(text, calls, &ids, &script),
            }
        }
        Reply::Malformed => match flavor {
            Flavor::OpenAi => wire::openai_malformed(),
            Flavor::Anthropic => wire::anthropic_malformed(script.usage.0),
        },
        Reply::Raw(frames) => frames.clone(),
    };
    sse_response(streamed(frames, &script, state.clone()))
}

fn plain(code: u16, body: &str) -> Response {
    Response::builder()
        .status(StatusCode::from_u16(code).unwrap())
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn sse_response(body: Body) -> Response {
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(body)
        .unwrap()
}

/// Counts a body as aborted if it is dropped before its last frame went out.
struct AbortGuard {
    state: Arc<MockState>,
    finished: bool,
}

impl AbortGuard {
    fn disarm(&mut self) {
        self.finished = true;
    }
}

impl Drop for AbortGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.state.aborted_bodies.fetch_add(1, Ordering::SeqCst);
        }
    }
}

fn streamed(frames: Vec<String>, script: &Script, state: Arc<MockState>) -> Body {
    let delay = script.chunk_delay;
    let cut_after = script.cut_after;
    let stall_after = script.stall_after;
    let guard = AbortGuard {
        state,
        finished: false,
    };
    let stream = futures::stream::unfold(
        (frames.into_iter().enumerate(), guard),
        move |(mut frames, mut guard)| async move {
            let (sent, frame) = match frames.next() {
                Some(next) => next,
                None => {
                    guard.disarm();
                    return None;
                }
            };
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            if cut_after == Some(sent) {
                guard.disarm();
                let error = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "mock cut");
                return Some((Err(error), (frames, guard)));
            }
            if stall_after == Some(sent) {
                std::future::pending::<()>().await;
            }
            Some((Ok(Bytes::from(frame)), (frames, guard)))
        },
    );
    Body::from_stream(stream)
}

// ---- Reading a model stream ---------------------------------------------------------------

/// Every event of a stream, and the error that ended it, if any.
pub async fn drain(mut stream: ModelStream) -> (Vec<ModelEvent>, Option<ProviderError>) {
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push(event),
            Err(error) => {
                assert!(
                    stream.next().await.is_none(),
                    "the stream must end after an error"
                );
                return (events, Some(error));
            }
        }
    }
    (events, None)
}

/// The concatenated text deltas of `events`.
pub fn text_of(events: &[ModelEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            ModelEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}
