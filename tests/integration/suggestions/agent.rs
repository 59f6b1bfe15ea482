//! An agent turn in suggest mode, through a mock model: the selection reaches the model quoted
//! and marked in the snapshot (the head of every request unchanged), the model's edit inside
//! the passage becomes a suggestion while edits outside it are refused, and the snapshot of
//! the next call shows the mode and the open suggestion; on both engines.

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

/// The last message of a recorded OpenAI request: the workspace snapshot.
fn snapshot_of(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    messages.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Everything of a recorded OpenAI request before the conversation: the instructions (its
/// first message) and the tool list, which SPEC §11 wants byte-identical in every request.
fn head_of(body: &Value) -> String {
    format!("{}\n{}", body["messages"][0], body["tools"])
}

/// The envelopes the model got back in a request, in order.
fn tool_results(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == json!("tool"))
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect()
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
        // The snapshot marks the passage where it sits and says the request is about it.
        let snapshot = snapshot_of(&requests[0].body);
        assert!(snapshot.contains("Intro.\nA ⟦selected⟧very very long⟦/selected⟧ sentence."), "{snapshot}");
        assert!(snapshot.contains("<selection>\nThe user's message in this turn is about the passage marked"), "{snapshot}");
        assert!(snapshot.contains("(characters 9-23 of version"), "{snapshot}");
        assert!(snapshot.contains("suggest changes to that passage only"), "{snapshot}");
        // Only the snapshot differs: the head is byte-identical and the conversation grows.
        assert_eq!(head_of(&requests[0].body), head_of(&requests[1].body));
        let (one, two) = (
            requests[0].body["messages"].as_array().unwrap(),
            requests[1].body["messages"].as_array().unwrap(),
        );
        assert_eq!(one[..one.len() - 1], two[..one.len() - 1]);
        let second = request_text(&requests[1].body);
        assert!(second.contains("#1 (edit, turn 1): Tighten the passage the user pointed at."), "{second}");
        assert!(snapshot_of(&requests[1].body).contains("⟦selected⟧very very long⟦/selected⟧"));

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

    async fn a_turn_about_a_selection_suggests_only_inside_it(engine) {
        let setup = Setup::openai(engine, vec![
            Script::tool_calls(vec![
                call("edit_document", json!({
                    "edits": [{"old_text": "intro.", "new_text": "opening."}],
                    "action_and_reasoning": "Reword the intro too.",
                })),
                call("append_to_document", json!({
                    "text": "\nA new closing line.\n",
                    "action_and_reasoning": "Add a closing line.",
                })),
            ]),
            Script::tool_calls(vec![call("update_document", json!({
                "content": "Intro.\nA rather long sentence.\nEnd.\n",
                "action_and_reasoning": "Rewrite the passage through the whole body.",
            }))]),
            Script::tool_calls(vec![call("edit_document", json!({
                "edits": [{"old_text": "very very long", "new_text": "short"}],
                "action_and_reasoning": "Shorten the selected words.",
            }))]),
            Script::text("Done."),
            // The next turn has no selection: nothing is marked, nothing is scoped.
            Script::text("Nothing to do."),
        ]).await;
        let server = &setup.server;
        server.create_thread("t").await;
        server
            .tool_ok("t", "update_document", json!({"content": "Intro.\nA very very long sentence.\nEnd.\n",
                "action_and_reasoning": "Start."}))
            .await;
        server.patch("/api/threads/t", &json!({"document_mode": "suggest"})).await.expect(200);
        let version = server.get("/api/threads/t/document").await.expect(200)["version"].clone();
        // The person types above the passage after selecting it: the selection still counts,
        // found where it moved to.
        server
            .request(reqwest::Method::PUT, "/api/threads/t/document", Some(&json!({
                "content": "A longer intro.\nA very very long sentence.\nEnd.\n",
                "expected_version": version,
            })))
            .await
            .expect(200);
        let mut reader = SseReader::post(&server.client, &server.url("/api/threads/t/chat"), &json!({
            "message": "Make this shorter.",
            "selection": {"text": "very very long", "start": 9, "end": 23, "version": version},
        })).await;
        until_done(&mut reader).await;

        let requests = setup.mock.requests();
        assert_eq!(requests.len(), 4);
        let snapshot = snapshot_of(&requests[0].body);
        assert!(snapshot.contains("A longer intro.\nA ⟦selected⟧very very long⟦/selected⟧ sentence."), "{snapshot}");
        assert!(request_text(&requests[0].body).contains("(characters 18-32 of version"));
        let results = tool_results(&requests[3].body);
        assert_eq!(results.len(), 4, "{results:?}");
        for refused in &results[..3] {
            assert_eq!(refused["success"], json!(false), "{refused}");
            let error = refused["error"].as_str().unwrap_or_default();
            assert!(error.contains("outside it"), "{error}");
        }
        assert!(results[0]["error"].as_str().unwrap().contains("before it"));
        assert!(results[1]["error"].as_str().unwrap().contains("after it"));
        assert_eq!(results[3]["success"], json!(true), "{}", results[3]);

        let listed = server.get("/api/threads/t/suggestions").await.expect(200);
        assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
        assert_eq!(listed[0]["edits"], json!([{"old_text": "very very long", "new_text": "short"}]));
        let doc = server.get("/api/threads/t/document").await.expect(200);
        assert_eq!(doc["content"], json!("A longer intro.\nA very very long sentence.\nEnd.\n"));

        let mut reader = setup.chat("t", "Anything else?").await;
        until_done(&mut reader).await;
        let requests = setup.mock.requests();
        let plain = snapshot_of(&requests[4].body);
        assert!(!plain.contains("⟦selected⟧") && !plain.contains("<selection>"), "{plain}");
        assert!(plain.contains("A longer intro.\nA very very long sentence."), "{plain}");
        assert_eq!(head_of(&requests[0].body), head_of(&requests[4].body));
        setup.cleanup().await;
    }

    async fn a_selection_on_an_older_version_is_found_where_it_moved(engine) {
        let setup = Setup::openai(engine, vec![Script::text("Noted.")]).await;
        let server = &setup.server;
        server.create_thread("old").await;
        server
            .tool_ok("old", "update_document", json!({"content": "one two. one two. one two.",
                "action_and_reasoning": "Start."}))
            .await;
        let v1 = server.get("/api/threads/old/document").await.expect(200)["version"].clone();
        let put = |content: &str, expected: &Value| {
            let body = json!({"content": content, "expected_version": expected});
            async move {
                server.request(reqwest::Method::PUT, "/api/threads/old/document", Some(&body)).await.expect(200)["version"].clone()
            }
        };
        // Two edits after the selection: the passage (the second "one") moves by six.
        let v2 = put("Zero. one two. one two. one two.", &v1).await;
        let v3 = put("Zero. one two. one two. one two!", &v2).await;
        // Not what version 1 read at those offsets, a version never reached, or negative: 422.
        for selection in [
            json!({"text": "two", "start": 9, "end": 12, "version": v1}),
            json!({"text": "one", "start": 9, "end": 12, "version": 77}),
        ] {
            let error = server
                .post("/api/threads/old/chat", &json!({"message": "Why?", "selection": selection}))
                .await
                .error(422);
            assert!(error.contains("select"), "{error}");
        }
        let mut reader = SseReader::post(&server.client, &server.url("/api/threads/old/chat"), &json!({
            "message": "Why this one?",
            "selection": {"text": "one", "start": 9, "end": 12, "version": v1},
        })).await;
        until_done(&mut reader).await;
        let requests = setup.mock.requests();
        let text = request_text(&requests[0].body);
        assert!(text.contains(&format!("(characters 15-18 of version {v3})")), "{text}");
        let snapshot = snapshot_of(&requests[0].body);
        assert!(snapshot.contains("Zero. one two. ⟦selected⟧one⟦/selected⟧ two. one two!"), "{snapshot}");
        // The person rewrites the passage away: a selection on version 1 names text that no
        // longer exists, and nothing is stored.
        put("Zero. two. two. two!", &v3).await;
        let error = server
            .post("/api/threads/old/chat", &json!({"message": "And now?",
                "selection": {"text": "one", "start": 9, "end": 12, "version": v1}}))
            .await
            .error(422);
        assert!(error.contains("no longer in the document"), "{error}");
        assert_eq!(setup.messages("old").await.len(), 1);
        setup.cleanup().await;
    }
}
