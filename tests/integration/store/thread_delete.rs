//! Deleting a thread while the agent and a person are still changing it leaves none of its
//! change log behind. On PostgreSQL the log's tables have no foreign key to `threads`
//! (migration 0019), so this is what shows that the counter row and the deletion's order keep
//! them clean; a thread made again under the same id starts its history at revision 1.

use crate::common;

use std::time::Duration;

use common::{TestDb, create_thread, tid};
use haico::{
    store::Database,
    tools::{ToolRuntime, build_tools},
    workspace::Workspaces,
};
use serde_json::json;
use tokio::task::JoinSet;

const ROUNDS: u64 = 6;
/// Calls per writer at most; a writer stops at its first refused call (the thread is gone).
const CALLS: usize = 400;

/// The rows `table` holds for `thread`.
async fn rows_of(db: &Database, table: &str, thread: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM {table} WHERE thread_id = $1");
    match db {
        Database::Sqlite { reader, .. } => {
            let conn = reader.acquire().await.unwrap();
            conn.inline()
                .unwrap()
                .query_row(&sql, [thread], |row| row.get(0))
                .unwrap()
        }
        Database::Postgres { pool, .. } => sqlx::query_scalar(&sql)
            .bind(thread)
            .fetch_one(pool)
            .await
            .unwrap(),
    }
}

backend_tests! {
    async fn deleting_a_thread_mid_change_leaves_no_change_log(engine) {
        let tdb = TestDb::new(engine).await;
        let db = tdb.db.clone();
        let runtime = ToolRuntime::new(db.clone());
        let workspaces = Workspaces::standalone(db.clone());
        for round in 0..ROUNDS {
            let id = format!("doomed-{round}");
            let thread = create_thread(&db, &id).await;
            let tools = std::sync::Arc::new(build_tools(&thread));
            let mut writers = JoinSet::new();
            for writer in 0..2 {
                let (runtime, tools) = (runtime.clone(), tools.clone());
                writers.spawn(async move {
                    let mut done = 0;
                    for n in 0..CALLS {
                        let call = if writer == 0 {
                            runtime.call(&tools, "append_to_document", json!({"action_and_reasoning": "Note.", "text": format!("line {n}")})).await
                        } else {
                            runtime.call(&tools, "add_todos", json!({"steps": [{"text": format!("step {n}"), "depth": 0}]})).await
                        };
                        if !call.envelope.success {
                            break;
                        }
                        done += 1;
                    }
                    done
                });
            }
            let person = {
                let (workspaces, thread) = (workspaces.clone(), thread.clone());
                tokio::spawn(async move {
                    let mut done = 0;
                    for n in 0..CALLS {
                        if workspaces.objective(&thread).put(&format!("goal {n}")).await.is_err() {
                            break;
                        }
                        done += 1;
                    }
                    done
                })
            };
            // Let the writers get going (longer each round), then delete under them.
            tokio::time::sleep(Duration::from_millis(5 + 10 * round)).await;
            workspaces.threads().delete(&thread).await.unwrap();
            let mut calls = person.await.unwrap();
            while let Some(done) = writers.join_next().await {
                calls += done.unwrap();
            }
            assert!(calls > 0, "round {round}: no change landed before the deletion");
            assert!(calls < 3 * CALLS, "round {round}: every writer outlived the deletion");
            for table in ["events", "revisions", "panel_changes", "event_seqs", "documents", "todos", "objectives"] {
                assert_eq!(rows_of(&db, table, &id).await, 0, "round {round}: {table} kept rows of the deleted thread");
            }

            // The same id again: a new thread with its own, fresh history.
            let again = create_thread(&db, &id).await;
            assert_eq!(again, tid(&id));
            let again_tools = build_tools(&again);
            let call = runtime.call(&again_tools, "set_objective", json!({"action_and_reasoning": "Start over.", "objective": "a fresh start"})).await;
            assert!(call.envelope.success, "{:?}", call.envelope);
            assert_eq!(rows_of(&db, "revisions", &id).await, 1, "round {round}: the new thread's history is not fresh");
            assert_eq!(rows_of(&db, "panel_changes", &id).await, 1);
            workspaces.threads().delete(&again).await.unwrap();
        }
        tdb.cleanup().await;
    }
}
