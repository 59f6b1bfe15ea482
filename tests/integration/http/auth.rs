//! The optional bearer token (`HAICO_API_TOKEN`) against a real server on SQLite: with a token,
//! `/healthz` stays open and every other route answers `401` (with `WWW-Authenticate: Bearer`
//! and an `{"error"}` body, changing nothing) until the right `Authorization: Bearer` header is
//! sent; `?access_token=` works on the events stream only. Without a token, everything is open.
//! (The web UI's static shell is open too; `tests/integration/http/ui.rs` checks that.)

use crate::common;

use common::{
    Engine, TestDb,
    server::{RawAnswer as Answer, TestServer},
};
use haico::http::{ApiToken, HttpConfig};
use reqwest::{Method, StatusCode, header};
use serde_json::{Value, json};

/// The token, with characters that need percent-encoding in a query string.
const TOKEN: &str = "s3cret-Token_with.punct~+/=";

/// How a request authenticates.
#[derive(Debug, Clone, Copy)]
enum Auth {
    None,
    Bearer(&'static str),
    /// A raw `Authorization` header value.
    Header(&'static str),
}

/// Assertions on answers of the token check.
impl Answer {
    fn content_type(&self) -> &str {
        self.header(header::CONTENT_TYPE).unwrap_or("")
    }

    /// Asserts a `401` with a Bearer challenge and an `{"error": "…"}` body.
    #[track_caller]
    fn assert_unauthorized(&self, what: &str) {
        assert_eq!(
            self.status,
            StatusCode::UNAUTHORIZED,
            "{what}: expected 401, body {:?}",
            String::from_utf8_lossy(&self.body)
        );
        let challenge = self
            .header(header::WWW_AUTHENTICATE)
            .unwrap_or_else(|| panic!("{what}: 401 without WWW-Authenticate"));
        assert!(
            challenge.starts_with("Bearer"),
            "{what}: challenge {challenge:?}"
        );
        assert!(
            self.content_type().starts_with("application/json"),
            "{what}"
        );
        let body = self.json();
        let obj = body.as_object().unwrap();
        assert_eq!(obj.len(), 1, "{what}: {body}");
        assert!(
            !body["error"].as_str().unwrap().trim().is_empty(),
            "{what}: {body}"
        );
    }
}

/// Sends one request. Event streams (which never end) are read up to their headers only.
async fn send(
    server: &TestServer,
    method: Method,
    path: &str,
    auth: Auth,
    body: Option<&Value>,
) -> Answer {
    let mut request = server.client.request(method, server.url(path));
    request = match auth {
        Auth::None => request,
        Auth::Bearer(token) => request.bearer_auth(token),
        Auth::Header(value) => request.header(header::AUTHORIZATION, value),
    };
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.expect("request sent");
    let streaming = path.ends_with("/events") || path.contains("/events?");
    if streaming && response.status() == StatusCode::OK {
        Answer::head(&response)
    } else {
        Answer::read(response).await
    }
}

/// Every route the API serves, as (method, concrete path, body), for thread `t` with a
/// preference, a step and an artifact of id `id`.
fn every_route(pref: i64, todo: i64, artifact: i64) -> Vec<(Method, String, Option<Value>)> {
    let t = "/api/threads/t";
    vec![
        (Method::GET, "/metrics".into(), None),
        (Method::GET, "/api/openapi.json".into(), None),
        (Method::GET, "/api/info".into(), None),
        (
            Method::POST,
            "/api/markdown".into(),
            Some(json!({"markdown": "*hi*"})),
        ),
        (Method::GET, "/api/tools".into(), None),
        (Method::GET, "/api/threads".into(), None),
        (
            Method::POST,
            "/api/threads".into(),
            Some(json!({"id": "x"})),
        ),
        (Method::GET, t.into(), None),
        (Method::PATCH, t.into(), Some(json!({"title": "Renamed"}))),
        (Method::DELETE, t.into(), None),
        (Method::GET, format!("{t}/workspace"), None),
        (Method::GET, format!("{t}/objective"), None),
        (
            Method::PUT,
            format!("{t}/objective"),
            Some(json!({"objective": "Hijack"})),
        ),
        (Method::GET, format!("{t}/document"), None),
        (
            Method::PUT,
            format!("{t}/document"),
            Some(json!({"content": "Hijack"})),
        ),
        (Method::GET, format!("{t}/todos"), None),
        (
            Method::POST,
            format!("{t}/todos"),
            Some(json!({"text": "Hijack"})),
        ),
        (
            Method::PATCH,
            format!("{t}/todos/{todo}"),
            Some(json!({"done": true})),
        ),
        (Method::DELETE, format!("{t}/todos/{todo}"), None),
        (Method::GET, format!("{t}/preferences"), None),
        (
            Method::POST,
            format!("{t}/preferences"),
            Some(json!({"title": "Hijack"})),
        ),
        (
            Method::PATCH,
            format!("{t}/preferences/{pref}"),
            Some(json!({"locked": false})),
        ),
        (Method::DELETE, format!("{t}/preferences/{pref}"), None),
        (Method::GET, format!("{t}/artifacts"), None),
        (Method::GET, format!("{t}/artifacts/{artifact}"), None),
        (
            Method::GET,
            format!("{t}/artifacts/{artifact}/chart.svg"),
            None,
        ),
        (
            Method::GET,
            format!("{t}/artifacts/{artifact}/chart.png"),
            None,
        ),
        (Method::GET, format!("{t}/messages"), None),
        // Before the chat: with no turn running, cancel answers 409 (after a turn it could
        // still catch the turn's last instant).
        (Method::POST, format!("{t}/cancel"), None),
        (
            Method::POST,
            format!("{t}/chat"),
            Some(json!({"message": "hello"})),
        ),
        (Method::GET, format!("{t}/events"), None),
        (Method::GET, format!("{t}/history"), None),
        (Method::GET, format!("{t}/document/diff?from=0"), None),
        (
            Method::POST,
            format!("{t}/restore"),
            Some(json!({"rev": 0, "panels": ["objective"]})),
        ),
        // After the chat: turn 1 exists (it changed nothing, so there is nothing to undo).
        (Method::POST, format!("{t}/turns/1/revert"), None),
        (Method::POST, format!("{t}/fork"), Some(json!({"id": "f"}))),
        (Method::GET, format!("{t}/export"), None),
        // The walk sends JSON; an import takes JSON Lines: let in, it is refused as 415.
        (Method::POST, "/api/threads/import".into(), Some(json!({}))),
        (
            Method::POST,
            format!("{t}/tools/set_objective"),
            Some(json!({"action_and_reasoning": "Hijack.", "objective": "Hijack"})),
        ),
        (
            Method::POST,
            "/mcp/t".into(),
            Some(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
        ),
        // Paths the router does not know are refused before routing reveals anything.
        (Method::GET, "/api/nope".into(), None),
    ]
}

/// Builds thread `t` with a locked preference, a step and a chart; returns their ids.
async fn populate(server: &TestServer, auth: Auth) -> (i64, i64, i64) {
    let created = send(
        server,
        Method::POST,
        "/api/threads",
        auth,
        Some(&json!({"id": "t"})),
    )
    .await;
    assert_eq!(created.status, 201, "{:?}", created.json());
    let pref = send(
        server,
        Method::POST,
        "/api/threads/t/preferences",
        auth,
        Some(&json!({"title": "Keep it short", "locked": true})),
    )
    .await;
    assert_eq!(pref.status, 201);
    let todo = send(
        server,
        Method::POST,
        "/api/threads/t/todos",
        auth,
        Some(&json!({"text": "First step"})),
    )
    .await;
    assert_eq!(todo.status, 201);
    let chart = send(
        server,
        Method::POST,
        "/api/threads/t/tools/chart_generator",
        auth,
        Some(&json!({
            "action_and_reasoning": "Draw it.",
            "chart_type": "bar",
            "title": "Sales",
            "data": {"labels": ["a", "b"], "series": [{"name": "s", "values": [1, 2]}]},
        })),
    )
    .await;
    assert_eq!(chart.status, 200);
    let envelope = chart.json();
    assert_eq!(envelope["success"], json!(true), "{envelope}");
    (
        pref.json()["id"].as_i64().unwrap(),
        todo.json()["id"].as_i64().unwrap(),
        envelope["artifact_id"].as_i64().unwrap(),
    )
}

/// Walks every route with `auth`, each answering its success status (cancel, with no turn
/// running, its `409`): what a client that is let in sees.
async fn walk_every_route(server: &TestServer, auth: Auth) {
    let health = send(server, Method::GET, "/healthz", auth, None).await;
    assert_eq!(health.status, 200);
    let (pref, todo, artifact) = populate(server, auth).await;
    let mut routes = every_route(pref, todo, artifact);
    // Deleting the thread last, so the other routes find it.
    let delete_thread = routes
        .iter()
        .position(|(m, p, _)| *m == Method::DELETE && p == "/api/threads/t")
        .unwrap();
    let delete_thread = routes.remove(delete_thread);
    // Item deletes after the item updates (they come in that order already).
    routes.push(delete_thread);
    let mut saw_chat = false;
    for (method, path, body) in routes {
        let answer = send(server, method.clone(), &path, auth, body.as_ref()).await;
        let creates = method == Method::POST
            && (path == "/api/threads"
                || path.ends_with("/todos")
                || path.ends_with("/preferences")
                || path.ends_with("/fork"));
        if path.starts_with("/mcp/") {
            // The MCP library answers in its own terms; what matters here is that it is reached.
            assert_ne!(answer.status, 401, "{method} {path}");
            continue;
        }
        let expected = if path == "/api/nope" {
            404
        } else if creates {
            201
        } else if method == Method::DELETE {
            204
        } else if path.ends_with("/cancel") || path.ends_with("/revert") {
            409
        } else if path == "/api/threads/import" {
            415
        } else {
            200
        };
        assert_eq!(
            answer.status.as_u16(),
            expected,
            "{method} {path}: {:?}",
            String::from_utf8_lossy(&answer.body)
        );
        if path.ends_with("/chat") {
            saw_chat = true;
            assert!(answer.content_type().starts_with("text/event-stream"));
            let text = String::from_utf8_lossy(&answer.body);
            assert!(
                text.contains("event: done"),
                "the turn ran to its end: {text}"
            );
        }
        if path.ends_with("/events") {
            assert!(answer.content_type().starts_with("text/event-stream"));
        }
        if path == "/metrics" {
            assert!(answer.content_type().starts_with("text/plain"));
        }
    }
    assert!(saw_chat);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_only_healthz_is_open() {
    let tdb = TestDb::new(Engine::Sqlite).await;
    let server = TestServer::with_token(&tdb.db, TOKEN).await;

    // Health checks need no credentials.
    let health = send(&server, Method::GET, "/healthz", Auth::None, None).await;
    assert_eq!(health.status, 200);
    assert_eq!(health.json(), json!({"status": "ok"}));
    let health = send(
        &server,
        Method::GET,
        "/healthz",
        Auth::Bearer("wrong"),
        None,
    )
    .await;
    assert_eq!(
        health.status, 200,
        "a wrong token does not break health checks"
    );

    let (pref, todo, artifact) = populate(&server, Auth::Bearer(TOKEN)).await;
    let before = send(
        &server,
        Method::GET,
        "/api/threads/t/workspace",
        Auth::Bearer(TOKEN),
        None,
    )
    .await
    .json();

    let refused = [
        ("no token", Auth::None),
        ("a wrong token", Auth::Bearer("s3cret-Token_with.punct~+/")),
        (
            "a longer wrong token",
            Auth::Bearer("s3cret-Token_with.punct~+/=="),
        ),
        (
            "the token in lower case",
            Auth::Header("Bearer s3cret-token_with.punct~+/="),
        ),
        ("another scheme", Auth::Header("Basic czNjcmV0")),
        ("the token without a scheme", Auth::Header(TOKEN)),
        ("an empty bearer", Auth::Header("Bearer ")),
    ];
    for (what, auth) in refused {
        for (method, path, body) in every_route(pref, todo, artifact) {
            let answer = send(&server, method.clone(), &path, auth, body.as_ref()).await;
            answer.assert_unauthorized(&format!("{method} {path} with {what}"));
        }
    }
    // Nothing the refused requests asked for happened.
    let after = send(
        &server,
        Method::GET,
        "/api/threads/t/workspace",
        Auth::Bearer(TOKEN),
        None,
    )
    .await;
    assert_eq!(
        after.status, 200,
        "the refused DELETE did not delete the thread"
    );
    assert_eq!(after.json(), before);
    let threads = send(
        &server,
        Method::GET,
        "/api/threads",
        Auth::Bearer(TOKEN),
        None,
    )
    .await;
    assert_eq!(
        threads.json().as_array().unwrap().len(),
        1,
        "no thread `x` was made"
    );

    // The scheme is case-insensitive, as HTTP says.
    let lower = send(
        &server,
        Method::GET,
        "/api/threads",
        Auth::Header("bearer s3cret-Token_with.punct~+/="),
        None,
    )
    .await;
    assert_eq!(lower.status, 200);

    server.shutdown().await;
    tdb.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_every_route_answers_the_token() {
    let tdb = TestDb::new(Engine::Sqlite).await;
    let server = TestServer::with_token(&tdb.db, TOKEN).await;
    walk_every_route(&server, Auth::Bearer(TOKEN)).await;
    server.shutdown().await;
    tdb.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn access_token_query_works_on_the_events_stream_only() {
    let tdb = TestDb::new(Engine::Sqlite).await;
    let server = TestServer::with_token(&tdb.db, TOKEN).await;
    populate(&server, Auth::Bearer(TOKEN)).await;

    let url = |path: &str, token: &str| {
        reqwest::Url::parse_with_params(&server.url(path), &[("access_token", token)])
            .unwrap()
            .to_string()
    };
    let get = |url: String| {
        let client = server.client.clone();
        async move { client.get(url).send().await.unwrap() }
    };

    // The events stream takes the token from the query (percent-encoded), also with a resume
    // position beside it.
    let events = get(url("/api/threads/t/events", TOKEN)).await;
    assert_eq!(events.status(), 200);
    assert!(
        events.headers()[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    drop(events);
    let resumed = get(format!(
        "{}&last_event_id=0",
        url("/api/threads/t/events", TOKEN)
    ))
    .await;
    assert_eq!(resumed.status(), 200);
    drop(resumed);

    // A wrong or empty one is refused.
    for bad in ["wrong", "", "s3cret-Token_with.punct~ /="] {
        let answer = send(
            &server,
            Method::GET,
            &url("/api/threads/t/events", bad).replace(&server.url(""), ""),
            Auth::None,
            None,
        )
        .await;
        answer.assert_unauthorized(&format!("events with access_token={bad:?}"));
    }
    // A header, when present, is what counts.
    let answer = send(
        &server,
        Method::GET,
        &url("/api/threads/t/events", TOKEN).replace(&server.url(""), ""),
        Auth::Bearer("wrong"),
        None,
    )
    .await;
    answer.assert_unauthorized("events with a wrong header and a right query token");

    // Every other route ignores it.
    for (method, path) in [
        (Method::GET, "/api/threads"),
        (Method::GET, "/api/threads/t"),
        (Method::GET, "/api/threads/t/workspace"),
        (Method::GET, "/api/threads/t/messages"),
        (Method::GET, "/metrics"),
        (Method::GET, "/api/openapi.json"),
        (Method::POST, "/api/threads/t/chat"),
        (Method::POST, "/api/threads/t/cancel"),
    ] {
        let path = url(path, TOKEN).replace(&server.url(""), "");
        let body = (method == Method::POST).then(|| json!({"message": "hi"}));
        let answer = send(&server, method.clone(), &path, Auth::None, body.as_ref()).await;
        answer.assert_unauthorized(&format!("{method} {path}"));
    }

    server.shutdown().await;
    tdb.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_token_everything_is_open() {
    let tdb = TestDb::new(Engine::Sqlite).await;
    let server = TestServer::start(&tdb.db).await;
    walk_every_route(&server, Auth::None).await;
    // A stray Authorization header does not matter when no token is configured.
    let answer = send(
        &server,
        Method::GET,
        "/api/threads",
        Auth::Bearer("anything"),
        None,
    )
    .await;
    assert_eq!(answer.status, 200);
    server.shutdown().await;
    tdb.cleanup().await;
}

#[test]
fn unusable_tokens_are_refused_at_configuration() {
    assert!(ApiToken::new("").is_err());
    assert!(ApiToken::new("has space").is_err());
    assert!(ApiToken::new("nul\0").is_err());
    assert!(ApiToken::new("ümlaut").is_err());
    assert!(ApiToken::new(TOKEN).is_ok());
    // The token never shows in logs.
    let shown = format!(
        "{:?}",
        HttpConfig {
            api_token: Some(ApiToken::new(TOKEN).unwrap()),
            ..HttpConfig::default()
        }
    );
    assert!(!shown.contains(TOKEN), "{shown}");
}

#[test]
fn the_token_is_configured_by_flag_or_variable_and_never_shown() {
    let haico = env!("CARGO_BIN_EXE_haico");
    let help = std::process::Command::new(haico)
        .args(["serve", "--help"])
        .env("HAICO_API_TOKEN", "topsecret-value")
        .output()
        .unwrap();
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("--api-token"), "{text}");
    assert!(text.contains("HAICO_API_TOKEN"), "{text}");
    assert!(
        !text.contains("topsecret-value"),
        "help shows the token: {text}"
    );

    // An empty token is a mistake, not "no token": the server refuses to start.
    let empty = std::process::Command::new(haico)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("HAICO_API_TOKEN", "")
        .env("HAICO_DATABASE_URL", "sqlite::memory:")
        .output()
        .unwrap();
    assert!(!empty.status.success());
    let err = String::from_utf8_lossy(&empty.stderr);
    assert!(err.contains("empty"), "{err}");
}
