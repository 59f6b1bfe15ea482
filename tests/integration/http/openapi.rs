//! `GET /api/openapi.json` against a real server on SQLite: a valid OpenAPI 3.x document that
//! lists exactly the routes the router serves (checked both ways: every route below is in the
//! document, every operation of the document is below, and the server answers each of them
//! but no other method on those paths), with path parameters, request bodies, responses, the
//! error schema and the bearer security scheme. The MCP endpoint is in it too: its handler is
//! the MCP library's, so `src/http/routes.rs` describes it by hand.

use crate::common;

use std::collections::BTreeSet;

use common::{Engine, TestDb, server::TestServer};
use reqwest::Method;
use serde_json::{Value, json};

/// Every route the API serves: (method, path template). Keep complete: a route added to the
/// router belongs here and in the document.
const ROUTES: &[(&str, &str)] = &[
    ("GET", "/healthz"),
    ("GET", "/metrics"),
    ("GET", "/api/openapi.json"),
    ("GET", "/api/info"),
    ("POST", "/api/markdown"),
    ("GET", "/api/tools"),
    ("GET", "/api/mcp-servers"),
    ("GET", "/api/threads"),
    ("POST", "/api/threads"),
    ("GET", "/api/threads/{thread_id}"),
    ("PATCH", "/api/threads/{thread_id}"),
    ("DELETE", "/api/threads/{thread_id}"),
    ("GET", "/api/threads/{thread_id}/workspace"),
    ("GET", "/api/threads/{thread_id}/suggestions"),
    (
        "POST",
        "/api/threads/{thread_id}/suggestions/{suggestion_id}/accept",
    ),
    (
        "POST",
        "/api/threads/{thread_id}/suggestions/{suggestion_id}/reject",
    ),
    ("GET", "/api/threads/{thread_id}/objective"),
    ("PUT", "/api/threads/{thread_id}/objective"),
    ("GET", "/api/threads/{thread_id}/document"),
    ("PUT", "/api/threads/{thread_id}/document"),
    ("GET", "/api/threads/{thread_id}/todos"),
    ("POST", "/api/threads/{thread_id}/todos"),
    ("PATCH", "/api/threads/{thread_id}/todos/{todo_id}"),
    ("DELETE", "/api/threads/{thread_id}/todos/{todo_id}"),
    ("GET", "/api/threads/{thread_id}/preferences"),
    ("POST", "/api/threads/{thread_id}/preferences"),
    (
        "PATCH",
        "/api/threads/{thread_id}/preferences/{preference_id}",
    ),
    (
        "DELETE",
        "/api/threads/{thread_id}/preferences/{preference_id}",
    ),
    ("GET", "/api/threads/{thread_id}/artifacts"),
    ("GET", "/api/threads/{thread_id}/artifacts/{artifact_id}"),
    (
        "GET",
        "/api/threads/{thread_id}/artifacts/{artifact_id}/chart.svg",
    ),
    (
        "GET",
        "/api/threads/{thread_id}/artifacts/{artifact_id}/chart.png",
    ),
    ("GET", "/api/threads/{thread_id}/messages"),
    ("POST", "/api/threads/{thread_id}/chat"),
    ("POST", "/api/threads/{thread_id}/cancel"),
    ("GET", "/api/threads/{thread_id}/approvals"),
    ("POST", "/api/threads/{thread_id}/approvals/{call_id}"),
    ("GET", "/api/threads/{thread_id}/events"),
    ("POST", "/api/threads/{thread_id}/tools/{tool_name}"),
    ("GET", "/api/threads/{thread_id}/history"),
    ("GET", "/api/threads/{thread_id}/document/diff"),
    ("POST", "/api/threads/{thread_id}/restore"),
    ("POST", "/api/threads/{thread_id}/turns/{turn_index}/revert"),
    ("POST", "/api/threads/{thread_id}/fork"),
    ("GET", "/api/threads/{thread_id}/export"),
    ("POST", "/api/threads/import"),
    ("POST", "/mcp/{thread_id}"),
    ("GET", "/mcp/{thread_id}"),
    ("DELETE", "/mcp/{thread_id}"),
    ("GET", "/api/session"),
    ("POST", "/api/session"),
    ("DELETE", "/api/session"),
    ("GET", "/api/me"),
    ("GET", "/api/users"),
    ("POST", "/api/users"),
    ("DELETE", "/api/users/{name}"),
    ("POST", "/api/users/{name}/token"),
    ("GET", "/api/threads/{thread_id}/members"),
    ("PUT", "/api/threads/{thread_id}/members/{name}"),
    ("DELETE", "/api/threads/{thread_id}/members/{name}"),
    ("POST", "/api/studies"),
    ("GET", "/api/studies"),
    ("GET", "/api/studies/{study_id}"),
    ("PATCH", "/api/studies/{study_id}"),
    ("DELETE", "/api/studies/{study_id}"),
    ("POST", "/api/studies/{study_id}/open"),
    ("POST", "/api/studies/{study_id}/close"),
    ("POST", "/api/studies/{study_id}/preview"),
    ("GET", "/api/studies/{study_id}/members"),
    ("POST", "/api/studies/{study_id}/members"),
    ("PATCH", "/api/studies/{study_id}/members/{name}"),
    ("DELETE", "/api/studies/{study_id}/members/{name}"),
    ("GET", "/api/studies/{study_id}/sessions"),
    ("GET", "/api/studies/{study_id}/summary"),
    ("GET", "/api/studies/{study_id}/export"),
    ("GET", "/api/studies/{study_id}/sessions.csv"),
    (
        "GET",
        "/api/studies/{study_id}/sessions/{session_ref}/timeline",
    ),
    ("POST", "/api/s/{entry_key}/sessions"),
    ("GET", "/api/participant"),
    ("POST", "/api/participant/consent"),
    ("POST", "/api/participant/start"),
    ("POST", "/api/participant/finish"),
    ("POST", "/api/participant/withdraw"),
];

