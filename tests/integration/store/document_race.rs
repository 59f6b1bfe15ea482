//! An agent's `update_document` on PostgreSQL reads the body it replaces in the statement that
//! replaces it (the row is locked by a subquery first). A person's edit committed while that
//! statement waits must be what the agent's history record is taken against, or replaying the
//! history would give a body that never existed. (The person's edit changes the head of the
//! body, so a record taken against the older body replays to a wrong one.)

use crate::common;

use std::time::Duration;

use common::{TestDb, create_thread};
use haico::{
    tools::{ToolRuntime, build_tools},
    workspace::{ChangeNote, Source},
};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_edit_committed_while_the_agents_replacement_waits_is_what_it_replaces() {
    needs!(postgres);
    let tdb = TestDb::new(common::Engine::Postgres).await;
    let thread = create_thread(&tdb.db, "doc-race").await;
    let runtime = ToolRuntime::new(tdb.db.clone());
    let tools = build_tools(&thread);
    let replace = |content: &str| json!({"action_and_reasoning": "Rewrite.", "title": "Trip", "content": content});
    let first = runtime
        .call(&tools, "update_document", replace("# Trip\n\nBy train."))
        .await;
    assert!(first.envelope.success, "{:?}", first.envelope);

    // The person's edit holds the document's row until it commits.
    let workspaces = runtime.workspaces().clone();
    let mut person = workspaces.edit(&thread, Source::User).await.unwrap();
    person
        .document()
        .replace("# Journey by sea\n\nBy train.", None, None)
        .await
        .unwrap();
    let agent = {
        let (runtime, tools) = (runtime.clone(), tools.clone());
        let args = replace("# Trip\n\nBy bike.");
        tokio::spawn(async move { runtime.call(&tools, "update_document", args).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !agent.is_finished(),
        "the agent's write must wait for the person's row lock"
    );
    person
        .commit(ChangeNote::user("rewrote the trip"))
        .await
        .unwrap();
    let call = agent.await.unwrap();
    assert!(call.envelope.success, "{:?}", call.envelope);

    // Every revision replays to the body that was there: the agent's change was recorded
    // against the person's body, not the one before it.
    let page = workspaces.history(&thread, None, None).await.unwrap();
    let mut bodies = Vec::new();
    for revision in page.revisions.iter().rev() {
        let at = workspaces
            .workspace_at(&thread, revision.rev)
            .await
            .unwrap();
        bodies.push(at.document.map(|d| d.content).unwrap_or_default());
    }
    assert_eq!(
        bodies,
        vec![
            "# Trip\n\nBy train.".to_string(),
            "# Journey by sea\n\nBy train.".to_string(),
            "# Trip\n\nBy bike.".to_string(),
        ]
    );
    assert_eq!(
        workspaces.document(&thread).get().await.unwrap().content,
        "# Trip\n\nBy bike."
    );
    tdb.cleanup().await;
}
