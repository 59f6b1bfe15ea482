//! One haico the MCP client of another, over streamable HTTP: the second server's workspace
//! tools reach the first one's agent as `peer__<tool>`, a call changes the *other* thread (and
//! never the caller's own workspace), and the tools that declare `action_and_reasoning`
//! themselves get the agent's sentence passed on. Both engines.

use std::time::Duration;

use serde_json::{Value, json};

use super::{McpSetup, quick, steps};
use crate::common::{
    TestDb,
    agent::whole_turn,
    mock_llm::{Script, call},
    server::TestServer,
};

backend_tests! {
    async fn a_haico_uses_another_haicos_tools_over_http(engine) {
        let other_db = TestDb::new(engine).await;
        let other = TestServer::start(&other_db.db).await;
        let url = other.url("/mcp/shared");
        let setup = McpSetup::new(
            engine,
            json!({"mcpServers": {"peer": {"url": url, "headers": {"X-Test": "secret-value"}}}}),
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
        let objective = other.get("/api/threads/shared/objective").await.expect(200);
        assert_eq!(objective["objective"], "Written from the other haico");
        let history = other.get("/api/threads/shared/history").await.expect(200);
        assert!(history.to_string().contains("I set the shared objective."), "{history}");
        // This one's workspace did not.
        let mine = setup.server.get("/api/threads/mine/workspace").await.expect(200);
        assert_eq!(mine["objective"], Value::Null);

        setup.cleanup().await;
        other.shutdown().await;
        other_db.cleanup().await;
    }
}
