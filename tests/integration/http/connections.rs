//! Connections through a real `haico serve` child process: clients that send nothing, or their
//! headers a byte at a time, are closed after the header timeout; kept-alive connections after
//! the idle timeout (but event streams and chat streams never); connections past the cap wait
//! for a slot; and the server outlives running out of file descriptors.

use crate::common;

use std::{
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use common::{Engine, TestDb, sse::SseReader};
use serde_json::json;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

/// A `haico serve` child on a free loopback port; killed on drop.
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
    http: reqwest::Client,
    _dir: tempfile::TempDir,
}

impl Server {
    /// Starts `haico serve` over `db` with the extra environment `env`; with `open_files`, under
    /// that open-files limit (`ulimit -n`, a number or `-S N` for the soft limit only).
    async fn start(db: &TestDb, env: &[(&str, &str)], open_files: Option<&str>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server.log");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let haico = env!("CARGO_BIN_EXE_haico");
        let mut command = match open_files {
            Some(limit) => {
                let mut sh = Command::new("sh");
                sh.arg("-c")
                    .arg(format!("ulimit -n {limit} && exec \"$0\" serve"))
                    .arg(haico);
                sh
            }
            None => {
                let mut direct = Command::new(haico);
                direct.arg("serve");
                direct
            }
        };
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("HAICO_") {
                command.env_remove(key);
            }
        }
        command
            .env("HAICO_BIND", format!("127.0.0.1:{port}"))
            .env("HAICO_DATABASE_URL", &db.url)
            .env("HAICO_DB_MAX_CONNECTIONS", "4")
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.path().join("stdout.log")).unwrap())
            .stderr(std::fs::File::create(&log).unwrap());
        let child = command.spawn().expect("spawn haico serve");
        let mut server = Self {
            child,
            port,
            log,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(20))
                .build()
                .unwrap(),
            _dir: dir,
        };
        server.wait_healthy(Duration::from_secs(30)).await;
        server
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Waits (a bounded number of tries) until `/healthz` answers 200 on a new connection.
    async fn wait_healthy(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("haico serve exited with {status}:\n{}", self.log_text());
            }
            if healthz(self.port, Duration::from_secs(2)).await == Some(200) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "haico serve did not answer /healthz within {within:?}:\n{}",
            self.log_text()
        );
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    async fn connect(&self) -> TcpStream {
        TcpStream::connect(("127.0.0.1", self.port)).await.unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The status of `GET /healthz` on a new connection, or `None` when no answer came in `wait`.
async fn healthz(port: u16, wait: Duration) -> Option<u16> {
    tokio::time::timeout(wait, async {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.ok()?;
        get(&mut stream, "/healthz").await
    })
    .await
    .ok()
    .flatten()
}

/// Sends `GET path` on a kept-alive connection and reads the answer; returns its status.
async fn get(stream: &mut TcpStream, path: &str) -> Option<u16> {
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    read_response(stream).await
}

/// Reads one answer with a `content-length` body; its status, or `None` if the connection
/// closed first.
async fn read_response(stream: &mut TcpStream) -> Option<u16> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_ascii_lowercase();
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    while buffer.len() < head_end + length {
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    Some(status)
}

/// Waits up to `within` for the server to close `stream`; returns how long that took and
/// whatever the server sent before.
async fn until_closed(stream: &mut TcpStream, within: Duration) -> (Duration, Vec<u8>) {
    let start = Instant::now();
    let mut received = Vec::new();
    let mut chunk = [0u8; 1024];
    let closed = tokio::time::timeout(within, async {
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "the server kept the connection open for {within:?}"
    );
    (start.elapsed(), received)
}

backend_tests! {
    async fn a_silent_connection_is_closed_after_the_header_timeout(engine) {
        let db = TestDb::new(engine).await;
        let server = Server::start(&db, &[("HAICO_HEADER_TIMEOUT_SECS", "1")], None).await;
        let mut silent = server.connect().await;
        let (after, received) = until_closed(&mut silent, Duration::from_secs(10)).await;
        assert!(
            after >= Duration::from_millis(900) && after < Duration::from_secs(5),
            "closed after {after:?}, expected about 1 s"
        );
        assert!(received.is_empty(), "the server answered nothing it was asked: {received:?}");
        assert_eq!(healthz(server.port, Duration::from_secs(5)).await, Some(200));
        drop(server);
        db.cleanup().await;
    }

    async fn headers_sent_a_byte_at_a_time_are_cut_off_at_the_header_timeout(engine) {
        let db = TestDb::new(engine).await;
        let server = Server::start(&db, &[("HAICO_HEADER_TIMEOUT_SECS", "2")], None).await;
        let stream = server.connect().await;
        let (mut reader, mut writer) = stream.into_split();
        let start = Instant::now();
        // 60 bytes at one every 300 ms would take 18 s: far past the timeout.
        let request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaa\r\n\r\n";
        let drip = tokio::spawn(async move {
            for byte in request {
                if writer.write_all(&[*byte]).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        });
        let mut received = Vec::new();
        let closed = tokio::time::timeout(Duration::from_secs(10), reader.read_to_end(&mut received))
            .await;
        let after = start.elapsed();
        drip.abort();
        assert!(closed.is_ok(), "a slowloris connection stayed open for 10 s");
        assert!(
            after >= Duration::from_millis(1800) && after < Duration::from_secs(6),
            "closed after {after:?}, expected about 2 s"
        );
        assert!(received.is_empty(), "the slow request was answered: {received:?}");
        drop(server);
        db.cleanup().await;
    }

    async fn a_kept_alive_connection_is_closed_after_the_idle_timeout(engine) {
        let db = TestDb::new(engine).await;
        let server = Server::start(
            &db,
            &[("HAICO_HEADER_TIMEOUT_SECS", "1"), ("HAICO_IDLE_TIMEOUT_SECS", "3")],
            None,
        )
        .await;
        let mut stream = server.connect().await;
        assert_eq!(get(&mut stream, "/healthz").await, Some(200));
        // Idle for longer than the header timeout: the connection is still there for the next
        // request, which is why clients keep connections alive.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(get(&mut stream, "/healthz").await, Some(200));
        let (after, received) = until_closed(&mut stream, Duration::from_secs(10)).await;
        assert!(
            after >= Duration::from_millis(2800) && after < Duration::from_secs(7),
            "closed after {after:?} idle, expected about 3 s"
        );
        assert!(received.is_empty(), "{received:?}");
        drop(server);
        db.cleanup().await;
    }

    async fn connections_past_the_cap_wait_until_a_slot_frees(engine) {
        let db = TestDb::new(engine).await;
        let server = Server::start(
            &db,
            &[("HAICO_MAX_CONNECTIONS", "3"), ("HAICO_IDLE_TIMEOUT_SECS", "60")],
            None,
        )
        .await;
        // The start-up check's connection may still be counted until the server sees it close;
        // three connections that were answered surely hold the three slots.
        let mut held = Vec::new();
        while held.len() < 3 {
            let mut stream = server.connect().await;
            let answered = tokio::time::timeout(Duration::from_secs(5), get(&mut stream, "/healthz"))
                .await
                .ok()
                .flatten();
            if answered == Some(200) {
                held.push(stream);
            }
        }
        let mut waiting = server.connect().await;
        waiting
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .await
            .unwrap();
        let early = tokio::time::timeout(Duration::from_secs(1), read_response(&mut waiting)).await;
        assert!(early.is_err(), "a fourth connection was served past the cap of 3: {early:?}");
        drop(held.pop());
        let later = tokio::time::timeout(Duration::from_secs(5), read_response(&mut waiting)).await;
        assert_eq!(later.ok().flatten(), Some(200), "the waiting connection was not served once a slot freed");
        drop(server);
        db.cleanup().await;
    }

    async fn event_and_chat_streams_outlive_the_idle_timeout(engine) {
        let db = TestDb::new(engine).await;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("replay.json");
        // The model thinks for 2.5 s before its answer: longer than the idle timeout.
        std::fs::write(
            &script,
            json!({"responses": [{"text": "Thought it over.", "delay_ms": 2500}]}).to_string(),
        )
        .unwrap();
        let server = Server::start(
            &db,
            &[
                ("HAICO_HEADER_TIMEOUT_SECS", "1"),
                ("HAICO_IDLE_TIMEOUT_SECS", "1"),
                ("HAICO_LLM_PROVIDER", "replay"),
                ("HAICO_LLM_REPLAY_FILE", script.to_str().unwrap()),
            ],
            None,
        )
        .await;
        let created = server
            .http
            .post(server.url("/api/threads"))
            .json(&json!({"id": "streams"}))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201);
        let listener = reqwest::Client::new();
        let mut events =
            SseReader::open(&listener, &server.url("/api/threads/streams/events"), None).await;
        // Three idle timeouts without an event on the stream.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let changed = server
            .http
            .put(server.url("/api/threads/streams/objective"))
            .json(&json!({"objective": "still listening"}))
            .send()
            .await
            .unwrap();
        assert_eq!(changed.status(), 200);
        let frame = events.next(Duration::from_secs(5)).await;
        assert_eq!(frame.event, "workspace", "{frame:?}");

        let mut chat = SseReader::post(
            &server.http,
            &server.url("/api/threads/streams/chat"),
            &json!({"message": "take your time"}),
        )
        .await;
        let started = Instant::now();
        let mut answer = None;
        while answer.is_none() {
            let frame = chat.next(Duration::from_secs(10)).await;
            match frame.event.as_str() {
                "message" => answer = Some(frame.data["content"].clone()),
                "error" => panic!("the turn failed: {frame:?}"),
                _ => {}
            }
        }
        assert!(started.elapsed() >= Duration::from_secs(2), "the model did not take its time");
        assert_eq!(answer, Some(json!("Thought it over.")));
        drop(server);
        db.cleanup().await;
    }

    async fn the_server_outlives_running_out_of_file_descriptors(engine) {
        let db = TestDb::new(engine).await;
        // A cap above the limit, so accepting runs into "Too many open files".
        let server = Server::start(
            &db,
            &[("HAICO_HEADER_TIMEOUT_SECS", "2"), ("HAICO_MAX_CONNECTIONS", "2000")],
            Some("256"),
        )
        .await;
        let mut flood = Vec::new();
        for _ in 0..400 {
            flood.push(server.connect().await);
        }
        // Every silent connection is closed after 2 s, so /healthz gets through once the
        // server has worked through the queue in front of it.
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut answered = None;
        while answered != Some(200) && Instant::now() < deadline {
            answered = healthz(server.port, Duration::from_secs(5)).await;
        }
        assert_eq!(answered, Some(200), "no answer while flooded:\n{}", server.log_text());
        drop(flood);
        assert_eq!(healthz(server.port, Duration::from_secs(5)).await, Some(200));
        let log = server.log_text();
        let failures = log.matches("cannot accept connections").count();
        assert!(failures >= 1, "the flood never ran out of descriptors:\n{log}");
        assert!(failures <= 10, "{failures} log lines about failed accepts: one per run of failures, not per attempt:\n{log}");
        assert!(log.contains("accepting connections again"), "{log}");
        drop(server);

        // With the default cap, derived from the limit, the server never runs out: connections
        // past it wait in the listen queue.
        let server = Server::start(&db, &[("HAICO_HEADER_TIMEOUT_SECS", "2")], Some("256")).await;
        let mut flood = Vec::new();
        for _ in 0..400 {
            flood.push(server.connect().await);
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut answered = None;
        while answered != Some(200) && Instant::now() < deadline {
            answered = healthz(server.port, Duration::from_secs(5)).await;
        }
        assert_eq!(answered, Some(200), "no answer while flooded:\n{}", server.log_text());
        drop(flood);
        let log = server.log_text();
        assert!(!log.contains("cannot accept connections"), "{log}");
        drop(server);
        db.cleanup().await;
    }
}

/// The soft open-files limit is raised to the hard one at start-up.
#[tokio::test]
async fn the_open_files_limit_is_raised_to_the_hard_limit() {
    let db = TestDb::new(Engine::Sqlite).await;
    let hard = rlimit_hard();
    let soft = 256.min(hard);
    let server = Server::start(&db, &[], Some(&format!("-S {soft}"))).await;
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", server.child.id())).unwrap();
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .unwrap();
    let numbers: Vec<&str> = line.split_whitespace().skip(3).take(2).collect();
    let expected = hard.min(1 << 20).to_string();
    assert_eq!(
        numbers,
        vec![expected.as_str(), hard.to_string().as_str()],
        "{line}"
    );
    if hard > soft {
        assert!(
            server.log_text().contains("raised the open-files limit"),
            "{}",
            server.log_text()
        );
    }
    drop(server);
    db.cleanup().await;
}

/// This process's hard open-files limit, from `/proc/self/limits`.
fn rlimit_hard() -> u64 {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .unwrap();
    line.split_whitespace().nth(4).unwrap().parse().unwrap()
}

/// Sends `head` and the first `sent` bytes of a body declared `declared` bytes long, then reads
/// the answer's head (lower-cased).
async fn answer_to_partial_body(
    stream: &mut TcpStream,
    path: &str,
    declared: usize,
    sent: &[u8],
) -> String {
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Content-Length: {declared}\r\n\r\n",
        host = stream.peer_addr().unwrap()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(sent).await.unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("an answer within 10 s")
            .unwrap();
        assert!(n > 0, "closed without an answer");
        answer.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&answer).to_lowercase()
}

backend_tests! {
    async fn an_answer_that_leaves_the_body_unread_closes_the_connection(engine) {
        let (tdb, server) = common::server::setup(engine).await;
        server.create_thread("t").await;
        // Refused before the body is read (a malformed thread id; a route that does not exist),
        // with most of the body not sent yet: the answer says the connection closes, so no
        // client reuses it.
        for (path, declared, status) in [
            ("/api/threads/bad%21id/todos", 100_000, "400"),
            ("/api/nowhere", 100_000, "404"),
        ] {
            let mut stream = TcpStream::connect(server.addr).await.unwrap();
            let answer = answer_to_partial_body(&mut stream, path, declared, b"{\"text\":").await;
            assert!(answer.starts_with(&format!("http/1.1 {status}")), "{answer}");
            assert!(answer.contains("connection: close"), "{answer}");
        }

        // A body read whole keeps the connection for the next request, refused or not.
        let body = br#"{"text": "Step"}"#;
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        let answer = answer_to_partial_body(&mut stream, "/api/threads/t/todos", body.len(), body).await;
        assert!(answer.starts_with("http/1.1 201"), "{answer}");
        assert!(!answer.contains("connection: close"), "{answer}");
        let bad = br#"{"text": ""}"#;
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        let answer = answer_to_partial_body(&mut stream, "/api/threads/t/todos", bad.len(), bad).await;
        assert!(answer.starts_with("http/1.1 400"), "{answer}");
        assert!(!answer.contains("connection: close"), "{answer}");
        common::server::teardown(tdb, server).await;
    }
}
