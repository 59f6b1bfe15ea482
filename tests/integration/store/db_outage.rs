//! PostgreSQL going away under a running `haico serve`, and coming back: a TCP proxy between
//! the server (a real child process) and PostgreSQL is cut (refusing new connections and
//! dropping open ones), or turned into a black hole (connections are accepted, nothing is
//! forwarded, like a link cut without a reset). Meanwhile every request must answer `503` with
//! `Retry-After` within two seconds, `/healthz` must say the database is down and why, an open
//! event stream must stay open without flooding the log; once the proxy forwards again the
//! server recovers by itself: writes succeed and reach the stream, without a restart.

use crate::common;

use std::{
    net::SocketAddr,
    sync::Arc,
    time::{Duration, Instant},
};

use common::{
    Engine, TestDb,
    child::ChildServer,
    postgres_url,
    sse::{Frame, SseReader},
};
use reqwest::{StatusCode, header::RETRY_AFTER};
use serde_json::{Value, json};
use tokio::{
    net::{TcpListener, TcpSocket, TcpStream},
    sync::watch,
};

/// The longest a request may take to say the database is unavailable.
const ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// How long the server may take to notice the database is back.
const RECOVER_WITHIN: Duration = Duration::from_secs(15);

/// What the proxy does with connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Forwards both ways to PostgreSQL.
    Forward,
    /// Listens no more (connects are refused) and drops every open connection.
    Refuse,
    /// Accepts connections and holds them, forwarding nothing either way; connections open
    /// before stop forwarding but stay open.
    BlackHole,
}

/// A TCP proxy to PostgreSQL on a local port, switched between [`Mode`]s.
struct Proxy {
    addr: SocketAddr,
    mode: Arc<watch::Sender<Mode>>,
    task: tokio::task::JoinHandle<()>,
}

/// A listener that can be bound again on the same port right after the last one closed.
fn listen(addr: SocketAddr) -> TcpListener {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_reuseaddr(true).unwrap();
    socket.bind(addr).unwrap();
    socket.listen(128).unwrap()
}

