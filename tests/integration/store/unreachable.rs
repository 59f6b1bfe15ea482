//! What an operator sees when a dependency is not there, through a real `haico serve`: start-up
//! against PostgreSQL that refuses, never answers, or lacks the database fails within five
//! seconds and names `host:port`, the cause and what to check (never a password); a SQLite
//! path that cannot be used is named with the reason; a chat turn whose model's port is shut
//! ends within seconds with an error naming the URL and the settings to check.

use crate::common;

use std::time::{Duration, Instant};

use common::{
    TestDb,
    child::{ChildServer, start_fails},
    postgres_url,
    sse::SseReader,
};
use serde_json::json;

/// Start-up must give up within this.
const FAIL_WITHIN: Duration = Duration::from_secs(5);

/// A local port nothing listens on.
fn shut_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    port
}

#[test]
fn a_refused_postgres_port_fails_fast_naming_host_and_port() {
    let port = shut_port();
    let url = format!("postgres://haico:s3cret-pw@127.0.0.1:{port}/haico");
    let (took, output) = start_fails(&url, &[], FAIL_WITHIN);
    eprintln!("start-up over {url} failed in {took:?}");
    assert!(took < FAIL_WITHIN, "took {took:?}:\n{output}");
    assert!(output.contains(&format!("127.0.0.1:{port}")), "{output}");
    assert!(output.contains("connection refused"), "{output}");
    assert!(output.contains("HAICO_DATABASE_URL"), "{output}");
    assert!(
        !output.contains("s3cret-pw"),
        "the password was printed:\n{output}"
    );
}

#[test]
fn a_black_holed_postgres_port_fails_fast_saying_it_timed_out() {
    // The kernel completes the handshake on a listening socket nobody accepts from, and
    // nothing ever answers: a server that hangs, or a link that swallows packets.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = format!("postgres://haico@127.0.0.1:{port}/haico");
    let (took, output) = start_fails(&url, &[], FAIL_WITHIN);
    drop(listener);
    assert!(took < FAIL_WITHIN, "took {took:?}:\n{output}");
    assert!(output.contains(&format!("127.0.0.1:{port}")), "{output}");
    assert!(output.contains("no answer within"), "{output}");
}

#[test]
fn a_missing_postgres_database_is_named() {
    needs!(postgres);
    let mut url = reqwest::Url::parse(&postgres_url()).unwrap();
    url.set_path("/haico_no_such_database");
    let (took, output) = start_fails(url.as_str(), &[], FAIL_WITHIN);
    assert!(took < FAIL_WITHIN, "took {took:?}:\n{output}");
    assert!(
        output.contains("the database `haico_no_such_database` does not exist"),
        "{output}"
    );
}

#[test]
fn a_sqlite_path_that_cannot_be_used_is_named_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir").join("haico.db");
    let (took, output) = start_fails(&format!("sqlite:{}", missing.display()), &[], FAIL_WITHIN);
    assert!(took < FAIL_WITHIN, "took {took:?}");
    assert!(output.contains(&missing.display().to_string()), "{output}");
    assert!(output.contains("does not exist"), "{output}");

    // A file where a directory should be (also what a read-only mount looks like to root).
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let inside = file.join("haico.db");
    let (_, output) = start_fails(&format!("sqlite:{}", inside.display()), &[], FAIL_WITHIN);
    assert!(output.contains(&inside.display().to_string()), "{output}");
    assert!(output.contains("is not a directory"), "{output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_whose_model_is_unreachable_ends_fast_naming_the_url_and_settings() {
    let tdb = TestDb::new(common::Engine::Sqlite).await;
    let base_url = format!("http://127.0.0.1:{}/v1", shut_port());
    let server = ChildServer::start(
        &tdb.url,
        &[
            ("HAICO_LLM_PROVIDER", "openai"),
            ("HAICO_LLM_BASE_URL", &base_url),
            ("HAICO_LLM_MODEL", "some-model"),
        ],
    )
    .await;
    let created = server
        .http
        .post(server.url("/api/threads"))
        .json(&json!({"id": "chat"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status().as_u16(), 201);
    let started = Instant::now();
    let mut events = SseReader::post(
        &server.http,
        &server.url("/api/threads/chat/chat"),
        &json!({"message": "hello"}),
    )
    .await;
    let mut seen = Vec::new();
    loop {
        let frame = events.next(Duration::from_secs(10)).await;
        let end = frame.event == "done" || frame.event == "error";
        seen.push(frame);
        if end {
            break;
        }
    }
    let took = started.elapsed();
    let text = seen
        .iter()
        .map(|f| f.data.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    eprintln!("a turn against a shut port ended in {took:?}: {text}");
    assert!(
        took < Duration::from_secs(2),
        "a shut port took {took:?}: {text}"
    );
    assert!(
        text.contains(&format!("{base_url}/chat/completions")),
        "{text}"
    );
    for setting in [
        "HAICO_LLM_BASE_URL",
        "HAICO_LLM_PROVIDER",
        "HAICO_LLM_MODEL",
    ] {
        assert!(text.contains(setting), "no {setting} in: {text}");
    }
    drop(server);
    tdb.cleanup().await;
}
