//! The OpenAI-compatible provider against a mock Chat Completions server speaking the real
//! SSE format: streamed text and tool calls, the request it sends, retries, timeouts and
//! broken streams.

use crate::common;

use std::time::{Duration, Instant};

use common::mock_llm::{MockLlm, Script, call, drain, raw_call, text_of};
use haico::agent::{
    CallUsage,
    model::{
        ChatMessage, ChatModel, ModelEvent, ModelRequest, ModelResponse, ProviderError,
        ToolDefinition,
    },
    providers::{ProviderConfig, build_model},
};
use serde_json::{Value, json};

fn tools() -> Vec<ToolDefinition> {
    vec![ToolDefinition {
        name: "add_todos".into(),
        description: "Adds steps to the plan.".into(),
        parameters: json!({"type": "object", "properties": {"steps": {"type": "array"}},
                           "required": ["steps"]}),
    }]
}

fn request() -> ModelRequest {
    ModelRequest {
        system: "You are haico. Plan: (empty)".into(),
        messages: vec![ChatMessage::user("Plan my trip to Lisbon")],
        tools: tools(),
        ..ModelRequest::default()
    }
}

fn model(config: &ProviderConfig) -> std::sync::Arc<dyn ChatModel> {
    build_model(config).unwrap()
}

#[tokio::test]
async fn streams_text_in_chunks_then_usage_and_finish() {
    let mock = MockLlm::openai(vec![Script::text("Hello there, traveller!")]).await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    let (events, error) = drain(stream).await;
    assert!(error.is_none(), "{error:?}");
    let deltas = events
        .iter()
        .filter(|e| matches!(e, ModelEvent::TextDelta(_)))
        .count();
    assert!(deltas >= 5, "text should arrive in many chunks: {events:?}");
    assert_eq!(text_of(&events), "Hello there, traveller!");
    let tail = &events[events.len() - 2..];
    assert_eq!(
        tail,
        [
            ModelEvent::Usage(CallUsage {
                prompt_tokens: Some(42),
                cached_tokens: None,
                completion_tokens: Some(7),
                ..CallUsage::default()
            }),
            ModelEvent::Finished {
                stop_reason: Some("stop".into())
            }
        ]
    );
}

#[tokio::test]
async fn reads_cached_tokens_from_openai_usage_and_from_llama_cpp_timings() {
    let mock = MockLlm::openai(vec![
        Script::text("cached").cached(30),
        Script {
            llama_timings: true,
            ..Script::text("timed").cached(40)
        },
    ])
    .await;
    let mut seen = Vec::new();
    for _ in 0..2 {
        let stream = model(&mock.config()).stream(&request()).await.unwrap();
        seen.push(ModelResponse::collect(stream).await.unwrap().usage.unwrap());
    }
    assert_eq!(
        (
            seen[0].prompt_tokens,
            seen[0].cached_tokens,
            seen[0].completion_tokens
        ),
        (Some(42), Some(30), Some(7)),
        "OpenAI: usage.prompt_tokens_details.cached_tokens"
    );
    assert_eq!(
        (
            seen[1].prompt_tokens,
            seen[1].cached_tokens,
            seen[1].completion_tokens
        ),
        (Some(42), Some(40), Some(7)),
        "llama.cpp: timings.cache_n where usage has no cache details"
    );
}

