//! Agent turns when things go wrong: provider errors that are retried, rate limits, hangs,
//! malformed and unknown tool calls, a stream cut mid-way, and no model at all. Each through a
//! real server and a mock LLM; both engines.

use crate::common;
use crate::common::agent as agent_support;

use std::time::{Duration, Instant};

use agent_support::*;
use common::{
    TestDb,
    mock_llm::{MockLlm, Script, call, raw_call},
    server::TestServer,
};
use haico::{
    agent::{AgentConfig, providers::ProviderConfig},
    http::AppState,
};
use reqwest::Method;
use serde_json::{Value, json};

fn objective(text: &str) -> common::mock_llm::Call {
    call(
        "set_objective",
        json!({"action_and_reasoning": "I note the goal.", "objective": text}),
    )
}

backend_tests! {
    async fn a_500_is_retried_and_the_turn_completes(engine) {
        let setup = Setup::openai(
            engine,
            vec![Script::status(500, "the server had a moment"), Script::text("Recovered.")],
        )
        .await;
        setup.server.create_thread("flaky").await;
        let frames = whole_turn(setup.chat("flaky", "Hello").await).await;
        assert_eq!(shape(&frames), ["turn", "token…", "message", "done"], "{frames:#?}");
        assert_ids(&frames);
        assert_eq!(token_text(&frames), "Recovered.");
        assert_eq!(frames.last().unwrap().data["status"], "completed");
        assert_eq!(setup.mock.request_count(), 2);
        let turn = turn_of(&setup.messages("flaky").await, 1);
        assert_eq!(turn["status"], "completed");
        assert_eq!(roles_and_contents(&turn)[1].1, "Recovered.");
        setup.cleanup().await;
    }

    async fn a_429_waits_for_retry_after_then_completes(engine) {
        let setup = Setup::openai(
            engine,
            vec![Script::rate_limited(1), Script::text("Thanks for waiting.")],
        )
        .await;
        setup.server.create_thread("slow").await;
        let started = Instant::now();
        let frames = whole_turn(setup.chat("slow", "Hello").await).await;
        let took = started.elapsed();
        assert_eq!(frames.last().unwrap().data["status"], "completed", "{frames:#?}");
        assert_eq!(named(&frames, "message")[0].data["content"], "Thanks for waiting.");
        assert!(took >= Duration::from_millis(950), "took only {took:?}");
        let requests = setup.mock.requests();
        assert_eq!(requests.len(), 2);
        let gap = requests[1].received_at - requests[0].received_at;
        assert!(gap >= Duration::from_millis(950), "retried after only {gap:?}");
        setup.cleanup().await;
    }

    async fn a_hanging_model_times_out_and_the_turn_fails_cleanly(engine) {
        let mock = MockLlm::openai(vec![Script::hang(), Script::hang()]).await;
        let provider = ProviderConfig {
            timeout: Duration::from_millis(700),
            max_retries: 1,
            ..mock.config()
        };
        let setup = Setup::new(engine, mock, AgentConfig::default(), Some(provider)).await;
        setup.server.create_thread("hang").await;
        let started = Instant::now();
        let frames = whole_turn(setup.chat("hang", "Anyone home?").await).await;
        assert!(started.elapsed() >= Duration::from_millis(1_400));
        assert_eq!(shape(&frames), ["turn", "error", "done"], "{frames:#?}");
        assert_ids(&frames);
        let error = frames[1].data["message"].as_str().unwrap();
        assert!(error.contains("did not answer within"), "{error}");
        assert_eq!(common::done_without_usage(&frames[2].data), json!({"turn_index": 1, "status": "failed"}));
        assert_eq!(setup.mock.request_count(), 2, "one retry");
        let turn = turn_of(&setup.messages("hang").await, 1);
        assert_eq!(turn["status"], "failed");
        assert!(turn["error"].as_str().unwrap().contains("did not answer within"));
        assert_eq!(
            roles_and_contents(&turn),
            [("user".to_string(), "Anyone home?".to_string())]
        );
        setup.cleanup().await;
    }

    async fn malformed_tool_arguments_fail_the_step_and_the_turn_goes_on(engine) {
        let broken = r#"{"action_and_reasoning": "I plan.", "steps": [{"text": "unterminated"#;
        let setup = Setup::openai(
            engine,
            vec![
                Script::tool_calls(vec![raw_call("add_todos", broken), objective("Ship it")]),
                Script::text("One call failed, the objective is set."),
            ],
        )
        .await;
        setup.server.create_thread("oops").await;
        let frames = whole_turn(setup.chat("oops", "Plan it").await).await;
        assert_eq!(
            shape(&frames),
            ["turn", "step", "step", "workspace", "token…", "message", "done"],
            "{frames:#?}"
        );
        assert_ids(&frames);
        let steps = named(&frames, "step");
        let failed = assert_step(steps[0], "add_todos", 1, false);
        let error = failed["result"]["error"].as_str().unwrap();
        assert!(error.contains("JSON"), "{error}");
        assert_eq!(failed["result"].as_object().unwrap().len(), 2, "{failed}");
        assert_eq!(failed["arguments"], broken, "the raw text is kept for the trace");
        assert_step(steps[1], "set_objective", 1, true);
        assert_eq!(frames.last().unwrap().data["status"], "completed");

        // The model read the failure under the right call id, then the success.
        let second = &setup.mock.requests()[1].body;
        // Its broken call went back as `{}`: servers that parse earlier calls' arguments
        // (llama.cpp's) would refuse the whole request over the raw text.
        let calls: Vec<&Value> = second["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["tool_calls"].as_array())
            .flatten()
            .collect();
        assert_eq!(calls[0]["function"]["arguments"], "{}", "{calls:?}");
        assert_ne!(calls[1]["function"]["arguments"], "{}", "{calls:?}");
        let tools: Vec<&Value> =
            second["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").collect();
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0]["tool_call_id"], "call_mock_1");
        let envelope: Value = serde_json::from_str(tools[0]["content"].as_str().unwrap()).unwrap();
        assert_eq!(envelope, failed["result"]);
        assert_eq!(tools[1]["tool_call_id"], "call_mock_2");

        // Nothing of the failed call was written; the other one was.
        let ws = setup.server.workspace("oops").await;
        assert_eq!(ws["todos"], json!([]));
        assert_eq!(ws["objective"], "Ship it");
        let turn = turn_of(&setup.messages("oops").await, 1);
        assert_eq!(turn["status"], "completed");
        let recorded = turn["steps"].as_array().unwrap();
        assert_eq!(recorded.len(), 2);
        assert_eq!(recorded[0]["success"], false);
        assert_eq!(recorded[0]["result"], failed["result"]);
        assert_eq!(recorded[1]["success"], true);
        setup.cleanup().await;
    }

    async fn an_unknown_tool_fails_the_step_naming_the_tools(engine) {
        let setup = Setup::anthropic(
            engine,
            vec![
                Script::tool_calls(vec![
                    call("book_flight", json!({"action_and_reasoning": "I book it.", "to": "LIS"})),
                    // A known tool without its required sentence fails too.
                    call("add_todos", json!({"steps": [{"text": "Pack"}]})),
                ]),
                Script::text("I cannot book flights, but here is a plan."),
            ],
        )
        .await;
        setup.server.create_thread("ghost").await;
        let frames = whole_turn(setup.chat("ghost", "Book me a flight").await).await;
        assert_eq!(
            shape(&frames),
            ["turn", "step", "step", "token…", "message", "done"],
            "{frames:#?}"
        );
        assert_ids(&frames);
        let steps = named(&frames, "step");
        let unknown = assert_step(steps[0], "book_flight", 1, false);
        let error = unknown["result"]["error"].as_str().unwrap();
        assert!(error.contains("book_flight"), "{error}");
        for tool in ["set_objective", "add_todos", "update_document", "chart_generator"] {
            assert!(error.contains(tool), "the error names the tools: {error}");
        }
        // The trace keeps what the model asked for, even though nothing ran.
        assert_eq!(unknown["action_and_reasoning"], "I book it.");
        assert_eq!(unknown["arguments"], json!({"to": "LIS"}));
        let unexplained = assert_step(steps[1], "add_todos", 1, false);
        let error = unexplained["result"]["error"].as_str().unwrap();
        assert!(error.contains("action_and_reasoning"), "{error}");
        assert_eq!(unexplained["action_and_reasoning"], Value::Null);
        assert_eq!(unexplained["arguments"], json!({"steps": [{"text": "Pack"}]}));
        assert_eq!(frames.last().unwrap().data["status"], "completed");

        // The model reads both failures under their call ids.
        let second = &setup.mock.requests()[1].body;
        let results: Vec<Value> = second["messages"][2]["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .cloned()
            .collect();
        assert_eq!(results.len(), 2);
        for (i, (result, step)) in results.iter().zip(&steps).enumerate() {
            assert_eq!(result["tool_use_id"], format!("toolu_mock_{}", i + 1));
            let envelope: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
            assert_eq!(envelope, step.data["result"]);
        }
        assert_eq!(setup.server.workspace("ghost").await["todos"], json!([]));
        let turn = turn_of(&setup.messages("ghost").await, 1);
        assert_eq!(turn["status"], "completed");
        let recorded = turn["steps"].as_array().unwrap();
        assert_eq!(recorded.len(), 2);
        for (step, live) in recorded.iter().zip(&steps) {
            assert_eq!(step["success"], false);
            assert_eq!(step["arguments"], live.data["arguments"]);
            assert_eq!(step["action_and_reasoning"], live.data["action_and_reasoning"]);
        }
        setup.cleanup().await;
    }

    async fn a_stream_cut_mid_way_fails_the_turn_and_keeps_what_completed(engine) {
        let setup = Setup::openai(
            engine,
            vec![
                Script::tool_calls(vec![
                    objective("Write the guide"),
                    call("add_todos", json!({"action_and_reasoning": "Steps.",
                                             "steps": [{"text": "Outline"}, {"text": "Draft"}]})),
                ]),
                // Frames: role, 6 text pieces, the call's head, then its arguments in pieces:
                // the connection breaks in the middle of the arguments.
                Script::text_and_tool_calls(
                    "Now the document.",
                    vec![call("update_document", json!({"action_and_reasoning": "I write it.",
                                                         "content": "# Guide\n\nNever stored."}))],
                )
                // The delay lets each frame reach the agent before the connection is aborted.
                .chunk_delay(Duration::from_millis(10))
                .cut_after(12),
            ],
        )
        .await;
        let server = &setup.server;
        server.create_thread("cut").await;
        let frames = whole_turn(setup.chat("cut", "Write the guide").await).await;
        assert_eq!(
            shape(&frames),
            ["turn", "step", "workspace", "step", "workspace", "token…", "error", "done"],
            "{frames:#?}"
        );
        assert_ids(&frames);
        assert_eq!(token_text(&frames), "Now the document.");
        let error = named(&frames, "error")[0];
        let message = error.data["message"].as_str().unwrap();
        assert!(message.contains("cut off"), "{message}");
        assert_eq!(error.data["turn_index"], 1);
        assert_eq!(common::done_without_usage(&frames.last().unwrap().data), json!({"turn_index": 1, "status": "failed"}));
        assert!(named(&frames, "message").is_empty());
        assert_eq!(setup.mock.request_count(), 2, "a cut after the answer started is not retried");

        // The workspace holds what completed and nothing of the cut call.
        let ws = server.workspace("cut").await;
        assert_eq!(ws["objective"], "Write the guide");
        assert_eq!(ws["todos"].as_array().unwrap().len(), 2);
        assert_eq!(ws["document"], Value::Null);
        let turn = turn_of(&setup.messages("cut").await, 1);
        assert_eq!(turn["status"], "failed");
        assert!(turn["error"].as_str().unwrap().contains("cut off"));
        assert!(turn["finished_at"].is_string());
        assert_eq!(
            roles_and_contents(&turn),
            [("user".to_string(), "Write the guide".to_string())]
        );
        assert_eq!(turn["steps"].as_array().unwrap().len(), 2);

        // The thread takes the next turn, and the model learns what "try again" refers to:
        // the unanswered message of the failed turn joins the new one.
        setup.mock.push(Script::text("Back again."));
        let next = whole_turn(setup.chat("cut", "Try again").await).await;
        assert_eq!(common::done_without_usage(&next.last().unwrap().data), json!({"turn_index": 2, "status": "completed"}));
        let body = &setup.mock.requests()[2].body;
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3, "system, one user message, the snapshot: {body}");
        assert_eq!(messages[1]["role"], "user");
        let text = messages[1]["content"].as_str().unwrap();
        assert!(text.starts_with("Write the guide"), "{text}");
        assert!(text.ends_with("Try again"), "{text}");
        setup.cleanup().await;
    }
}

