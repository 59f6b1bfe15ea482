//! End-to-end agent turns through a real server whose agent talks to mock OpenAI-compatible
//! and Anthropic servers speaking the real wire formats: the event sequence of a turn, what
//! the next model request carries, persistence, the step limit, cancelling, busy threads,
//! events subscribers, bad input and history. Both engines.

use crate::common;
use crate::common::agent as agent_support;

use std::time::Duration;

use agent_support::*;
use common::{
    Engine,
    mock_llm::{Call, Flavor, MockLlm, Script, call},
    sse::Frame,
};
use haico::agent::AgentConfig;
use reqwest::Method;
use serde_json::{Value, json};

// ---- A full turn ---------------------------------------------------------------------------

const OBJECTIVE: &str = "Plan a relaxed week in Lisbon";
const INTRO: &str = "Let me set up the workspace for your trip.";
const ANSWER: &str = "All set: the objective, a three-step plan and a budget chart are ready.";

fn objective_call() -> Call {
    call(
        "set_objective",
        json!({"action_and_reasoning": "I am writing down what we are aiming for.",
               "objective": OBJECTIVE}),
    )
}

fn plan_call() -> Call {
    call(
        "add_todos",
        json!({"action_and_reasoning": "I am sketching the steps of the trip.",
               "steps": [{"text": "Book flights"}, {"text": "Pick a hotel"},
                         {"text": "Near the river", "depth": 1}]}),
    )
}

fn chart_call() -> Call {
    call(
        "chart_generator",
        json!({"action_and_reasoning": "A chart shows the daily budget at a glance.",
               "chart_type": "bar", "title": "Daily budget",
               "data": {"labels": ["Mon", "Tue", "Wed"],
                        "series": [{"name": "EUR", "values": [120, 95.5, 80]}]},
               "y_axis_title": "EUR"}),
    )
}

/// The tool messages of the second request, as `(call id, envelope)`, whatever the format.
fn tool_results(flavor: Flavor, body: &Value) -> Vec<(String, Value)> {
    let messages = body["messages"].as_array().expect("messages");
    match flavor {
        Flavor::OpenAi => messages
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| {
                (
                    m["tool_call_id"]
                        .as_str()
                        .expect("tool_call_id")
                        .to_string(),
                    serde_json::from_str(m["content"].as_str().expect("content")).unwrap(),
                )
            })
            .collect(),
        Flavor::Anthropic => messages
            .iter()
            .filter(|m| m["role"] == "user")
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == "tool_result")
            .map(|b| {
                (
                    b["tool_use_id"].as_str().expect("tool_use_id").to_string(),
                    serde_json::from_str(b["content"].as_str().expect("content")).unwrap(),
                )
            })
            .collect(),
    }
}

