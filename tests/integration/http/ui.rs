//! The server side of the web UI against a real server: the static shell (`/`, `/t/{id}`,
//! `/assets/…`) with its content types, ETags, `304`s and security headers, open without a
//! token while `/api` is not; `GET /api/info`; Markdown rendered to sanitised HTML
//! (`POST /api/markdown`, `?html=true` on the document, the workspace and the messages, on
//! both engines); and response compression, which must never touch an event stream.
//!
//! The shell is the real `ui/` (debug builds read it from disk): these tests read
//! the files to compare, and never write there.

use crate::common;

use std::{
    io::Read,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use common::{
    Engine, TestDb,
    server::{RawAnswer as Raw, TestServer, key_set, keys, setup, teardown},
    sse::SseReader,
};
use haico::{
    agent::{
        AgentConfig,
        providers::replay::{ReplayModel, ReplayResponse, ReplayScript},
    },
    http::AppState,
};
use reqwest::{Method, StatusCode, header};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' \
                   blob: data:; connect-src 'self'; font-src 'self'; object-src 'none'; \
                   base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const TOKEN: &str = "ui-test-token";

/// The folder the shell is served from (read only).
fn assets_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("ui")
}

/// A file of the shell, as on disk; fails with a clear message when it is not there.
fn asset_bytes(relative: &str) -> Vec<u8> {
    let path = assets_dir().join(relative);
    std::fs::read(&path).unwrap_or_else(|err| {
        panic!(
            "{} is needed by this test and could not be read: {err}",
            path.display()
        )
    })
}

/// Some JavaScript module of the shell (`js/<first by name>.js`).
fn some_js_module() -> String {
    let mut names: Vec<String> = std::fs::read_dir(assets_dir().join("js"))
        .expect("ui/js/ exists")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".js"))
        .collect();
    names.sort();
    let name = names.first().expect("a .js file in ui/js/");
    format!("js/{name}")
}

/// The ETag the server must give a file: its SHA-256 in hex, quoted.
fn expected_etag(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}\"")
}

/// Assertions on UI answers.
impl Raw {
    /// The security headers every UI answer carries.
    #[track_caller]
    fn assert_secured(&self, what: &str) {
        assert_eq!(
            self.header(header::CONTENT_SECURITY_POLICY),
            Some(CSP),
            "{what}"
        );
        assert_eq!(
            self.header(header::X_CONTENT_TYPE_OPTIONS),
            Some("nosniff"),
            "{what}"
        );
        assert_eq!(
            self.header(header::REFERRER_POLICY),
            Some("no-referrer"),
            "{what}"
        );
    }

    /// A `404 {"error"}`.
    #[track_caller]
    fn assert_not_found(&self, what: &str) {
        assert_eq!(self.status, StatusCode::NOT_FOUND, "{what}");
        assert!(
            self.header(header::CONTENT_TYPE)
                .is_some_and(|c| c.starts_with("application/json")),
            "{what}"
        );
        let body = self.json();
        assert_eq!(keys(&body), key_set(&["error"]), "{what}: {body}");
    }
}

