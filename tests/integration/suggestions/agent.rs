//! An agent turn in suggest mode, through a mock model: the selection reaches the model, the
//! model's edit becomes a suggestion scoped to the passage, and the snapshot of the next call
//! shows the mode and the open suggestion; on both engines.

use crate::common;

use common::{
    agent::{Setup, until_done},
    mock_llm::{Script, call},
    sse::SseReader,
};
use serde_json::{Value, json};

/// Every message text of a recorded OpenAI request, joined.
fn request_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m["content"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| m["content"].to_string())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

backend_tests! {
    async fn a_question_about_a_selection_ends_in_a_suggestion(engine) {
        let setup = Setup::openai(engine, vec![
            Script::tool_calls(vec![call("edit_document", json!({
                "edits": [{"old_text": "very very long", "new_text": "short"}],
                "action_and_reasoning": "Tighten the passage the user pointed at.",
            }))]),
            Script::text("I suggested a shorter wording."),
        ]).await;
        let server = &setup.server;
        server.create_thread("t").await;
        server
            .tool_ok("t", "update_document", json!({"content": "Intro.\nA very very long sentence.\n",
                "action_and_reasoning": "Start."}))
            .await;
        server.patch("/api/threads/t", &json!({"document_mode": "suggest"})).await.expect(200);
        let version = server.get("/api/threads/t/document").await.expect(200)["version"].clone();

        let mut reader = SseReader::post(&server.client, &server.url("/api/threads/t/chat"), &json!({
            "message": "Make this shorter.",
            "selection": {"text": "very very long", "start": 9, "end": 23, "version": version},
        })).await;
        until_done(&mut reader).await;

        let requests = setup.mock.requests();
        assert_eq!(requests.len(), 2);
        let first = request_text(&requests[0].body);
        assert!(first.contains("About this passage of the document (characters 9-23"), "{first}");
        assert!(first.contains("> very very long"), "{first}");
        assert!(first.contains("<suggestions mode=\"suggest\">"), "{first}");
        let second = request_text(&requests[1].body);
        assert!(second.contains("#1 (edit, turn 1): Tighten the passage the user pointed at."), "{second}");

        let doc = server.get("/api/threads/t/document").await.expect(200);
        assert_eq!(doc["content"], json!("Intro.\nA very very long sentence.\n"));
        let listed = server.get("/api/threads/t/suggestions?status=open").await.expect(200);
        assert_eq!(listed[0]["turn_index"], json!(1));
        assert_eq!(listed[0]["action_and_reasoning"], json!("Tighten the passage the user pointed at."));
        server.post("/api/threads/t/suggestions/1/accept", &json!({})).await.expect(200);
        let doc = server.get("/api/threads/t/document").await.expect(200);
        assert_eq!(doc["content"], json!("Intro.\nA short sentence.\n"));
        setup.cleanup().await;
    }
}