/// The head of a recorded request (the instructions), whatever the format.
fn head_of(flavor: Flavor, body: &Value) -> String {
    match flavor {
        Flavor::OpenAi => {
            let first = &body["messages"][0];
            assert_eq!(first["role"], "system", "{body}");
            first["content"].as_str().expect("system text").to_string()
        }
        Flavor::Anthropic => {
            assert!(
                body["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|m| m["role"] != "system"),
                "Anthropic takes the system prompt at the top level: {body}"
            );
            let system = &body["system"][0];
            assert_eq!(
                system["cache_control"],
                json!({"type": "ephemeral"}),
                "the head is a cache breakpoint: {body}"
            );
            system["text"]
                .as_str()
                .expect("top-level system")
                .to_string()
        }
    }
}

/// The workspace snapshot of a recorded request: its last message (OpenAI), or the last block
/// of its last user message (Anthropic).
fn snapshot_of(flavor: Flavor, body: &Value) -> String {
    let last = body["messages"].as_array().unwrap().last().unwrap();
    match flavor {
        Flavor::OpenAi => {
            assert_eq!(last["role"], "system", "{body}");
            last["content"].as_str().expect("snapshot text").to_string()
        }
        Flavor::Anthropic => {
            assert_eq!(last["role"], "user", "{body}");
            let block = last["content"].as_array().unwrap().last().unwrap();
            assert_eq!(block["type"], "text", "{body}");
            assert!(block.get("cache_control").is_none(), "{body}");
            block["text"].as_str().expect("snapshot text").to_string()
        }
    }
}

/// A request's conversation without its snapshot and cache marks: what the next request of
/// the turn must begin with.
fn conversation_of(flavor: Flavor, body: &Value) -> Vec<Value> {
    let mut messages = body["messages"].as_array().unwrap().clone();
    match flavor {
        Flavor::OpenAi => {
            messages.pop();
        }
        Flavor::Anthropic => {
            if let Some(blocks) = messages
                .last_mut()
                .and_then(|m| m["content"].as_array_mut())
            {
                blocks.pop();
            }
            if messages
                .last()
                .is_some_and(|m| m["content"].as_array().is_some_and(Vec::is_empty))
            {
                messages.pop();
            }
            for message in &mut messages {
                for block in message["content"].as_array_mut().unwrap() {
                    block.as_object_mut().unwrap().remove("cache_control");
                }
            }
        }
    }
    messages
}

async fn full_turn(engine: Engine, flavor: Flavor) {
    let scripts = vec![
        Script::text_and_tool_calls(INTRO, vec![objective_call(), plan_call(), chart_call()]),
        Script::text(ANSWER).cached(30),
    ];
    let setup = match flavor {
        Flavor::OpenAi => Setup::openai(engine, scripts).await,
        Flavor::Anthropic => Setup::anthropic(engine, scripts).await,
    };
    let server = &setup.server;
    server.create_thread("trip").await;
    let frames = whole_turn(setup.chat("trip", "Help me plan a week in Lisbon").await).await;

    // The order of the events.
    assert_eq!(
        shape(&frames),
        [
            "turn",
            "token…",
            "step",
            "workspace",
            "step",
            "workspace",
            "step",
            "artifact",
            "workspace",
            "token…",
            "message",
            "done"
        ],
        "{frames:#?}"
    );
    assert_ids(&frames);
    assert_eq!(frames[0].data, json!({"turn_index": 1}));
    // The tokens are the two answers' text, streamed in many pieces.
    assert_eq!(token_text(&frames), format!("{INTRO}{ANSWER}"));
    assert!(named(&frames, "token").len() > 10);

    // The steps.
    let steps: Vec<&Frame> = named(&frames, "step");
    let objective = assert_step(steps[0], "set_objective", 1, true);
    assert_eq!(
        objective["action_and_reasoning"],
        "I am writing down what we are aiming for."
    );
    assert_eq!(objective["arguments"], json!({"objective": OBJECTIVE}));
    assert_eq!(
        objective["result"],
        json!({"success": true, "summary": format!("objective set: {OBJECTIVE}")})
    );
    let plan = assert_step(steps[1], "add_todos", 1, true);
    assert_eq!(
        plan["action_and_reasoning"],
        "I am sketching the steps of the trip."
    );
    assert_eq!(
        plan["arguments"],
        json!({"steps": [{"text": "Book flights"}, {"text": "Pick a hotel"},
                         {"text": "Near the river", "depth": 1}]})
    );
    assert!(plan["result"]["summary"].is_string());
    let chart = assert_step(steps[2], "chart_generator", 1, true);
    assert!(chart["arguments"].get("action_and_reasoning").is_none());
    assert_eq!(chart["arguments"]["title"], "Daily budget");
    let artifact_id = chart["result"]["artifact_id"]
        .as_i64()
        .expect("artifact id");
    assert_eq!(chart["result"]["artifact"]["artifact_type"], "bar_chart");

    // The artifact and workspace events.
    let artifact = named(&frames, "artifact")[0];
    assert_eq!(artifact.data["artifact_id"], artifact_id);
    assert_eq!(artifact.data["artifact_type"], "bar_chart");
    assert_eq!(artifact.data["title"], "Daily budget");
    assert_eq!(artifact.data["turn_index"], 1);
    assert_eq!(
        artifact.data["payload"]["data"]["series"][0]["values"],
        json!([120.0, 95.5, 80.0])
    );
    let panels: Vec<Value> = named(&frames, "workspace")
        .iter()
        .map(|f| f.data.clone())
        .collect();
    assert_eq!(
        panels,
        [
            json!({"panels": ["objective"], "source": "agent"}),
            json!({"panels": ["plan"], "source": "agent"}),
            json!({"panels": ["artifacts"], "source": "agent"}),
        ]
    );
    let message = named(&frames, "message")[0];
    assert_eq!(message.data, json!({"content": ANSWER, "turn_index": 1}));
    let done = frames.last().unwrap();
    assert_eq!(done.data["turn_index"], json!(1));
    assert_eq!(done.data["status"], json!("completed"));
    // Both calls' tokens as the mock reported them (42 in, 7 out; the second found 30 cached).
    let usage = &done.data["usage"];
    assert_eq!(usage["model_calls"], json!(2), "{usage}");
    assert_eq!(usage["prompt_tokens"], json!(84), "{usage}");
    assert_eq!(usage["cached_tokens"], json!(30), "{usage}");
    assert_eq!(usage["completion_tokens"], json!(14), "{usage}");
    assert!(usage["first_token_ms"].is_u64(), "{usage}");
    assert_eq!(usage["calls"].as_array().map(Vec::len), Some(2), "{usage}");
    let turns = server.get("/api/threads/trip/messages").await.expect(200);
    assert_eq!(
        &turns[0]["usage"], usage,
        "the messages carry the same usage"
    );

    // The model requests.
    let requests = setup.mock.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0].body;
    assert_eq!(first["stream"], true);
    let tools = first["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 16, "every tool is offered");
    let before = snapshot_of(flavor, first);
    assert!(
        before.contains("<objective>\n(not set yet)\n</objective>"),
        "{before}"
    );

    let second = &requests[1].body;
    // The layout providers' prompt caches need: the same head and tools in both requests,
    // the second's conversation beginning with the first's, and only the snapshot after it.
    let head = head_of(flavor, first);
    assert_eq!(head, head_of(flavor, second));
    assert!(
        !head.contains("<objective>"),
        "the head holds no workspace: {head}"
    );
    assert_eq!(first["tools"], second["tools"]);
    let earlier = conversation_of(flavor, first);
    let later = conversation_of(flavor, second);
    assert!(later.len() > earlier.len(), "{later:?}");
    assert_eq!(
        later[..earlier.len()],
        earlier[..],
        "the conversation only grows"
    );
    if flavor == Flavor::Anthropic {
        let last = second["messages"].as_array().unwrap().last().unwrap();
        let blocks = last["content"].as_array().unwrap();
        assert_eq!(
            blocks[blocks.len() - 2]["cache_control"],
            json!({"type": "ephemeral"}),
            "the conversation ends in a cache breakpoint: {last}"
        );
    }
    let system = snapshot_of(flavor, second);
    assert!(
        system.contains(&format!("<objective>\n{OBJECTIVE}\n</objective>")),
        "{system}"
    );
    assert!(
        system.contains("1. [ ] Book flights\n2. [ ] Pick a hotel\n  3. [ ] Near the river"),
        "{system}"
    );
    assert!(
        system.contains(&format!(
            "#{artifact_id} bar_chart \"Daily budget\" (turn 1)"
        )),
        "{system}"
    );
    let prefix = match flavor {
        Flavor::OpenAi => "call_mock_",
        Flavor::Anthropic => "toolu_mock_",
    };
    let results = tool_results(flavor, second);
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        [
            format!("{prefix}1"),
            format!("{prefix}2"),
            format!("{prefix}3")
        ]
    );
    for ((_, envelope), step) in results.iter().zip(&steps) {
        assert_eq!(
            envelope, &step.data["result"],
            "the model reads the step's envelope"
        );
    }
    // The assistant's calls are replayed in the provider's own format, before their results.
    match flavor {
        Flavor::OpenAi => {
            let messages = second["messages"].as_array().unwrap();
            assert_eq!(messages.len(), 7, "{second}: the snapshot comes last");
            assert_eq!(
                messages[1],
                json!({"role": "user", "content": "Help me plan a week in Lisbon"})
            );
            assert_eq!(messages[2]["role"], "assistant");
            assert_eq!(messages[2]["content"], INTRO);
            let calls = messages[2]["tool_calls"].as_array().unwrap();
            let names: Vec<&str> = calls
                .iter()
                .map(|c| c["function"]["name"].as_str().unwrap())
                .collect();
            assert_eq!(names, ["set_objective", "add_todos", "chart_generator"]);
            assert_eq!(calls[0]["id"], "call_mock_1");
            let args: Value =
                serde_json::from_str(calls[1]["function"]["arguments"].as_str().unwrap()).unwrap();
            assert_eq!(args["steps"][2]["depth"], 1);
            for m in &messages[3..6] {
                assert_eq!(m["role"], "tool");
            }
        }
        Flavor::Anthropic => {
            let messages = second["messages"].as_array().unwrap();
            assert_eq!(messages.len(), 3, "{second}");
            assert_eq!(
                messages[0],
                json!({"role": "user", "content": [
                    {"type": "text", "text": "Help me plan a week in Lisbon"}]})
            );
            assert_eq!(messages[1]["role"], "assistant");
            let blocks = messages[1]["content"].as_array().unwrap();
            assert_eq!(blocks[0], json!({"type": "text", "text": INTRO}));
            let uses: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "tool_use").collect();
            assert_eq!(uses.len(), 3);
            assert_eq!(uses[0]["id"], "toolu_mock_1");
            assert_eq!(uses[0]["name"], "set_objective");
            assert_eq!(uses[0]["input"]["objective"], OBJECTIVE);
            assert_eq!(
                uses[2]["input"]["data"]["labels"],
                json!(["Mon", "Tue", "Wed"])
            );
            assert_eq!(messages[2]["role"], "user");
            // Three tool results, then the snapshot.
            assert_eq!(messages[2]["content"].as_array().unwrap().len(), 4);
        }
    }

    // The workspace as the tools left it.
    let ws = server.workspace("trip").await;
    assert_eq!(ws["objective"], OBJECTIVE);
    let todos: Vec<(String, i64, bool)> = ws["todos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["text"].as_str().unwrap().to_string(),
                t["depth"].as_i64().unwrap(),
                t["done"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        todos,
        [
            ("Book flights".to_string(), 0, false),
            ("Pick a hotel".to_string(), 0, false),
            ("Near the river".to_string(), 1, false),
        ]
    );
    let artifacts = ws["artifacts"].as_array().unwrap();
    assert_eq!(artifacts.len(), 1);
    assert_eq!(artifacts[0]["id"], artifact_id);
    assert_eq!(artifacts[0]["turn_index"], 1);

    // The conversation as a reload shows it.
    let turns = setup.messages("trip").await;
    assert_eq!(turns.len(), 1);
    let turn = &turns[0];
    assert_eq!(turn["turn_index"], 1);
    assert_eq!(turn["status"], "completed");
    assert_eq!(turn["error"], Value::Null);
    assert!(turn["finished_at"].is_string());
    assert_eq!(
        roles_and_contents(turn),
        [
            (
                "user".to_string(),
                "Help me plan a week in Lisbon".to_string()
            ),
            ("assistant".to_string(), ANSWER.to_string()),
        ]
    );
    let recorded = turn["steps"].as_array().unwrap();
    assert_eq!(recorded.len(), 3);
    for (i, (step, live)) in recorded.iter().zip(&steps).enumerate() {
        assert_eq!(step["step_index"], i64::try_from(i).unwrap() + 1);
        assert_eq!(step["tool"], live.data["tool"]);
        assert_eq!(step["arguments"], live.data["arguments"]);
        assert_eq!(
            step["action_and_reasoning"],
            live.data["action_and_reasoning"]
        );
        assert_eq!(step["result"], live.data["result"]);
        assert_eq!(step["success"], true);
    }

    // The thread's events stream holds the same durable events, replayable from the start.
    let mut replay = events(server, "trip", Some(0)).await;
    let logged = until_done(&mut replay).await;
    assert_eq!(logged, durable(&frames));
    setup.cleanup().await;
}