impl Proxy {
    async fn start(upstream: SocketAddr) -> Self {
        let first = listen("127.0.0.1:0".parse().unwrap());
        let addr = first.local_addr().unwrap();
        let mode = Arc::new(watch::channel(Mode::Forward).0);
        let control = mode.clone();
        let task = tokio::spawn(async move {
            let mut listener = Some(first);
            let mut changes = control.subscribe();
            loop {
                let current = *changes.borrow_and_update();
                if current == Mode::Refuse {
                    listener = None;
                    if changes.changed().await.is_err() {
                        return;
                    }
                    continue;
                }
                let open = listener.get_or_insert_with(|| listen(addr));
                tokio::select! {
                    accepted = open.accept() => {
                        if let Ok((client, _)) = accepted {
                            tokio::spawn(relay(client, upstream, current, control.subscribe()));
                        }
                    }
                    changed = changes.changed() => {
                        if changed.is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Self { addr, mode, task }
    }

    fn set(&self, mode: Mode) {
        self.mode.send_replace(mode);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One client connection: forwarded while the proxy forwards, held silently in a black hole,
/// dropped when the proxy refuses or starts forwarding again after a black hole (so frozen
/// connections end, as after a link that came back with a new route).
async fn relay(
    mut client: TcpStream,
    upstream: SocketAddr,
    accepted_in: Mode,
    mut changes: watch::Receiver<Mode>,
) {
    if accepted_in == Mode::Forward {
        let Ok(mut server) = TcpStream::connect(upstream).await else {
            return;
        };
        tokio::select! {
            _ = tokio::io::copy_bidirectional(&mut client, &mut server) => return,
            _ = changes.changed() => {}
        }
        if *changes.borrow_and_update() == Mode::Refuse {
            return;
        }
        // A black hole: keep both ends open, move nothing, until the next change.
        let _ = changes.changed().await;
        drop(server);
        return;
    }
    let _ = changes.changed().await;
    drop(client);
}

/// The test database's URL with the proxy in place of the server.
fn through(url: &str, proxy: SocketAddr) -> String {
    let mut url = reqwest::Url::parse(url).unwrap();
    url.set_host(Some(&proxy.ip().to_string())).unwrap();
    url.set_port(Some(proxy.port())).unwrap();
    url.to_string()
}

fn upstream() -> SocketAddr {
    let url = reqwest::Url::parse(&postgres_url()).unwrap();
    let host = url.host_str().unwrap_or("127.0.0.1");
    let port = url.port().unwrap_or(5432);
    std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
        .unwrap()
        .next()
        .unwrap()
}

/// One request; returns the status, the `Retry-After` header, the JSON body and the time taken.
async fn timed(
    server: &ChildServer,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Option<String>, Value, Duration) {
    let started = Instant::now();
    let mut request = server.http.request(method, server.url(path));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let retry = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = response.json::<Value>().await.unwrap_or(Value::Null);
    (status, retry, body, started.elapsed())
}

/// While the proxy is cut: requests of every kind answer 503 fast, with `Retry-After` and a
/// clear error, and `/healthz` says the database is down and why (`expect` in its text), the
/// log also where.
async fn assert_outage(server: &ChildServer, proxy: SocketAddr, expect: &str) {
    use reqwest::Method;
    let requests = [
        (Method::GET, "/api/threads/outage/workspace", None),
        (
            Method::PUT,
            "/api/threads/outage/objective",
            Some(json!({"objective": "during the outage"})),
        ),
        (
            Method::POST,
            "/api/threads/outage/todos",
            Some(json!({"text": "during the outage"})),
        ),
        (Method::GET, "/api/threads", None),
    ];
    for (method, path, body) in requests {
        let (status, retry, body, took) = timed(server, method.clone(), path, body).await;
        assert_eq!(
            status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{method} {path}: {body}"
        );
        eprintln!("{expect}: {method} {path} answered {status} in {took:?}");
        assert!(took < ANSWER_WITHIN, "{method} {path} took {took:?}");
        assert_eq!(retry.as_deref(), Some("2"), "{method} {path}: Retry-After");
        let text = body["error"].as_str().unwrap_or_default();
        assert!(text.contains("database is unavailable"), "{body}");
    }
    let (status, retry, body, took) = timed(server, Method::GET, "/healthz", None).await;
    eprintln!("{expect}: /healthz answered {status} in {took:?}: {body}");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(took < ANSWER_WITHIN, "/healthz took {took:?}");
    assert!(retry.is_some(), "/healthz has no Retry-After");
    assert_eq!(body["status"], "degraded", "{body}");
    assert_eq!(body["database"]["ok"], false, "{body}");
    let error = body["database"]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(expect),
        "/healthz should say `{expect}`: {body}"
    );
    assert!(error.contains("HAICO_DATABASE_URL"), "{body}");
    // Anyone may ask /healthz: the address is for the log.
    let address = format!("127.0.0.1:{}", proxy.port());
    assert!(!error.contains(&address), "{body}");
    assert!(
        server.log_text().contains(&address),
        "the log does not name {address}:\n{}",
        server.log_tail(20)
    );
}

/// Waits until `/healthz` is 200 again, then checks a write succeeds and reads back.
async fn assert_recovers(server: &ChildServer, objective: &str) {
    let deadline = Instant::now() + RECOVER_WITHIN;
    loop {
        let (status, _, body, _) = timed(server, reqwest::Method::GET, "/healthz", None).await;
        if status == StatusCode::OK {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no recovery within {RECOVER_WITHIN:?}: {body}\n{}",
            server.log_tail(30)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, _, body, _) = timed(
        server,
        reqwest::Method::PUT,
        "/api/threads/outage/objective",
        Some(json!({"objective": objective})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _, body, _) = timed(
        server,
        reqwest::Method::GET,
        "/api/threads/outage/objective",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["objective"], objective);
}

/// Reads the stream until the next `workspace` event about the objective; returns its id.
async fn await_objective_event(events: &mut SseReader) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let frame: Frame = events.next(left).await;
        if frame.event == "workspace" && frame.data["panels"].to_string().contains("objective") {
            return frame.id.expect("a stored event has an id");
        }
    }
}

async fn outage_and_recovery(cut: Mode, expect: &str) {
    let tdb = TestDb::new(Engine::Postgres).await;
    let proxy = Proxy::start(upstream()).await;
    let mut server = ChildServer::start(&through(&tdb.url, proxy.addr), &[]).await;
    let created = server
        .http
        .post(server.url("/api/threads"))
        .json(&json!({"id": "outage"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let mut events = SseReader::open(
        &server.http,
        &server.url("/api/threads/outage/events"),
        None,
    )
    .await;
    assert_recovers(&server, "before the outage").await;
    let before = await_objective_event(&mut events).await;

    proxy.set(cut);
    assert_outage(&server, proxy.addr, expect).await;
    // Long enough for the event poller to fail a dozen times.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_outage(&server, proxy.addr, expect).await;

    proxy.set(Mode::Forward);
    assert_recovers(&server, "after the outage").await;
    // The stream opened before the outage carries the write made after it.
    let after = await_objective_event(&mut events).await;
    assert!(
        after > before,
        "event {after} after the outage, {before} before"
    );

    // The poller (which follows the open stream's thread) said once that it cannot read the
    // database, not on every tick, and says when it can again.
    let deadline = Instant::now() + Duration::from_secs(10);
    let log = loop {
        let log = server.log_text();
        if log.contains("event poller reads the database again") {
            break log;
        }
        assert!(
            Instant::now() < deadline,
            "the poller never said it recovered:\n{log}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let poller_warnings = log.matches("event poller cannot read the database").count();
    assert_eq!(
        poller_warnings, 1,
        "the event poller should warn once per outage:\n{log}"
    );
    drop(events);
    server.kill();
    tdb.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_database_answers_503_fast_and_recovers_by_itself() {
    needs!(postgres);
    outage_and_recovery(Mode::Refuse, "connection refused").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_black_holed_database_answers_503_fast_and_recovers_by_itself() {
    needs!(postgres);
    outage_and_recovery(Mode::BlackHole, "no answer within").await;
}
