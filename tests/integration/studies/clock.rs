//! The clock and the agent under a condition: the deadline holds with no client (the session
//! ends `timed_out` within seconds, a running turn is cancelled, a `study` event says so, later
//! writes are `409 time is up`), a warning comes before it, Finish waits for `min_turns`, and a
//! plain-chat condition sends the model no tools and no workspace.

use std::time::{Duration, Instant};

use haico::{agent::AgentConfig, http::AppState};
use reqwest::Method;
use serde_json::{Value, json};

use super::{as_participant, consented, design, open_study};
use crate::common::{
    Engine, TestDb,
    mock_llm::{MockLlm, Script, call},
    server::TestServer,
    sse::SseReader,
};

/// A server whose agent talks to a mock answering `scripts`.
async fn with_agent(engine: Engine, scripts: Vec<Script>) -> (TestDb, MockLlm, TestServer) {
    let tdb = TestDb::new(engine).await;
    let mock = MockLlm::openai(scripts).await;
    let model = haico::agent::providers::build_model(&mock.config()).expect("model builds");
    let state = AppState::with_model(tdb.db.clone(), model, AgentConfig::default());
    let server = TestServer::with_state(state).await;
    (tdb, mock, server)
}

/// Sends a chat message as the participant; the turn's stream.
async fn chat(server: &TestServer, token: &str, thread: &str, message: &str) -> SseReader {
    let response = server
        .client
        .post(server.url(&format!("/api/threads/{thread}/chat")))
        .bearer_auth(token)
        .header("accept", "text/event-stream")
        .json(&json!({"message": message}))
        .send()
        .await
        .unwrap();
    SseReader::from_response(response)
}

/// Reads frames until one named `event` (panics after `wait`).
async fn until_event(reader: &mut SseReader, event: &str, wait: Duration) -> Value {
    let deadline = Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let frame = reader.next(left).await;
        if frame.event == event {
            return frame.data;
        }
    }
}

fn timed(limit: i64, warn: Option<i64>, min_turns: Option<i64>) -> Value {
    let mut d = design(
        json!([{"key": "ws", "label": "Workspace", "panels": ["objective", "document"], "tools": "*"}]),
    );
    d["limits"] = json!({"time_limit_s": limit, "warn_before_s": warn, "min_turns": min_turns});
    d
}

