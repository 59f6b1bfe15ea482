//! What the agent does for small models, through a real server whose agent talks to a mock
//! OpenAI-compatible server: sampling settings on the wire, a repeated write answered by a
//! request to answer the person (and a turn that ends when the model keeps calling), and the
//! aids `HAICO_LLM_AIDS` turns on: asking once more when a change request got prose, the
//! turn's notes at the end of the snapshot, the compact tool set with worked examples, and
//! earlier turns sent with their calls. Both engines.

use crate::common;
use crate::common::agent as agent_support;

use agent_support::*;
use common::mock_llm::{Call, MockLlm, Script, call};
use haico::agent::{AgentConfig, Aids, Sampling};
use serde_json::{Value, json};

fn objective_call() -> Call {
    call(
        "set_objective",
        json!({"action_and_reasoning": "Noting the goal.", "objective": "A calm week in Porto"}),
    )
}

fn plan_call(reason: &str) -> Call {
    call(
        "add_todos",
        json!({"action_and_reasoning": reason,
               "steps": [{"text": "Book the train"}, {"text": "Pick a guesthouse"}]}),
    )
}

/// An agent with `aids` on, talking to an OpenAI-compatible mock playing `scripts`.
async fn with_aids(engine: common::Engine, aids: Aids, scripts: Vec<Script>) -> Setup {
    let config = AgentConfig {
        aids,
        ..AgentConfig::default()
    };
    Setup::new(engine, MockLlm::openai(scripts).await, config, None).await
}

/// The request bodies the mock received.
fn bodies(setup: &Setup) -> Vec<Value> {
    setup.mock.requests().into_iter().map(|r| r.body).collect()
}

/// The text of a request's last message (the snapshot).
fn last_text(body: &Value) -> String {
    let last = body["messages"].as_array().unwrap().last().unwrap();
    last["content"].as_str().unwrap_or_default().to_string()
}

/// The user messages of a request, in order.
fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