/// Routes open to everyone, with no token (health checks, signing in).
const OPEN: &[(&str, &str)] = &[
    ("GET", "/healthz"),
    ("GET", "/api/session"),
    ("POST", "/api/session"),
    ("DELETE", "/api/session"),
    // A study's participants act by their own token, or by nothing yet.
    ("POST", "/api/s/{entry_key}/sessions"),
    ("GET", "/api/participant"),
    ("POST", "/api/participant/consent"),
    ("POST", "/api/participant/start"),
    ("POST", "/api/participant/finish"),
    ("POST", "/api/participant/withdraw"),
];

/// Routes that take a JSON request body.
const WITH_BODY: &[(&str, &str)] = &[
    ("POST", "/api/threads/{thread_id}/approvals/{call_id}"),
    ("POST", "/api/markdown"),
    ("POST", "/api/threads"),
    ("PATCH", "/api/threads/{thread_id}"),
    ("PUT", "/api/threads/{thread_id}/objective"),
    ("PUT", "/api/threads/{thread_id}/document"),
    ("POST", "/api/threads/{thread_id}/todos"),
    ("PATCH", "/api/threads/{thread_id}/todos/{todo_id}"),
    ("POST", "/api/threads/{thread_id}/preferences"),
    (
        "PATCH",
        "/api/threads/{thread_id}/preferences/{preference_id}",
    ),
    ("POST", "/api/threads/{thread_id}/chat"),
    ("POST", "/api/threads/{thread_id}/tools/{tool_name}"),
    ("POST", "/api/threads/{thread_id}/restore"),
    ("POST", "/api/threads/{thread_id}/fork"),
    ("POST", "/mcp/{thread_id}"),
    ("POST", "/api/session"),
    ("POST", "/api/users"),
    ("PUT", "/api/threads/{thread_id}/members/{name}"),
    ("POST", "/api/studies"),
    ("PATCH", "/api/studies/{study_id}"),
    ("POST", "/api/studies/{study_id}/preview"),
    ("POST", "/api/studies/{study_id}/members"),
    ("PATCH", "/api/studies/{study_id}/members/{name}"),
    ("POST", "/api/s/{entry_key}/sessions"),
    ("POST", "/api/participant/consent"),
];