backend_tests! {
    async fn openai_turn_streams_steps_and_feeds_results_back(engine) {
        full_turn(engine, Flavor::OpenAi).await;
    }

    async fn anthropic_turn_streams_steps_and_feeds_results_back(engine) {
        full_turn(engine, Flavor::Anthropic).await;
    }
}

// ---- The step limit ------------------------------------------------------------------------

backend_tests! {
    async fn the_step_limit_ends_the_turn_with_a_message(engine) {
        let scripts = (1..=6)
            .map(|i| {
                Script::tool_calls(vec![call(
                    "add_todos",
                    json!({"action_and_reasoning": "I keep adding steps.",
                           "steps": [{"text": format!("step {i}")}]}),
                )])
            })
            .collect();
        let config = AgentConfig { max_tool_calls: 3, ..AgentConfig::default() };
        let setup = Setup::new(engine, MockLlm::openai(scripts).await, config, None).await;
        setup.server.create_thread("busybee").await;
        let frames = whole_turn(setup.chat("busybee", "Plan forever").await).await;
        assert_ids(&frames);
        assert_eq!(named(&frames, "step").len(), 3, "{frames:#?}");
        assert!(named(&frames, "error").is_empty());
        let message = named(&frames, "message")[0];
        let text = message.data["content"].as_str().unwrap();
        assert!(text.contains("limit of 3 tool calls"), "{text}");
        assert_eq!(common::done_without_usage(&frames.last().unwrap().data), json!({"turn_index": 1, "status": "completed"}));
        assert_eq!(setup.mock.request_count(), 3, "no model call after the limit is spent");

        let ws = setup.server.workspace("busybee").await;
        let texts: Vec<&str> =
            ws["todos"].as_array().unwrap().iter().map(|t| t["text"].as_str().unwrap()).collect();
        assert_eq!(texts, ["step 1", "step 2", "step 3"]);
        let turn = turn_of(&setup.messages("busybee").await, 1);
        assert_eq!(turn["status"], "completed");
        assert_eq!(turn["steps"].as_array().unwrap().len(), 3);
        assert_eq!(roles_and_contents(&turn)[1], ("assistant".to_string(), text.to_string()));
        setup.cleanup().await;
    }
}

