//! Document and objective tools, on SQLite and PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::Harness;
use serde_json::json;

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
        h.fail("set_objective", json!({"action_and_reasoning": "Clear.", "objective": "   "})).await;
        h.fail("set_objective", json!({"action_and_reasoning": "Long.", "objective": "x".repeat(501)})).await;
        h.fail("set_objective", json!({"action_and_reasoning": "Wrong.", "objective": ["a"]})).await;
        h.cleanup().await;
    }
}
