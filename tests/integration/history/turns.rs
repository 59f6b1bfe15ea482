//! History with real agent turns (a mock LLM speaking OpenAI's wire format), on both engines:
//! the revisions a turn makes carry its turn, undoing a turn restores exactly its panels, a
//! later change to the same panel makes the undo a 409 that changes nothing, the next prompt
//! says what the person undid, forks keep the conversation up to their revision, and a
//! recording with turns, messages and tool calls comes back as it was.

use crate::common;
use crate::common::agent as agent_support;

use agent_support::*;
use common::mock_llm::{Script, call};
use reqwest::Method;
use serde_json::{Value, json};

fn why(mut args: Value) -> Value {
    args["action_and_reasoning"] = json!("Shape the plan with the user.");
    args
}

async fn history(setup: &Setup, thread: &str) -> Vec<Value> {
    setup
        .server
        .get(&format!("/api/threads/{thread}/history?limit=500"))
        .await
        .expect(200)["revisions"]
        .as_array()
        .unwrap()
        .clone()
}

/// A turn that sets the objective and adds two steps, then answers.
fn planning_turn(objective: &str) -> Vec<Script> {
    vec![
        Script::tool_calls(vec![
            call("set_objective", why(json!({"objective": objective}))),
            call(
                "add_todos",
                why(json!({"steps": [{"text": "Pick dates"}, {"text": "Book"}]})),
            ),
        ]),
        Script::text("Done."),
    ]
}

async fn run_turn(setup: &Setup, thread: &str, message: &str) {
    let frames = whole_turn(setup.chat(thread, message).await).await;
    assert_eq!(frames.last().unwrap().event, "done");
}

/// The workspace snapshot of the last request the mock received: its last message (OpenAI
/// format).
fn last_system_prompt(setup: &Setup) -> String {
    let requests = setup.mock.requests();
    let body = &requests.last().unwrap().body;
    let messages = body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "system", "the snapshot comes last: {last}");
    last["content"].as_str().unwrap().to_string()
}