#[tokio::test]
async fn assembles_several_tool_calls_from_many_chunks() {
    let first = json!({"steps": [{"text": "Book flights"}, {"text": "Find a hotel", "depth": 0}],
                       "action_and_reasoning": "Laying out the plan."});
    let second = json!({"objective": "A weekend in Lisbon", "action_and_reasoning": "Goal."});
    let mock = MockLlm::openai(vec![Script::text_and_tool_calls(
        "Let me plan.",
        vec![
            call("add_todos", first.clone()),
            call("set_objective", second.clone()),
        ],
    )])
    .await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    let response = ModelResponse::collect(stream).await.unwrap();
    assert_eq!(response.text, "Let me plan.");
    assert_eq!(response.stop_reason.as_deref(), Some("tool_calls"));
    assert_eq!(
        response
            .usage
            .map(|u| (u.prompt_tokens, u.completion_tokens)),
        Some((Some(42), Some(7)))
    );
    let names: Vec<&str> = response
        .tool_calls
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["add_todos", "set_objective"]);
    assert_eq!(response.tool_calls[0].id, "call_mock_1");
    assert_eq!(response.tool_calls[1].id, "call_mock_2");
    let parsed: Vec<Value> = response
        .tool_calls
        .iter()
        .map(|c| serde_json::from_str(&c.arguments).unwrap())
        .collect();
    assert_eq!(parsed, [first, second]);
}

#[tokio::test]
async fn malformed_arguments_are_passed_through_raw() {
    let mock = MockLlm::openai(vec![Script::tool_calls(vec![raw_call(
        "add_todos",
        r#"{"steps": [{"text": "unterminated"#,
    )])])
    .await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    let response = ModelResponse::collect(stream).await.unwrap();
    assert_eq!(
        response.tool_calls[0].arguments,
        r#"{"steps": [{"text": "unterminated"#
    );
}

#[tokio::test]
async fn sends_system_tools_and_tool_results_in_chat_completions_format() {
    let mock = MockLlm::openai(vec![
        Script::tool_calls(vec![
            call("add_todos", json!({"steps": [{"text": "a"}]})),
            raw_call("add_todos", "{broken"),
        ]),
        Script::text("Done."),
    ])
    .await;
    let model = model(&mock.config());
    let first = ModelResponse::collect(model.stream(&request()).await.unwrap())
        .await
        .unwrap();
    let mut next = request();
    next.system = "You are haico. Plan: 1. [ ] a".into();
    next.messages
        .push(ChatMessage::assistant("", first.tool_calls.clone()));
    for (call, envelope) in first.tool_calls.iter().zip([
        r#"{"success":true,"summary":"added 1 step"}"#,
        r#"{"success":false,"error":"arguments are not valid JSON"}"#,
    ]) {
        next.messages
            .push(ChatMessage::tool(&call.id, &call.name, envelope));
    }
    next.max_tokens = Some(300);
    let second = ModelResponse::collect(model.stream(&next).await.unwrap())
        .await
        .unwrap();
    assert_eq!(second.text, "Done.");

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let first_request = &requests[0];
    assert_eq!(first_request.path, "/v1/chat/completions");
    assert_eq!(
        first_request.header("authorization"),
        Some("Bearer test-key")
    );
    assert_eq!(first_request.body["model"], "mock-model");
    assert_eq!(first_request.body["stream"], true);
    assert_eq!(
        first_request.body["stream_options"],
        json!({"include_usage": true})
    );
    assert!(first_request.body.get("max_tokens").is_none());
    assert_eq!(
        first_request.body["tools"],
        json!([{"type": "function", "function": {
            "name": "add_todos", "description": "Adds steps to the plan.",
            "parameters": tools()[0].parameters
        }}])
    );
    let body = &requests[1].body;
    assert_eq!(body["max_tokens"], 300);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are haico. Plan: 1. [ ] a"},
            {"role": "user", "content": "Plan my trip to Lisbon"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_mock_1", "type": "function", "function":
                    {"name": "add_todos", "arguments": "{\"steps\":[{\"text\":\"a\"}]}"}},
                // Not JSON: sent back as `{}`, the tool result says what was wrong.
                {"id": "call_mock_2", "type": "function", "function":
                    {"name": "add_todos", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_mock_1",
             "content": "{\"success\":true,\"summary\":\"added 1 step\"}"},
            {"role": "tool", "tool_call_id": "call_mock_2",
             "content": "{\"success\":false,\"error\":\"arguments are not valid JSON\"}"}
        ])
    );
}

