//! One haico the MCP client of another, over streamable HTTP: the entry's `headers` carry the
//! other server's bearer token (a wrong one leaves the server failed), the second server's
//! workspace tools reach the first one's agent as `peer__<tool>`, a call changes the *other*
//! thread (and never the caller's own workspace), and the tools that declare
//! `action_and_reasoning` themselves get the agent's sentence passed on. Both engines.

use std::time::Duration;

use serde_json::{Value, json};

use super::{McpSetup, quick, steps};
use crate::common::{
    TestDb,
    agent::whole_turn,
    mock_llm::{Script, call},
    server::TestServer,
};

/// The other server's administrator token.
const TOKEN: &str = "peer-token-for-the-mcp-client-test";

backend_tests! {
    async fn a_haico_uses_another_haicos_tools_over_http(engine) {
        let other_db = TestDb::new(engine).await;
        let other = TestServer::with_token(&other_db.db, TOKEN).await;
        let url = other.url("/mcp/shared");
        let setup = McpSetup::new(
            engine,
            json!({"mcpServers": {
                "peer": {"url": url, "headers": {"Authorization": format!("Bearer {TOKEN}")}},
                "stranger": {"url": url, "headers": {"Authorization": "Bearer wrong-token"}},
            }}),
            quick(Duration::from_secs(30)),
            vec![
                Script::tool_calls(vec![call(
                    "peer__set_objective",
                    json!({"objective": "Written from the other haico",
                           "action_and_reasoning": "I set the shared objective."}),
                )]),
                Script::text("Done."),
            ],
        )
        .await;
        let stranger = setup.wait_for("stranger", "failed", |_| true).await;
        assert!(stranger["error"].as_str().unwrap().contains("handshake"), "{stranger}");
        assert!(!stranger.to_string().contains("wrong-token"), "{stranger}");
        let ready = setup.wait_for("peer", "ready", |_| true).await;
        assert_eq!(ready["transport"], "http");
        let tools = ready["tools"].as_array().unwrap();
        assert!(tools.contains(&json!("set_objective")) && tools.contains(&json!("edit_document")), "{ready}");

        setup.server.create_thread("mine").await;
        let frames = whole_turn(crate::common::agent::chat(&setup.server, "mine", "Set it there").await).await;
        assert_eq!(frames.last().unwrap().data["status"], "completed", "{frames:?}");
        let stepped = steps(&frames);
        assert_eq!(stepped[0].0, "peer__set_objective");
        assert_eq!(stepped[0].1["success"], true, "{:?}", stepped[0]);

        // The other server's thread changed, recording the sentence the agent gave.
        let read = |path: &str| {
            let request = other.client.get(other.url(path)).bearer_auth(TOKEN);
            async move { TestServer::read(request.send().await.unwrap()).await.expect(200) }
        };
        let objective = read("/api/threads/shared/objective").await;
        assert_eq!(objective["objective"], "Written from the other haico");
        let history = read("/api/threads/shared/history").await;
        assert!(history.to_string().contains("I set the shared objective."), "{history}");
        // This one's workspace did not.
        let mine = setup.server.get("/api/threads/mine/workspace").await.expect(200);
        assert_eq!(mine["objective"], Value::Null);

        setup.cleanup().await;
        other.shutdown().await;
        other_db.cleanup().await;
    }
}