backend_tests! {
    async fn sampling_settings_reach_every_request(engine) {
        let mut extra = serde_json::Map::new();
        extra.insert("repeat_penalty".into(), json!(1.1));
        let config = AgentConfig {
            sampling: Sampling {
                temperature: Some(0.0),
                seed: Some(42),
                parallel_tool_calls: Some(false),
                extra,
            },
            ..AgentConfig::default()
        };
        let setup = Setup::new(
            engine,
            MockLlm::openai(vec![
                Script::tool_calls(vec![objective_call()]),
                Script::text("Done."),
            ])
            .await,
            config,
            None,
        )
        .await;
        setup.server.create_thread("t").await;
        whole_turn(setup.chat("t", "Plan a week in Porto").await).await;
        let bodies = bodies(&setup);
        assert_eq!(bodies.len(), 2);
        for body in &bodies {
            assert_eq!(body["temperature"], json!(0.0), "{body}");
            assert_eq!(body["seed"], json!(42));
            assert_eq!(body["parallel_tool_calls"], json!(false));
            assert_eq!(body["repeat_penalty"], json!(1.1));
            assert!(body.get("tool_choice").is_none(), "the model chooses: {body}");
        }
        setup.cleanup().await;
    }

    async fn a_repeated_write_is_followed_by_a_request_to_answer(engine) {
        let setup = Setup::openai(
            engine,
            vec![
                Script::tool_calls(vec![plan_call("Laying out the steps.")]),
                Script::tool_calls(vec![plan_call("Laying out the steps again.")]),
                Script::text("The plan has two steps."),
            ],
        )
        .await;
        setup.server.create_thread("t").await;
        let frames = whole_turn(setup.chat("t", "Plan the trip").await).await;
        let steps = named(&frames, "step");
        assert_eq!(steps.len(), 2, "the repeat is a step, not run again");
        let error = assert_step(steps[1], "add_todos", 1, false)["result"]["error"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(error.contains("That is done: do not call it again"), "{error}");
        let bodies = bodies(&setup);
        assert_eq!(bodies.len(), 3);
        // Asked by a note, not by `tool_choice: none`, which would cost the prompt cache.
        assert!(bodies[2].get("tool_choice").is_none(), "{}", bodies[2]);
        let notes = user_texts(&bodies[2]);
        assert!(
            notes.last().unwrap().contains("you repeated a call that was already done"),
            "{notes:?}"
        );
        assert_eq!(
            named(&frames, "message")[0].data["content"],
            json!("The plan has two steps.")
        );
        let ws = setup.server.get("/api/threads/t/workspace").await.expect(200);
        assert_eq!(ws["todos"].as_array().unwrap().len(), 2, "added once");
        setup.cleanup().await;
    }

    async fn a_model_that_keeps_calling_after_the_request_ends_the_turn(engine) {
        let setup = Setup::openai(
            engine,
            vec![
                Script::tool_calls(vec![plan_call("Laying out the steps.")]),
                Script::tool_calls(vec![plan_call("Again.")]),
                Script::tool_calls(vec![plan_call("And again.")]),
                Script::text("never asked for"),
            ],
        )
        .await;
        setup.server.create_thread("t").await;
        let frames = whole_turn(setup.chat("t", "Plan the trip").await).await;
        assert_eq!(setup.mock.request_count(), 3, "no fourth model call");
        assert_eq!(named(&frames, "step").len(), 2, "the third call is not run");
        let done = frames.last().unwrap();
        assert_eq!(done.data["status"], json!("completed"));
        let message = named(&frames, "message")[0].data["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(message.contains("What I did:\n- add_todos: added"), "{message}");
        assert!(message.contains("I began repeating a step"), "{message}");
        setup.cleanup().await;
    }

    async fn a_change_request_answered_in_prose_is_asked_once_more(engine) {
        let setup = with_aids(
            engine,
            "ask-to-act".parse().unwrap(),
            vec![
                Script::text("Sure, I will note the goal of a calm week in Porto."),
                Script::tool_calls(vec![objective_call()]),
                Script::text("The goal is noted."),
            ],
        )
        .await;
        setup.server.create_thread("t").await;
        let frames = whole_turn(setup.chat("t", "Plan a week in Porto").await).await;
        assert_step(named(&frames, "step")[0], "set_objective", 1, true);
        let bodies = bodies(&setup);
        assert_eq!(bodies.len(), 3);
        assert!(bodies[0].get("tool_choice").is_none());
        assert_eq!(bodies[1]["tool_choice"], json!("required"), "{}", bodies[1]);
        // The ask only grows the conversation: the prose answer, then the note.
        let messages = bodies[1]["messages"].as_array().unwrap();
        let n = messages.len();
        assert_eq!(messages[n - 3]["role"], "assistant");
        assert!(messages[n - 2]["content"].as_str().unwrap().contains("Make them now with the tools"));
        assert!(bodies[2].get("tool_choice").is_none(), "asked once only");
        assert_eq!(
            named(&frames, "message")[0].data["content"],
            json!("The goal is noted.")
        );
        setup.cleanup().await;
    }

    async fn a_pure_question_or_the_aid_off_gets_its_plain_answer(engine) {
        let setup = with_aids(
            engine,
            "ask-to-act".parse().unwrap(),
            vec![
                Script::text("Nothing is planned yet."),
                Script::text("A week is enough for Porto."),
            ],
        )
        .await;
        setup.server.create_thread("t").await;
        whole_turn(setup.chat("t", "Where do we stand?").await).await;
        assert_eq!(setup.mock.request_count(), 1, "a question is answered, not pushed to act");
        setup.cleanup().await;

        let setup = Setup::openai(engine, vec![Script::text("Sure, a week in Porto.")]).await;
        setup.server.create_thread("t").await;
        whole_turn(setup.chat("t", "Plan a week in Porto").await).await;
        assert_eq!(setup.mock.request_count(), 1, "without the aid the prose is the answer");
        setup.cleanup().await;
    }

    async fn the_snapshot_ends_with_what_the_turn_did(engine) {
        let setup = with_aids(
            engine,
            "turn-notes".parse().unwrap(),
            vec![
                Script::tool_calls(vec![
                    objective_call(),
                    call("toggle_todos", json!({"action_and_reasoning": "Ticking.", "indices": [9]})),
                ]),
                Script::text("Done."),
            ],
        )
        .await;
        setup.server.create_thread("t").await;
        whole_turn(setup.chat("t", "Plan a week in Porto").await).await;
        let bodies = bodies(&setup);
        let first = last_text(&bodies[0]);
        assert!(
            first.ends_with("Done so far in this turn: nothing yet.\nNext: call tools only for what \
                             the request still needs and is not done above; when it is all done, \
                             answer the person in one or two sentences without calling a \
                             tool.\n</this_turn>"),
            "{first}"
        );
        assert!(first.contains("The person's request: Plan a week in Porto"), "{first}");
        let second = last_text(&bodies[1]);
        assert!(second.contains("\n1. set_objective: "), "{second}");
        assert!(second.contains("\n2. toggle_todos: "), "{second}");
        setup.cleanup().await;
    }

    async fn the_compact_head_leaves_out_list_tools_and_shows_examples(engine) {
        let setup = with_aids(
            engine,
            "compact-tools,examples".parse().unwrap(),
            vec![Script::text("Hello.")],
        )
        .await;
        setup.server.create_thread("t").await;
        whole_turn(setup.chat("t", "Hi?").await).await;
        let compact = &bodies(&setup)[0];
        let names = tool_names(compact);
        for gone in ["list_todos", "list_preferences", "list_artifacts", "update_document"] {
            assert!(!names.iter().any(|n| n == gone), "{gone} offered: {names:?}");
        }
        assert!(names.iter().any(|n| n == "get_artifact"));
        assert!(names.iter().any(|n| n == "edit_document"));
        let head = compact["messages"][0]["content"].as_str().unwrap().to_string();
        assert!(head.contains("Examples of the way of working"), "{head}");
        assert!(!head.contains("update_document"), "no tool the list lacks: {head}");
        setup.cleanup().await;

        let setup = Setup::openai(engine, vec![Script::text("Hello.")]).await;
        setup.server.create_thread("t").await;
        whole_turn(setup.chat("t", "Hi?").await).await;
        let full = &bodies(&setup)[0];
        assert!(tool_names(full).iter().any(|n| n == "list_todos"));
        assert!(tool_names(full).iter().any(|n| n == "update_document"));
        assert!(!full["messages"][0]["content"].as_str().unwrap().contains("Examples"));
        setup.cleanup().await;
    }

    async fn earlier_turns_come_back_with_their_calls(engine) {
        let setup = with_aids(
            engine,
            "history-calls".parse().unwrap(),
            vec![
                Script::tool_calls(vec![objective_call()]),
                Script::text("The goal is set."),
                Script::text("It is a calm week in Porto."),
            ],
        )
        .await;
        setup.server.create_thread("t").await;
        whole_turn(setup.chat("t", "Plan a week in Porto").await).await;
        whole_turn(setup.chat("t", "What is the goal?").await).await;
        let bodies = bodies(&setup);
        let messages = bodies[2]["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(
            roles,
            ["system", "user", "assistant", "tool", "assistant", "user", "system"],
            "{messages:?}"
        );
        let earlier = &messages[2]["tool_calls"][0];
        assert_eq!(earlier["function"]["name"], "set_objective");
        let arguments: Value =
            serde_json::from_str(earlier["function"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(arguments["objective"], "A calm week in Porto");
        assert_eq!(arguments["action_and_reasoning"], "Noting the goal.");
        assert_eq!(messages[3]["tool_call_id"], earlier["id"]);
        assert!(messages[3]["content"].as_str().unwrap().contains("\"success\":true"));
        assert_eq!(messages[4]["content"], "The goal is set.");
        setup.cleanup().await;
    }

    async fn with_the_reply_tool_every_answer_is_a_call_and_the_reply_ends_the_turn(engine) {
        let reply = |message: &str| call("reply_to_user", json!({"message": message}));
        let aids: Aids = "reply-tool,ask-to-act".parse().unwrap();
        let setup = with_aids(
            engine,
            aids,
            vec![
                // A change request first answered with a reply alone is sent back to act.
                Script::tool_calls(vec![reply("I will note the goal.")]),
                // A reply with no message is refused, with what to write.
                Script::tool_calls(vec![call("reply_to_user", json!({}))]),
                // The change and the reply in one answer: the change runs, the reply is sent.
                Script::tool_calls(vec![objective_call(), reply("The goal is noted.")]),
                // A pure question is answered by the reply alone.
                Script::tool_calls(vec![reply("A calm week in Porto.")]),
            ],
        )
        .await;
        setup.server.create_thread("t").await;
        let frames = whole_turn(setup.chat("t", "Plan a week in Porto").await).await;
        let steps = named(&frames, "step");
        assert_eq!(steps.len(), 1, "the reply is no workspace step: {steps:?}");
        assert_step(steps[0], "set_objective", 1, true);
        assert_eq!(
            named(&frames, "message")[0].data["content"],
            json!("The goal is noted.")
        );
        let tokens = token_text(&frames);
        assert!(tokens.contains("The goal is noted."), "the reply is streamed: {tokens:?}");
        let bodies = bodies(&setup);
        assert_eq!(bodies.len(), 3);
        for body in &bodies {
            assert_eq!(body["tool_choice"], json!("required"), "{body}");
            assert_eq!(tool_names(body).last().unwrap(), "reply_to_user");
            let system = body["messages"][0]["content"].as_str().unwrap();
            assert!(system.contains("call reply_to_user"), "{system}");
        }
        let results: Vec<String> = bodies[2]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(results.len(), 2, "{results:?}");
        assert!(results[0].contains("not sent: the request asks for changes"), "{results:?}");
        assert!(results[1].contains("`message` is missing"), "{results:?}");
        assert!(!last_text(&bodies[2]).contains("<this_turn>"), "turn notes are off");
        let ws = setup.server.get("/api/threads/t/workspace").await.expect(200);
        assert_eq!(ws["objective"], json!("A calm week in Porto"));

        let frames = whole_turn(setup.chat("t", "What is the goal?").await).await;
        assert!(named(&frames, "step").is_empty());
        assert_eq!(
            named(&frames, "message")[0].data["content"],
            json!("A calm week in Porto.")
        );
        assert_eq!(setup.mock.request_count(), 4, "a question is answered at once");
        setup.cleanup().await;
    }

    async fn with_turn_notes_the_note_after_a_repeat_is_read_last(engine) {
        let reply = |message: &str| call("reply_to_user", json!({"message": message}));
        let setup = with_aids(
            engine,
            "turn-notes,reply-tool".parse().unwrap(),
            vec![
                Script::tool_calls(vec![plan_call("Laying out the steps.")]),
                Script::tool_calls(vec![plan_call("Laying out the steps.")]),
                Script::tool_calls(vec![reply("The plan has two steps.")]),
            ],
        )
        .await;
        setup.server.create_thread("t").await;
        let frames = whole_turn(setup.chat("t", "Plan the trip").await).await;
        assert_eq!(
            named(&frames, "message")[0].data["content"],
            json!("The plan has two steps.")
        );
        let bodies = bodies(&setup);
        assert_eq!(bodies.len(), 3);
        // After the repeat the note ends the request, after the turn's notes, where a small
        // model reads it; no user message carries it.
        let last = last_text(&bodies[2]);
        let (_, after) = last.split_once("</this_turn>").unwrap();
        assert!(
            after.trim_start().starts_with("[Note from haico")
                && after.contains("call reply_to_user now"),
            "{last}"
        );
        assert_eq!(user_texts(&bodies[2]), ["Plan the trip"], "{}", bodies[2]);
        assert!(!last_text(&bodies[1]).contains("[Note from haico"));
        let ws = setup.server.get("/api/threads/t/workspace").await.expect(200);
        assert_eq!(ws["todos"].as_array().unwrap().len(), 2, "added once");
        setup.cleanup().await;
    }

    async fn a_repeat_that_changed_nothing_is_pointed_elsewhere_last(engine) {
        let reply = |message: &str| call("reply_to_user", json!({"message": message}));
        let nothing = || {
            call(
                "update_preferences",
                json!({"action_and_reasoning": "Fixing the name.",
                       "updates": [{"index": 1, "title": "John"}]}),
            )
        };
        let setup = with_aids(
            engine,
            "turn-notes,reply-tool".parse().unwrap(),
            vec![
                Script::tool_calls(vec![nothing()]),
                Script::tool_calls(vec![nothing()]),
                Script::tool_calls(vec![reply("There are no preferences to change.")]),
            ],
        )
        .await;
        setup.server.create_thread("t").await;
        let frames = whole_turn(setup.chat("t", "It's John, not Jon").await).await;
        let steps = named(&frames, "step");
        assert_eq!(steps.len(), 2);
        assert_step(steps[1], "update_preferences", 1, false);
        let bodies = bodies(&setup);
        assert_eq!(bodies.len(), 3);
        let last = last_text(&bodies[2]);
        let (_, after) = last.split_once("</this_turn>").unwrap();
        assert!(
            after.contains("you called update_preferences once more with the same arguments")
                && after.contains("index 1 is out of range")
                && after.contains("do not make it again")
                && after.contains("or call reply_to_user"),
            "{last}"
        );
        // The note is for that request only; the first request had none.
        assert!(!last_text(&bodies[1]).contains("[Note from haico"));
        assert_eq!(
            named(&frames, "message")[0].data["content"],
            json!("There are no preferences to change.")
        );
        setup.cleanup().await;
    }

    async fn a_reply_that_keeps_failing_ends_the_turn_with_why(engine) {
        let setup = with_aids(
            engine,
            "reply-tool".parse().unwrap(),
            vec![
                Script::tool_calls(vec![call("reply_to_user", json!({"message": ""}))]),
                Script::tool_calls(vec![call("reply_to_user", json!({"message": " "}))]),
                Script::tool_calls(vec![call("reply_to_user", json!({"text": "Hi"}))]),
                Script::text("never asked for"),
            ],
        )
        .await;
        setup.server.create_thread("t").await;
        let frames = whole_turn(setup.chat("t", "Hello").await).await;
        assert_eq!(setup.mock.request_count(), 3, "no fourth model call");
        let message = named(&frames, "message")[0].data["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(message.contains("`message` is missing"), "{message}");
        setup.cleanup().await;
    }

    async fn the_checklist_names_each_change_in_turn_then_asks_for_the_reply(engine) {
        let reply = |message: &str| call("reply_to_user", json!({"message": message}));
        let setup = with_aids(
            engine,
            "turn-notes,reply-tool,checklist".parse().unwrap(),
            vec![
                Script::tool_calls(vec![call(
                    "list_changes",
                    json!({"changes": ["Set the goal", "Plan the steps"]}),
                )]),
                Script::tool_calls(vec![objective_call()]),
                // Too early: the second change is still open, so the reply goes back once.
                Script::tool_calls(vec![reply("Done.")]),
                Script::tool_calls(vec![plan_call("Laying out the steps.")]),
                Script::tool_calls(vec![reply("Goal set and a two-step plan made.")]),
            ],
        )
        .await;
        setup.server.create_thread("t").await;
        let frames = whole_turn(setup.chat("t", "Set the goal and plan it").await).await;
        assert_eq!(
            named(&frames, "message")[0].data["content"],
            json!("Goal set and a two-step plan made.")
        );
        // The list is the loop's: only the two workspace calls are steps.
        let steps = named(&frames, "step");
        assert_eq!(steps.len(), 2);
        assert_step(steps[0], "set_objective", 1, true);
        assert_step(steps[1], "add_todos", 1, true);
        let bodies = bodies(&setup);
        assert_eq!(bodies.len(), 5);
        let names = tool_names(&bodies[0]);
        assert_eq!(
            &names[names.len() - 2..],
            ["list_changes", "reply_to_user"],
            "{names:?}"
        );
        for body in &bodies {
            assert_eq!(tool_names(body), names, "the same tools in every request");
            assert_eq!(body["messages"][0], bodies[0]["messages"][0], "the same head");
        }
        assert!(
            bodies[0]["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains("Every turn begins with list_changes")
        );
        // The note the model reads last names what to do now.
        let ends_with_note = |body: &Value, words: &[&str]| {
            let last = last_text(body);
            let (_, note) = last.rsplit_once("[Note from haico").unwrap();
            for word in words {
                assert!(note.contains(word), "{word:?} not in the note: {last}");
            }
        };
        ends_with_note(&bodies[0], &["first call list_changes"]);
        // The list is asked for from the message alone; the workspace comes back after it.
        assert!(
            last_text(&bodies[0]).starts_with("[Note from haico"),
            "{}",
            last_text(&bodies[0])
        );
        assert!(last_text(&bodies[1]).contains("[Workspace now"));
        ends_with_note(&bodies[1], &["change 1 of 2: \"Set the goal\""]);
        ends_with_note(
            &bodies[2],
            &["change 2 of 2: \"Plan the steps\"", "Change 1 is handled"],
        );
        let sent_back: Value = serde_json::from_str(
            bodies[3]["messages"]
                .as_array()
                .unwrap()
                .iter()
                .rev()
                .find(|m| m["role"] == "tool")
                .unwrap()["content"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(sent_back["success"], false);
        assert!(
            sent_back["error"]
                .as_str()
                .unwrap()
                .starts_with("not sent yet: change 2 of 2 (\"Plan the steps\")"),
            "{sent_back}"
        );
        ends_with_note(&bodies[4], &["every change on the list is handled"]);
        let ws = setup.server.get("/api/threads/t/workspace").await.expect(200);
        assert_eq!(ws["todos"].as_array().unwrap().len(), 2);
        setup.cleanup().await;
    }

    async fn a_model_that_acts_before_listing_goes_on_without_the_list(engine) {
        let reply = |message: &str| call("reply_to_user", json!({"message": message}));
        let setup = with_aids(
            engine,
            "reply-tool,checklist".parse().unwrap(),
            vec![
                Script::tool_calls(vec![objective_call()]),
                Script::tool_calls(vec![reply("Goal set.")]),
            ],
        )
        .await;
        setup.server.create_thread("t").await;
        let frames = whole_turn(setup.chat("t", "Set the goal").await).await;
        assert_eq!(named(&frames, "message")[0].data["content"], json!("Goal set."));
        let bodies = bodies(&setup);
        assert_eq!(bodies.len(), 2);
        assert!(!last_text(&bodies[1]).contains("list_changes"), "{}", last_text(&bodies[1]));
        setup.cleanup().await;
    }

    async fn a_malformed_list_is_refused_with_why_and_changes_nothing(engine) {
        let setup = with_aids(
            engine,
            "reply-tool,checklist".parse().unwrap(),
            vec![
                Script::tool_calls(vec![call("list_changes", json!({"changes": "Set the goal"}))]),
                Script::tool_calls(vec![call("list_changes", json!({"changes": [7]}))]),
                Script::tool_calls(vec![call("reply_to_user", json!({"message": "Sorry."}))]),
            ],
        )
        .await;
        setup.server.create_thread("t").await;
        let before = setup.server.get("/api/threads/t/workspace").await.expect(200);
        let frames = whole_turn(setup.chat("t", "Set the goal").await).await;
        assert!(named(&frames, "step").is_empty(), "the list is never a workspace step");
        let bodies = bodies(&setup);
        assert_eq!(bodies.len(), 3);
        let answer_to = |body: &Value| -> Value {
            let tool = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .rev()
                .find(|m| m["role"] == "tool")
                .unwrap();
            serde_json::from_str(tool["content"].as_str().unwrap()).unwrap()
        };
        let first = answer_to(&bodies[1]);
        assert_eq!(first["success"], false);
        assert!(
            first["error"].as_str().unwrap().contains("`changes` must be a list"),
            "{first}"
        );
        let second = answer_to(&bodies[2]);
        assert!(
            second["error"].as_str().unwrap().contains("each change must be a text"),
            "{second}"
        );
        // Still unlisted, so the note still asks for the list.
        assert!(last_text(&bodies[2]).contains("first call list_changes"));
        assert_eq!(named(&frames, "message")[0].data["content"], json!("Sorry."));
        let after = setup.server.get("/api/threads/t/workspace").await.expect(200);
        assert_eq!(before, after, "nothing in the workspace changed");
        setup.cleanup().await;
    }
}
