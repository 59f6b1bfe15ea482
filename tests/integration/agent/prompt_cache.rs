//! The prompt of a turn kept between its model calls (`PromptCache`): each call must show the
//! workspace exactly as a prompt read from scratch would, whoever changed it in between — the
//! agent's tool calls or a person — on SQLite and PostgreSQL.

use crate::common;

use common::Harness;
use haico::{
    agent::prompt::{PromptBudget, PromptCache, PromptWorkspace, snapshot},
    workspace::StepPlacement,
};
use serde_json::{Value, json};

/// `fields` plus the `action_and_reasoning` every call must carry.
fn args(mut fields: Value) -> Value {
    fields["action_and_reasoning"] = json!("Keeping the workspace current.");
    fields
}

/// The prompt as a fresh read renders it: what the cache must match. The read's cuts are
/// checked too, against the same cuts made in Rust from the whole workspace.
async fn from_scratch(h: &Harness, budget: &PromptBudget) -> String {
    let ws = PromptWorkspace::load(h.runtime.workspaces(), &h.thread, budget)
        .await
        .unwrap();
    let whole = PromptWorkspace::from_workspace(&h.workspace().await, budget);
    assert_eq!(ws.document, whole.document);
    assert_eq!(ws.plan, whole.plan);
    assert_eq!(ws.objective, whole.objective);
    assert_eq!(ws.preferences, whole.preferences);
    snapshot(&ws)
}

/// The cached prompt after a change; it must equal a fresh read's.
async fn check(h: &Harness, cache: &mut PromptCache, budget: &PromptBudget, what: &str) -> String {
    let cached = cache
        .snapshot(h.runtime.workspaces(), &h.thread, budget)
        .await
        .unwrap();
    assert_eq!(cached, from_scratch(h, budget).await, "after {what}");
    cached
}

backend_tests! {
    async fn the_cached_prompt_follows_every_change(engine) {
        let h = Harness::new(engine).await;
        let workspaces = h.runtime.workspaces();
        // A small budget, so the document and the plan are cut and their cuts must follow too.
        let budget = PromptBudget {
            document_chars: 30,
            plan_steps: 3,
            artifacts: 2,
        };
        let mut cache = PromptCache::default();
        let empty = check(&h, &mut cache, &budget, "nothing").await;
        assert!(empty.contains("(the plan is empty)"));

        // The agent's calls, one panel at a time.
        h.ok("set_objective", args(json!({"objective": "Plan a trip"}))).await;
        let prompt = check(&h, &mut cache, &budget, "set_objective").await;
        assert!(prompt.contains("<objective>\nPlan a trip\n</objective>"));
        h.ok("add_todos", args(json!({"steps": [{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}]}))).await;
        check(&h, &mut cache, &budget, "add_todos").await;
        h.ok("append_to_document", args(json!({"text": "é".repeat(40)}))).await;
        check(&h, &mut cache, &budget, "a first append").await;
        h.ok("append_to_document", args(json!({"text": "😀".repeat(7)}))).await;
        check(&h, &mut cache, &budget, "four-byte characters").await;
        h.ok("append_to_document", args(json!({"text": "the end ü"}))).await;
        let prompt = check(&h, &mut cache, &budget, "a second append").await;
        assert!(prompt.contains("the end ü\n</document>"), "{prompt}");
        h.ok("add_preferences", args(json!({"items": [{"title": "Quiet"}]}))).await;
        check(&h, &mut cache, &budget, "add_preferences").await;
        h.ok(
            "chart_generator",
            args(json!({"chart_type": "bar", "title": "T", "data": {"labels": ["x"], "series": [{"name": "s", "values": [1]}]}})),
        )
        .await;
        check(&h, &mut cache, &budget, "chart_generator").await;
        h.ok("toggle_todos", args(json!({"indices": [1, 4]}))).await;
        check(&h, &mut cache, &budget, "toggle_todos").await;

        // A person's edits in the middle of a turn reach the next call too.
        workspaces.objective(&h.thread).put("Plan a cheaper trip").await.unwrap();
        let prompt = check(&h, &mut cache, &budget, "a person's objective").await;
        assert!(prompt.contains("Plan a cheaper trip"));
        let first = h.workspace().await.plan[0].id;
        workspaces.plan(&h.thread).add_step("from a person", StepPlacement::After(first)).await.unwrap();
        let prompt = check(&h, &mut cache, &budget, "a person's step").await;
        assert!(prompt.contains("2. [ ] from a person"), "{prompt}");
        workspaces.document(&h.thread).put("rewritten whole", Some("Notes"), None).await.unwrap();
        let prompt = check(&h, &mut cache, &budget, "a person's document").await;
        assert!(prompt.contains("<document title=\"Notes\">\nrewritten whole\n</document>"));

        // A restore is announced as a person's change, with its note in the prompt.
        workspaces.restore(&h.thread, 2, None).await.unwrap();
        let prompt = check(&h, &mut cache, &budget, "a restore").await;
        assert!(prompt.contains("went back in the workspace's history"), "{prompt}");

        // Nothing changed: the same prompt again.
        assert_eq!(check(&h, &mut cache, &budget, "nothing new").await, prompt);
        h.cleanup().await;
    }

    async fn a_thread_made_again_under_the_same_id_is_read_afresh(engine) {
        let h = Harness::new(engine).await;
        let workspaces = h.runtime.workspaces();
        let budget = PromptBudget::default();
        let mut cache = PromptCache::default();
        h.ok("set_objective", args(json!({"objective": "The old thread"}))).await;
        h.ok("add_todos", args(json!({"steps": [{"text": "old step"}]}))).await;
        check(&h, &mut cache, &budget, "the old thread").await;
        // Deleted and made again: its events are numbered from 1 again, and may reach the
        // number the cache last saw with other contents.
        workspaces.threads().delete(&h.thread).await.unwrap();
        common::create_thread(h.db(), h.thread.as_str()).await;
        h.ok("set_objective", args(json!({"objective": "The new thread"}))).await;
        h.ok("add_todos", args(json!({"steps": [{"text": "new step"}]}))).await;
        let prompt = check(&h, &mut cache, &budget, "the thread made again").await;
        assert!(prompt.contains("The new thread") && !prompt.contains("old step"), "{prompt}");
        h.cleanup().await;
    }
}