backend_tests! {
    async fn without_a_model_the_turn_says_how_to_configure_one(engine) {
        let db = TestDb::new(engine).await;
        let server = TestServer::with_state(AppState::new(db.db.clone())).await;
        server.create_thread("bare").await;
        let frames = whole_turn(chat(&server, "bare", "Hello?").await).await;
        assert_eq!(shape(&frames), ["turn", "error", "done"], "{frames:#?}");
        assert_ids(&frames);
        let message = frames[1].data["message"].as_str().unwrap();
        assert!(message.contains("HAICO_LLM_PROVIDER"), "{message}");
        assert_eq!(common::done_without_usage(&frames[2].data), json!({"turn_index": 1, "status": "failed"}));
        let turns = messages(&server, "bare").await;
        assert_eq!(turns.len(), 1);
        assert_eq!(turns[0]["status"], "failed");
        assert_eq!(
            roles_and_contents(&turns[0]),
            [("user".to_string(), "Hello?".to_string())]
        );
        // Everything else keeps working.
        server
            .tool_ok("bare", "set_objective", json!({"action_and_reasoning": "Goal.", "objective": "x"}))
            .await;
        server
            .request(Method::PUT, "/api/threads/bare/objective", Some(&json!({"objective": "y"})))
            .await
            .expect(200);
        server.shutdown().await;
        db.cleanup().await;
    }
}
