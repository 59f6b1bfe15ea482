//! Fuzzing every REST route that takes a body (found in the server's own OpenAPI document)
//! on both engines: bodies shaped by the route's schema, the same mutated, any JSON, values
//! nested too deeply, path parameters both real and random. Never a 5xx or a dropped
//! connection; a 4xx leaves the workspace, the history and the thread list as they were.
//!
//! Not covered: `POST …/chat`, whose accepted turn keeps writing after the answer (its body
//! rules are tested in tests/integration/tools/input_nul.rs and tests/integration/http/api.rs), `/mcp/{thread_id}`,
//! which speaks JSON-RPC through rmcp's transport (tests/integration/mcp/http.rs), and `POST /api/users`:
//! a valid body there makes the server's first account, which ends one-person mode, so every
//! later unauthenticated call of the fuzzer is a 401 (its bad bodies are tested in
//! tests/integration/people/accounts.rs).
//!
//! `PROPTEST_CASES=500 cargo test --test integration -- fuzz::rest` runs longer (cases per route and kind).

use crate::common;
use crate::common::fuzz as fuzz_support;

use common::server::{setup, teardown};
use fuzz_support::{
    call_and_check, cases, deeply_nested, draw, from_schema, json_value, mutated, runner, snapshot,
};
use proptest::prelude::*;
use reqwest::Method;
use serde_json::json;

/// Routes left out, with the reason in the module header.
const SKIPPED: [&str; 3] = [
    "/api/threads/{thread_id}/chat",
    "/mcp/{thread_id}",
    "/api/users",
];

/// `text` percent-encoded as one path segment.
fn segment(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

backend_tests! {
    async fn every_body_route_survives_fuzzed_bodies(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;
        let todo = server.post("/api/threads/t/todos", &json!({"text": "Step"})).await.expect(201);
        let preference = server.post("/api/threads/t/preferences", &json!({"title": "Pref"})).await.expect(201);
        let openapi = server.get("/api/openapi.json").await.expect(200);

        let mut routes = Vec::new();
        for (path, item) in openapi["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                let Some(body) = operation.get("requestBody") else { continue };
                if SKIPPED.contains(&path.as_str()) {
                    continue;
                }
                let schema = body["content"]
                    .as_object()
                    .and_then(|content| content.values().next())
                    .map(|media| media["schema"].clone())
                    .unwrap_or(json!({}));
                routes.push((Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(), path.clone(), schema));
            }
        }
        assert!(routes.len() >= 10, "the OpenAPI document lists the body routes: {routes:?}");

        let mut runner = runner(cases(6));
        let mut before = snapshot(&server, "t").await;
        let random_segment = prop_oneof!["\\PC{0,16}", "[\\x00-\\x7f]{0,8}"].prop_map(|t: String| segment(&t));
        for (method, template, schema) in &routes {
            let strategies = [
                from_schema(schema, &openapi),
                mutated(from_schema(schema, &openapi)),
                json_value(),
                deeply_nested(),
            ];
            for case in 0..runner.config().cases {
                for strategy in &strategies {
                    // Real ids most of the time, now and then anything.
                    let mut path = template.clone();
                    for (name, real) in [
                        ("thread_id", "t".to_string()),
                        ("todo_id", todo["id"].to_string()),
                        ("preference_id", preference["id"].to_string()),
                        ("turn_index", "0".to_string()),
                        ("artifact_id", "1".to_string()),
                        ("name", "someone".to_string()),
                    ] {
                        let value = if case % 4 == 3 { draw(&mut runner, &random_segment) } else { real };
                        path = path.replace(&format!("{{{name}}}"), &value);
                    }
                    let body = draw(&mut runner, strategy);
                    let (_, after) = call_and_check(&server, "t", method.clone(), &path, Some(&body), before).await;
                    before = after;
                }
            }
        }
        server.get("/healthz").await.expect(200);
        teardown(tdb, server).await;
    }
}
