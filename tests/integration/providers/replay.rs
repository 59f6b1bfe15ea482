//! The replay provider: a JSON script played response by response, across calls.

use crate::common;

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use common::mock_llm::drain;
use haico::agent::{
    model::{ModelEvent, ModelRequest, ModelResponse, ProviderError, ToolCallRequest},
    providers::{ProviderConfig, ProviderKind, build_model},
};

fn write(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("script.json");
    std::fs::write(&path, text).unwrap();
    path
}

fn config(path: &Path) -> ProviderConfig {
    ProviderConfig {
        kind: Some(ProviderKind::Replay),
        replay_script: Some(path.to_path_buf()),
        ..ProviderConfig::default()
    }
}

const SCRIPT: &str = r#"{
  "responses": [
    {"text": "Let me set that up.",
     "tool_calls": [
       {"name": "set_objective", "arguments": {"objective": "Trip", "action_and_reasoning": "Goal."}},
       {"name": "add_todos", "arguments": "{\"steps\": ["}
     ]},
    {"tool_calls": [{"name": "list_todos"}]},
    {"text": "All done.", "delay_ms": 150}
  ]
}"#;

#[tokio::test]
async fn plays_responses_in_order_across_calls() {
    let dir = tempfile::tempdir().unwrap();
    let model = build_model(&config(&write(dir.path(), SCRIPT))).unwrap();
    assert!(model.describe().contains("3 responses"));
    let request = ModelRequest::default();

    let (events, error) = drain(model.stream(&request).await.unwrap()).await;
    assert!(error.is_none());
    assert_eq!(
        events[..4],
        [
            ModelEvent::TextDelta("Let ".into()),
            ModelEvent::TextDelta("me ".into()),
            ModelEvent::TextDelta("set ".into()),
            ModelEvent::TextDelta("that ".into()),
        ]
    );
    let first = ModelResponse::collect(Box::pin(futures::stream::iter(events.into_iter().map(Ok))))
        .await
        .unwrap();
    assert_eq!(first.text, "Let me set that up.");
    assert_eq!(
        first.tool_calls,
        [
            ToolCallRequest {
                id: "call_1".into(),
                name: "set_objective".into(),
                arguments: r#"{"objective":"Trip","action_and_reasoning":"Goal."}"#.into()
            },
            ToolCallRequest {
                id: "call_2".into(),
                name: "add_todos".into(),
                arguments: r#"{"steps": ["#.into()
            }
        ]
    );
    assert_eq!(first.stop_reason.as_deref(), Some("tool_calls"));

    let second = ModelResponse::collect(model.stream(&request).await.unwrap())
        .await
        .unwrap();
    assert_eq!(second.tool_calls[0].id, "call_3");
    assert_eq!(second.tool_calls[0].arguments, "{}");

    let started = Instant::now();
    let third = ModelResponse::collect(model.stream(&request).await.unwrap())
        .await
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_eq!(third.text, "All done.");
    assert_eq!(third.stop_reason.as_deref(), Some("stop"));

    let error = model.stream(&request).await.err().unwrap();
    assert!(
        matches!(&error, ProviderError::ReplayExhausted { used: 3, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("script.json"));
}

#[tokio::test]
async fn a_scripted_error_fails_the_stream_after_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        r#"{"responses": [{"text": "Partial answer", "error": "connection reset"}]}"#,
    );
    let model = build_model(&config(&path)).unwrap();
    let (events, error) = drain(model.stream(&ModelRequest::default()).await.unwrap()).await;
    assert_eq!(events.len(), 2);
    assert_eq!(
        error,
        Some(ProviderError::StreamCut("connection reset".into()))
    );
}

#[test]
fn an_invalid_script_is_rejected_with_path_and_position() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "{\"responses\": [\n  {\"text\": \"ok\"},\n  {\"tool_calls\": [{\"name\": 5}]}\n]}",
    );
    let error = build_model(&config(&path)).err().unwrap();
    let text = error.to_string();
    assert!(matches!(error, ProviderError::ReplayScript { .. }));
    assert!(text.contains("script.json"), "{text}");
    assert!(text.contains("line 3"), "{text}");
    assert!(text.contains("responses[1].tool_calls[0].name"), "{text}");
}

#[test]
fn a_missing_script_file_is_reported() {
    let error = build_model(&config(Path::new("/nonexistent/haico-replay.json")))
        .err()
        .unwrap();
    assert!(
        error.to_string().contains("/nonexistent/haico-replay.json"),
        "{error}"
    );
}

#[tokio::test]
async fn replay_without_a_script_is_not_configured() {
    let model = build_model(&ProviderConfig {
        kind: Some(ProviderKind::Replay),
        ..ProviderConfig::default()
    })
    .unwrap();
    let error = model.stream(&ModelRequest::default()).await.err().unwrap();
    assert!(matches!(error, ProviderError::NotConfigured(_)));
    assert!(
        error.to_string().contains("HAICO_LLM_REPLAY_FILE"),
        "{error}"
    );
}

#[tokio::test]
async fn dropping_a_delayed_response_cancels_it_and_consumes_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        r#"{"responses": [{"text": "slow", "delay_ms": 10000}, {"text": "next"}]}"#,
    );
    let model = build_model(&config(&path)).unwrap();
    let stream = model.stream(&ModelRequest::default()).await.unwrap();
    let cancelled = tokio::time::timeout(Duration::from_millis(100), drain(stream)).await;
    assert!(cancelled.is_err(), "the delay is still running");
    let next = ModelResponse::collect(model.stream(&ModelRequest::default()).await.unwrap())
        .await
        .unwrap();
    assert_eq!(next.text, "next");
}