backend_tests! {
    async fn undoing_a_turn_restores_exactly_its_panels(engine) {
        let mut scripts = planning_turn("Plan a trip");
        scripts.push(Script::text("Noted."));
        let setup = Setup::openai(engine, scripts).await;
        let server = &setup.server;
        server.create_thread("t").await;
        server.request(Method::PUT, "/api/threads/t/document", Some(&json!({"content": "Mine"}))).await.expect(200);
        run_turn(&setup, "t", "Help me plan").await;
        let made = history(&setup, "t").await;
        assert_eq!(made.len(), 3);
        for revision in &made[..2] {
            assert_eq!(revision["turn_index"], json!(1), "{revision}");
            assert_eq!(revision["source"], json!("agent"));
        }
        assert_eq!(made[2]["turn_index"], json!(null), "a person's edit is in no turn");
        // The person edits a panel the turn did not touch: no conflict.
        server.request(Method::PUT, "/api/threads/t/document", Some(&json!({"content": "Mine, edited"}))).await.expect(200);

        let undone = server.post("/api/threads/t/turns/1/revert", &json!({})).await.expect(200);
        assert_eq!(undone["rev"], json!(5));
        let ws = &undone["workspace"];
        assert_eq!(ws["objective"], json!(null));
        assert_eq!(ws["todos"], json!([]));
        assert_eq!(ws["document"]["content"], json!("Mine, edited"), "later edits elsewhere stay");
        let newest = &history(&setup, "t").await[0];
        assert_eq!(newest["reverted_turn"], json!(1));
        assert_eq!(newest["panels"], json!(["objective", "plan"]));
        assert_eq!(newest["source"], json!("user"));
        // The conversation is untouched.
        assert_eq!(setup.messages("t").await.len(), 1);

        // The next prompt shows the undone state and says what happened, in one line.
        run_turn(&setup, "t", "What now?").await;
        let prompt = last_system_prompt(&setup);
        assert!(prompt.contains("Since your last turn the user went back in the workspace's history (undid turn 1"), "{prompt}");
        assert!(prompt.contains("<objective>\n(not set yet)\n</objective>"), "{prompt}");

        // Bounds: unknown turns are 404; a turn that changed nothing cannot be undone.
        server.post("/api/threads/t/turns/9/revert", &json!({})).await.error(404);
        server.post("/api/threads/t/turns/0/revert", &json!({})).await.error(404);
        server.post("/api/threads/ghost/turns/1/revert", &json!({})).await.error(404);
        let nothing = server.post("/api/threads/t/turns/2/revert", &json!({})).await;
        assert_eq!(nothing.status.as_u16(), 409);
        assert_eq!(nothing.body["conflicts"], json!([]));
        setup.cleanup().await;
    }

    async fn restores_undos_and_forks_are_announced_and_the_next_prompt_says_so(engine) {
        let mut scripts = planning_turn("Plan a trip");
        scripts.push(Script::text("Noted."));
        let setup = Setup::openai(engine, scripts).await;
        let server = &setup.server;
        server.create_thread("t").await;
        run_turn(&setup, "t", "Help me plan").await;
        let wait = std::time::Duration::from_secs(10);
        let mut stream = events(server, "t", None).await;

        // Undoing the turn announces the panels it gave back.
        server.post("/api/threads/t/turns/1/revert", &json!({})).await.expect(200);
        let frame = stream.next(wait).await;
        assert_eq!(frame.event, "workspace");
        assert_eq!(frame.data, json!({"panels": ["objective", "plan"], "source": "user"}));
        // Restoring the turn's result announces them again.
        server.post("/api/threads/t/restore", &json!({"rev": 2})).await.expect(200);
        let frame = stream.next(wait).await;
        assert_eq!(frame.event, "workspace");
        assert_eq!(frame.data, json!({"panels": ["objective", "plan"], "source": "user"}));
        assert_eq!(server.workspace("t").await["objective"], json!("Plan a trip"));

        // A fork announces its whole workspace on its own stream.
        server.post("/api/threads/t/fork", &json!({"id": "f"})).await.expect(201);
        let mut forked = events(server, "f", Some(0)).await;
        let frame = forked.next(wait).await;
        assert_eq!(frame.event, "workspace", "{frame:?}");
        assert_eq!(frame.data["source"], json!("user"));
        let panels = frame.data["panels"].as_array().unwrap();
        for panel in ["objective", "plan"] {
            assert!(panels.contains(&json!(panel)), "{panel} in {panels:?}");
        }

        // The next prompt shows the restored state and says, in one line, what happened.
        run_turn(&setup, "t", "Where are we?").await;
        let prompt = last_system_prompt(&setup);
        let said: Vec<&str> = prompt.lines().filter(|line| line.contains("Since your last turn")).collect();
        assert_eq!(said.len(), 1, "{prompt}");
        assert!(said[0].contains("undid turn 1") && said[0].contains("restored"), "{prompt}");
        assert!(prompt.contains("<objective>\nPlan a trip\n</objective>"), "{prompt}");
        setup.cleanup().await;
    }

    async fn a_later_change_to_the_same_panel_blocks_the_undo(engine) {
        let setup = Setup::openai(engine, planning_turn("Plan a trip")).await;
        let server = &setup.server;
        server.create_thread("t").await;
        run_turn(&setup, "t", "Help me plan").await;
        // The person rewrites the objective the turn set.
        server.request(Method::PUT, "/api/threads/t/objective", Some(&json!({"objective": "My own goal"}))).await.expect(200);
        let before = server.workspace("t").await;
        let revisions = history(&setup, "t").await.len();

        let refused = server.post("/api/threads/t/turns/1/revert", &json!({})).await;
        assert_eq!(refused.status.as_u16(), 409, "{}", refused.body);
        assert_eq!(refused.body["conflicts"], json!([{"panel": "objective", "rev": 3}]));
        assert!(refused.body["error"].as_str().unwrap().contains("objective in revision 3"));
        assert_eq!(server.workspace("t").await, before, "a refused undo changes nothing");
        assert_eq!(history(&setup, "t").await.len(), revisions);
        setup.cleanup().await;
    }

    async fn forks_keep_the_conversation_so_far_and_recordings_keep_everything(engine) {
        let mut scripts = planning_turn("First plan");
        scripts.extend(planning_turn("Second plan"));
        let setup = Setup::openai(engine, scripts).await;
        let server = &setup.server;
        server.create_thread("t").await;
        run_turn(&setup, "t", "Turn one").await;
        let after_first = history(&setup, "t").await[0]["rev"].as_i64().unwrap();
        run_turn(&setup, "t", "Turn two").await;

        let fork = server.post("/api/threads/t/fork", &json!({"at": after_first, "id": "f"})).await.expect(201);
        assert_eq!(fork["turn_index"], json!(1));
        let turns = setup.messages("f").await;
        assert_eq!(turns.len(), 1, "only the turn before the fork point: {turns:?}");
        assert_eq!(turns[0]["messages"][0]["content"], json!("Turn one"));
        assert_eq!(turns[0]["steps"].as_array().unwrap().len(), 2);
        assert_eq!(server.workspace("f").await["objective"], json!("First plan"));
        assert_eq!(turns[0]["status"], json!("completed"), "the turn had ended: {turns:?}");
        assert_eq!(turns[0]["messages"][1]["content"], json!("Done."), "its answer came after its last change");

        // Forking now (the latest revision) keeps every finished turn whole, answers included.
        let now = server.post("/api/threads/t/fork", &json!({"id": "now"})).await.expect(201);
        assert_eq!(now["turn_index"], json!(2));
        let turns = setup.messages("now").await;
        assert_eq!(turns.len(), 2);
        for turn in &turns {
            assert_eq!(turn["status"], json!("completed"), "{turn}");
            assert_eq!(turn["messages"].as_array().unwrap().len(), 2, "{turn}");
            assert_eq!(turn["usage"]["model_calls"], json!(2), "a fork keeps what turns cost: {turn}");
        }

        // A recording of a thread with turns comes back with them.
        let recording = server.client.get(server.url("/api/threads/t/export")).send().await.unwrap().text().await.unwrap();
        let kinds: Vec<String> = recording.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].as_str().unwrap().to_string()).collect();
        for kind in ["thread", "turn", "message", "step", "revision"] {
            assert!(kinds.iter().any(|k| k == kind), "no {kind} line in {kinds:?}");
        }
        let imported = server.client.post(server.url("/api/threads/import?id=back"))
            .header("content-type", "application/x-ndjson").body(recording.clone()).send().await.unwrap();
        assert_eq!(imported.status(), 201);
        let strip = |mut turns: Vec<Value>| -> Vec<Value> {
            for turn in &mut turns {
                for message in turn["messages"].as_array_mut().unwrap() {
                    message.as_object_mut().unwrap().remove("id");
                }
            }
            turns
        };
        assert!(recording.contains("\"usage\":{\"model_calls\":2"), "recordings keep usage");
        // Usage included: an imported turn reports what it cost when it ran.
        assert_eq!(strip(setup.messages("back").await), strip(setup.messages("t").await));
        assert_eq!(history(&setup, "back").await, history(&setup, "t").await);
        setup.cleanup().await;
    }
}