/// Routes that take a body that is not JSON, with its media type.
const OTHER_BODY: &[(&str, &str, &str)] =
    &[("POST", "/api/threads/import", "application/x-ndjson")];

const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE"];

async fn fetch_document(server: &TestServer) -> Value {
    let reply = server.get("/api/openapi.json").await;
    assert!(
        reply
            .content_type
            .as_deref()
            .is_some_and(|c| c.starts_with("application/json"))
    );
    reply.expect(200)
}

/// The document's operations as (METHOD, path).
fn operations(doc: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, _) in item.as_object().unwrap() {
            if METHODS.contains(&method.to_uppercase().as_str()) {
                out.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    out
}

fn operation<'a>(doc: &'a Value, method: &str, path: &str) -> &'a Value {
    let op = &doc["paths"][path][method.to_lowercase()];
    assert!(op.is_object(), "{method} {path} is not in the document");
    op
}

/// Follows a `$ref` inside the document.
fn resolve<'a>(doc: &'a Value, value: &'a Value) -> &'a Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let pointer = reference.strip_prefix('#').unwrap();
            doc.pointer(pointer)
                .unwrap_or_else(|| panic!("dangling $ref {reference}"))
        }
        None => value,
    }
}

/// Every `$ref` anywhere in `value`.
fn refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                if key == "$ref" {
                    if let Some(r) = v.as_str() {
                        out.push(r);
                    }
                } else {
                    refs(v, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

fn path_params(template: &str) -> Vec<&str> {
    template
        .split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_document_is_openapi_3_and_lists_every_route() {
    let tdb = TestDb::new(Engine::Sqlite).await;
    let server = TestServer::start(&tdb.db).await;
    let doc = fetch_document(&server).await;

    let version = doc["openapi"].as_str().unwrap();
    assert!(version.starts_with("3."), "openapi is {version}");
    assert_eq!(doc["info"]["title"], json!("haico"));
    assert!(
        doc["info"]["version"]
            .as_str()
            .is_some_and(|v| !v.is_empty())
    );

    // The document and the list agree, both ways.
    let listed: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(listed.len(), ROUTES.len(), "duplicate in ROUTES");
    let documented = operations(&doc);
    let missing: Vec<_> = listed.difference(&documented).collect();
    let extra: Vec<_> = documented.difference(&listed).collect();
    assert!(
        missing.is_empty(),
        "routes missing from the document: {missing:?}"
    );
    assert!(
        extra.is_empty(),
        "documented routes not in ROUTES: {extra:?}"
    );

    // Every reference resolves.
    let mut all_refs = Vec::new();
    refs(&doc, &mut all_refs);
    assert!(!all_refs.is_empty());
    for reference in all_refs {
        let pointer = reference.strip_prefix('#').unwrap();
        assert!(doc.pointer(pointer).is_some(), "dangling $ref {reference}");
    }

    // The error schema and the bearer scheme.
    let error = &doc["components"]["schemas"]["ErrorBody"];
    assert_eq!(error["type"], json!("object"), "{error}");
    assert_eq!(error["properties"]["error"]["type"], json!("string"));
    assert_eq!(error["required"], json!(["error"]));
    let bearer = &doc["components"]["securitySchemes"]["bearer"];
    assert_eq!(bearer["type"], json!("http"), "{bearer}");
    assert_eq!(bearer["scheme"].as_str().unwrap().to_lowercase(), "bearer");
    assert_eq!(doc["security"], json!([{"bearer": []}]));

    let operation_ids: BTreeSet<&str> = ROUTES
        .iter()
        .map(|(m, p)| operation(&doc, m, p)["operationId"].as_str().unwrap())
        .collect();
    assert_eq!(
        operation_ids.len(),
        ROUTES.len(),
        "operation ids are unique"
    );

    for (method, path) in ROUTES {
        let op = operation(&doc, method, path);
        let what = format!("{method} {path}");
        assert!(
            op["tags"].as_array().is_some_and(|t| !t.is_empty()),
            "{what} has no tag"
        );
        assert!(op["summary"].as_str().is_some(), "{what} has no summary");

        // Path parameters: each one declared, in the path, required.
        let declared: Vec<&Value> = op["parameters"]
            .as_array()
            .map(|ps| ps.iter().filter(|p| p["in"] == json!("path")).collect())
            .unwrap_or_default();
        let names: BTreeSet<&str> = declared
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        let expected: BTreeSet<&str> = path_params(path).into_iter().collect();
        assert_eq!(names, expected, "{what}: path parameters");
        for p in &declared {
            assert_eq!(p["required"], json!(true), "{what}: {p}");
            assert!(p["schema"].is_object(), "{what}: {p}");
        }

        // Request bodies where the route reads one.
        let body = &op["requestBody"];
        if WITH_BODY.contains(&(*method, *path)) {
            assert!(
                body["content"]["application/json"]["schema"].is_object(),
                "{what} documents no JSON body: {op}"
            );
        } else if let Some((_, _, media)) = OTHER_BODY
            .iter()
            .find(|(m, p, _)| (*m, *p) == (*method, *path))
        {
            assert!(
                body["content"][*media]["schema"].is_object(),
                "{what} documents no {media} body: {op}"
            );
        } else {
            assert!(body.is_null(), "{what} documents a body it does not read");
        }

        // Responses: a success, and errors in the error schema.
        let responses = op["responses"].as_object().unwrap();
        let success: Vec<&String> = responses.keys().filter(|s| s.starts_with('2')).collect();
        assert!(!success.is_empty(), "{what} has no success response");
        for (status, response) in responses {
            if status.starts_with('4') || status.starts_with('5') {
                let response = resolve(&doc, response);
                let schema = &response["content"]["application/json"]["schema"];
                // Every error body is an object with an `error` text (some carry more: the
                // current document, the conflicting revisions).
                let body = resolve(&doc, schema);
                assert_eq!(
                    body["properties"]["error"]["type"],
                    json!("string"),
                    "{what} {status}: error response without an `error` text: {response}"
                );
                assert!(
                    body["required"]
                        .as_array()
                        .is_some_and(|r| r.contains(&json!("error"))),
                    "{what} {status}: `error` is not required: {body}"
                );
            }
        }

        // Security: every route but the open ones answers 401 without a token.
        if OPEN.contains(&(*method, *path)) {
            assert_eq!(op["security"], json!([{}]), "{what} needs no token");
            // (Signing in answers 401 for a wrong password, not for a missing token.)
            assert!(
                responses.get("401").is_none_or(|r| r.get("$ref").is_none()),
                "{what} is open: it does not answer the token's 401"
            );
            if *path == "/healthz" {
                assert!(responses.contains_key("503"));
            }
        } else {
            assert!(responses.contains_key("401"), "{what} documents no 401");
            assert!(
                op.get("security").is_none(),
                "{what} overrides the security"
            );
        }
        // (MCP creates the thread on its first message, so it has no 404.)
        if path.contains('{') && !path.starts_with("/mcp/") {
            assert!(
                responses.contains_key("404"),
                "{what}: a route with an id documents its 404"
            );
            assert!(
                responses.contains_key("400"),
                "{what}: malformed ids are 400"
            );
        }
        if WITH_BODY.contains(&(*method, *path))
            || OTHER_BODY
                .iter()
                .any(|(m, p, _)| (*m, *p) == (*method, *path))
        {
            assert!(
                responses.contains_key("413"),
                "{what}: bodies can be too large"
            );
        }
    }

    // A few shapes checked in depth.
    let created = &operation(&doc, "POST", "/api/threads")["responses"]["201"];
    let thread = resolve(&doc, &created["content"]["application/json"]["schema"]);
    for field in ["id", "title", "turn_index", "created_at", "updated_at"] {
        assert!(
            thread["properties"][field].is_object(),
            "Thread.{field}: {thread}"
        );
    }
    let conflict = &operation(&doc, "PUT", "/api/threads/{thread_id}/document")["responses"]["409"];
    let conflict = resolve(&doc, &conflict["content"]["application/json"]["schema"]);
    assert!(conflict["properties"]["document"].is_object(), "{conflict}");
    let chat = &operation(&doc, "POST", "/api/threads/{thread_id}/chat")["responses"];
    assert!(
        chat["200"]["content"]["text/event-stream"].is_object(),
        "{chat}"
    );
    assert!(chat["409"].is_object());
    let events = operation(&doc, "GET", "/api/threads/{thread_id}/events");
    let query: BTreeSet<&str> = events["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["in"] == json!("query"))
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(
        query.contains("access_token") && query.contains("last_event_id"),
        "{events}"
    );
    let svg = &operation(
        &doc,
        "GET",
        "/api/threads/{thread_id}/artifacts/{artifact_id}/chart.svg",
    )["responses"]["200"];
    assert!(svg["content"]["image/svg+xml"].is_object(), "{svg}");
    let png = &operation(
        &doc,
        "GET",
        "/api/threads/{thread_id}/artifacts/{artifact_id}/chart.png",
    )["responses"]["200"];
    assert!(png["content"]["image/png"].is_object(), "{png}");
    let artifacts = operation(&doc, "GET", "/api/threads/{thread_id}/artifacts");
    let query: BTreeSet<&str> = artifacts["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["in"] == json!("query"))
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(query, BTreeSet::from(["artifact_type", "limit"]));

    server.shutdown().await;
    tdb.cleanup().await;
}

/// The path with its parameters filled in: a thread that does not exist (so nothing streams
/// or runs), small ids, a real tool.
fn concrete(template: &str) -> String {
    // MCP creates the thread it is asked about: it gets one of its own.
    let thread = if template.starts_with("/mcp/") {
        "mcp-probe"
    } else {
        "openapi-probe"
    };
    template
        .replace("{thread_id}", thread)
        .replace("{tool_name}", "set_objective")
        .replace("{todo_id}", "1")
        .replace("{preference_id}", "1")
        .replace("{artifact_id}", "1")
        .replace("{turn_index}", "1")
        .replace("{suggestion_id}", "1")
        .replace("{call_id}", "1-1")
        .replace("{name}", "nobody")
        .replace("{study_id}", "no-such-study")
        .replace("{session_ref}", "nosuchss")
        .replace("{entry_key}", "no-such-entry-key")
}

/// Whether the router answered with its own fallbacks: `404 no such route` or `405`.
async fn router_fallback(server: &TestServer, method: &str, path: &str) -> Option<u16> {
    let method = Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = server.client.request(method.clone(), server.url(path));
    if matches!(method, Method::POST | Method::PUT | Method::PATCH) {
        request = request.json(&json!({}));
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let streaming = response
        .headers()
        .get("content-type")
        .is_some_and(|c| c.as_bytes().starts_with(b"text/event-stream"));
    if streaming {
        // A stream that never ends: the route is served, which is all this asks.
        return None;
    }
    let body = response.text().await.unwrap();
    match status {
        405 => Some(405),
        404 if serde_json::from_str::<Value>(&body)
            .is_ok_and(|v| v["error"] == json!("no such route")) =>
        {
            Some(404)
        }
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_router_serves_exactly_the_documented_routes() {
    let tdb = TestDb::new(Engine::Sqlite).await;
    let server = TestServer::start(&tdb.db).await;
    let doc = fetch_document(&server).await;

    // The probe tells the router's fallbacks apart from a handler's own 404.
    assert_eq!(
        router_fallback(&server, "GET", "/api/nope").await,
        Some(404)
    );
    assert_eq!(
        router_fallback(&server, "GET", "/api/threads/openapi-probe").await,
        None
    );

    for (path, _) in doc["paths"].as_object().unwrap() {
        let url = concrete(path);
        for method in METHODS {
            let documented = ROUTES.contains(&(*method, path.as_str()));
            let fallback = router_fallback(&server, method, &url).await;
            if documented {
                assert_eq!(
                    fallback, None,
                    "{method} {path} is documented but not served"
                );
            } else {
                assert_eq!(
                    fallback,
                    Some(405),
                    "{method} {path} is served (or missing) but not documented"
                );
            }
        }
    }

    server.shutdown().await;
    tdb.cleanup().await;
}
