//! A call of another MCP server's tool is a span of the turn's trace, and the server is told
//! that span in the request's `_meta.traceparent` (MCP's SEP-414): here a server written with
//! the official Python SDK reads it back.

use std::time::Duration;

use serde_json::json;

use super::{
    export_to,
    receiver::{Received, Receiver},
    traces::{CALLER_SPAN, TRACE, case},
};
use crate::{
    common::{self, agent::whole_turn, mock_llm::Script, mock_llm::call, sse::SseReader},
    mcp_client::{McpSetup, python_entry, quick, steps},
};

backend_tests! {
    async fn another_servers_tool_is_told_the_trace(engine) {
        needs!(python_mcp);
        if !common::isolated::alone(&test_name!(case(engine))) {
            return;
        }
        let receiver = Receiver::start().await;
        let telemetry = export_to(&receiver.url, Duration::from_secs(5), 2048);
        let name = format!("traced-{}", case(engine));
        let tool = format!("{name}__trace_context");
        let setup = McpSetup::new(
            engine,
            json!({"mcpServers": {&name: python_entry(&[])}}),
            quick(Duration::from_secs(30)),
            vec![
                Script::tool_calls(vec![call(
                    &tool,
                    json!({"action_and_reasoning": "I check which trace I am in."}),
                )]),
                Script::text("Checked."),
            ],
        )
        .await;
        setup.wait_for(&name, "ready", |_| true).await;
        setup.server.create_thread("t").await;

        let response = setup
            .server
            .client
            .post(setup.server.url("/api/threads/t/chat"))
            .header("traceparent", format!("00-{TRACE}-{CALLER_SPAN}-01"))
            .json(&json!({"message": "Which trace?"}))
            .send()
            .await
            .unwrap();
        let frames = whole_turn(SseReader::from_response(response)).await;
        let stepped = steps(&frames);
        assert_eq!(stepped.len(), 1, "{frames:?}");
        let summary = stepped[0].1["summary"].as_str().unwrap_or("").to_string();

        let flush = || telemetry.flush(Duration::from_secs(5));
        let spans = receiver.wait_for("invoke_agent haico", flush).await;
        let turn = spans.iter().find(|s| s.name == "invoke_agent haico").unwrap();
        let calls: Vec<&Received> = spans
            .iter()
            .filter(|s| s.name == "tools/call trace_context")
            .collect();
        assert_eq!(calls.len(), 1, "{spans:#?}");
        let mcp_call = calls[0];
        assert_eq!((mcp_call.trace.as_str(), mcp_call.kind), (TRACE, 3), "a client span of the trace");
        assert_eq!(mcp_call.attr_str("mcp.method.name"), "tools/call");
        assert_eq!(mcp_call.attr_str("server"), name);
        assert_eq!(mcp_call.parent, turn.id, "a step of the turn");
        // The server read the trace context of haico's call span.
        assert!(
            summary.contains(&format!("traceparent=00-{TRACE}-{}-01", mcp_call.id)),
            "{summary}"
        );
        setup.cleanup().await;
    }
}