/// Sends a request with extra headers and reads the whole raw body (no decoding: the client
/// has no decompression features, so compressed bytes arrive as sent).
async fn raw(
    server: &TestServer,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Raw {
    let mut request = server.client.request(method, server.url(path));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    Raw::read(request.send().await.expect("request sent")).await
}

async fn get(server: &TestServer, path: &str, headers: &[(&str, &str)]) -> Raw {
    raw(server, Method::GET, path, headers, None).await
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("a valid gzip stream");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shell_is_html_with_the_security_headers() {
    let (tdb, server) = setup(Engine::Sqlite).await;
    let index = asset_bytes("index.html");
    for path in ["/", "/t/some-thread", "/t/does-not-exist-yet"] {
        let answer = get(&server, path, &[]).await;
        assert_eq!(answer.status, 200, "{path}");
        assert_eq!(
            answer.header(header::CONTENT_TYPE),
            Some("text/html; charset=utf-8"),
            "{path}"
        );
        answer.assert_secured(path);
        assert_eq!(answer.header(header::CACHE_CONTROL), Some("no-cache"));
        assert_eq!(
            answer.header(header::ETAG),
            Some(expected_etag(&index).as_str())
        );
        assert_eq!(answer.body, index, "{path} answers index.html");
    }
    // HEAD works too, without a body.
    let head = raw(&server, Method::HEAD, "/", &[], None).await;
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    head.assert_secured("HEAD /");
    // The API's answers are not the page's: they get the inert policy instead.
    let api = get(&server, "/api/threads", &[]).await;
    assert_eq!(api.status, 200);
    assert_eq!(
        api.header(header::CONTENT_SECURITY_POLICY),
        Some(haico::http::API_CONTENT_SECURITY_POLICY)
    );
    teardown(tdb, server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn assets_have_their_type_and_etag_and_revalidate() {
    let (tdb, server) = setup(Engine::Sqlite).await;
    let js = some_js_module();
    let files = [
        ("app.css", "text/css; charset=utf-8"),
        ("icon.svg", "image/svg+xml"),
        (js.as_str(), "text/javascript; charset=utf-8"),
        ("index.html", "text/html; charset=utf-8"),
    ];
    for (file, content_type) in files {
        let path = format!("/assets/{file}");
        let bytes = asset_bytes(file);
        let etag = expected_etag(&bytes);
        let answer = get(&server, &path, &[]).await;
        assert_eq!(answer.status, 200, "{path}");
        assert_eq!(
            answer.header(header::CONTENT_TYPE),
            Some(content_type),
            "{path}"
        );
        assert_eq!(answer.header(header::ETAG), Some(etag.as_str()), "{path}");
        assert_eq!(answer.header(header::CACHE_CONTROL), Some("no-cache"));
        answer.assert_secured(&path);
        assert_eq!(answer.body, bytes, "{path} is the file");

        // Revalidation: the same tag (alone, weak, or in a list, or `*`) is a 304 without
        // a body, with the tag and the headers again.
        let weak = format!("W/{etag}");
        let listed = format!("\"something-else\", {etag}");
        for candidate in [etag.as_str(), weak.as_str(), listed.as_str(), "*"] {
            let again = get(&server, &path, &[("if-none-match", candidate)]).await;
            assert_eq!(again.status, 304, "{path} with If-None-Match {candidate}");
            assert!(again.body.is_empty());
            assert_eq!(again.header(header::ETAG), Some(etag.as_str()));
            assert_eq!(again.header(header::CACHE_CONTROL), Some("no-cache"));
            again.assert_secured(&format!("304 of {path}"));
        }
        // A stale tag gets the file.
        let stale = get(&server, &path, &[("if-none-match", "\"stale\"")]).await;
        assert_eq!(stale.status, 200);
        assert_eq!(stale.body, bytes);
    }
    // The page revalidates the same way.
    let etag = expected_etag(&asset_bytes("index.html"));
    let again = get(&server, "/t/x", &[("if-none-match", etag.as_str())]).await;
    assert_eq!(again.status, 304);
    teardown(tdb, server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_assets_are_404_json() {
    let (tdb, server) = setup(Engine::Sqlite).await;
    for path in [
        "/assets/nope.js",
        "/assets/js/nope.js",
        "/assets/..%2fCargo.toml",
        "/assets/js/..%2f..%2f..%2f..%2fCargo.toml",
        "/assets/.hidden",
        "/assets/%5c..%5cCargo.toml",
    ] {
        let answer = get(&server, path, &[]).await;
        answer.assert_not_found(path);
        answer.assert_secured(path);
    }
    teardown(tdb, server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_the_shell_loads_but_the_api_asks_for_it() {
    let tdb = TestDb::new(Engine::Sqlite).await;
    let server = TestServer::with_token(&tdb.db, TOKEN).await;

    let js = format!("/assets/{}", some_js_module());
    for path in [
        "/",
        "/t/abc",
        "/assets/app.css",
        "/assets/icon.svg",
        js.as_str(),
    ] {
        let answer = get(&server, path, &[]).await;
        assert_eq!(answer.status, 200, "{path} loads without a token");
        answer.assert_secured(path);
    }
    // A wrong token does not break the shell either (it is simply not looked at).
    let answer = get(&server, "/", &[("authorization", "Bearer wrong")]).await;
    assert_eq!(answer.status, 200);
    // A missing asset is a plain 404, not a 401.
    get(&server, "/assets/nope.css", &[])
        .await
        .assert_not_found("missing asset with a token configured");

    // The API is not open: `/api/info` and `/api/markdown` need the token…
    let info = get(&server, "/api/info", &[]).await;
    assert_eq!(info.status, 401);
    assert!(info.header(header::WWW_AUTHENTICATE).is_some());
    let markdown = raw(
        &server,
        Method::POST,
        "/api/markdown",
        &[],
        Some(&json!({"markdown": "x"})),
    )
    .await;
    assert_eq!(markdown.status, 401);
    // … and other methods on the shell's paths too.
    let post = raw(&server, Method::POST, "/", &[], Some(&json!({}))).await;
    assert_eq!(post.status, 401);

    let bearer = format!("Bearer {TOKEN}");
    let info = get(&server, "/api/info", &[("authorization", bearer.as_str())]).await;
    assert_eq!(info.status, 200);
    assert_eq!(info.json()["auth_required"], json!(true));

    server.shutdown().await;
    tdb.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn info_tells_version_model_and_auth() {
    // No model, no token.
    let (tdb, server) = setup(Engine::Sqlite).await;
    let info = server.get("/api/info").await.expect(200);
    assert_eq!(
        keys(&info),
        key_set(&["name", "version", "model", "auth_required"])
    );
    assert_eq!(info["name"], json!("haico"));
    assert_eq!(info["version"], json!(env!("CARGO_PKG_VERSION")));
    assert_eq!(info["auth_required"], json!(false));
    let model = &info["model"];
    assert_eq!(keys(model), key_set(&["configured", "description", "hint"]));
    assert_eq!(model["configured"], json!(false));
    assert!(
        model["description"]
            .as_str()
            .unwrap()
            .starts_with("no language model"),
        "{model}"
    );
    let hint = model["hint"].as_str().unwrap();
    for var in [
        "HAICO_LLM_PROVIDER",
        "HAICO_LLM_MODEL",
        "HAICO_LLM_API_KEY",
        "HAICO_LLM_BASE_URL",
    ] {
        assert!(hint.contains(var), "{hint}");
    }
    server.shutdown().await;

    // A model: configured, described, no hint.
    let state = AppState::with_model(
        tdb.db.clone(),
        Arc::new(replay(&[])),
        AgentConfig::default(),
    );
    let server = TestServer::with_state(state).await;
    let info = server.get("/api/info").await.expect(200);
    assert_eq!(info["model"]["configured"], json!(true));
    assert_eq!(
        keys(&info["model"]),
        key_set(&["configured", "description"])
    );
    assert!(
        info["model"]["description"]
            .as_str()
            .unwrap()
            .starts_with("replay of"),
        "{info}"
    );
    teardown(tdb, server).await;
}

/// A replay model answering `texts`, one per call.
fn replay(texts: &[&str]) -> ReplayModel {
    let script = ReplayScript {
        responses: texts
            .iter()
            .map(|text| ReplayResponse {
                text: (*text).to_string(),
                tool_calls: Vec::new(),
                delay_ms: 0,
                error: None,
                usage: None,
            })
            .collect(),
    };
    ReplayModel::new(Path::new("http-ui-test.json"), script)
}

/// Markdown with something to render and something to strip.
const MARKDOWN: &str = "# Plan\n\nSome **bold** text.\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n\
                        <script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n\
                        [click](javascript:alert(3))\n";

/// Asserts `html` is `MARKDOWN` rendered: the structure is there, nothing active is.
#[track_caller]
fn assert_rendered(html: &Value) {
    let html = html.as_str().unwrap_or_else(|| panic!("html is {html}"));
    for expected in [
        "<h1>Plan</h1>",
        "<strong>bold</strong>",
        "<table>",
        "<td>1</td>",
    ] {
        assert!(html.contains(expected), "{expected} missing in {html}");
    }
    for forbidden in ["<script", "alert", "onerror", "javascript:"] {
        assert!(!html.contains(forbidden), "{forbidden} left in {html}");
    }
}

backend_tests! {
    async fn html_views_render_the_document_and_answers(engine) {
        let tdb = TestDb::new(engine).await;
        let state = AppState::with_model(
            tdb.db.clone(),
            Arc::new(replay(&["Here is **the plan**:\n\n- one\n- two\n\n<script>alert(1)</script>"])),
            AgentConfig::default(),
        );
        let server = TestServer::with_state(state).await;
        server.create_thread("ui").await;

        // No document yet: the workspace has none, with or without html.
        let workspace = server.get("/api/threads/ui/workspace?html=true").await.expect(200);
        assert_eq!(workspace["document"], Value::Null);
        // The empty document renders to nothing.
        let document = server.get("/api/threads/ui/document?html=true").await.expect(200);
        assert_eq!(document["html"], json!(""));
        assert_eq!(document["version"], json!(0));

        server
            .request(
                Method::PUT,
                "/api/threads/ui/document",
                Some(&json!({"title": "Doc", "content": MARKDOWN})),
            )
            .await
            .expect(200);

        // Without `html` (or with `html=false`) the shapes are as before.
        for query in ["", "?html=false"] {
            let document = server
                .get(&format!("/api/threads/ui/document{query}"))
                .await
                .expect(200);
            assert_eq!(keys(&document), key_set(&["title", "content", "version"]));
            let workspace = server
                .get(&format!("/api/threads/ui/workspace{query}"))
                .await
                .expect(200);
            assert_eq!(
                keys(&workspace["document"]),
                key_set(&["title", "content", "version"])
            );
        }
        let document = server.get("/api/threads/ui/document?html=true").await.expect(200);
        assert_eq!(
            keys(&document),
            key_set(&["title", "content", "version", "html"])
        );
        assert_eq!(document["content"], json!(MARKDOWN), "the Markdown is untouched");
        assert_rendered(&document["html"]);
        let workspace = server.get("/api/threads/ui/workspace?html=true").await.expect(200);
        assert_eq!(
            keys(&workspace),
            key_set(&[
                "objective",
                "document",
                "todos",
                "preferences",
                "artifacts",
                "document_mode",
                "suggestions"
            ])
        );
        assert_eq!(workspace["document"]["html"], document["html"]);
        assert_eq!(workspace["document"]["version"], json!(1));

        // A malformed flag is the API's 400.
        server
            .get("/api/threads/ui/document?html=maybe")
            .await
            .error(400);
        server.get("/api/threads/nope/document?html=true").await.error(404);

        // One turn: the user's message, then the assistant's answer.
        let mut events = SseReader::post(
            &server.client,
            &server.url("/api/threads/ui/chat"),
            &json!({"message": "Make a *plan* <script>alert(9)</script>"}),
        )
        .await;
        loop {
            if events.next(Duration::from_secs(30)).await.event == "done" {
                break;
            }
        }

        let turns = server.get("/api/threads/ui/messages").await.expect(200);
        let messages = turns[0]["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 2, "{turns}");
        for message in messages {
            assert!(message.get("html").is_none(), "no html unless asked: {message}");
        }
        let turns = server.get("/api/threads/ui/messages?html=true").await.expect(200);
        let messages = turns[0]["messages"].as_array().unwrap();
        let user = &messages[0];
        assert_eq!(user["role"], json!("user"));
        assert!(user.get("html").is_none(), "the user's message stays text: {user}");
        let assistant = &messages[1];
        assert_eq!(assistant["role"], json!("assistant"));
        assert_eq!(
            keys(assistant),
            key_set(&["id", "role", "content", "created_at", "html"])
        );
        let html = assistant["html"].as_str().unwrap();
        assert!(html.contains("<strong>the plan</strong>"), "{html}");
        assert!(html.contains("<li>one</li>"), "{html}");
        assert!(!html.contains("script") && !html.contains("alert"), "{html}");
        assert_eq!(
            keys(&turns[0]),
            key_set(&["turn_index", "status", "error", "started_at", "finished_at", "messages", "steps", "usage"])
        );

        teardown(tdb, server).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_markdown_endpoint_sanitises() {
    let (tdb, server) = setup(Engine::Sqlite).await;
    let answer = server
        .post("/api/markdown", &json!({"markdown": MARKDOWN}))
        .await
        .expect(200);
    assert_eq!(keys(&answer), key_set(&["html"]));
    assert_rendered(&answer["html"]);

    for attack in [
        "<svg onload=alert(1)>",
        "<iframe src=\"https://evil.example\"></iframe>",
        "<style>body{display:none}</style>",
        "<a href=\"javascript:alert(1)\">x</a>",
        "![x](data:image/svg+xml;base64,PHN2Zz4=)",
    ] {
        let html = server
            .post("/api/markdown", &json!({"markdown": attack}))
            .await
            .expect(200)["html"]
            .as_str()
            .unwrap()
            .to_string();
        // Only markup can act: what is forbidden must not appear in any tag (text shown as
        // written, such as an escaped `&lt;svg onload=…&gt;`, is inert).
        let tags: Vec<&str> = html
            .split('<')
            .skip(1)
            .filter_map(|rest| rest.split('>').next())
            .collect();
        for forbidden in ["svg", "iframe", "style", "javascript:", "data:", "onload"] {
            assert!(
                tags.iter().all(|tag| !tag.contains(forbidden)),
                "{attack} → {html}"
            );
        }
    }
    // Empty is fine; a large one too (rendered off the runtime's workers).
    let empty = server
        .post("/api/markdown", &json!({"markdown": ""}))
        .await
        .expect(200);
    assert_eq!(empty, json!({"html": ""}));
    let large = "## Heading\n\nA paragraph with *emphasis*.\n\n".repeat(5_000);
    let html = server
        .post("/api/markdown", &json!({"markdown": large}))
        .await
        .expect(200);
    assert_eq!(
        html["html"].as_str().unwrap().matches("<h2>").count(),
        5_000
    );

    // Bad bodies: the API's usual errors.
    server
        .post("/api/markdown", &json!({"markdown": "x", "extra": 1}))
        .await
        .error(422);
    server.post("/api/markdown", &json!({})).await.error(422);
    server
        .post("/api/markdown", &json!({"markdown": 5}))
        .await
        .error(422);
    server
        .send_raw(
            Method::POST,
            "/api/markdown",
            Some("application/json"),
            "[\"x\"]",
        )
        .await
        .error(422);
    server
        .send_raw(
            Method::POST,
            "/api/markdown",
            Some("application/json"),
            "{not json",
        )
        .await
        .error(400);
    server
        .send_raw(Method::POST, "/api/markdown", Some("text/plain"), "# hi")
        .await
        .error(415);
    teardown(tdb, server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn assets_and_large_answers_are_compressed_when_asked() {
    let (tdb, server) = setup(Engine::Sqlite).await;
    let js = format!("/assets/{}", some_js_module());
    let plain = asset_bytes(js.trim_start_matches("/assets/"));
    assert!(
        plain.len() > 100,
        "{js} is big enough to be worth compressing"
    );

    let answer = get(&server, &js, &[]).await;
    assert!(answer.header(header::CONTENT_ENCODING).is_none());
    assert_eq!(answer.body, plain);

    let gzip = get(&server, &js, &[("accept-encoding", "gzip")]).await;
    assert_eq!(gzip.status, 200);
    assert_eq!(gzip.header(header::CONTENT_ENCODING), Some("gzip"));
    assert!(
        gzip.header(header::VARY)
            .is_some_and(|v| v.to_ascii_lowercase().contains("accept-encoding"))
    );
    assert_eq!(gunzip(&gzip.body), plain);
    gzip.assert_secured("compressed asset");

    let br = get(&server, &js, &[("accept-encoding", "br")]).await;
    assert_eq!(br.header(header::CONTENT_ENCODING), Some("br"));
    assert_ne!(br.body, plain);

    // A large document: compressed, and the same JSON once decompressed.
    server.create_thread("big").await;
    let content = "A line of the document, repeated to make it large.\n".repeat(4_000);
    server
        .request(
            Method::PUT,
            "/api/threads/big/document",
            Some(&json!({"content": content})),
        )
        .await
        .expect(200);
    let uncompressed = get(&server, "/api/threads/big/document", &[]).await;
    assert!(uncompressed.header(header::CONTENT_ENCODING).is_none());
    let compressed = get(
        &server,
        "/api/threads/big/document",
        &[("accept-encoding", "gzip")],
    )
    .await;
    assert_eq!(compressed.header(header::CONTENT_ENCODING), Some("gzip"));
    assert!(compressed.body.len() * 10 < uncompressed.body.len());
    assert_eq!(gunzip(&compressed.body), uncompressed.body);
    teardown(tdb, server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_streams_are_never_compressed_and_still_stream() {
    let (tdb, server) = setup(Engine::Sqlite).await;
    server.create_thread("live").await;

    let response = server
        .client
        .get(server.url("/api/threads/live/events"))
        .header("accept", "text/event-stream")
        .header("accept-encoding", "gzip, br")
        .send()
        .await
        .unwrap();
    assert!(
        response.headers().get(header::CONTENT_ENCODING).is_none(),
        "the events stream is not compressed: {:?}",
        response.headers()
    );
    let mut events = SseReader::from_response(response);

    // A change made after the stream opened arrives as it happens, not when some encoder's
    // buffer fills up.
    server
        .request(
            Method::PUT,
            "/api/threads/live/objective",
            Some(&json!({"objective": "Stream me"})),
        )
        .await
        .expect(200);
    let frame = events.next(Duration::from_secs(5)).await;
    assert_eq!(frame.event, "workspace", "{frame:?}");
    assert_eq!(frame.data["panels"], json!(["objective"]), "{frame:?}");

    // The chat answer is an event stream too.
    let response = server
        .client
        .post(server.url("/api/threads/live/chat"))
        .header("accept-encoding", "gzip")
        .json(&json!({"message": "hello"}))
        .send()
        .await
        .unwrap();
    assert!(response.headers().get(header::CONTENT_ENCODING).is_none());
    let mut chat = SseReader::from_response(response);
    loop {
        if chat.next(Duration::from_secs(30)).await.event == "done" {
            break;
        }
    }
    drop(events);
    teardown(tdb, server).await;
}
