//! A panel's history is a chain of operation records ending in whole states: when a chain
//! grows long (in records, or in bytes against the last whole state), the change that made it
//! long has its record turned into the panel's whole state, so a read replays little. On
//! PostgreSQL an agent's change is logged and committed in one round trip, and that whole
//! state is written just after the commit, only while the change is still the panel's latest
//! record; the outcome must be the same as SQLite's, where it is written inside the change.

use crate::common::Harness;
use haico::store::Database;
use serde_json::{Value, json};

fn why(mut args: Value) -> Value {
    args["action_and_reasoning"] = json!("Grow the document.");
    args
}

/// The document's history records, oldest first: `(rev, whole)`.
async fn document_records(db: &Database, thread: &str) -> Vec<(i64, bool)> {
    let sql = "SELECT rev, whole FROM panel_changes WHERE thread_id = $1 AND panel = 'document' \
               ORDER BY rev";
    match db {
        Database::Sqlite { reader, .. } => {
            let conn = reader.acquire().await.unwrap();
            let mut statement = conn.inline().unwrap().prepare(sql).unwrap();
            statement
                .query_map([thread], |row| Ok((row.get(0)?, row.get(1)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        }
        Database::Postgres { pool, .. } => sqlx::query_as(sql)
            .bind(thread)
            .fetch_all(pool)
            .await
            .unwrap(),
    }
}

backend_tests! {
    async fn a_chain_outweighing_its_base_ends_with_the_whole_state(engine) {
        let h = Harness::new(engine).await;
        h.ok("update_document", why(json!({"title": "Notes", "content": "start"}))).await;
        // 100 KB a record: the third append takes the chain past 256 KB, more than the small
        // whole state it started from.
        let block = "x".repeat(100_000);
        for _ in 0..4 {
            h.ok("append_to_document", why(json!({"text": block}))).await;
        }
        let records = document_records(h.db(), "main").await;
        let kinds: Vec<bool> = records.iter().map(|(_, whole)| *whole).collect();
        assert_eq!(
            kinds,
            [true, false, false, true, false],
            "whole, two appends as operations, the third as the whole state, then a new chain: \
             {records:?}"
        );
        let document = h.workspace().await.document.expect("a document");
        assert_eq!(document.content.len(), "start".len() + 4 * block.len());

        // The whole state is written only while its change is the latest record: for an older
        // revision nothing is written.
        let (old_rev, _) = records[1];
        let mut tx = h.db().begin_write().await.unwrap();
        let wrote = tx
            .history()
            .record_panel_state_if_latest(&h.thread, "document", old_rev, "{}")
            .await
            .unwrap();
        tx.commit().await.unwrap();
        assert!(!wrote);
        assert_eq!(document_records(h.db(), "main").await, records);
        h.cleanup().await;
    }
}
