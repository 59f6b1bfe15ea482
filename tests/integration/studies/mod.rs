//! Studies (issue 42): designs, participants, balanced assignment, the clock, the data. Every
//! test runs on both engines against a real server; the agent talks to the mock LLM where a
//! turn is needed.

mod assignment;
mod clock;
mod cookie;
mod data;
mod design;
mod members;
mod participants;

use haico::http::{HttpConfig, RateLimits};
use reqwest::Method;
use serde_json::{Value, json};

use crate::common::{self, TestDb, server::TestServer};

/// A design with `conditions` and everything else minimal but valid.
pub(super) fn design(conditions: Value) -> Value {
    json!({
        "title": "Recipe study",
        "task": {
            "title": "Plan a dinner",
            "instructions": "Plan a dinner for four with the assistant.",
            "seed": {
                "objective": "A dinner for four",
                "document": {"title": "Menu", "content": "# Menu\n"},
                "plan": [{"text": "Pick a starter"}],
                "preferences": [{"title": "No nuts", "kind": "hard", "locked": true}]
            }
        },
        "consent": {"text": "We record your messages and edits.", "required": true},
        "entry": {"participant_param": "PROLIFIC_PID", "params": ["STUDY_ID", "SESSION_ID"],
                  "keep_params": ["STUDY_ID"]},
        "completion": {
            "completed": {"code": "DONE42", "redirect_url": "https://app.prolific.com/submissions/complete?cc={code}&s={session}&p={param:SESSION_ID}"},
            "timed_out": {"code": "LATE42"},
            "no_consent": {"code": "NOCONSENT"}
        },
        "conditions": conditions,
    })
}

/// Two conditions: the full workspace, and a plain chat.
pub(super) fn two_conditions() -> Value {
    json!([
        {"key": "workspace", "label": "Workspace", "panels": ["objective", "document", "plan", "preferences", "artifacts"], "tools": "*"},
        {"key": "chat", "label": "Plain chat", "panels": [], "tools": []}
    ])
}

/// A server with no limit on study entries (the tests enter many participants from one
/// address).
pub(super) async fn server(tdb: &TestDb) -> TestServer {
    TestServer::with_config(
        &tdb.db,
        HttpConfig {
            rate_limits: RateLimits {
                study_entries: None,
                ..RateLimits::default()
            },
            ..HttpConfig::default()
        },
    )
    .await
}

/// Makes and opens a study; its id and entry key.
pub(super) async fn open_study(server: &TestServer, design: &Value) -> (String, String) {
    let made = server.post("/api/studies", design).await.expect(201);
    let id = made["id"].as_str().unwrap().to_string();
    let key = made["entry_url"]
        .as_str()
        .unwrap()
        .strip_prefix("/s/")
        .unwrap()
        .to_string();
    server
        .post(&format!("/api/studies/{id}/open"), &json!({}))
        .await
        .expect(200);
    (id, key)
}

/// Enters the study as participant `pid`; the status and the answer.
pub(super) async fn enter(server: &TestServer, key: &str, pid: Option<&str>) -> (u16, Value) {
    let body = match pid {
        Some(pid) => json!({"params": {"PROLIFIC_PID": pid, "STUDY_ID": "s1", "SESSION_ID": "x9"}}),
        None => json!({}),
    };
    let response = server
        .client
        .post(server.url(&format!("/api/s/{key}/sessions")))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A participant's request with its token.
pub(super) async fn as_participant(
    server: &TestServer,
    token: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    common::send_as(&server.client, method, server.url(path), token, body).await
}

/// Enters as `pid` and consents; the token and the session as the participant sees it.
pub(super) async fn consented(server: &TestServer, key: &str, pid: &str) -> (String, Value) {
    let (status, entered) = enter(server, key, Some(pid)).await;
    assert_eq!(status, 201, "{entered}");
    let token = entered["participant_token"].as_str().unwrap().to_string();
    let (status, session) = as_participant(
        server,
        &token,
        Method::POST,
        "/api/participant/consent",
        Some(json!({"agree": true})),
    )
    .await;
    assert_eq!(status, 200, "{session}");
    (token, session)
}
