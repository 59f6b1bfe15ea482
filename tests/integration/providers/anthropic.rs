//! The Anthropic provider against a mock Messages API server speaking the real event stream:
//! text and tool_use blocks, the request it sends, retries, timeouts, `error` events and
//! broken streams.

use crate::common;

use std::time::{Duration, Instant};

use common::mock_llm::{MockLlm, Script, anthropic_event, call, drain, raw_call, text_of};
use haico::agent::{
    CallUsage,
    model::{
        ChatMessage, ChatModel, ModelEvent, ModelRequest, ModelResponse, ProviderError,
        ToolDefinition,
    },
    providers::{ProviderConfig, anthropic::DEFAULT_MAX_TOKENS, build_model},
};
use serde_json::{Value, json};

fn tools() -> Vec<ToolDefinition> {
    vec![ToolDefinition {
        name: "toggle_todos".into(),
        description: "Ticks steps of the plan off.".into(),
        parameters: json!({"type": "object", "properties": {"indices": {"type": "array"}}}),
    }]
}

fn request() -> ModelRequest {
    ModelRequest {
        system: "You are haico. Plan: 1. [ ] pack".into(),
        messages: vec![ChatMessage::user("I packed")],
        tools: tools(),
        ..ModelRequest::default()
    }
}

fn model(config: &ProviderConfig) -> std::sync::Arc<dyn ChatModel> {
    build_model(config).unwrap()
}

#[tokio::test]
async fn streams_text_then_usage_and_finish() {
    let mock = MockLlm::anthropic(vec![Script::text("Nice work, ticking it off.")]).await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    let (events, error) = drain(stream).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(text_of(&events), "Nice work, ticking it off.");
    assert!(events.len() > 8, "text should arrive in many deltas");
    assert_eq!(
        &events[events.len() - 2..],
        [
            ModelEvent::Usage(CallUsage {
                prompt_tokens: Some(42),
                cached_tokens: Some(0),
                completion_tokens: Some(7),
                ..CallUsage::default()
            }),
            ModelEvent::Finished {
                stop_reason: Some("end_turn".into())
            }
        ]
    );
}

#[tokio::test]
async fn assembles_tool_use_blocks_from_input_json_deltas() {
    let first = json!({"indices": [1, 2], "action_and_reasoning": "The user packed."});
    let second = json!({"objective": "Travel light", "action_and_reasoning": "Refining."});
    let mock = MockLlm::anthropic(vec![Script::text_and_tool_calls(
        "On it.",
        vec![
            call("toggle_todos", first.clone()),
            call("set_objective", second.clone()),
        ],
    )])
    .await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    let (events, error) = drain(stream).await;
    assert!(error.is_none(), "{error:?}");
    let calls: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::ToolCall(call) => Some(call.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("toolu_mock_1", "toggle_todos")
    );
    assert_eq!(
        (calls[1].id.as_str(), calls[1].name.as_str()),
        ("toolu_mock_2", "set_objective")
    );
    let parsed: Vec<Value> = calls
        .iter()
        .map(|c| serde_json::from_str(&c.arguments).unwrap())
        .collect();
    assert_eq!(parsed, [first, second]);
    // Text comes before the calls, and the answer ends with usage and the stop reason.
    assert!(matches!(events[0], ModelEvent::TextDelta(_)));
    assert_eq!(
        events.last(),
        Some(&ModelEvent::Finished {
            stop_reason: Some("tool_use".into())
        })
    );
}

#[tokio::test]
async fn malformed_tool_input_is_passed_through_raw() {
    let mock = MockLlm::anthropic(vec![Script::tool_calls(vec![raw_call(
        "toggle_todos",
        r#"{"indices": [1,"#,
    )])])
    .await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    let response = ModelResponse::collect(stream).await.unwrap();
    assert_eq!(response.tool_calls[0].arguments, r#"{"indices": [1,"#);
}

#[tokio::test]
async fn a_tool_use_without_input_fragments_has_empty_object_arguments() {
    let mock = MockLlm::anthropic(vec![Script::raw(vec![
        anthropic_event("message_start", json!({"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "content": [],
            "model": "m", "usage": {"input_tokens": 3, "output_tokens": 1}}})),
        anthropic_event("content_block_start", json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_x", "name": "list_todos", "input": {}}})),
        anthropic_event("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        anthropic_event("message_delta", json!({"type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 5}})),
        anthropic_event("message_stop", json!({"type": "message_stop"})),
    ])])
    .await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    let response = ModelResponse::collect(stream).await.unwrap();
    assert_eq!(response.tool_calls[0].arguments, "{}");
    assert_eq!(
        response
            .usage
            .map(|u| (u.prompt_tokens, u.cached_tokens, u.completion_tokens)),
        Some((Some(3), Some(0), Some(5)))
    );
}

