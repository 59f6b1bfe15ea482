//! One agent turn is one trace, parented on the caller's `traceparent`: the chat request, the
//! turn, each model call (with the tokens the model reported), each tool call (with the
//! model's `action_and_reasoning` as its event) and each call's database transaction, and the
//! model's server is told the trace too. A collector that never answers changes no answer and
//! adds no wait; what it misses is counted in `/metrics`.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{
    export_to,
    receiver::{Received, Receiver, Silent},
};
use crate::common::{
    self,
    agent::{Setup, whole_turn},
    mock_llm::{Script, call},
    sse::SseReader,
};

/// The caller's trace: its id and the span the chat request is a child of.
pub(super) const TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
pub(super) const CALLER_SPAN: &str = "b7ad6b7169203331";

pub(super) fn case(engine: common::Engine) -> &'static str {
    match engine {
        common::Engine::Sqlite => "sqlite",
        common::Engine::Postgres => "postgres",
    }
}

fn one<'a>(spans: &'a [Received], name: &str) -> &'a Received {
    let found: Vec<&Received> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "spans named {name:?}: {found:#?}");
    found[0]
}

fn children<'a>(spans: &'a [Received], parent: &Received) -> Vec<&'a Received> {
    spans.iter().filter(|s| s.parent == parent.id).collect()
}

