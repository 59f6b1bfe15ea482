//! Streamable HTTP MCP at `/mcp/{thread_id}` on a real server, driven by rmcp's HTTP client in
//! both lifecycles (the classic `initialize` session and 2026-07-28's stateless requests), on
//! SQLite and PostgreSQL.
// `resources/subscribe` is deprecated in rmcp in favour of 2026-07-28's `subscriptions/listen`;
// sessions of the earlier revisions still use it, so it is tested here.
#![allow(deprecated)]

use crate::common;
use crate::common::mcp as mcp_support;

use std::time::Duration;

use common::{Engine, TestDb, server::TestServer};
use haico::{
    events::{DEFAULT_POLL_INTERVAL, PollingBus},
    http::{AppState, HttpConfig},
};
use mcp_support::*;
use rmcp::model::{
    ErrorCode, ReadResourceRequestParams, SubscribeRequestParams, SubscriptionFilter,
};
use serde_json::{Value, json};

const NOTE: Duration = Duration::from_secs(3);

fn mcp_url(server: &TestServer, thread: &str) -> String {
    server.url(&format!("/mcp/{thread}"))
}

backend_tests! {
    async fn tools_match_the_api_and_respect_locks(engine) {
        let db = TestDb::new(engine).await;
        let server = TestServer::start(&db.db).await;
        let thread = "http-tools";
        let (client, _notes) = http_client(&mcp_url(&server, thread), Lifecycle::Initialize).await;

        let api = server.get("/api/tools").await.expect(200);
        let tools = client.list_all_tools().await.unwrap();
        assert_tools_match(&tools, &api);

        // The thread is made by the first MCP request.
        server.get(&format!("/api/threads/{thread}")).await.expect(200);
        call_ok(
            &client,
            "update_document",
            json!({"content": "# Trip\n\nDraft", "title": "Lisbon",
                   "action_and_reasoning": "Starting the document."}),
        )
        .await;
        let workspace = server.workspace(thread).await;
        assert_eq!(workspace["document"]["title"], "Lisbon");
        assert_eq!(workspace["document"]["content"], "# Trip\n\nDraft");

        // The person locks a preference; the MCP client cannot change or remove it.
        server
            .post(
                &format!("/api/threads/{thread}/preferences"),
                &json!({"title": "Window seat", "kind": "soft", "locked": true}),
            )
            .await
            .expect(201);
        for (tool, args) in [
            ("update_preferences", json!({"updates": [{"index": 1, "title": "Aisle seat"}]})),
            ("remove_preferences", json!({"indices": [1]})),
        ] {
            let mut args = args;
            args["action_and_reasoning"] = json!("Adjusting the seat wish.");
            let env = envelope(&call(&client, tool, args).await.unwrap());
            assert!(env.to_string().contains("locked"), "{tool}: {env}");
        }
        let prefs = server
            .get(&format!("/api/threads/{thread}/preferences"))
            .await
            .expect(200);
        assert_eq!(prefs[0]["title"], "Window seat");

        // Bad requests: protocol error for an unknown tool, failure envelope for bad arguments.
        let err = call(&client, "frobnicate", json!({})).await.unwrap_err();
        assert_eq!(error_code(&err), ErrorCode::INVALID_PARAMS);
        let env = envelope(
            &call(&client, "toggle_todos", json!({"indices": "one", "action_and_reasoning": "x"}))
                .await
                .unwrap(),
        );
        assert_eq!(env["success"], false);
        let err = client
            .read_resource(ReadResourceRequestParams::new("haico://thread/elsewhere/plan"))
            .await
            .unwrap_err();
        assert_eq!(error_code(&err), ErrorCode::RESOURCE_NOT_FOUND);
        // Still serving.
        call_ok(&client, "list_preferences", json!({"action_and_reasoning": "Looking."})).await;

        client.cancel().await.unwrap();
        server.shutdown().await;
        db.cleanup().await;
    }

    async fn a_session_hears_about_user_and_agent_changes(engine) {
        let db = TestDb::new(engine).await;
        let server = TestServer::start(&db.db).await;
        let thread = "http-session";
        let (client, mut notes) =
            http_client(&mcp_url(&server, thread), Lifecycle::Initialize).await;
        client
            .subscribe(SubscribeRequestParams::new(panel(thread, "plan")))
            .await
            .unwrap();

        // The person adds a step in the web UI.
        server
            .post(&format!("/api/threads/{thread}/todos"), &json!({"text": "Buy a guide"}))
            .await
            .expect(201);
        expect_note(&mut notes, &Note::Updated(panel(thread, "plan")), NOTE).await;
        assert_eq!(read_json(&client, &panel(thread, "plan")).await[0]["text"], "Buy a guide");

        // The MCP client ticks it off.
        drain(&mut notes);
        call_ok(
            &client,
            "toggle_todos",
            json!({"indices": [1], "action_and_reasoning": "Marking the guide as bought."}),
        )
        .await;
        expect_note(&mut notes, &Note::Updated(panel(thread, "plan")), NOTE).await;
        assert_eq!(read_json(&client, &panel(thread, "plan")).await[0]["done"], true);

        // Shutting down with the session (and its notification stream) still open ends it
        // instead of waiting for the client.
        server.shutdown().await;
        let _ = client.cancel().await;
        db.cleanup().await;
    }

    async fn a_2026_client_works_statelessly_and_listens(engine) {
        let db = TestDb::new(engine).await;
        let server = TestServer::start(&db.db).await;
        let thread = "http-discover";
        let (client, _notes) = http_client(&mcp_url(&server, thread), Lifecycle::Discover).await;

        assert_eq!(client.list_all_tools().await.unwrap().len(), 16);
        let mut subscription = client
            .listen(
                SubscriptionFilter::builder()
                    .resource_subscription(panel(thread, "preferences"))
                    .build(),
            )
            .await
            .unwrap();
        assert_eq!(
            subscription.acknowledged().resource_subscriptions,
            Some(vec![panel(thread, "preferences")])
        );
        call_ok(
            &client,
            "add_preferences",
            json!({"items": [{"title": "No night trains", "kind": "hard"}],
                   "action_and_reasoning": "Recording a travel rule."}),
        )
        .await;
        let note = tokio::time::timeout(NOTE, subscription.next())
            .await
            .expect("a notification in time")
            .unwrap()
            .expect("the subscription is open");
        assert!(
            matches!(note, rmcp::model::ServerNotification::ResourceUpdatedNotification(ref u)
                if u.params.uri == panel(thread, "preferences")),
            "{note:?}"
        );
        let prefs = read_json(&client, &panel(thread, "preferences")).await;
        assert_eq!(prefs[0]["title"], "No night trains");

        subscription.cancel().await.unwrap();
        client.cancel().await.unwrap();
        server.shutdown().await;
        db.cleanup().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_are_chosen_by_path_and_bound_per_session() {
    let db = TestDb::new(Engine::Sqlite).await;
    let server = TestServer::start(&db.db).await;

    // No thread, or an invalid one: the API's JSON errors.
    server.get("/mcp").await.error(404);
    server
        .post(
            "/mcp/not a thread!",
            &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        )
        .await
        .error_any();

    // A session started on one thread refuses requests for another.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let response = server
        .client
        .post(server.url("/mcp/thread-a"))
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let session = response
        .headers()
        .get("mcp-session-id")
        .expect("a session id")
        .to_str()
        .unwrap()
        .to_string();
    let body = response.text().await.unwrap();
    assert!(
        body.contains("\"protocolVersion\":\"2025-06-18\""),
        "{body}"
    );
    let post = |path: &str, message: Value| {
        server
            .client
            .post(server.url(path))
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-06-18")
            .json(&message)
            .send()
    };
    let ack = post(
        "/mcp/thread-a",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await
    .unwrap();
    assert!(ack.status().is_success(), "{}", ack.status());
    let other = post(
        "/mcp/thread-b",
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "list_todos", "arguments": {"action_and_reasoning": "x"}}}),
    )
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    assert!(
        other.contains("thread-a") && other.contains("-32600"),
        "{other}"
    );
    let same = post(
        "/mcp/thread-a",
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "list_todos", "arguments": {"action_and_reasoning": "x"}}}),
    )
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    assert!(same.contains("\"isError\":false"), "{same}");

    server.shutdown().await;
    db.cleanup().await;
}