#[tokio::test]
async fn a_local_server_without_key_gets_no_authorization_header() {
    let mock = MockLlm::openai(vec![Script::text("hi")]).await;
    let config = ProviderConfig {
        api_key: None,
        ..mock.config()
    };
    let stream = model(&config).stream(&request()).await.unwrap();
    ModelResponse::collect(stream).await.unwrap();
    assert_eq!(mock.requests()[0].header("authorization"), None);
}

#[tokio::test]
async fn a_500_is_retried_and_the_second_attempt_streams() {
    let mock = MockLlm::openai(vec![Script::status(500, "boom"), Script::text("recovered")]).await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    let response = ModelResponse::collect(stream).await.unwrap();
    assert_eq!(response.text, "recovered");
    assert_eq!(mock.request_count(), 2);
}

#[tokio::test]
async fn a_429_waits_for_retry_after_before_retrying() {
    let mock = MockLlm::openai(vec![Script::rate_limited(1), Script::text("ok")]).await;
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
async fn a_429_asking_for_too_long_a_wait_fails_at_once() {
    let mock = MockLlm::openai(vec![Script::rate_limited(3600), Script::text("never")]).await;
    let error = model(&mock.config())
        .stream(&request())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(error, ProviderError::RateLimited { retry_after: Some(d), .. } if d == Duration::from_secs(3600)),
        "{error:?}"
    );
    assert_eq!(mock.request_count(), 1);
}

#[tokio::test]
async fn retries_stop_after_max_retries() {
    let mock = MockLlm::openai(vec![
        Script::status(503, "a"),
        Script::status(502, "b"),
        Script::status(500, "c"),
        Script::text("too late"),
    ])
    .await;
    let error = model(&mock.config())
        .stream(&request())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&error, ProviderError::Status { code: 500, body } if body.contains("c")),
        "{error:?}"
    );
    assert_eq!(
        mock.request_count(),
        3,
        "one attempt and max_retries = 2 retries"
    );
}

#[tokio::test]
async fn a_client_error_is_not_retried() {
    let mock = MockLlm::openai(vec![
        Script::status(401, "invalid api key"),
        Script::text("x"),
    ])
    .await;
    let error = model(&mock.config())
        .stream(&request())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&error, ProviderError::Status { code: 401, body } if body.contains("invalid api key")),
        "{error:?}"
    );
    assert!(!error.is_transient());
    assert_eq!(mock.request_count(), 1);
}

#[tokio::test]
async fn a_hanging_server_times_out_after_the_retries() {
    let mock = MockLlm::openai(vec![Script::hang(), Script::hang()]).await;
    let config = ProviderConfig {
        timeout: Duration::from_millis(300),
        max_retries: 1,
        ..mock.config()
    };
    let started = Instant::now();
    let error = model(&config).stream(&request()).await.err().unwrap();
    let elapsed = started.elapsed();
    assert!(matches!(error, ProviderError::Timeout { .. }), "{error:?}");
    assert_eq!(mock.request_count(), 2);
    assert!(
        elapsed >= Duration::from_millis(600) && elapsed < Duration::from_secs(3),
        "{elapsed:?}"
    );
}

#[tokio::test]
async fn silence_after_the_response_head_is_a_retried_timeout() {
    let mock = MockLlm::openai(vec![Script::hang_after_head(), Script::text("second try")]).await;
    let config = ProviderConfig {
        timeout: Duration::from_millis(300),
        ..mock.config()
    };
    let stream = model(&config).stream(&request()).await.unwrap();
    assert_eq!(
        ModelResponse::collect(stream).await.unwrap().text,
        "second try"
    );
    assert_eq!(mock.request_count(), 2);
}

#[tokio::test]
async fn a_stream_cut_mid_way_ends_with_an_error_after_the_partial_events() {
    let mock = MockLlm::openai(vec![
        // The delay lets each frame reach the client before the connection is aborted.
        Script::text("This answer will not make it to the end.")
            .chunk_delay(Duration::from_millis(10))
            .cut_after(5),
        Script::text("not used"),
    ])
    .await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    let (events, error) = drain(stream).await;
    assert!(
        matches!(error, Some(ProviderError::StreamCut(_))),
        "{error:?} {events:?}"
    );
    assert!(error.unwrap().is_transient());
    assert_eq!(text_of(&events), "This answer ");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, ModelEvent::Finished { .. }))
    );
    assert_eq!(mock.request_count(), 1, "a started stream is never retried");
}