// ---- Cancelling ----------------------------------------------------------------------------

backend_tests! {
    async fn cancel_mid_turn_keeps_what_ran(engine) {
        let setup = Setup::openai(
            engine,
            vec![
                Script::tool_calls(vec![objective_call()]),
                // Two frames of text, then silence with the connection open.
                Script::text("I am now writing a very long answer that never ends").stall_after(3),
            ],
        )
        .await;
        let server = &setup.server;
        server.create_thread("stop").await;
        // Nothing runs yet.
        server.post("/api/threads/stop/cancel", &json!({})).await.error(409);
        server.post("/api/threads/nowhere/cancel", &json!({})).await.error(404);

        let mut chat = setup.chat("stop", "Write me a long essay").await;
        let mut seen = until_event(&mut chat, "step").await;
        seen.extend(until_event(&mut chat, "token").await);
        let reply = server.post("/api/threads/stop/cancel", &json!({})).await;
        assert_eq!(reply.clone().expect(202), json!({"cancelled": true}));
        seen.extend(until_done(&mut chat).await);
        chat.expect_end(WAIT).await;
        assert_ids(&seen);
        assert_eq!(
            shape(&seen),
            ["turn", "step", "workspace", "token…", "error", "done"],
            "{seen:#?}"
        );
        let error = named(&seen, "error")[0];
        assert!(error.data["message"].as_str().unwrap().contains("cancelled"), "{error:?}");
        assert_eq!(error.data["turn_index"], 1);
        assert_eq!(common::done_without_usage(&seen.last().unwrap().data), json!({"turn_index": 1, "status": "cancelled"}));
        assert!(named(&seen, "message").is_empty());

        let turn = turn_of(&setup.messages("stop").await, 1);
        assert_eq!(turn["status"], "cancelled");
        assert_eq!(
            roles_and_contents(&turn),
            [("user".to_string(), "Write me a long essay".to_string())]
        );
        let steps = turn["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0]["tool"], "set_objective");
        assert_eq!(server.workspace("stop").await["objective"], OBJECTIVE);
        // The stalled model request was dropped, not left hanging.
        let mock = &setup.mock;
        eventually("the model connection to close", || async { mock.aborted_bodies() >= 1 }).await;
        // Once it has ended, there is nothing left to cancel.
        server.post("/api/threads/stop/cancel", &json!({})).await.error(409);
        setup.cleanup().await;
    }
}

// ---- One turn per thread -------------------------------------------------------------------

backend_tests! {
    async fn a_busy_thread_refuses_a_second_chat_while_others_run(engine) {
        let setup = Setup::openai(
            engine,
            vec![
                Script::text("Thinking very slowly about all of this").stall_after(3),
                Script::text("Meanwhile, on the other thread."),
            ],
        )
        .await;
        let server = &setup.server;
        server.create_thread("one").await;
        server.create_thread("two").await;
        let mut first = setup.chat("one", "Take your time").await;
        until_event(&mut first, "token").await;

        let busy = chat_reply(server, "one", &json!({"message": "Are you there?"})).await;
        let text = busy.error(409);
        assert!(text.contains("already running"), "{text}");

        // Another thread runs at the same time.
        let other = whole_turn(setup.chat("two", "Hello over here").await).await;
        assert_eq!(shape(&other), ["turn", "token…", "message", "done"]);
        assert_eq!(token_text(&other), "Meanwhile, on the other thread.");
        assert_eq!(other.last().unwrap().data["status"], "completed");

        // The first is still running; stop it.
        assert_eq!(turn_of(&setup.messages("one").await, 1)["status"], "running");
        server.post("/api/threads/one/cancel", &json!({})).await.expect(202);
        let rest = until_done(&mut first).await;
        assert_eq!(rest.last().unwrap().data["status"], "cancelled");

        // The refused chat left no trace.
        let turns = setup.messages("one").await;
        assert_eq!(turns.len(), 1, "{turns:?}");
        assert_eq!(
            roles_and_contents(&turns[0]),
            [("user".to_string(), "Take your time".to_string())]
        );
        let two = setup.messages("two").await;
        assert_eq!(two.len(), 1);
        assert_eq!(two[0]["status"], "completed");
        setup.cleanup().await;
    }

    async fn a_new_chat_right_after_done_is_accepted(engine) {
        let answers = 8;
        let scripts = (0..answers).map(|i| Script::text(&format!("Answer {i}"))).collect();
        let setup = Setup::openai(engine, scripts).await;
        setup.server.create_thread("quick").await;
        for i in 0..answers {
            // The next chat goes out as soon as `done` is read, before the stream closes.
            let mut chat = setup.chat("quick", &format!("Question {i}")).await;
            let frames = until_done(&mut chat).await;
            assert_eq!(frames.last().unwrap().data["status"], "completed", "turn {i}");
        }
        let turns = setup.messages("quick").await;
        assert_eq!(turns.len(), answers);
        setup.cleanup().await;
    }
}

// ---- Subscribers of the events stream ------------------------------------------------------

backend_tests! {
    async fn subscribers_see_the_whole_turn_and_resume_without_gaps(engine) {
        let setup = Setup::openai(
            engine,
            vec![
                Script::tool_calls(vec![objective_call(), plan_call()]),
                // Slow enough that the turn is still running when a subscriber comes back.
                Script::tool_calls(vec![chart_call()]).chunk_delay(Duration::from_millis(25)),
                Script::text("Here is the plan and a chart.").chunk_delay(Duration::from_millis(10)),
            ],
        )
        .await;
        let server = &setup.server;
        server.create_thread("fan").await;
        let mut a = events(server, "fan", None).await;
        let mut b = events(server, "fan", None).await;
        let mut c = events(server, "fan", None).await;

        let chat = setup.chat("fan", "Plan it and chart it").await;
        let chat_task = tokio::spawn(whole_turn(chat));

        // C reads up to the plan's workspace event, then drops its connection.
        let mut c_seen = Vec::new();
        loop {
            let frame = c.next(WAIT).await;
            let plan = frame.event == "workspace" && frame.data["panels"] == json!(["plan"]);
            c_seen.push(frame);
            if plan {
                break;
            }
        }
        drop(c);
        let last_seen = c_seen.last().unwrap().id.expect("durable");
        // Events happen while it is away; the turn is still running when it comes back.
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(turn_of(&setup.messages("fan").await, 1)["status"], "running");
        let mut c2 = events(server, "fan", Some(last_seen)).await;
        let resumed = durable(&until_done(&mut c2).await);

        let a_frames = until_done(&mut a).await;
        let b_frames = until_done(&mut b).await;
        let chat_frames = chat_task.await.unwrap();
        assert_ids(&a_frames);
        assert_ids(&chat_frames);
        // Both subscribers see the whole turn, like the chat response: same events and ids.
        assert_eq!(durable(&a_frames), durable(&b_frames));
        assert_eq!(durable(&a_frames), durable(&chat_frames));
        assert_eq!(token_text(&a_frames), token_text(&chat_frames));
        assert_eq!(
            shape(&a_frames),
            ["turn", "step", "workspace", "step", "workspace", "step", "artifact", "workspace",
             "token…", "message", "done"]
        );
        // The one that came back got exactly what it missed, in order, no repeats.
        let missed: Vec<Frame> =
            durable(&a_frames).into_iter().filter(|f| f.id.unwrap() > last_seen).collect();
        assert!(!missed.is_empty());
        assert_eq!(resumed, missed);
        // And nothing more arrives on the subscriptions once the turn is done.
        assert!(a.try_next(Duration::from_millis(300)).await.is_none());
        assert!(c2.try_next(Duration::from_millis(100)).await.is_none());
        setup.cleanup().await;
    }
}

// ---- Bad input -----------------------------------------------------------------------------

backend_tests! {
    async fn bad_chat_requests_are_refused_and_record_nothing(engine) {
        let setup = Setup::openai(engine, Vec::new()).await;
        let server = &setup.server;
        server.create_thread("calm").await;
        let path = "/api/threads/calm/chat";

        let empty = chat_reply(server, "calm", &json!({"message": ""})).await.error(400);
        assert!(empty.contains("empty"), "{empty}");
        chat_reply(server, "calm", &json!({"message": "  \n\t "})).await.error(400);
        chat_reply(server, "calm", &json!({"message": "x".repeat(32_001)})).await.error(400);
        chat_reply(server, "calm", &json!({})).await.error_any();
        chat_reply(server, "calm", &json!({"message": 7})).await.error_any();
        chat_reply(server, "calm", &json!({"message": "hi", "extra": true})).await.error_any();
        chat_reply(server, "calm", &json!(["hi"])).await.error_any();
        server
            .send_raw(Method::POST, path, Some("application/json"), "{\"message\": ")
            .await
            .error_any();
        server.send_raw(Method::POST, path, Some("text/plain"), "hello").await.error_any();
        server.send_raw(Method::POST, path, None, "hello").await.error_any();
        chat_reply(server, "nope", &json!({"message": "hi"})).await.error(404);
        chat_reply(server, "not%20an%20id", &json!({"message": "hi"})).await.error(400);
        server.get("/api/threads/nope/messages").await.error(404);

        // Nothing was recorded or sent to the model, and no event was logged.
        assert_eq!(setup.messages("calm").await, Vec::<Value>::new());
        assert_eq!(setup.mock.request_count(), 0);
        let mut log = events(server, "calm", Some(0)).await;
        assert!(log.try_next(Duration::from_millis(300)).await.is_none());

        // The thread is not left busy: a good message still runs.
        setup.mock.push(Script::text("Fine, thanks."));
        let frames = whole_turn(setup.chat("calm", "How are you?").await).await;
        assert_eq!(frames[0].data, json!({"turn_index": 1}));
        assert_eq!(frames.last().unwrap().data["status"], "completed");
        setup.cleanup().await;
    }
}

// ---- History -------------------------------------------------------------------------------

backend_tests! {
    async fn the_next_turn_sends_the_earlier_messages(engine) {
        let setup = Setup::anthropic(
            engine,
            vec![
                Script::text("Hello! What are we building?"),
                Script::text("A birdhouse it is."),
            ],
        )
        .await;
        setup.server.create_thread("talk").await;
        let first = whole_turn(setup.chat("talk", "Hi there").await).await;
        assert_eq!(first.last().unwrap().data["turn_index"], 1);
        let second = whole_turn(setup.chat("talk", "A birdhouse, please").await).await;
        assert_eq!(second[0].data, json!({"turn_index": 2}));
        assert_eq!(common::done_without_usage(&second.last().unwrap().data), json!({"turn_index": 2, "status": "completed"}));

        let requests = setup.mock.requests();
        assert_eq!(requests.len(), 2);
        assert_eq!(
            Value::Array(conversation_of(Flavor::Anthropic, &requests[1].body)),
            json!([
                {"role": "user", "content": [{"type": "text", "text": "Hi there"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Hello! What are we building?"}]},
                {"role": "user", "content": [{"type": "text", "text": "A birdhouse, please"}]},
            ])
        );
        let turns = setup.messages("talk").await;
        assert_eq!(turns.len(), 2);
        assert_eq!(
            roles_and_contents(&turns[1]),
            [
                ("user".to_string(), "A birdhouse, please".to_string()),
                ("assistant".to_string(), "A birdhouse it is.".to_string()),
            ]
        );
        setup.cleanup().await;
    }

    async fn history_reaches_openai_in_chat_completions_form(engine) {
        let setup = Setup::openai(
            engine,
            vec![Script::text("First answer."), Script::text("Second answer.")],
        )
        .await;
        setup.server.create_thread("talk").await;
        whole_turn(setup.chat("talk", "First question").await).await;
        whole_turn(setup.chat("talk", "Second question").await).await;
        let body = &setup.mock.requests()[1].body;
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages[0]["role"], "system");
        assert_eq!(
            messages[1..messages.len() - 1],
            [
                json!({"role": "user", "content": "First question"}),
                json!({"role": "assistant", "content": "First answer."}),
                json!({"role": "user", "content": "Second question"}),
            ]
        );
        assert!(snapshot_of(Flavor::OpenAi, body).contains("<objective>"));
        setup.cleanup().await;
    }
}

// ---- The user edits while the agent works; a restart ---------------------------------------

backend_tests! {
    async fn a_user_edit_mid_turn_is_announced_and_reaches_the_next_prompt(engine) {
        let setup = Setup::openai(
            engine,
            vec![
                // Slow enough for the user to edit the document while the model answers.
                Script::tool_calls(vec![objective_call()]).chunk_delay(Duration::from_millis(30)),
                Script::text("I see your draft."),
            ],
        )
        .await;
        let server = &setup.server;
        server.create_thread("both").await;
        let mut watcher = events(server, "both", None).await;
        let chat = setup.chat("both", "Look at my draft").await;
        let chat_task = tokio::spawn(whole_turn(chat));
        let mock = &setup.mock;
        eventually("the first model request", || async { mock.request_count() == 1 }).await;
        server
            .request(
                Method::PUT,
                "/api/threads/both/document",
                Some(&json!({"title": "Draft", "content": "My own first paragraph."})),
            )
            .await
            .expect(200);
        let frames = chat_task.await.unwrap();
        assert_ids(&frames);
        assert_eq!(
            shape(&frames),
            ["turn", "workspace", "step", "workspace", "token…", "message", "done"],
            "{frames:#?}"
        );
        assert_eq!(frames[1].data, json!({"panels": ["document"], "source": "user"}));
        assert_eq!(frames[3].data, json!({"panels": ["objective"], "source": "agent"}));
        // Subscribers see the same, and the next model call saw the user's document.
        let seen = until_done(&mut watcher).await;
        assert_eq!(durable(&seen), durable(&frames));
        let system = snapshot_of(Flavor::OpenAi, &setup.mock.requests()[1].body);
        assert!(
            system.contains("<document title=\"Draft\">\nMy own first paragraph.\n</document>"),
            "{system}"
        );
        setup.cleanup().await;
    }

    async fn a_subscriber_resumes_a_turn_after_a_server_restart(engine) {
        let db = common::TestDb::new(engine).await;
        let mock = MockLlm::openai(vec![
            Script::tool_calls(vec![objective_call(), plan_call()]),
            Script::text("Planned."),
            Script::text("Second turn."),
        ])
        .await;
        let state = || {
            let model = haico::agent::providers::build_model(&mock.config()).unwrap();
            haico::http::AppState::with_model(db.db.clone(), model, AgentConfig::default())
        };
        let server = common::server::TestServer::with_state(state()).await;
        server.create_thread("again").await;
        let first = whole_turn(chat(&server, "again", "Plan it").await).await;
        server.shutdown().await;

        // A new process on the same database; the client saw up to the first step.
        let server = common::server::TestServer::with_state(state()).await;
        let seen = named(&first, "step")[0].id.unwrap();
        let mut resumed = events(&server, "again", Some(seen)).await;
        let missed: Vec<Frame> =
            durable(&first).into_iter().filter(|f| f.id.unwrap() > seen).collect();
        assert_eq!(durable(&until_done(&mut resumed).await), missed);
        assert!(resumed.try_next(Duration::from_millis(300)).await.is_none(), "no repeats");
        // Then it follows live: the next turn continues the numbering.
        let second = whole_turn(chat(&server, "again", "And now?").await).await;
        let live = until_done(&mut resumed).await;
        assert_eq!(durable(&live), durable(&second));
        assert_eq!(second[0].id, Some(missed.last().unwrap().id.unwrap() + 1));
        assert_eq!(second[0].data, json!({"turn_index": 2}));
        server.shutdown().await;
        drop(mock);
        db.cleanup().await;
    }
}

// ---- Small models' habits --------------------------------------------------------------------

backend_tests! {
    async fn a_call_written_as_text_is_taken_as_that_call(engine) {
        let written = "```json\n{\"name\": \"set_objective\", \"arguments\": {\"objective\": \
                       \"A calm week in Porto\", \"action_and_reasoning\": \"Noting the goal.\"}}\n```";
        let setup = Setup::openai(
            engine,
            vec![Script::text(written), Script::text("The objective is set.")],
        )
        .await;
        let server = &setup.server;
        server.create_thread("porto").await;
        let frames = whole_turn(setup.chat("porto", "Plan a week in Porto").await).await;
        assert_step(named(&frames, "step")[0], "set_objective", 1, true);
        assert_eq!(server.get("/api/threads/porto/objective").await.expect(200)["objective"],
                   json!("A calm week in Porto"));
        // The call's text never reached the chat; the answer after it did.
        let shown = token_text(&frames);
        assert!(!shown.contains("```"), "{shown}");
        assert_eq!(shown, "The objective is set.");
        // The model's history holds it as a real call, answered by its envelope.
        let second = &setup.mock.requests()[1].body;
        let messages = second["messages"].as_array().unwrap();
        let call = messages.iter().find(|m| m["role"] == "assistant").unwrap();
        assert_eq!(call["tool_calls"][0]["function"]["name"], "set_objective", "{call}");
        assert_eq!(call["tool_calls"][0]["id"], "text_call_1");
        assert!(call["content"].is_null(), "the written call is not replayed as text: {call}");
        let result = messages.iter().find(|m| m["role"] == "tool").unwrap();
        assert_eq!(result["tool_call_id"], "text_call_1");
        setup.cleanup().await;
    }

    async fn text_that_only_mentions_json_stays_the_answer(engine) {
        let answer = "```json\n{\"name\": \"format_disk\", \"arguments\": {}}\n```";
        let setup = Setup::openai(engine, vec![Script::text(answer)]).await;
        setup.server.create_thread("t").await;
        let frames = whole_turn(setup.chat("t", "Show me a JSON example").await).await;
        assert!(named(&frames, "step").is_empty(), "no tool is called `format_disk`");
        assert_eq!(token_text(&frames), answer, "held-back text is shown once it is no call");
        assert_eq!(named(&frames, "message")[0].data["content"], json!(answer));
        setup.cleanup().await;
    }

    async fn text_calls_off_leaves_written_calls_as_text(engine) {
        let written = "<tool_call>\n{\"name\": \"set_objective\", \"arguments\": \
                       {\"objective\": \"X\", \"action_and_reasoning\": \"r\"}}\n</tool_call>";
        let config = AgentConfig {
            text_tool_calls: haico::agent::TextToolCalls::Off,
            ..AgentConfig::default()
        };
        let setup = Setup::new(engine, MockLlm::openai(vec![Script::text(written)]).await, config, None).await;
        setup.server.create_thread("t").await;
        let frames = whole_turn(setup.chat("t", "Set it").await).await;
        assert!(named(&frames, "step").is_empty());
        assert_eq!(named(&frames, "message")[0].data["content"], json!(written));
        setup.cleanup().await;
    }

    async fn a_repeated_call_is_answered_from_memory_not_run_again(engine) {
        let again = call(
            "add_todos",
            json!({"action_and_reasoning": "Adding the steps (again).",
                   "steps": [{"text": "Book flights"}, {"text": "Pick a hotel"},
                             {"text": "Near the river", "depth": 1}]}),
        );
        let setup = Setup::openai(
            engine,
            vec![
                Script::tool_calls(vec![plan_call()]),
                Script::tool_calls(vec![again]),
                Script::text("The plan is ready."),
            ],
        )
        .await;
        let server = &setup.server;
        server.create_thread("t").await;
        let frames = whole_turn(setup.chat("t", "Plan it").await).await;
        let steps = named(&frames, "step");
        assert_eq!(steps.len(), 2);
        assert_step(steps[0], "add_todos", 1, true);
        let repeat = assert_step(steps[1], "add_todos", 1, false);
        let error = repeat["result"]["error"].as_str().unwrap();
        assert!(error.contains("already made in this turn, as step 1"), "{error}");
        assert!(error.contains("added"), "it says what the first call returned: {error}");
        assert_eq!(steps[1].data["action_and_reasoning"], json!("Adding the steps (again)."));
        let ws = server.get("/api/threads/t/workspace").await.expect(200);
        assert_eq!(ws["todos"].as_array().unwrap().len(), 3, "the steps were added once");
        setup.cleanup().await;
    }

    async fn a_turn_going_nowhere_ends_with_a_message_before_the_step_limit(engine) {
        let failing = |n: i64| {
            // A tool that does not exist: every call fails.
            call(
                "rename_step",
                json!({"action_and_reasoning": "Renaming a step.", "text": format!("try {n}")}),
            )
        };
        let setup = Setup::openai(
            engine,
            vec![
                Script::tool_calls(vec![failing(1)]),
                Script::tool_calls(vec![failing(2)]),
                Script::tool_calls(vec![failing(3)]),
                Script::text("never asked for"),
            ],
        )
        .await;
        setup.server.create_thread("t").await;
        let frames = whole_turn(setup.chat("t", "Rename the first step").await).await;
        assert_eq!(setup.mock.request_count(), 3, "no fourth model call");
        let done = frames.last().unwrap();
        assert_eq!(done.data["status"], json!("completed"));
        let message = named(&frames, "message")[0].data["content"].as_str().unwrap().to_string();
        assert!(message.contains("I stopped here: my last 3 attempts"), "{message}");
        setup.cleanup().await;
    }
}