/// With an API token, `/mcp` needs it like every other route.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bearer_token_guards_mcp() {
    let db = TestDb::new(Engine::Sqlite).await;
    let config = HttpConfig {
        api_token: Some("mcp-secret".parse().unwrap()),
        ..HttpConfig::default()
    };
    let server = TestServer::with_config(&db.db, config).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let refused = server
        .client
        .post(server.url("/mcp/guarded"))
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    // Nothing was created by the refused request.
    server
        .client
        .get(server.url("/api/threads/guarded"))
        .bearer_auth("mcp-secret")
        .send()
        .await
        .map(|r| assert_eq!(r.status(), 404))
        .unwrap();

    haico::mcp_client::use_ring_for_tls();
    let transport = rmcp::transport::StreamableHttpClientTransport::from_config(
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            server.url("/mcp/guarded"),
        )
        .auth_header("mcp-secret"),
    );
    let client = rmcp::ServiceExt::serve((), transport).await.unwrap();
    assert_eq!(client.list_all_tools().await.unwrap().len(), 16);
    client.cancel().await.unwrap();
    server.shutdown().await;
    db.cleanup().await;
}

/// A server that follows other processes' events too, as `haico serve` does.
async fn polling_server(db: &haico::store::Database) -> TestServer {
    let bus = PollingBus::new(db.clone());
    let _poller = bus.spawn_poller(DEFAULT_POLL_INTERVAL);
    let state = AppState::with_bus(
        db.clone(),
        std::sync::Arc::new(haico::agent::providers::UnconfiguredModel::new("none")),
        haico::agent::AgentConfig::default(),
        bus,
    );
    TestServer::with_state(state).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_poller_runs_beside_an_http_session() {
    let db = TestDb::new(Engine::Sqlite).await;
    let server = polling_server(&db.db).await;
    let (client, _notes) = http_client(&mcp_url(&server, "polled"), Lifecycle::Initialize).await;
    call_ok(
        &client,
        "list_todos",
        json!({"action_and_reasoning": "Looking."}),
    )
    .await;
    client.cancel().await.unwrap();
    server.shutdown().await;
    db.cleanup().await;
}