#[tokio::test]
async fn a_stall_mid_stream_is_an_idle_timeout() {
    let mock = MockLlm::openai(vec![Script::text("Slow answer here").stall_after(3)]).await;
    let config = ProviderConfig {
        timeout: Duration::from_millis(300),
        ..mock.config()
    };
    let stream = model(&config).stream(&request()).await.unwrap();
    let (events, error) = drain(stream).await;
    assert_eq!(text_of(&events), "Slow a");
    assert!(
        matches!(error, Some(ProviderError::Timeout { waiting_for, .. }) if waiting_for.contains("next chunk")),
        "{error:?}"
    );
    assert_eq!(mock.request_count(), 1);
}

#[tokio::test]
async fn malformed_event_json_is_a_protocol_error() {
    let mock = MockLlm::openai(vec![Script::malformed()]).await;
    let stream = model(&mock.config()).stream(&request()).await.unwrap();
    let (_, error) = drain(stream).await;
    assert!(
        matches!(&error, Some(ProviderError::Protocol(text)) if text.contains("chatcmpl-mock")),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_unreachable_endpoint_is_reported_after_retries() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let config = ProviderConfig {
        base_url: Some(format!("http://{addr}/v1")),
        max_retries: 1,
        retry_backoff: std::time::Duration::from_millis(10),
        ..MockLlm::openai(vec![]).await.config()
    };
    let error = model(&config).stream(&request()).await.err().unwrap();
    assert!(
        matches!(&error, ProviderError::Unreachable { url, .. } if url.ends_with("/v1/chat/completions")),
        "{error:?}"
    );
}

#[tokio::test]
async fn dropping_the_stream_aborts_the_request() {
    let long = "word ".repeat(200);
    let mock = MockLlm::openai(vec![
        Script::text(&long).chunk_delay(Duration::from_millis(20)),
    ])
    .await;
    let mut stream = model(&mock.config()).stream(&request()).await.unwrap();
    use futures::StreamExt;
    stream.next().await.unwrap().unwrap();
    stream.next().await.unwrap().unwrap();
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(5);
    while mock.aborted_bodies() == 0 {
        assert!(
            Instant::now() < deadline,
            "the mock never saw the client go away"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn describe_names_the_model_and_endpoint_but_not_the_key() {
    let mock = MockLlm::openai(vec![]).await;
    let text = model(&mock.config()).describe();
    assert!(
        text.contains("mock-model") && text.contains(&mock.base_url()),
        "{text}"
    );
    assert!(!text.contains("test-key"));
}

#[tokio::test]
async fn https_endpoints_go_through_tls() {
    // A plain-HTTP server spoken to over https: the TLS handshake fails cleanly, which shows
    // the TLS stack is built in and initialises without any network access.
    let mock = MockLlm::openai(vec![Script::text("never")]).await;
    let config = ProviderConfig {
        base_url: Some(format!("https://{}/v1", mock.addr)),
        max_retries: 0,
        ..mock.config()
    };
    let error = model(&config).stream(&request()).await.err().unwrap();
    assert!(
        matches!(&error, ProviderError::Unreachable { url, .. } if url.starts_with("https://")),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_success_that_is_not_an_event_stream_is_a_protocol_error() {
    // E.g. a server that ignores `stream: true` and answers with one JSON document.
    let mock = MockLlm::openai(vec![Script::status(200, "not streamed")]).await;
    let error = model(&mock.config())
        .stream(&request())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&error, ProviderError::Protocol(text) if text.contains("application/json") && text.contains("not streamed")),
        "{error:?}"
    );
    assert_eq!(mock.request_count(), 1);
}
