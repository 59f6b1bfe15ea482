//! The cross-site policy and the rate limits against a real server, on SQLite and PostgreSQL:
//! another site's page, a DNS-rebinding page and a forged form change nothing (REST and MCP
//! alike), while the server's own page, plain clients without `Origin`, allow-listed sites and
//! configured public names keep working; every API answer carries the inert-content headers
//! and the web UI keeps its own policy; chat turns and sign-ins past their limit answer `429`
//! with `Retry-After` and are let in again after it.

use crate::common;
use crate::common::agent as agent_support;

use std::{num::NonZeroU32, time::Duration};

use agent_support::*;
use common::mock_llm::Script;
use common::{
    Engine, TestDb,
    server::{RawAnswer, Reply, TestServer},
};
use haico::http::{HttpConfig, OriginPolicy, RateLimit, RateLimits};
use reqwest::{Method, header};
use serde_json::{Value, json};

const EVIL: &str = "http://evil.example";

/// A request with these headers (and a JSON body, when one is given).
async fn send(
    server: &TestServer,
    method: Method,
    path: &str,
    headers: &[(header::HeaderName, &str)],
    body: Option<(&str, String)>,
) -> Reply {
    let mut request = server.client.request(method, server.url(path));
    for (name, value) in headers {
        request = request.header(name.clone(), *value);
    }
    if let Some((content_type, body)) = body {
        request = request
            .header(header::CONTENT_TYPE, content_type)
            .body(body);
    }
    TestServer::read(request.send().await.unwrap()).await
}

fn json_body(value: Value) -> Option<(&'static str, String)> {
    Some(("application/json", value.to_string()))
}

/// The ids of every thread, for "nothing was made" checks.
async fn thread_ids(server: &TestServer) -> Vec<String> {
    let list = server.get("/api/threads").await.expect(200);
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

/// `initialize`, as an MCP client opens a session.
fn initialize() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string()
}

async fn mcp_initialize(
    server: &TestServer,
    thread: &str,
    headers: &[(header::HeaderName, &str)],
) -> RawAnswer {
    let mut request = server
        .client
        .post(server.url(&format!("/mcp/{thread}")))
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::CONTENT_TYPE, "application/json")
        .body(initialize());
    for (name, value) in headers {
        request = request.header(name.clone(), *value);
    }
    RawAnswer::read(request.send().await.unwrap()).await
}

fn config(origins: OriginPolicy) -> HttpConfig {
    HttpConfig {
        origins,
        ..HttpConfig::default()
    }
}

