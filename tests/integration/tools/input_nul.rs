//! A NUL character (U+0000) is one rule on both engines: refused with a clear 400 or failure
//! envelope naming the field, nothing written — never a 503 or a "storage error" (PostgreSQL
//! cannot store it in text, SQLite could).

use crate::common;

use common::server::{setup, teardown};
use reqwest::Method;
use serde_json::{Value, json};

backend_tests! {
    async fn nul_characters_are_refused_by_name_everywhere(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;
        let step = server.post("/api/threads/t/todos", &json!({"text": "Step"})).await.expect(201);
        let pref = server.post("/api/threads/t/preferences", &json!({"title": "Pref"})).await.expect(201);
        let before = server.workspace("t").await;
        let nul = "a\u{0}b";

        // The user path: every body field that is stored.
        let user: Vec<(Method, String, Value, &str)> = vec![
            (Method::POST, "/api/threads".into(), json!({"title": nul}), "title"),
            (Method::PATCH, "/api/threads/t".into(), json!({"title": nul}), "title"),
            (Method::PUT, "/api/threads/t/objective".into(), json!({"objective": nul}), "objective"),
            (Method::PUT, "/api/threads/t/document".into(), json!({"content": nul}), "content"),
            (Method::PUT, "/api/threads/t/document".into(), json!({"content": "ok", "title": nul}), "title"),
            (Method::POST, "/api/threads/t/todos".into(), json!({"text": nul}), "text"),
            (Method::PATCH, format!("/api/threads/t/todos/{}", step["id"]), json!({"text": nul}), "text"),
            (Method::POST, "/api/threads/t/preferences".into(), json!({"title": "ok", "subtitle": nul}), "subtitle"),
            (Method::PATCH, format!("/api/threads/t/preferences/{}", pref["id"]), json!({"title": nul}), "title"),
            (Method::POST, "/api/threads/t/chat".into(), json!({"message": nul}), "message"),
            (Method::POST, "/api/markdown".into(), json!({"markdown": nul}), "markdown"),
            (Method::POST, "/api/threads/t/restore".into(), json!({"rev": 0, "panels": [nul]}), "panels[0]"),
        ];
        for (method, path, body, field) in user {
            let reply = server.request(method.clone(), &path, Some(&body)).await;
            let error = reply.error(400);
            assert!(error.contains(&format!("`{field}`")) && error.contains("NUL"), "{method} {path}: {error}");
        }
        let error = server.get("/api/threads/t/artifacts?artifact_type=%00").await.error(400);
        assert!(error.contains("`artifact_type`"), "{error}");

        // The agent path: a failure envelope naming the field, for every tool.
        let tool_cases = [
            ("set_objective", json!({"objective": nul}), "objective"),
            ("update_document", json!({"content": nul}), "content"),
            ("append_to_document", json!({"text": nul}), "text"),
            ("edit_document", json!({"edits": [{"old_text": "x", "new_text": nul}]}), "edits[0].new_text"),
            ("add_todos", json!({"steps": [{"text": "ok"}, {"text": nul}]}), "steps[1].text"),
            ("add_preferences", json!({"items": [{"title": nul}]}), "items[0].title"),
            ("chart_generator", json!({"chart_type": "bar", "title": nul, "data": {"labels": ["a"], "series": [{"name": "s", "values": [1]}]}}), "title"),
            ("list_artifacts", json!({"artifact_type": nul}), "artifact_type"),
            ("set_objective", json!({"objective": "ok", "unknown\u{0}": 1}), "unknown"),
        ];
        for (tool, mut args, field) in tool_cases {
            args["action_and_reasoning"] = json!("Try it.");
            let envelope = server.tool("t", tool, args).await;
            assert_eq!(envelope["success"], json!(false), "{tool}");
            let error = envelope["error"].as_str().unwrap();
            assert!(error.contains(field) && error.contains("NUL"), "{tool}: {error}");
        }
        let reasoning = server.tool("t", "set_objective", json!({"objective": "ok", "action_and_reasoning": nul})).await;
        assert!(reasoning["error"].as_str().unwrap().contains("`action_and_reasoning`"), "{reasoning}");

        // A recording with a NUL is refused with its line.
        let recording = format!(
            "{}\n",
            json!({"type": "thread", "format": "haico-recording/1", "id": "x", "title": nul, "created_at": "2026-01-01T00:00:00Z", "forked_from": null})
        );
        let response = server.client.post(server.url("/api/threads/import"))
            .header("content-type", "application/x-ndjson").body(recording).send().await.unwrap();
        assert_eq!(response.status(), 400);
        let answer: Value = response.json().await.unwrap();
        assert!(answer["error"].as_str().unwrap().starts_with("line 1: `title` contains a NUL"), "{answer}");

        assert_eq!(server.workspace("t").await, before, "nothing was written");
        let threads = server.get("/api/threads").await.expect(200);
        assert_eq!(threads.as_array().unwrap().len(), 1);
        teardown(tdb, server).await;
    }

    async fn what_a_model_made_up_is_recorded_with_its_nul_scrubbed(engine) {
        // The workspace scrubs a tool call's record, whatever the adapter passes in: the agent
        // loop hands over a model's made-up name and arguments as they came.
        let h = common::Harness::new(engine).await;
        let workspaces = h.runtime.workspaces();
        let lease = haico::store::TurnLease { owner: "test", until_ms: i64::MAX };
        let turn = workspaces.open_turn(&h.thread, "Go.", lease).await.unwrap().turn_index;
        let tools = haico::tools::build_tools(&h.thread);
        let at = haico::tools::InTurn { turn_index: turn, call_index: 1 };
        let call = h.runtime.call_in_turn(&tools, "set\u{0}objective", json!({"objective": "x\u{0}", "action_and_reasoning": "Why\u{0}"}), at).await;
        assert!(!call.envelope.success);
        let raw = h.runtime.reject_in_turn(&tools, "bad\u{0}", Value::String("{not json\u{0}".into()),
            (haico::tools::FailureKind::InvalidArguments, "not JSON \u{0}".into()),
            haico::tools::InTurn { turn_index: turn, call_index: 2 }).await;
        assert!(!raw.envelope.success);
        let turns = workspaces.conversation(&h.thread).await.unwrap();
        // Debug text writes a NUL as `\0`, in the Values of arguments and envelopes too.
        let recorded = format!("{turns:?}");
        assert!(!recorded.contains('\0') && !recorded.contains("\\0"), "{recorded}");
        let calls = &turns.last().unwrap().tool_calls;
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].tool, "set\u{FFFD}objective");
        assert_eq!(calls[1].tool, "bad\u{FFFD}");
        assert_eq!(calls[1].arguments, json!("{not json\u{FFFD}"));
        h.cleanup().await;
    }
}
