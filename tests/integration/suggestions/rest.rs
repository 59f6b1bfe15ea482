//! The whole flow over REST and the tools endpoint, on SQLite and PostgreSQL.

use crate::common;

use common::server::{TestServer, setup, teardown};
use reqwest::Method;
use serde_json::{Value, json};

fn reason(mut args: Value, why: &str) -> Value {
    args["action_and_reasoning"] = json!(why);
    args
}

async fn document(server: &TestServer, thread: &str) -> Value {
    server
        .get(&format!("/api/threads/{thread}/document"))
        .await
        .expect(200)
}

async fn suggest_mode(server: &TestServer, thread: &str) {
    let row = server
        .patch(
            &format!("/api/threads/{thread}"),
            &json!({"document_mode": "suggest"}),
        )
        .await
        .expect(200);
    assert_eq!(row["document_mode"], json!("suggest"));
}

/// Calls a document tool that must make suggestion `id`.
async fn suggest(server: &TestServer, thread: &str, tool: &str, args: Value, id: i64) {
    let summary = server
        .tool_ok(thread, tool, reason(args, "Propose a change."))
        .await;
    assert!(
        summary.starts_with(&format!("suggested #{id}:")),
        "{summary}"
    );
}

async fn accept(server: &TestServer, thread: &str, id: i64) -> common::server::Reply {
    server
        .post(
            &format!("/api/threads/{thread}/suggestions/{id}/accept"),
            &json!({}),
        )
        .await
}

async fn reject(server: &TestServer, thread: &str, id: i64) -> common::server::Reply {
    server
        .post(
            &format!("/api/threads/{thread}/suggestions/{id}/reject"),
            &json!({}),
        )
        .await
}

async fn listed(server: &TestServer, thread: &str, status: &str) -> Vec<Value> {
    let path = match status {
        "" => format!("/api/threads/{thread}/suggestions"),
        _ => format!("/api/threads/{thread}/suggestions?status={status}"),
    };
    server
        .get(&path)
        .await
        .expect(200)
        .as_array()
        .unwrap()
        .clone()
}

/// The data of the next `workspace` event.
async fn next_workspace(events: &mut common::sse::SseReader) -> Value {
    loop {
        let frame = events.next(std::time::Duration::from_secs(10)).await;
        if frame.event == "workspace" {
            return frame.data;
        }
    }
}

