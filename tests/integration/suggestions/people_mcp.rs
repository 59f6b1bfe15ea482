//! Who may decide (viewers see, editors decide), and MCP: the resource and the document tools
//! behaving as over REST; on both engines.

use crate::common;
use crate::common::mcp as mcp_support;

use common::{TestDb, server::TestServer};
use mcp_support::*;
use reqwest::Method;
use serde_json::{Value, json};

const ADMIN: &str = "admin-token-for-suggestions";

/// Sends a request with a bearer token; returns the status and the JSON body.
async fn send(
    server: &TestServer,
    method: Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    crate::common::send_as(&server.client, method, server.url(path), token, body).await
}

backend_tests! {
    async fn viewers_see_suggestions_and_editors_decide(engine) {
        let tdb = TestDb::new(engine).await;
        let server = TestServer::with_token(&tdb.db, ADMIN).await;
        let mut tokens = std::collections::HashMap::new();
        for name in ["owner", "editor", "viewer"] {
            let (status, made) = send(&server, Method::POST, "/api/users", ADMIN, Some(json!({"name": name}))).await;
            assert_eq!(status, 201, "{made}");
            tokens.insert(name, made["token"].as_str().unwrap().to_string());
        }
        let owner = tokens["owner"].as_str();
        let (status, _) = send(&server, Method::POST, "/api/threads", owner, Some(json!({"id": "p"}))).await;
        assert_eq!(status, 201);
        for (name, role) in [("editor", "editor"), ("viewer", "viewer")] {
            let (status, _) = send(&server, Method::PUT, &format!("/api/threads/p/members/{name}"), owner, Some(json!({"role": role}))).await;
            assert_eq!(status, 200);
        }
        let (status, _) = send(&server, Method::POST, "/api/threads/p/tools/update_document", owner,
            Some(json!({"content": "one two\n", "action_and_reasoning": "Start."}))).await;
        assert_eq!(status, 200);
        // A viewer may not switch the mode; an editor may.
        let (status, _) = send(&server, Method::PATCH, "/api/threads/p", &tokens["viewer"], Some(json!({"document_mode": "suggest"}))).await;
        assert_eq!(status, 403);
        let (status, row) = send(&server, Method::PATCH, "/api/threads/p", &tokens["editor"], Some(json!({"document_mode": "suggest"}))).await;
        assert_eq!((status, row["document_mode"].clone()), (200, json!("suggest")));
        // The thread's MCP servers follow the same rule (issue 26).
        let (status, _) = send(&server, Method::PATCH, "/api/threads/p", &tokens["viewer"], Some(json!({"mcp_servers": []}))).await;
        assert_eq!(status, 403);
        let (status, row) = send(&server, Method::PATCH, "/api/threads/p", &tokens["editor"], Some(json!({"mcp_servers": []}))).await;
        assert_eq!((status, row["mcp_servers"].clone()), (200, json!([])));
        let (_, env) = send(&server, Method::POST, "/api/threads/p/tools/edit_document", &tokens["editor"],
            Some(json!({"edits": [{"old_text": "two", "new_text": "2"}], "action_and_reasoning": "Use digits."}))).await;
        assert_eq!(env["success"], json!(true), "{env}");

        // The viewer lists, and cannot accept or reject: 403, nothing changes.
        let (status, listed) = send(&server, Method::GET, "/api/threads/p/suggestions", &tokens["viewer"], None).await;
        assert_eq!(status, 200);
        assert_eq!(listed[0]["status"], json!("open"));
        for action in ["accept", "reject"] {
            let (status, _) = send(&server, Method::POST, &format!("/api/threads/p/suggestions/1/{action}"), &tokens["viewer"], None).await;
            assert_eq!(status, 403, "{action}");
        }
        let (_, again) = send(&server, Method::GET, "/api/threads/p/suggestions", &tokens["viewer"], None).await;
        assert_eq!(again, listed);

        // The editor accepts; the revision records who.
        let (status, accepted) = send(&server, Method::POST, "/api/threads/p/suggestions/1/accept", &tokens["editor"], None).await;
        assert_eq!(status, 200, "{accepted}");
        assert_eq!(accepted["suggestion"]["decided_by"], json!("editor"));
        assert_eq!(accepted["document"]["content"], json!("one 2\n"));
        let (_, history) = send(&server, Method::GET, "/api/threads/p/history", owner, None).await;
        assert_eq!(history["revisions"][0]["by"], json!("editor"));
        assert_eq!(history["revisions"][0]["panels"], json!(["document", "suggestions"]));
        server.shutdown().await;
        tdb.cleanup().await;
    }

    async fn mcp_tools_suggest_and_the_resource_lists_them(engine) {
        let tdb = TestDb::new(engine).await;
        let server = TestServer::start(&tdb.db).await;
        let thread = "mcp-suggest";
        let (client, _notes) = http_client(&server.url(&format!("/mcp/{thread}")), Lifecycle::Initialize).await;
        call_ok(&client, "update_document",
            json!({"content": "alpha beta\n", "action_and_reasoning": "Start."})).await;
        server.patch(&format!("/api/threads/{thread}"), &json!({"document_mode": "suggest"})).await.expect(200);

        let summary = call_ok(&client, "edit_document",
            json!({"edits": [{"old_text": "beta", "new_text": "gamma"}], "action_and_reasoning": "Rename."})).await;
        assert!(summary.starts_with("suggested #1:"), "{summary}");
        let doc = server.get(&format!("/api/threads/{thread}/document")).await.expect(200);
        assert_eq!(doc["content"], json!("alpha beta\n"));

        let resource = read_json(&client, &panel(thread, "suggestions")).await;
        assert_eq!(resource["document_mode"], json!("suggest"));
        assert_eq!(resource["suggestions"][0]["status"], json!("open"));
        assert_eq!(resource["suggestions"][0]["action_and_reasoning"], json!("Rename."));
        assert!(resource["suggestions"][0]["diff"].as_str().unwrap().contains("+alpha gamma"));
        let listed = server.get(&format!("/api/threads/{thread}/suggestions")).await.expect(200);
        assert_eq!(listed, resource["suggestions"]);
        server.shutdown().await;
        tdb.cleanup().await;
    }
}
