//! A real HTTP server on a random local port, over a test database, and a client to talk to it.

use std::{net::SocketAddr, time::Duration};

use haico::{
    http::{ApiToken, AppState, HttpConfig},
    store::Database,
};
use reqwest::{Method, StatusCode, header};
use serde_json::Value;
use tokio::{sync::oneshot, task::JoinHandle};

/// A running `haico::http::serve` on `127.0.0.1:<random port>`.
pub struct TestServer {
    pub addr: SocketAddr,
    pub client: reqwest::Client,
    shutdown: Option<oneshot::Sender<()>>,
    handle: Option<JoinHandle<std::io::Result<()>>>,
}

/// A response: status and body parsed as JSON (`Value::Null` when the body is empty; a body
/// that is not JSON fails the test, since every answer of the API is JSON).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: StatusCode,
    pub body: Value,
    pub content_type: Option<String>,
}

impl Reply {
    /// Asserts the status and that the body is `{"error": "<non-empty text>"}`; returns the text.
    #[track_caller]
    pub fn error(&self, status: u16) -> String {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.body
        );
        self.error_any()
    }

    /// Asserts the body is a JSON `{"error": "<text>"}` and the status a 4xx/5xx.
    #[track_caller]
    pub fn error_any(&self) -> String {
        assert!(
            self.status.is_client_error() || self.status.is_server_error(),
            "expected an error status, got {} with {}",
            self.status,
            self.body
        );
        assert!(
            self.content_type
                .as_deref()
                .is_some_and(|c| c.starts_with("application/json")),
            "error body must be JSON, content-type was {:?} (status {}, body {})",
            self.content_type,
            self.status,
            self.body
        );
        let obj = self
            .body
            .as_object()
            .unwrap_or_else(|| panic!("error body is not an object: {}", self.body));
        assert_eq!(obj.len(), 1, "error body has extra keys: {}", self.body);
        let text = obj
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("error body has no `error` string: {}", self.body));
        assert!(!text.trim().is_empty(), "empty error text");
        text.to_string()
    }

    /// Asserts the status; returns the body.
    #[track_caller]
    pub fn expect(self, status: u16) -> Value {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.body
        );
        self.body
    }
}

impl TestServer {
    /// Serves `db` with the default HTTP settings.
    pub async fn start(db: &Database) -> Self {
        Self::with_config(db, HttpConfig::default()).await
    }

    /// Serves `db` behind the bearer token `token` (`HAICO_API_TOKEN`).
    pub async fn with_token(db: &Database, token: &str) -> Self {
        let config = HttpConfig {
            api_token: Some(ApiToken::new(token).expect("a valid token")),
            ..HttpConfig::default()
        };
        Self::with_config(db, config).await
    }