backend_tests! {
    async fn a_turn_is_one_trace_from_request_to_transaction(engine) {
        if !common::isolated::alone(&test_name!(case(engine))) {
            return;
        }
        let receiver = Receiver::start().await;
        let telemetry = export_to(&receiver.url, Duration::from_secs(5), 2048);
        let thread = format!("otel-{}", case(engine));
        let first = Script {
            usage: (120, 30),
            ..Script::tool_calls(vec![
                call("set_objective", json!({
                    "objective": "Plan a trip",
                    "action_and_reasoning": "Noting the goal first."
                })),
                call("add_todos", json!({
                    "steps": [{"text": "Book the train"}],
                    "action_and_reasoning": "Adding the first step."
                })),
            ])
        };
        let second = Script { usage: (180, 4), ..Script::text("Done.") };
        let setup = Setup::openai(engine, vec![first, second]).await;
        setup.server.create_thread(&thread).await;

        let response = setup
            .server
            .client
            .post(setup.server.url(&format!("/api/threads/{thread}/chat")))
            .header("traceparent", format!("00-{TRACE}-{CALLER_SPAN}-01"))
            .json(&json!({"message": "Help me plan a trip"}))
            .send()
            .await
            .unwrap();
        let frames = whole_turn(SseReader::from_response(response)).await;
        assert_eq!(frames.last().unwrap().event, "done");

        let flush = || telemetry.flush(Duration::from_secs(5));
        let all = receiver.wait_for("invoke_agent haico", flush).await;
        let spans: Vec<Received> = all.into_iter().filter(|s| s.trace == TRACE).collect();

        // The request, a child of the caller's span, named for its route.
        let request = one(&spans, "POST /api/threads/{thread_id}/chat");
        assert_eq!(request.parent, CALLER_SPAN);
        assert_eq!(request.kind, 2, "a server span");
        assert_ne!(request.status, 2, "not an error");
        assert_eq!(request.attr_str("http.route"), "/api/threads/{thread_id}/chat");
        assert_eq!(request.attr_i64("http.response.status_code"), Some(200));
        assert_eq!(request.resource.get("service.name"), Some(&json!("haico")));

        // The turn, under the request.
        let turn = one(&spans, "invoke_agent haico");
        assert_eq!(turn.parent, request.id);
        assert_eq!(turn.attr_str("gen_ai.operation.name"), "invoke_agent");
        assert_eq!(turn.attr_str("gen_ai.conversation.id"), thread);
        assert_eq!(turn.attr_str("haico.turn.outcome"), "answered");
        assert_eq!(turn.attr_i64("turn"), Some(1));
        assert_eq!(turn.attr_i64("gen_ai.usage.input_tokens"), Some(300));
        assert_eq!(turn.attr_i64("gen_ai.usage.output_tokens"), Some(34));

        // Both model calls, under the turn, with the tokens each answer reported.
        let chats: Vec<&Received> = spans.iter().filter(|s| s.name == "chat mock-model").collect();
        assert_eq!(chats.len(), 2, "{spans:#?}");
        let mut tokens: Vec<(Option<i64>, Option<i64>)> = chats
            .iter()
            .map(|c| (c.attr_i64("gen_ai.usage.input_tokens"), c.attr_i64("gen_ai.usage.output_tokens")))
            .collect();
        tokens.sort();
        assert_eq!(tokens, vec![(Some(120), Some(30)), (Some(180), Some(4))]);
        for chat in &chats {
            assert_eq!(chat.parent, turn.id);
            assert_eq!(chat.kind, 3, "a client span");
            assert_eq!(chat.attr_str("gen_ai.operation.name"), "chat");
            assert_eq!(chat.attr_str("gen_ai.provider.name"), "openai");
            assert_eq!(chat.attr_str("gen_ai.request.model"), "mock-model");
            assert!(!chat.attr_str("gen_ai.response.finish_reasons").is_empty(), "{chat:#?}");
            assert!(chat.attr("gen_ai.response.time_to_first_chunk").is_some(), "{chat:#?}");
            // No message content unless asked for.
            assert!(chat.attr("gen_ai.input.messages").is_none());
            assert!(chat.attr("gen_ai.output.messages").is_none());
        }

        // The model's server was told the trace, with its own call as the parent.
        let told: Vec<String> = setup
            .mock
            .requests()
            .iter()
            .map(|r| r.header("traceparent").unwrap_or("").to_string())
            .collect();
        let mut expected: Vec<String> = chats.iter().map(|c| format!("00-{TRACE}-{}-01", c.id)).collect();
        let mut told_sorted = told.clone();
        told_sorted.sort();
        expected.sort();
        assert_eq!(told_sorted, expected);

        // Both tool calls, under the turn, each with its reasoning as an event and its
        // transaction beneath it.
        let db_system = match engine {
            common::Engine::Sqlite => "sqlite",
            common::Engine::Postgres => "postgresql",
        };
        for (tool, reasoning) in [
            ("set_objective", "Noting the goal first."),
            ("add_todos", "Adding the first step."),
        ] {
            let span = one(&spans, &format!("execute_tool {tool}"));
            assert_eq!(span.parent, turn.id);
            assert_eq!(span.attr_str("gen_ai.operation.name"), "execute_tool");
            assert_eq!(span.attr_str("gen_ai.tool.name"), tool);
            assert_eq!(span.attr("haico.tool.success"), Some(&json!(true)));
            assert!(
                span.events.iter().any(|(_, attrs)| attrs.get("action_and_reasoning") == Some(&json!(reasoning))),
                "{span:#?}"
            );
            let writes: Vec<&Received> = children(&spans, span)
                .into_iter()
                .filter(|c| c.attr_str("db.system.name") == db_system)
                .collect();
            assert!(!writes.is_empty(), "no transaction under {tool}: {spans:#?}");
            assert!(
                writes.iter().any(|w| w.name.ends_with(" write")
                    && w.attr_str("haico.db.outcome") == "commit"),
                "{writes:#?}"
            );
        }
        setup.cleanup().await;
    }

    async fn a_collector_that_never_answers_changes_no_answer_and_adds_no_wait(engine) {
        if !common::isolated::alone(&test_name!(case(engine))) {
            return;
        }
        let silent = Silent::start().await;
        // A small queue, so it fills while every export waits out its two seconds.
        let telemetry = export_to(&silent.url, Duration::from_secs(2), 16);
        let thread = format!("otel-silent-{}", case(engine));
        let setup = Setup::openai(engine, Vec::new()).await;
        setup.server.create_thread(&thread).await;

        let mut took = Vec::new();
        for i in 0..40 {
            let started = Instant::now();
            let summary = setup
                .server
                .tool_ok(&thread, "add_todos", json!({
                    "steps": [{"text": format!("Step {i}")}],
                    "action_and_reasoning": "One more step."
                }))
                .await;
            took.push(started.elapsed());
            assert!(!summary.is_empty());
        }
        let steps = setup.server.workspace(&thread).await["todos"].as_array().map_or(0, Vec::len);
        assert_eq!(steps, 40, "every call did its work");
        took.sort();
        let (median, worst) = (took[took.len() / 2], took[took.len() - 1]);
        // An exporter in the request's way would make some call wait out an export (2 s).
        assert!(worst < Duration::from_secs(1), "median {median:?}, worst {worst:?}");

        // What the collector missed is counted once the exports have timed out.
        telemetry.flush(Duration::from_secs(3)).await;
        let mut dropped = 0.0;
        for _ in 0..50 {
            let text = setup.server.client.get(setup.server.url("/metrics")).send().await.unwrap().text().await.unwrap();
            dropped = text
                .lines()
                .find_map(|l| l.strip_prefix("haico_otel_spans_dropped_total "))
                .and_then(|v| v.trim().parse::<f64>().ok())
                .unwrap_or(0.0);
            if dropped > 0.0 {
                assert!(!text.lines().any(|l| l.starts_with("haico_otel_spans_exported_total ") && !l.ends_with(" 0")), "{text}");
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(dropped >= 40.0, "dropped spans counted: {dropped}");
        setup.cleanup().await;
    }
}