backend_tests! {
    async fn the_mode_is_on_the_thread_and_in_the_snapshot(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("m").await;
        let row = server.get("/api/threads/m").await.expect(200);
        assert_eq!(row["document_mode"], json!("direct"));
        assert_eq!(server.workspace("m").await["document_mode"], json!("direct"));
        assert_eq!(server.workspace("m").await["suggestions"], json!([]));

        // Bad input: 4xx, nothing changes.
        for (body, status) in [
            (json!({"document_mode": "maybe"}), 400),
            (json!({}), 400),
            (json!({"document_mode": 3}), 422),
            (json!({"document_mode": "suggest", "title": ""}), 400),
        ] {
            server.patch("/api/threads/m", &body).await.error(status);
        }
        assert_eq!(server.get("/api/threads/m").await.expect(200)["document_mode"], json!("direct"));
        let history = server.get("/api/threads/m/history").await.expect(200);
        assert_eq!(history["revisions"], json!([]));

        suggest_mode(&server, "m").await;
        assert_eq!(server.workspace("m").await["document_mode"], json!("suggest"));
        let history = server.get("/api/threads/m/history").await.expect(200);
        let newest = &history["revisions"][0];
        assert_eq!(newest["panels"], json!(["suggestions"]));
        assert_eq!(newest["source"], json!("user"));
        // Setting the same mode again changes nothing and records nothing.
        suggest_mode(&server, "m").await;
        let again = server.get("/api/threads/m/history").await.expect(200);
        assert_eq!(again["revisions"].as_array().unwrap().len(), 1);
        // The title and the mode together.
        let both = server
            .patch("/api/threads/m", &json!({"title": "Renamed", "document_mode": "direct"}))
            .await
            .expect(200);
        assert_eq!((both["title"].clone(), both["document_mode"].clone()), (json!("Renamed"), json!("direct")));
        teardown(tdb, server).await;
    }

    async fn tools_suggest_and_the_document_waits(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("s").await;
        server
            .tool_ok("s", "update_document", reason(json!({"content": "alpha beta\ngamma\n", "title": "T"}), "Start."))
            .await;
        suggest_mode(&server, "s").await;
        let before = document(&server, "s").await;

        suggest(&server, "s", "edit_document", json!({"edits": [{"old_text": "beta", "new_text": "BETA"}]}), 1).await;
        suggest(&server, "s", "append_to_document", json!({"text": "delta\n"}), 2).await;
        suggest(&server, "s", "update_document", json!({"content": "all new\n", "title": "New"}), 3).await;
        assert_eq!(document(&server, "s").await, before, "suggestions leave the document alone");

        // The same rules as the direct tools: a passage that is not there fails, nothing stored.
        let env = server
            .tool("s", "edit_document", reason(json!({"edits": [{"old_text": "zzz", "new_text": "y"}]}), "Try."))
            .await;
        assert_eq!(env["success"], json!(false), "{env}");
        assert!(env["error"].as_str().unwrap().contains("not found"), "{env}");
        // The same suggestion twice is refused.
        let env = server
            .tool("s", "append_to_document", reason(json!({"text": "delta\n"}), "Again."))
            .await;
        assert_eq!(env["success"], json!(false), "{env}");
        assert!(env["error"].as_str().unwrap().contains("#2"), "{env}");

        let open = listed(&server, "s", "open").await;
        assert_eq!(open.len(), 3);
        let first = &open[0];
        assert_eq!(first["id"], json!(1));
        assert_eq!(first["status"], json!("open"));
        assert_eq!(first["kind"], json!("edit"));
        assert_eq!(first["action_and_reasoning"], json!("Propose a change."));
        assert_eq!(first["base_version"], before["version"]);
        assert_eq!(first["edits"], json!([{"old_text": "beta", "new_text": "BETA"}]));
        assert_eq!(first["applies"], json!(true));
        let diff = first["diff"].as_str().unwrap();
        assert!(diff.contains("-alpha beta") && diff.contains("+alpha BETA"), "{diff}");
        assert_eq!(open[2]["title"], json!("New"));
        assert_eq!(listed(&server, "s", "accepted").await, Vec::<Value>::new());
        server.get("/api/threads/s/suggestions?status=maybe").await.error(400);
        assert_eq!(server.workspace("s").await["suggestions"].as_array().unwrap().len(), 3);

        // Each call made one revision naming the panel, by the agent's tool.
        let history = server.get("/api/threads/s/history").await.expect(200);
        let newest = &history["revisions"][0];
        assert_eq!(newest["panels"], json!(["suggestions"]));
        assert_eq!(newest["tool"], json!("update_document"));
        teardown(tdb, server).await;
    }

    async fn accepting_applies_by_text_or_marks_outdated(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("a").await;
        server
            .tool_ok("a", "update_document", reason(json!({"content": "one two\nthree four\nfive six\n"}), "Start."))
            .await;
        suggest_mode(&server, "a").await;
        suggest(&server, "a", "edit_document", json!({"edits": [{"old_text": "two", "new_text": "2"}]}), 1).await;
        suggest(&server, "a", "edit_document", json!({"edits": [{"old_text": "four", "new_text": "4"}]}), 2).await;
        suggest(&server, "a", "append_to_document", json!({"text": "seven\n"}), 3).await;
        suggest(&server, "a", "edit_document", json!({"edits": [{"old_text": "six", "new_text": "6"}]}), 4).await;

        // The person edits an unrelated passage, then the passage of #2.
        let doc = document(&server, "a").await;
        let v = doc["version"].as_i64().unwrap();
        server
            .request(Method::PUT, "/api/threads/a/document", Some(&json!({"content": "one two\nthree FOUR\nfive six\nby hand\n", "expected_version": v})))
            .await
            .expect(200);

        // #1 was made on version v and still applies after the person's edit.
        let accepted = accept(&server, "a", 1).await.expect(200);
        assert_eq!(accepted["suggestion"]["status"], json!("accepted"));
        assert_eq!(accepted["document"]["content"], json!("one 2\nthree FOUR\nfive six\nby hand\n"));
        assert_eq!(accepted["document"]["version"], json!(v + 2));
        assert!(accepted["suggestion"]["diff"].as_str().unwrap().contains("+one 2"));

        // #2's passage is gone: 409, outdated, document unchanged.
        let doc = document(&server, "a").await;
        let text = accept(&server, "a", 2).await.error(409);
        assert!(text.contains("outdated"), "{text}");
        assert_eq!(document(&server, "a").await, doc);
        assert_eq!(listed(&server, "a", "outdated").await[0]["id"], json!(2));

        // Accepting twice, rejecting a decided one, unknown ids.
        assert!(accept(&server, "a", 1).await.error(409).contains("already decided"));
        reject(&server, "a", 2).await.error(409);
        accept(&server, "a", 99).await.error(404);
        accept(&server, "nope", 1).await.error(404);

        // Several in a row, each applying to what the last left.
        accept(&server, "a", 3).await.expect(200);
        let rejected = reject(&server, "a", 4).await.expect(200);
        assert_eq!(rejected["status"], json!("rejected"));
        assert_eq!(document(&server, "a").await["content"], json!("one 2\nthree FOUR\nfive six\nby hand\nseven\n"));
        assert_eq!(listed(&server, "a", "open").await, Vec::<Value>::new());
        let all = listed(&server, "a", "").await;
        let statuses: Vec<&str> = all.iter().map(|s| s["status"].as_str().unwrap()).collect();
        assert_eq!(statuses, ["accepted", "outdated", "accepted", "rejected"]);

        // A replace applies only to the body it was made on.
        suggest(&server, "a", "update_document", json!({"content": "fresh\n", "title": "Fresh"}), 5).await;
        suggest(&server, "a", "update_document", json!({"content": "other\n"}), 6).await;
        let done = accept(&server, "a", 5).await.expect(200);
        assert_eq!(done["document"]["title"], json!("Fresh"));
        accept(&server, "a", 6).await.error(409);
        teardown(tdb, server).await;
    }

    async fn concurrent_accepts_one_wins(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("c").await;
        server
            .tool_ok("c", "update_document", reason(json!({"content": "x y z\n"}), "Start."))
            .await;
        suggest_mode(&server, "c").await;
        for round in 1..=5 {
            suggest(&server, "c", "append_to_document", json!({"text": format!("line {round}\n")}), round).await;
            let (a, b) = tokio::join!(accept(&server, "c", round), accept(&server, "c", round));
            let mut statuses = [a.status.as_u16(), b.status.as_u16()];
            statuses.sort();
            assert_eq!(statuses, [200, 409], "round {round}");
        }
        let content = document(&server, "c").await["content"].as_str().unwrap().to_string();
        assert_eq!(content.matches("line 3").count(), 1, "{content}");
        teardown(tdb, server).await;
    }

    async fn events_history_restore_and_recordings_keep_suggestions(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("h").await;
        server
            .tool_ok("h", "update_document", reason(json!({"content": "red green\n"}), "Start."))
            .await;
        suggest_mode(&server, "h").await;
        let mut events = common::sse::SseReader::open(&server.client, &server.url("/api/threads/h/events"), None).await;
        suggest(&server, "h", "edit_document", json!({"edits": [{"old_text": "green", "new_text": "blue"}]}), 1).await;
        let data = next_workspace(&mut events).await;
        assert_eq!(data["panels"], json!(["suggestions"]));
        assert_eq!(data["source"], json!("agent"));
        let rev_open = server.get("/api/threads/h/history").await.expect(200)["revisions"][0]["rev"].as_i64().unwrap();
        accept(&server, "h", 1).await.expect(200);
        let data = next_workspace(&mut events).await;
        assert_eq!(data["panels"], json!(["document", "suggestions"]));
        assert_eq!(data["source"], json!("user"));

        // The workspace at the earlier revision shows the suggestion open, with its diff.
        let then = server.get(&format!("/api/threads/h/workspace?at={rev_open}")).await.expect(200);
        assert_eq!(then["document_mode"], json!("suggest"));
        assert_eq!(then["suggestions"][0]["id"], json!(1));
        assert!(then["suggestions"][0]["diff"].as_str().unwrap().contains("+red blue"));
        assert_eq!(server.workspace("h").await["suggestions"], json!([]));

        // A restore sets the document back but never removes a suggestion.
        server.post("/api/threads/h/restore", &json!({"rev": rev_open})).await.expect(200);
        assert_eq!(document(&server, "h").await["content"], json!("red green\n"));
        assert_eq!(listed(&server, "h", "accepted").await.len(), 1);
        server.post("/api/threads/h/restore", &json!({"rev": 1, "panels": ["suggestions"]})).await.error(400);

        // A recording brings the mode and the suggestions along.
        let exported = server
            .client
            .get(server.url("/api/threads/h/export"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let imported = server
            .send_raw(Method::POST, "/api/threads/import?id=h2", Some("application/x-ndjson"), exported.clone())
            .await
            .expect(201);
        assert_eq!(imported["document_mode"], json!("suggest"));
        assert_eq!(listed(&server, "h2", "").await, listed(&server, "h", "").await);
        // A fork too.
        server.post("/api/threads/h/fork", &json!({"id": "h3", "at": rev_open})).await.expect(201);
        let forked = listed(&server, "h3", "").await;
        assert_eq!(forked.len(), 1);
        assert_eq!(forked[0]["status"], json!("open"));
        teardown(tdb, server).await;
    }

    async fn a_selection_must_be_in_the_document(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("sel").await;
        server
            .tool_ok("sel", "update_document", reason(json!({"content": "héllo wörld 👋 again"}), "Start."))
            .await;
        let v = document(&server, "sel").await["version"].clone();
        for (selection, status) in [
            (json!({"text": "", "start": 0, "end": 0, "version": v}), 400),
            (json!({"text": "wörld", "start": 6, "end": 5, "version": v}), 400),
            (json!({"text": "wörld", "start": 6, "end": 12, "version": v}), 400),
            (json!({"text": "wörld", "start": -1, "end": 4, "version": v}), 400),
            (json!({"text": "world", "start": 6, "end": 11, "version": v}), 422),
            (json!({"text": "wörld", "start": 7, "end": 12, "version": v}), 422),
            (json!({"text": "wörld", "start": 6, "end": 11, "version": 99}), 422),
            (json!({"text": "wörld", "start": 6, "end": 11}), 422),
        ] {
            let answer = server
                .post("/api/threads/sel/chat", &json!({"message": "Shorter?", "selection": selection}))
                .await;
            answer.error(status);
        }
        server
            .post("/api/threads/sel/chat", &json!({"message": " ", "selection": {"text": "wörld", "start": 6, "end": 11, "version": v}}))
            .await
            .error(400);
        // Nothing was stored: no turn ran.
        assert_eq!(server.get("/api/threads/sel/messages").await.expect(200), json!([]));
        teardown(tdb, server).await;
    }
}