backend_tests! {
    async fn the_deadline_holds_with_no_client_and_cancels_the_running_turn(engine) {
        // Each hang outlasts the provider's timeout, and its retries hang too: the turn runs
        // until something cancels it.
        let (tdb, _mock, server) = with_agent(engine, vec![Script::hang(), Script::hang(), Script::hang()]).await;
        let (id, key) = open_study(&server, &timed(5, Some(3), None)).await;
        let (token, session) = consented(&server, &key, "clocked").await;
        let thread = session["thread_id"].as_str().unwrap().to_string();
        let mut events = SseReader::open(
            &server.client,
            &server.url(&format!("/api/threads/{thread}/events?access_token={token}")),
            None,
        )
        .await;
        let (status, started) = as_participant(&server, &token, Method::POST, "/api/participant/start", None).await;
        assert_eq!(status, 200, "{started}");
        let deadline: chrono::DateTime<chrono::Utc> = serde_json::from_value(started["deadline"].clone()).unwrap();
        assert!(started["remaining_s"].as_i64().unwrap() >= 4);
        // A turn that never ends on its own; the participant's page goes away.
        let turn = chat(&server, &token, &thread, "Plan the starter").await;
        drop(turn);
        let warning = until_event(&mut events, "study", Duration::from_secs(10)).await;
        assert_eq!(warning["kind"], "time_warning", "{warning}");
        assert!(warning["remaining_s"].as_i64().unwrap() <= 3);
        drop(events);
        // Nobody is connected now: the server alone ends the session.
        let ended_at = loop {
            let study = server.get(&format!("/api/studies/{id}")).await.expect(200);
            if study["counts"]["by_status"]["timed_out"] == 1 {
                break chrono::Utc::now();
            }
            assert!(chrono::Utc::now() < deadline + chrono::Duration::seconds(5), "not timed out within 5 s of the deadline");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert!(ended_at >= deadline);
        // The turn was cancelled, and the log says the session ended.
        let mut log = SseReader::open(
            &server.client,
            &server.url(&format!("/api/threads/{thread}/events?access_token={token}")),
            Some(0),
        )
        .await;
        let ended = loop {
            let data = until_event(&mut log, "study", Duration::from_secs(10)).await;
            if data["kind"] == "ended" {
                break data;
            }
        };
        assert_eq!(ended["status"], "timed_out");
        let turns = server.get(&format!("/api/threads/{thread}/messages")).await.expect(200);
        let last = turns.as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["status"], "cancelled", "{last}");
        let (status, refused) = as_participant(&server, &token, Method::PUT, &format!("/api/threads/{thread}/document"), Some(json!({"content": "late"}))).await;
        assert_eq!(status, 409);
        assert_eq!(refused["error"], "time is up");
        let (_, me) = as_participant(&server, &token, Method::GET, "/api/participant", None).await;
        assert_eq!(me["status"], "timed_out");
        assert_eq!(me["completion"]["code"], "LATE42");
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

backend_tests! {
    async fn finish_waits_for_the_minimum_of_turns_then_gives_the_code_and_link(engine) {
        let (tdb, _mock, server) = with_agent(engine, vec![Script::text("Let us start with soup.")]).await;
        let (_, key) = open_study(&server, &timed(600, None, Some(1))).await;
        let (token, session) = consented(&server, &key, "finisher").await;
        let thread = session["thread_id"].as_str().unwrap().to_string();
        let session_ref = session["session"].as_str().unwrap().to_string();
        as_participant(&server, &token, Method::POST, "/api/participant/start", None).await;
        let (status, early) = as_participant(&server, &token, Method::POST, "/api/participant/finish", None).await;
        assert_eq!(status, 409, "{early}");
        assert_eq!(early["needs"], json!({"turns": 1}));
        let mut turn = chat(&server, &token, &thread, "Help me plan").await;
        until_event(&mut turn, "done", Duration::from_secs(15)).await;
        let (status, done) = as_participant(&server, &token, Method::POST, "/api/participant/finish", None).await;
        assert_eq!(status, 200, "{done}");
        assert_eq!(done["status"], "completed");
        assert_eq!(done["completion"]["code"], "DONE42");
        assert_eq!(
            done["completion"]["redirect_url"],
            json!(format!("https://app.prolific.com/submissions/complete?cc=DONE42&s={session_ref}&p=x9"))
        );
        let (status, again) = as_participant(&server, &token, Method::POST, "/api/participant/finish", None).await;
        assert_eq!(status, 200);
        assert_eq!(again["completion"], done["completion"]);
        let messages = server.get(&format!("/api/threads/{thread}/messages")).await.expect(200);
        assert!(messages.to_string().contains(&format!("participant:{session_ref}")), "{messages}");
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

backend_tests! {
    async fn a_plain_chat_condition_sends_no_tools_and_no_workspace(engine) {
        let (tdb, mock, server) = with_agent(
            engine,
            vec![
                Script::text("Hello."),
                Script::tool_calls(vec![call("set_objective", json!({"objective": "x", "action_and_reasoning": "Set it."}))]),
                Script::text("Done."),
            ],
        )
        .await;
        let conditions = json!([
            {"key": "chat", "label": "Plain chat", "panels": [], "tools": [], "temperature": 0.3, "system_prompt": "You are a helpful assistant."},
        ]);
        let (_, key) = open_study(&server, &design(conditions)).await;
        let (token, session) = consented(&server, &key, "chatter").await;
        let thread = session["thread_id"].as_str().unwrap().to_string();
        as_participant(&server, &token, Method::POST, "/api/participant/start", None).await;
        let mut turn = chat(&server, &token, &thread, "Hi").await;
        until_event(&mut turn, "done", Duration::from_secs(15)).await;
        let request = mock.requests()[0].body.clone();
        assert!(request.get("tools").is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)), "{request}");
        let messages = request["messages"].as_array().unwrap();
        assert_eq!(messages[0]["content"], "You are a helpful assistant.");
        assert!(!request.to_string().contains("A dinner for four"), "no snapshot of the workspace: {request}");
        assert!((request["temperature"].as_f64().unwrap() - 0.3).abs() < 1e-6, "{request}");
        // A tool outside the condition fails as an unknown tool, and changes nothing.
        let mut turn = chat(&server, &token, &thread, "Set the objective").await;
        until_event(&mut turn, "done", Duration::from_secs(15)).await;
        let workspace = server.get(&format!("/api/threads/{thread}/workspace")).await.expect(200);
        assert_eq!(workspace["objective"], "A dinner for four");
        let turns = server.get(&format!("/api/threads/{thread}/messages")).await.expect(200);
        let step = &turns[1]["steps"][0];
        assert_eq!(step["result"]["success"], false, "{step}");
        assert!(step["result"]["error"].as_str().unwrap().contains("no tool named"), "{step}");
        server.shutdown().await;
        tdb.cleanup().await;
    }
}

backend_tests! {
    async fn a_condition_with_some_tools_offers_only_those(engine) {
        let (tdb, mock, server) = with_agent(engine, vec![Script::text("Hello.")]).await;
        let conditions = json!([
            {"key": "doc", "label": "Document", "panels": ["document"], "tools": ["update_document", "edit_document"]},
        ]);
        let (_, key) = open_study(&server, &design(conditions)).await;
        let (token, session) = consented(&server, &key, "doc-person").await;
        let thread = session["thread_id"].as_str().unwrap().to_string();
        as_participant(&server, &token, Method::POST, "/api/participant/start", None).await;
        let mut turn = chat(&server, &token, &thread, "Hi").await;
        until_event(&mut turn, "done", Duration::from_secs(15)).await;
        let request = mock.requests()[0].body.clone();
        let mut names: Vec<&str> = request["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
        names.sort_unstable();
        assert_eq!(names, vec!["edit_document", "update_document"]);
        assert!(request.to_string().contains("# Menu"), "the snapshot is sent: {request}");
        server.shutdown().await;
        tdb.cleanup().await;
    }
}
