//! Document and objective tools, on SQLite and PostgreSQL.

use crate::common;

use std::time::Duration;

use common::{
    Harness,
    server::{TestServer, setup, teardown},
    sse::SseReader,
};
use haico::workspace::MAX_DOCUMENT_CHARS;
use serde_json::{Value, json};

/// The thread `t`'s workspace right after revision `rev`.
async fn at(server: &TestServer, rev: i64) -> Value {
    server
        .get(&format!("/api/threads/t/workspace?at={rev}"))
        .await
        .expect(200)
}

/// `edit_document`'s arguments with its reason.
fn edits(list: Value) -> Value {
    json!({"action_and_reasoning": "Fix a passage.", "edits": list})
}

backend_tests! {
    async fn update_document_counts_code_points_and_keeps_title(engine) {
        let h = Harness::new(engine).await;
        let s = h.ok("update_document", json!({"action_and_reasoning": "Start the draft.", "content": "héllo 👋", "title": "Plan"})).await;
        assert_eq!(s, "document updated (7 chars)");
        let s = h.ok("update_document", json!({"action_and_reasoning": "Rewrite.", "content": "abc"})).await;
        assert_eq!(s, "document updated (3 chars)");
        let doc = h.workspace().await.document.unwrap();
        assert_eq!((doc.title.as_str(), doc.content.as_str(), doc.version), ("Plan", "abc", 2));
        h.ok("update_document", json!({"action_and_reasoning": "Empty it.", "content": ""})).await;
        assert_eq!(h.workspace().await.document.unwrap().content, "");
        h.cleanup().await;
    }

    async fn append_creates_then_accumulates(engine) {
        let h = Harness::new(engine).await;
        assert!(h.workspace().await.document.is_none());
        let s = h.ok("append_to_document", json!({"action_and_reasoning": "Add intro.", "text": "ab"})).await;
        assert_eq!(s, "appended (2 chars total)");
        let s = h.ok("append_to_document", json!({"action_and_reasoning": "Add more.", "text": "çé"})).await;
        assert_eq!(s, "appended (4 chars total)");
        let doc = h.workspace().await.document.unwrap();
        assert_eq!(doc.content, "abçé");
        assert_eq!(doc.title, "");
        h.cleanup().await;
    }

    async fn document_tools_reject_bad_input_without_writing(engine) {
        let h = Harness::new(engine).await;
        h.ok("update_document", json!({"action_and_reasoning": "Seed.", "content": "seed"})).await;
        let e = h.fail("update_document", json!({"content": "x"})).await;
        assert!(e.contains("action_and_reasoning"), "{e}");
        let e = h.fail("update_document", json!({"action_and_reasoning": "  ", "content": "x"})).await;
        assert!(e.contains("empty"), "{e}");
        let e = h.fail("update_document", json!({"action_and_reasoning": 5, "content": "x"})).await;
        assert!(e.contains("must be a string"), "{e}");
        let e = h.fail("update_document", json!({"action_and_reasoning": "Go."})).await;
        assert!(e.contains("content"), "{e}");
        let e = h.fail("update_document", json!({"action_and_reasoning": "Go.", "content": 42})).await;
        assert!(e.contains("content") && e.contains("string"), "{e}");
        let e = h.fail("update_document", json!({"action_and_reasoning": "Go.", "content": "x", "colour": "red"})).await;
        assert!(e.contains("colour"), "{e}");
        let e = h.fail("append_to_document", json!({"action_and_reasoning": "Go.", "text": ""})).await;
        assert!(e.contains("empty"), "{e}");
        let e = h.fail("append_to_document", json!(["not", "an", "object"])).await;
        assert!(e.contains("object"), "{e}");
        h.cleanup().await;
    }

    async fn set_objective_is_one_line_and_required(engine) {
        let h = Harness::new(engine).await;
        let s = h.ok("set_objective", json!({"action_and_reasoning": "Capture the goal.", "objective": "  Plan a\n trip  to Crete "})).await;
        assert_eq!(s, "objective set: Plan a trip to Crete");
        h.ok("set_objective", json!({"action_and_reasoning": "Refine.", "objective": "Plan a cheap trip"})).await;
        assert_eq!(h.workspace().await.objective.as_deref(), Some("Plan a cheap trip"));
        // The same objective again (spaces aside) writes nothing, and says so first.
        let before = h.state().await;
        let record = h.call_full("set_objective", json!({"action_and_reasoning": "Refine.", "objective": " Plan a  cheap trip"})).await;
        assert_eq!(record.envelope.summary.as_deref(), Some("nothing changed: the objective already reads \"Plan a cheap trip\""));
        assert!(record.envelope.success && record.changed.is_empty());
        h.assert_only_marked_since(&before).await;
        h.fail("set_objective", json!({"action_and_reasoning": "Clear.", "objective": "   "})).await;
        h.fail("set_objective", json!({"action_and_reasoning": "Long.", "objective": "x".repeat(501)})).await;
        h.fail("set_objective", json!({"action_and_reasoning": "Wrong.", "objective": ["a"]})).await;
        h.cleanup().await;
    }

    async fn edit_document_applies_edits_in_order(engine) {
        let h = Harness::new(engine).await;
        h.ok("update_document", json!({"action_and_reasoning": "Draft.", "title": "Trip",
            "content": "# Trip\n\nDay 1: museum.\nDay 2: beach.\n"})).await;
        // The second edit matches text that only the first one wrote.
        let s = h.ok("edit_document", edits(json!([
            {"old_text": "Day 1: museum.", "new_text": "Day 1: old town."},
            {"old_text": "old town.\nDay 2", "new_text": "old town, then the castle.\nDay 2"},
        ]))).await;
        let content = "# Trip\n\nDay 1: old town, then the castle.\nDay 2: beach.\n";
        assert_eq!(s, format!("applied 2 edits ({} chars)", content.chars().count()));
        let doc = h.workspace().await.document.unwrap();
        assert_eq!((doc.title.as_str(), doc.content.as_str(), doc.version), ("Trip", content, 2));

        // An empty new_text deletes; one edit is "1 edit".
        let s = h.ok("edit_document", edits(json!([{"old_text": ", then the castle", "new_text": ""}]))).await;
        let content = "# Trip\n\nDay 1: old town.\nDay 2: beach.\n";
        assert_eq!(s, format!("applied 1 edit ({} chars)", content.chars().count()));
        assert_eq!(h.workspace().await.document.unwrap().content, content);

        // Characters are code points, and passages match across multi-byte text.
        h.ok("update_document", json!({"action_and_reasoning": "Reset.", "content": "héllo 👋 wörld"})).await;
        let s = h.ok("edit_document", edits(json!([
            {"old_text": "👋", "new_text": "🙂🙂"},
            {"old_text": "wörld", "new_text": "日本"},
        ]))).await;
        assert_eq!(s, "applied 2 edits (11 chars)");
        let doc = h.workspace().await.document.unwrap();
        assert_eq!((doc.content.as_str(), doc.version), ("héllo 🙂🙂 日本", 5));
        h.cleanup().await;
    }

    async fn edit_document_fails_whole_and_writes_nothing(engine) {
        let h = Harness::new(engine).await;
        // No document yet.
        let e = h.fail("edit_document", edits(json!([{"old_text": "a", "new_text": "b"}]))).await;
        assert_eq!(e, "invalid arguments: there is no document yet: create it first with update_document or append_to_document");
        h.ok("update_document", json!({"action_and_reasoning": "Seed.", "content": ""})).await;
        let e = h.fail("edit_document", edits(json!([{"old_text": "a", "new_text": "b"}]))).await;
        assert!(e.contains("the document is empty"), "{e}");

        h.ok("update_document", json!({"action_and_reasoning": "Seed.", "content": "one two one three"})).await;
        let e = h.fail("edit_document", edits(json!([{"old_text": "four", "new_text": "4"}]))).await;
        assert_eq!(e, "invalid arguments: edit 1: old_text was not found in the document; copy it exactly from the document as it is now");
        let e = h.fail("edit_document", edits(json!([{"old_text": "one", "new_text": "1"}]))).await;
        assert_eq!(e, "invalid arguments: edit 1: old_text occurs 2 times in the document; include more surrounding text so it matches exactly once");
        // Edit 2 fails: edit 1 is not applied either (h.fail checks that nothing changed).
        let e = h.fail("edit_document", edits(json!([
            {"old_text": "two", "new_text": "2"},
            {"old_text": "e", "new_text": "E"},
        ]))).await;
        assert_eq!(e, "invalid arguments: edit 2: old_text occurs 4 times in the document as edit 1 left it; include more surrounding text so it matches exactly once (no edit of this call was applied)");
        // Edit 3 quotes text that edit 1 already changed.
        let e = h.fail("edit_document", edits(json!([
            {"old_text": "two", "new_text": "2"},
            {"old_text": "three", "new_text": "3"},
            {"old_text": "two", "new_text": "II"},
        ]))).await;
        assert_eq!(e, "invalid arguments: edit 3: old_text was not found in the document as edits 1-2 left it; copy it exactly from the document as it is now (no edit of this call was applied)");
        // Case and whitespace count: a passage is matched exactly.
        let e = h.fail("edit_document", edits(json!([{"old_text": "One two", "new_text": "x"}]))).await;
        assert!(e.contains("was not found"), "{e}");

        // Malformed batches.
        let e = h.fail("edit_document", edits(json!([]))).await;
        assert_eq!(e, "invalid arguments: `edits` is empty: pass at least one item");
        let e = h.fail("edit_document", edits(json!([{"old_text": "two", "new_text": "2"}, {"old_text": "", "new_text": "x"}]))).await;
        assert!(e.starts_with("invalid arguments: edit 2: old_text is empty"), "{e}");
        let e = h.fail("edit_document", json!({"edits": [{"old_text": "two", "new_text": "2"}]})).await;
        assert!(e.contains("action_and_reasoning"), "{e}");
        let e = h.fail("edit_document", edits(json!([{"old_text": "two"}]))).await;
        assert!(e.contains("new_text"), "{e}");
        let e = h.fail("edit_document", edits(json!([{"old_text": "two", "new_text": "2", "all": true}]))).await;
        assert!(e.contains("all"), "{e}");
        let e = h.fail("edit_document", edits(json!({"old_text": "two", "new_text": "2"}))).await;
        assert!(e.contains("edits"), "{e}");
        assert_eq!(h.workspace().await.document.unwrap().content, "one two one three");
        h.cleanup().await;
    }

    async fn edit_document_keeps_the_document_limit(engine) {
        let h = Harness::new(engine).await;
        let near = format!("{}#", "a".repeat(MAX_DOCUMENT_CHARS - 2));
        h.ok("update_document", json!({"action_and_reasoning": "Fill.", "content": near})).await;
        let e = h.fail("edit_document", edits(json!([{"old_text": "#", "new_text": "###"}]))).await;
        assert_eq!(e, format!(
            "invalid arguments: the document would be {} characters long after these edits; the limit is {MAX_DOCUMENT_CHARS} (no edit was applied)",
            MAX_DOCUMENT_CHARS + 1
        ));
        // Exactly at the limit is fine.
        let s = h.ok("edit_document", edits(json!([{"old_text": "#", "new_text": "é#"}]))).await;
        assert_eq!(s, format!("applied 1 edit ({MAX_DOCUMENT_CHARS} chars)"));
        h.cleanup().await;
    }

    async fn edit_document_that_changes_nothing_writes_nothing(engine) {
        let h = Harness::new(engine).await;
        h.ok("update_document", json!({"action_and_reasoning": "Seed.", "content": "keep this"})).await;
        let before = h.state().await;
        let record = h.call_full("edit_document", edits(json!([
            {"old_text": "keep", "new_text": "KEEP"},
            {"old_text": "KEEP", "new_text": "keep"},
        ]))).await;
        assert_eq!(
            record.envelope.summary.as_deref(),
            Some("nothing changed: the 2 edits leave the document exactly as it was (9 chars); give new_text that differs from old_text")
        );
        assert!(record.changed.is_empty());
        assert_eq!(h.state().await.workspace, before.workspace);
        h.cleanup().await;
    }

    async fn edit_document_is_a_revision_and_a_document_event(engine) {
        let (tdb, server) = setup(engine).await;
        server.create_thread("t").await;
        let body = "alpha\nbeta\ngamma\ndelta\nepsilon\n";
        server.request(reqwest::Method::PUT, "/api/threads/t/document", Some(&json!({"content": body, "title": "Greek"}))).await.expect(200);
        let mut events = SseReader::open(&server.client, &server.url("/api/threads/t/events"), None).await;
        let s = server.tool_ok("t", "edit_document", edits(json!([
            {"old_text": "beta", "new_text": "BETA"},
            {"old_text": "epsilon\n", "new_text": ""},
        ]))).await;
        assert_eq!(s, "applied 2 edits (23 chars)");
        let frame = events.next(Duration::from_secs(10)).await;
        assert_eq!(frame.event, "workspace");
        assert_eq!(frame.data, json!({"panels": ["document"], "source": "agent"}));
        // A failure announces nothing.
        server.tool("t", "edit_document", edits(json!([{"old_text": "zeta", "new_text": "x"}]))).await;
        assert!(events.try_next(Duration::from_millis(300)).await.is_none());

        let page = server.get("/api/threads/t/history").await.expect(200);
        let revisions = page["revisions"].as_array().unwrap();
        assert_eq!(revisions.len(), 2, "{page}");
        let rev = &revisions[0];
        assert_eq!(rev["rev"], json!(2));
        assert_eq!(rev["source"], json!("agent"));
        assert_eq!(rev["tool"], json!("edit_document"));
        assert_eq!(rev["panels"], json!(["document"]));
        assert_eq!(rev["summary"], json!(s));
        assert_eq!(rev["action_and_reasoning"], json!("Fix a passage."));

        // The history holds both states and the diff between them.
        let edited = "alpha\nBETA\ngamma\ndelta\n";
        let doc = server.get("/api/threads/t/document").await.expect(200);
        assert_eq!((doc["content"].clone(), doc["title"].clone(), doc["version"].clone()), (json!(edited), json!("Greek"), json!(2)));
        assert_eq!(at(&server, 1).await["document"]["content"], json!(body));
        assert_eq!(at(&server, 2).await["document"], server.workspace("t").await["document"]);
        let diff = server.get("/api/threads/t/document/diff?from=1&to=2").await.expect(200);
        let unified = diff["unified"].as_str().unwrap();
        for line in ["-beta", "+BETA", "-epsilon", " gamma"] {
            assert!(unified.lines().any(|l| l == line), "{line} missing in {unified}");
        }
        // Later writes replay on top of it; a restore goes back before it.
        server.tool_ok("t", "append_to_document", json!({"action_and_reasoning": "More.", "text": "zeta\n"})).await;
        assert_eq!(at(&server, 2).await["document"]["content"], json!(edited));
        assert_eq!(at(&server, 3).await["document"]["content"], json!(format!("{edited}zeta\n")));
        let restored = server.post("/api/threads/t/restore", &json!({"rev": 1, "panels": ["document"]})).await.expect(200);
        assert_eq!(restored["workspace"]["document"]["content"], json!(body));
        teardown(tdb, server).await;
    }
}