backend_tests! {
    async fn foreign_pages_and_forged_forms_change_nothing(engine) {
        let db = TestDb::new(engine).await;
        let server = TestServer::start(&db.db).await;
        server.create_thread("mine").await;
        server
            .request(Method::PUT, "/api/threads/mine/objective", Some(&json!({"objective": "Mine."})))
            .await
            .expect(200);

        // Another site's page posts a "simple" request: refused for its Origin.
        let text = send(
            &server, Method::POST, "/api/threads", &[(header::ORIGIN, EVIL)],
            Some(("text/plain", r#"{"id": "theirs"}"#.to_string())),
        )
        .await
        .error(403);
        assert!(text.contains("HAICO_ALLOWED_ORIGINS"), "{text}");
        // The same without Origin (an old browser, a forged form elsewhere): not JSON, so 415.
        let text = send(
            &server, Method::POST, "/api/threads", &[],
            Some(("text/plain", r#"{"id": "theirs"}"#.to_string())),
        )
        .await
        .error(415);
        assert!(text.contains("application/json"), "{text}");
        send(
            &server, Method::POST, "/api/threads", &[],
            Some(("application/x-www-form-urlencoded", "id=theirs".to_string())),
        )
        .await
        .error(415);
        // JSON from a foreign page, a body-less write from one, and an Origin of `null`.
        send(&server, Method::POST, "/api/threads", &[(header::ORIGIN, EVIL)], json_body(json!({"id": "theirs"})))
            .await
            .error(403);
        send(&server, Method::POST, "/api/threads", &[(header::ORIGIN, EVIL)], None).await.error(403);
        send(&server, Method::POST, "/api/threads", &[(header::ORIGIN, "null")], None).await.error(403);
        send(&server, Method::DELETE, "/api/threads/mine", &[(header::ORIGIN, EVIL)], None).await.error(403);

        // DNS rebinding: the page is same-origin in the browser's eyes, but names itself.
        let text = send(
            &server, Method::PUT, "/api/threads/mine/objective",
            &[(header::HOST, "evil.example:8080"), (header::ORIGIN, "http://evil.example:8080")],
            json_body(json!({"objective": "Theirs."})),
        )
        .await
        .error(403);
        assert!(text.contains("HAICO_PUBLIC_HOSTS") && text.contains("evil.example"), "{text}");
        send(
            &server, Method::PUT, "/api/threads/mine/objective", &[(header::HOST, "evil.example")],
            json_body(json!({"objective": "Theirs."})),
        )
        .await
        .error(403);
        // Reading through a rebound name is refused too.
        send(&server, Method::GET, "/api/threads/mine/objective", &[(header::HOST, "evil.example")], None)
            .await
            .error(403);
        // A forwarded name is not believed unless configured.
        send(
            &server, Method::PUT, "/api/threads/mine/objective",
            &[(header::HeaderName::from_static("x-forwarded-host"), "evil.example")],
            json_body(json!({"objective": "Theirs."})),
        )
        .await
        .expect(200);
        server
            .request(Method::PUT, "/api/threads/mine/objective", Some(&json!({"objective": "Mine."})))
            .await
            .expect(200);

        // MCP: a foreign page or a rebound name gets no session (and makes no thread).
        let answer = mcp_initialize(&server, "via-mcp", &[(header::ORIGIN, EVIL)]).await;
        assert_eq!(answer.status, 403, "{:?}", String::from_utf8_lossy(&answer.body));
        assert!(answer.headers.get("mcp-session-id").is_none());
        assert!(answer.json()["error"].as_str().unwrap().contains("HAICO_ALLOWED_ORIGINS"));
        let answer = mcp_initialize(&server, "via-mcp", &[(header::HOST, "evil.example")]).await;
        assert_eq!(answer.status, 403);

        assert_eq!(thread_ids(&server).await, ["mine"]);
        let objective = server.get("/api/threads/mine/objective").await.expect(200);
        assert_eq!(objective["objective"], "Mine.");

        // The same MCP client without a foreign Origin gets its session.
        let answer = mcp_initialize(&server, "via-mcp", &[]).await;
        assert_eq!(answer.status, 200);
        assert!(answer.headers.get("mcp-session-id").is_some());
        server.shutdown().await;
        db.cleanup().await;
    }
}

backend_tests! {
    async fn a_foreign_page_cannot_cancel_a_running_turn(engine) {
        let setup = Setup::openai(
            engine,
            vec![Script::text("A long answer that goes on and on").stall_after(2)],
        )
        .await;
        let server = &setup.server;
        server.create_thread("busy").await;
        let mut chat = setup.chat("busy", "Talk for a while").await;
        until_event(&mut chat, "token").await;

        send(server, Method::POST, "/api/threads/busy/cancel", &[(header::ORIGIN, EVIL)], None)
            .await
            .error(403);
        send(
            server, Method::POST, "/api/threads/busy/cancel", &[],
            Some(("text/plain", "{}".to_string())),
        )
        .await
        .error(415);
        assert_eq!(turn_of(&setup.messages("busy").await, 1)["status"], "running");

        // The server's own page cancels it, body-less as a plain `fetch` does.
        let own = format!("http://{}", server.addr);
        let reply = send(server, Method::POST, "/api/threads/busy/cancel", &[(header::ORIGIN, &own)], None).await;
        assert_eq!(reply.expect(202), json!({"cancelled": true}));
        until_done(&mut chat).await;
        assert_eq!(turn_of(&setup.messages("busy").await, 1)["status"], "cancelled");
        setup.cleanup().await;
    }
}

backend_tests! {
    async fn own_pages_plain_clients_and_configured_sites_work(engine) {
        let db = TestDb::new(engine).await;
        let server = TestServer::with_config(
            &db.db,
            config(
                OriginPolicy::new(
                    &["haico.example.org".to_string()],
                    &["https://app.example.org".to_string()],
                    false,
                )
                .unwrap(),
            ),
        )
        .await;
        let port = server.addr.port();
        let own = format!("http://{}", server.addr);
        let localhost = format!("localhost:{port}");
        let localhost_origin = format!("http://localhost:{port}");
        let cases: [(&str, Vec<(header::HeaderName, &str)>); 6] = [
            ("own-page", vec![(header::ORIGIN, own.as_str())]),
            ("curl", vec![]),
            ("by-localhost", vec![(header::HOST, &localhost), (header::ORIGIN, &localhost_origin)]),
            ("allowed-site", vec![(header::ORIGIN, "https://app.example.org")]),
            ("public-name", vec![(header::HOST, "haico.example.org"), (header::ORIGIN, "https://haico.example.org")]),
            ("ipv6-name", vec![(header::HOST, "[::1]:9"), (header::ORIGIN, "http://[::1]:9")]),
        ];
        for (id, headers) in &cases {
            send(&server, Method::POST, "/api/threads", headers, json_body(json!({"id": id})))
                .await
                .expect(201);
            let path = format!("/api/threads/{id}/objective");
            send(&server, Method::PUT, &path, headers, json_body(json!({"objective": id})))
                .await
                .expect(200);
            send(&server, Method::GET, &path, headers, None).await.expect(200);
        }
        // An empty body needs no content type (a new thread with defaults; cancel with nothing
        // running reaches its handler).
        send(&server, Method::POST, "/api/threads", &[(header::ORIGIN, own.as_str())], None)
            .await
            .expect(201);
        send(&server, Method::POST, "/api/threads/curl/cancel", &[], None).await.error(409);
        // A site not on the list, and the public name's look-alike, stay out.
        send(&server, Method::POST, "/api/threads", &[(header::ORIGIN, "https://app.example.org.evil.example")], None)
            .await
            .error(403);
        send(&server, Method::GET, "/api/threads", &[(header::HOST, "haico.example.org.evil.example")], None)
            .await
            .error(403);
        let ids = thread_ids(&server).await;
        assert_eq!(ids.len(), cases.len() + 1, "{ids:?}");
        // MCP from the allowed site works like the API.
        let answer = mcp_initialize(&server, "curl", &[(header::ORIGIN, "https://app.example.org")]).await;
        assert_eq!(answer.status, 200);
        server.shutdown().await;

        // Behind a proxy that says so, the forwarded name is the one that counts.
        let server = TestServer::with_config(
            &db.db,
            config(OriginPolicy::new(&["haico.example.org".to_string()], &[], true).unwrap()),
        )
        .await;
        let forwarded = header::HeaderName::from_static("x-forwarded-host");
        send(
            &server, Method::PUT, "/api/threads/curl/objective",
            &[(forwarded.clone(), "haico.example.org"), (header::ORIGIN, "https://haico.example.org")],
            json_body(json!({"objective": "Through the proxy."})),
        )
        .await
        .expect(200);
        send(&server, Method::GET, "/api/threads", &[(forwarded, "evil.example")], None)
            .await
            .error(403);
        server.shutdown().await;
        db.cleanup().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_answers_are_inert_and_the_ui_keeps_its_policy() {
    let db = TestDb::new(Engine::Sqlite).await;
    let server = TestServer::start(&db.db).await;
    for (path, status) in [("/api/threads", 200), ("/api/nope", 404), ("/healthz", 200)] {
        let answer =
            RawAnswer::read(server.client.get(server.url(path)).send().await.unwrap()).await;
        assert_eq!(answer.status, status, "{path}");
        assert_eq!(
            answer.header(header::X_CONTENT_TYPE_OPTIONS),
            Some("nosniff"),
            "{path}"
        );
        assert_eq!(
            answer.header(header::CONTENT_SECURITY_POLICY),
            Some(haico::http::API_CONTENT_SECURITY_POLICY),
            "{path}"
        );
        assert_eq!(
            answer.header(header::X_FRAME_OPTIONS),
            Some("DENY"),
            "{path}"
        );
    }
    // A refusal carries them too.
    let refused = RawAnswer::read(
        server
            .client
            .get(server.url("/api/threads"))
            .header(header::ORIGIN, EVIL)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.header(header::X_CONTENT_TYPE_OPTIONS),
        Some("nosniff")
    );
    // The web UI's page keeps its own policy.
    let page = RawAnswer::read(server.client.get(server.url("/")).send().await.unwrap()).await;
    assert_eq!(
        page.header(header::CONTENT_SECURITY_POLICY),
        Some(haico::http::ui::CONTENT_SECURITY_POLICY)
    );
    assert_eq!(page.header(header::X_CONTENT_TYPE_OPTIONS), Some("nosniff"));
    server.shutdown().await;
    db.cleanup().await;
}

/// Two at once, then one a second.
fn two_a_second() -> Option<RateLimit> {
    Some(RateLimit {
        burst: NonZeroU32::new(2).unwrap(),
        every: Duration::from_secs(1),
    })
}

/// A POST with a JSON body, read whole (a chat turn's answer is an event stream).
async fn post(server: &TestServer, path: &str, body: &Value) -> RawAnswer {
    RawAnswer::read(
        server
            .client
            .post(server.url(path))
            .json(body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// Sends `request` until it is refused with `429` (a bounded number of times); the refusal,
/// checked for its `{"error"}` body naming the setting.
async fn until_limited(what: &str, mut request: impl AsyncFnMut() -> RawAnswer) -> RawAnswer {
    for _ in 0..10 {
        let answer = request().await;
        if answer.status == 429 {
            let body = answer.json();
            let text = body["error"].as_str().unwrap();
            assert!(text.contains("PER_MINUTE"), "{what}: {text}");
            return answer;
        }
    }
    panic!("{what}: never limited");
}

backend_tests! {
    async fn chat_turns_and_sign_ins_past_their_limit_wait(engine) {
        let db = TestDb::new(engine).await;
        let server = TestServer::with_config(
            &db.db,
            HttpConfig {
                rate_limits: RateLimits { chat_turns: two_a_second(), sign_ins: two_a_second(), study_entries: None },
                ..HttpConfig::default()
            },
        )
        .await;
        server.create_thread("talk").await;
        let chat = ("/api/threads/talk/chat", json!({"message": "hello"}));
        let sign_in = ("/api/session", json!({"name": "nobody", "password": "wrong"}));
        for (path, body) in [&chat, &sign_in] {
            let first = post(&server, path, body).await;
            assert_ne!(first.status, 429, "{path}: the first is let in");
            let refused = until_limited(path, async || post(&server, path, body).await).await;
            // The answer says how long to wait, and after that the caller is let in again.
            let wait: u64 = refused.header(header::RETRY_AFTER).unwrap().parse().unwrap();
            assert!((1..=2).contains(&wait), "{path}: Retry-After {wait}");
            tokio::time::sleep(Duration::from_secs(wait)).await;
            let again = post(&server, path, body).await;
            assert_ne!(again.status, 429, "{path}: let in after Retry-After");
        }
        // Nothing else is limited: reads go on.
        for _ in 0..20 {
            server.get("/api/threads/talk").await.expect(200);
        }
        server.shutdown().await;
        db.cleanup().await;
    }
}