    /// Serves `db` with `config`.
    pub async fn with_config(db: &Database, config: HttpConfig) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a local port");
        let addr = listener.local_addr().expect("local addr");
        let (tx, rx) = oneshot::channel::<()>();
        let state = AppState::new(db.clone());
        let handle = tokio::spawn(async move {
            let shutdown = async move {
                let _ = rx.await;
            };
            haico::http::serve(listener, state, &config, shutdown).await
        });
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()
            .expect("http client");
        Self {
            addr,
            client,
            shutdown: Some(tx),
            handle: Some(handle),
        }
    }

    /// Serves an already built `state` (e.g. one whose agent talks to a mock LLM) with the
    /// default HTTP settings.
    pub async fn with_state(state: AppState) -> Self {
        let config = HttpConfig::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a local port");
        let addr = listener.local_addr().expect("local addr");
        let (tx, rx) = oneshot::channel::<()>();
        let handle = tokio::spawn(async move {
            let shutdown = async move {
                let _ = rx.await;
            };
            haico::http::serve(listener, state, &config, shutdown).await
        });
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(120))
            .build()
            .expect("http client");
        Self {
            addr,
            client,
            shutdown: Some(tx),
            handle: Some(handle),
        }
    }

    /// The absolute URL of `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Sends a request with an optional JSON body.
    pub async fn request(&self, method: Method, path: &str, body: Option<&Value>) -> Reply {
        let mut req = self.client.request(method, self.url(path));
        if let Some(body) = body {
            req = req.json(body);
        }
        Self::read(req.send().await.expect("request sent")).await
    }

    /// Sends raw bytes with the given content type (`None`: no content-type header at all).
    pub async fn send_raw(
        &self,
        method: Method,
        path: &str,
        content_type: Option<&str>,
        body: impl Into<reqwest::Body>,
    ) -> Reply {
        let mut req = self.client.request(method, self.url(path)).body(body);
        if let Some(ct) = content_type {
            req = req.header(reqwest::header::CONTENT_TYPE, ct);
        }
        Self::read(req.send().await.expect("request sent")).await
    }

    /// Reads a response into a [`Reply`].
    pub async fn read(resp: reqwest::Response) -> Reply {
        let status = resp.status();
        let content_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let bytes = resp.bytes().await.expect("response body");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap_or_else(|err| {
                panic!(
                    "status {status}: body is not JSON ({err}): {:?}",
                    String::from_utf8_lossy(&bytes)
                )
            })
        };
        Reply {
            status,
            body,
            content_type,
        }
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.request(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> Reply {
        self.request(Method::POST, path, Some(body)).await
    }

    pub async fn patch(&self, path: &str, body: &Value) -> Reply {
        self.request(Method::PATCH, path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> Reply {
        self.request(Method::DELETE, path, None).await
    }

    /// Creates a thread with the given id; asserts 201 and returns its JSON.
    pub async fn create_thread(&self, id: &str) -> Value {
        self.post(
            "/api/threads",
            &serde_json::json!({"id": id, "title": format!("thread {id}")}),
        )
        .await
        .expect(201)
    }

    /// Calls a tool on the agent path; asserts 200 and returns the envelope object.
    pub async fn tool(&self, thread: &str, tool: &str, args: Value) -> Value {
        self.post(&format!("/api/threads/{thread}/tools/{tool}"), &args)
            .await
            .expect(200)
    }

    /// Calls a tool that must succeed; returns the summary.
    pub async fn tool_ok(&self, thread: &str, tool: &str, args: Value) -> String {
        let env = self.tool(thread, tool, args.clone()).await;
        assert_eq!(
            env["success"],
            Value::Bool(true),
            "{tool}({args}) failed: {env}"
        );
        env["summary"].as_str().expect("summary").to_string()
    }

    /// The thread's workspace snapshot; asserts 200.
    pub async fn workspace(&self, thread: &str) -> Value {
        self.get(&format!("/api/threads/{thread}/workspace"))
            .await
            .expect(200)
    }

    /// Stops accepting, lets in-flight requests finish and waits for the server task.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        // Idle keep-alive connections belong to the client; dropping it closes them.
        drop(std::mem::replace(&mut self.client, reqwest::Client::new()));
        if let Some(handle) = self.handle.take() {
            let result = tokio::time::timeout(Duration::from_secs(30), handle)
                .await
                .expect("server stops within 30 s after shutdown")
                .expect("server task did not panic");
            result.expect("server ended without an I/O error");
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// A fresh database of `engine` with a server over it.
pub async fn setup(engine: super::Engine) -> (super::TestDb, TestServer) {
    let tdb = super::TestDb::new(engine).await;
    let server = TestServer::start(&tdb.db).await;
    (tdb, server)
}

/// Stops the server, then removes the database.
pub async fn teardown(tdb: super::TestDb, server: TestServer) {
    server.shutdown().await;
    tdb.cleanup().await;
}

/// The keys of a JSON object (panics on anything else), for exact-shape checks.
pub fn keys(value: &Value) -> std::collections::BTreeSet<&str> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// A set of expected keys, to compare with [`keys`].
pub fn key_set(names: &[&'static str]) -> std::collections::BTreeSet<&'static str> {
    names.iter().copied().collect()
}

/// An answer kept whole (status, headers, body bytes), for tests that look at headers or at
/// bodies that may not be JSON.
pub struct RawAnswer {
    pub status: StatusCode,
    pub headers: header::HeaderMap,
    pub body: Vec<u8>,
}

impl RawAnswer {
    /// Reads `response` to its end.
    pub async fn read(response: reqwest::Response) -> Self {
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.bytes().await.expect("body").to_vec();
        Self {
            status,
            headers,
            body,
        }
    }

    /// Keeps only the status and headers (for event streams, which never end).
    pub fn head(response: &reqwest::Response) -> Self {
        Self {
            status: response.status(),
            headers: response.headers().clone(),
            body: Vec::new(),
        }
    }

    /// A header's value, when it is text.
    pub fn header(&self, name: header::HeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body as JSON; fails the test with the body when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|err| {
            panic!(
                "status {}: body is not JSON ({err}): {:?}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}