#[tokio::test]
async fn sends_system_on_top_tools_with_input_schema_and_grouped_tool_results() {
    let mock = MockLlm::anthropic(vec![
        Script::tool_calls(vec![
            call("toggle_todos", json!({"indices": [1]})),
            raw_call("toggle_todos", "{nope"),
        ]),
        Script::text("Ticked."),
    ])
    .await;
    let model = model(&mock.config());
    let first = ModelResponse::collect(model.stream(&request()).await.unwrap())
        .await
        .unwrap();
    let mut next = request();
    next.system = "You are haico. Plan: 1. [x] pack".into();
    next.messages
        .push(ChatMessage::assistant("", first.tool_calls.clone()));
    next.messages.push(ChatMessage::tool(
        &first.tool_calls[0].id,
        "toggle_todos",
        r#"{"success":true,"summary":"toggled 1"}"#,
    ));
    next.messages.push(ChatMessage::tool(
        &first.tool_calls[1].id,
        "toggle_todos",
        r#"{"success":false,"error":"invalid JSON"}"#,
    ));
    ModelResponse::collect(model.stream(&next).await.unwrap())
        .await
        .unwrap();

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let first_request = &requests[0];
    assert_eq!(first_request.path, "/v1/messages");
    assert_eq!(first_request.header("x-api-key"), Some("test-key"));
    assert_eq!(
        first_request.header("anthropic-version"),
        Some("2023-06-01")
    );
    assert_eq!(first_request.header("authorization"), None);
    let body = &first_request.body;
    assert_eq!(body["model"], "mock-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
    assert_eq!(
        body["system"][0]["text"],
        "You are haico. Plan: 1. [ ] pack"
    );
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(
        body["tools"],
        json!([{"name": "toggle_todos", "description": "Ticks steps of the plan off.",
                "input_schema": tools()[0].parameters}])
    );
    // The conversation's last block is a cache breakpoint.
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "I packed",
                                             "cache_control": {"type": "ephemeral"}}]}])
    );

    let body = &requests[1].body;
    assert_eq!(
        body["system"][0]["text"],
        "You are haico. Plan: 1. [x] pack"
    );
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "I packed"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_mock_1", "name": "toggle_todos", "input": {"indices": [1]}},
                {"type": "tool_use", "id": "toolu_mock_2", "name": "toggle_todos", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_mock_1",
                 "content": "{\"success\":true,\"summary\":\"toggled 1\"}"},
                {"type": "tool_result", "tool_use_id": "toolu_mock_2",
                 "content": "{\"success\":false,\"error\":\"invalid JSON\"}",
                 "cache_control": {"type": "ephemeral"}}
            ]}
        ])
    );
}

#[tokio::test]
async fn an_overloaded_529_is_retried() {
    let mock = MockLlm::anthropic(vec![
        Script::status(529, "Overloaded"),
        Script::text("back"),
    ])
    .await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    assert_eq!(ModelResponse::collect(stream).await.unwrap().text, "back");
    assert_eq!(mock.request_count(), 2);
}

#[tokio::test]
async fn a_429_waits_for_retry_after_before_retrying() {
    let mock = MockLlm::anthropic(vec![Script::rate_limited(1), Script::text("ok")]).await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    assert_eq!(ModelResponse::collect(stream).await.unwrap().text, "ok");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let waited = requests[1].received_at - requests[0].received_at;
    assert!(
        waited >= Duration::from_millis(950),
        "waited only {waited:?}"
    );
}

#[tokio::test]
async fn a_hanging_server_times_out_after_the_retries() {
    let mock = MockLlm::anthropic(vec![Script::hang(), Script::hang(), Script::hang()]).await;
    let config = ProviderConfig {
        timeout: Duration::from_millis(250),
        ..mock.config()
    };
    let started = Instant::now();
    let error = model(&config).stream(&request()).await.err().unwrap();
    assert!(matches!(error, ProviderError::Timeout { .. }), "{error:?}");
    assert_eq!(mock.request_count(), 3, "one attempt and two retries");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_stream_cut_mid_way_ends_with_an_error_after_the_partial_events() {
    let mock = MockLlm::anthropic(vec![
        Script::text("Half of this arrives.")
            .chunk_delay(Duration::from_millis(10))
            .cut_after(6),
        Script::text("not used"),
    ])
    .await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    let (events, error) = drain(stream).await;
    assert!(
        matches!(error, Some(ProviderError::StreamCut(_))),
        "{error:?}"
    );
    // message_start, block start, ping, then three text deltas.
    assert_eq!(text_of(&events), "Half of t");
    assert_eq!(mock.request_count(), 1);
}

#[tokio::test]
async fn an_error_event_mid_stream_is_an_api_error() {
    let mock = MockLlm::anthropic(vec![Script::raw(vec![
        anthropic_event(
            "message_start",
            json!({"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "content": [],
            "model": "m", "usage": {"input_tokens": 3, "output_tokens": 1}}}),
        ),
        anthropic_event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        ),
        anthropic_event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": "Partial"}}),
        ),
        anthropic_event(
            "error",
            json!({"type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ])])
    .await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(text_of(&events), "Partial");
    let error = error.unwrap();
    assert_eq!(
        error,
        ProviderError::Api {
            kind: "overloaded_error".into(),
            message: "Overloaded".into()
        }
    );
    assert!(error.is_transient());
}

#[tokio::test]
async fn malformed_event_json_is_a_protocol_error() {
    let mock = MockLlm::anthropic(vec![Script::malformed()]).await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    let (_, error) = drain(stream).await;
    assert!(
        matches!(&error, Some(ProviderError::Protocol(text)) if text.contains("content_block_delta")),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_answer_without_message_stop_is_cut() {
    let mock = MockLlm::anthropic(vec![Script::raw(vec![
        anthropic_event(
            "message_start",
            json!({"type": "message_start", "message": {
            "usage": {"input_tokens": 1, "output_tokens": 1}}}),
        ),
        anthropic_event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": "Hi"}}),
        ),
    ])])
    .await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(text_of(&events), "Hi");
    assert!(
        matches!(error, Some(ProviderError::StreamCut(_))),
        "{error:?}"
    );
}
