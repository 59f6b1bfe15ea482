//! Raw HTTP garbage over TCP, on both engines: malformed request lines, bad headers, wrong
//! and conflicting content lengths, truncated bodies, broken chunked encoding, random bytes.
//! Whatever arrives, the server answers without a 5xx (or closes the connection), keeps
//! serving, and changes nothing.
//!
//! `PROPTEST_CASES=2000 cargo test --test integration -- fuzz::http_raw` runs longer.

use crate::common;
use crate::common::fuzz as fuzz_support;

use std::time::Duration;

use common::server::{setup, teardown};
use fuzz_support::{cases, draw, runner};
use proptest::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long one exchange may take before the test fails: the server must answer or close.
const EXCHANGE_LIMIT: Duration = Duration::from_secs(20);

/// Paths a request may aim at.
const PATHS: [&str; 8] = [
    "/api/threads",
    "/api/threads/t/todos",
    "/api/threads/t/document",
    "/api/threads/t/tools/set_objective",
    "/api/markdown",
    "/api/threads/t/objective",
    "/healthz",
    "*",
];

/// One request, well-formed in parts and broken in others.
fn request() -> BoxedStrategy<Vec<u8>> {
    let method = prop_oneof![
        Just("GET".to_string()),
        Just("POST".to_string()),
        Just("PUT".to_string()),
        Just("PATCH".to_string()),
        Just("DELETE".to_string()),
        "[A-Z]{0,12}",
        "\\PC{0,6}",
    ];
    let target = prop_oneof![
        4 => proptest::sample::select(PATHS.to_vec()).prop_map(str::to_string),
        1 => "/[\\x21-\\x7e]{0,40}",
        1 => (1usize..20_000).prop_map(|n| format!("/{}", "a".repeat(n))),
        1 => "[\\x00-\\xff]{0,20}",
        1 => Just("http://evil.example/api/threads".to_string()),
    ];
    let version = prop_oneof![
        4 => Just("HTTP/1.1".to_string()),
        1 => Just("HTTP/1.0".to_string()),
        1 => Just("HTTP/2.0".to_string()),
        1 => Just("HTTP/9".to_string()),
        1 => "[\\x21-\\x7e]{0,10}",
        1 => Just(String::new()),
    ];
    let header = prop_oneof![
        Just("Content-Type: application/json".to_string()),
        Just("Content-Type: text/plain".to_string()),
        Just("Transfer-Encoding: chunked".to_string()),
        Just("Transfer-Encoding: gzip, chunked".to_string()),
        Just("Expect: 100-continue".to_string()),
        Just("Connection: close".to_string()),
        Just("Connection: keep-alive, Upgrade".to_string()),
        Just("Upgrade: websocket".to_string()),
        Just("Content-Encoding: gzip".to_string()),
        (0u64..100).prop_map(|n| format!("Content-Length: {n}")),
        Just("Content-Length: 18446744073709551616".to_string()),
        Just("Content-Length: -1".to_string()),
        Just("Content-Length: 5, 7".to_string()),
        Just("Host:".to_string()),
        "[\\x21-\\x7e]{0,20}: [\\x20-\\x7e]{0,40}",
        "[\\x00-\\xff]{0,30}",
        (1usize..40_000).prop_map(|n| format!("X-Long: {}", "b".repeat(n))),
        Just(" folded: continuation".to_string()),
    ];
    let body = prop_oneof![
        Just(Vec::new()),
        Just(br#"{"title": "x"}"#.to_vec()),
        Just(br#"{"text": "#.to_vec()),
        Just(b"5\r\nhello\r\n0\r\n\r\n".to_vec()),
        Just(b"zz\r\nhello\r\n".to_vec()),
        Just(b"ffffffffffffffff\r\n".to_vec()),
        Just(b"3\r\nabcdef\r\n0\r\n".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..200),
    ];
    let line_end = prop_oneof![4 => Just("\r\n"), 1 => Just("\n"), 1 => Just("\r")];
    (
        method,
        target,
        version,
        proptest::collection::vec(header, 0..6),
        body,
        line_end,
        any::<bool>(),
        prop_oneof![8 => Just(None), 1 => any::<proptest::sample::Index>().prop_map(Some)],
    )
        .prop_map(|(method, target, version, headers, body, eol, host, cut)| {
            let mut bytes = format!("{method} {target} {version}{eol}").into_bytes();
            if host {
                bytes.extend_from_slice(format!("Host: 127.0.0.1{eol}").as_bytes());
            }
            for header in headers {
                bytes.extend_from_slice(header.as_bytes());
                bytes.extend_from_slice(eol.as_bytes());
            }
            bytes.extend_from_slice(eol.as_bytes());
            bytes.extend_from_slice(&body);
            // Now and then the request stops anywhere.
            if let Some(cut) = cut {
                bytes.truncate(cut.index(bytes.len() + 1));
            }
            bytes
        })
        .boxed()
}

/// Sends `bytes`, closes the writing half and reads until the server closes: the status of
/// every response it sent (a pipelined request may get several).
async fn exchange(addr: std::net::SocketAddr, bytes: &[u8]) -> Vec<u16> {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    // The server may answer and close before reading everything: then writing fails, which
    // is its right.
    let _ = stream.write_all(bytes).await;
    let _ = stream.shutdown().await;
    let mut answer = Vec::new();
    let read = tokio::time::timeout(EXCHANGE_LIMIT, stream.read_to_end(&mut answer)).await;
    assert!(
        read.is_ok(),
        "no answer and no close within {EXCHANGE_LIMIT:?} for {:?}",
        String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
    );
    let text = String::from_utf8_lossy(&answer);
    text.match_indices("HTTP/1.")
        .filter_map(|(at, _)| text.get(at + 9..at + 12)?.parse().ok())
        .collect()
}

backend_tests! {
    async fn raw_http_garbage_never_breaks_the_server(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;
        let history = "/api/threads/t/history";
        let before = (server.workspace("t").await, server.get(history).await.expect(200));
        let mut runner = runner(cases(1_000));
        let strategy = request();
        for _ in 0..runner.config().cases {
            let bytes = draw(&mut runner, &strategy);
            let statuses = exchange(server.addr, &bytes).await;
            for status in statuses {
                assert!(
                    status < 500,
                    "{status} for {:?}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
                );
            }
        }
        // Still serving, and nothing changed: the only whole, valid write generated here is a
        // new thread (`POST /api/threads {"title": "x"}`), which leaves thread `t` alone.
        server.get("/healthz").await.expect(200);
        let after = (server.workspace("t").await, server.get(history).await.expect(200));
        assert_eq!(before, after, "the workspace and history are unchanged");
        teardown(tdb, server).await;
    }
}
