//! A database made before history existed: migration 0009 gives each existing workspace a
//! baseline revision holding what it was, on both engines, and history goes on from there.

use crate::common;

use std::borrow::Cow;

use common::{postgres_url, server::TestServer};
use haico::store::{Database, PoolConfig};
use serde_json::json;
use sqlx::migrate::Migrator;

/// PostgreSQL's migrations up to 0008, the schema before history.
fn before_history(all: &Migrator) -> Migrator {
    Migrator {
        migrations: Cow::Owned(
            all.migrations
                .iter()
                .filter(|m| m.version <= 8)
                .cloned()
                .collect(),
        ),
        ignore_missing: false,
        locking: true,
        no_tx: false,
    }
}

/// Rows of an old workspace (thread `old`) and an empty thread (`bare`), in plain SQL that both
/// engines take.
const OLD_ROWS: &[&str] = &[
    "INSERT INTO threads (id, title, turn_index, created_at, updated_at) VALUES \
     ('old', 'Old work', 2, '2026-01-01 10:00:00+00:00', '2026-01-02 10:00:00+00:00')",
    "INSERT INTO threads (id, title, turn_index, created_at, updated_at) VALUES \
     ('bare', 'Nothing yet', 0, '2026-01-01 10:00:00+00:00', '2026-01-01 10:00:00+00:00')",
    "INSERT INTO objectives (thread_id, objective, updated_at) VALUES \
     ('old', 'Plan the old trip', '2026-01-02 10:00:00+00:00')",
    "INSERT INTO documents (thread_id, title, content, version, updated_at) VALUES \
     ('old', 'Notes', 'Day 1: \"quotes\" and ünïcode\nDay 2', 4, '2026-01-02 10:00:00+00:00')",
    "INSERT INTO todos (thread_id, position, text, depth, done, created_at, updated_at) VALUES \
     ('old', 1, 'Second', 1, TRUE, '2026-01-02 10:00:00+00:00', '2026-01-02 10:00:00+00:00')",
    "INSERT INTO todos (thread_id, position, text, depth, done, created_at, updated_at) VALUES \
     ('old', 0, 'First', 0, FALSE, '2026-01-02 10:00:00+00:00', '2026-01-02 10:00:00+00:00')",
    "INSERT INTO preferences (thread_id, title, subtitle, kind, locked, created_at, updated_at) \
     VALUES ('old', 'Cheap', NULL, 'hard', TRUE, '2026-01-02 10:00:00+00:00', \
     '2026-01-02 10:00:00+00:00')",
    "INSERT INTO artifacts (thread_id, artifact_type, title, payload, turn_index, created_at) \
     VALUES ('old', 'bar_chart', 'Costs', '{}', 1, '2026-01-02 10:00:00+00:00')",
];

async fn check(db: Database) {
    let server = TestServer::start(&db).await;
    let now = server.workspace("old").await;
    assert_eq!(now["objective"], json!("Plan the old trip"));
    let page = server.get("/api/threads/old/history").await.expect(200);
    let revisions = page["revisions"].as_array().unwrap();
    assert_eq!(revisions.len(), 1, "{page}");
    assert_eq!(revisions[0]["rev"], json!(1));
    assert_eq!(revisions[0]["source"], json!("user"));
    assert_eq!(
        revisions[0]["panels"],
        json!(["objective", "document", "plan", "preferences", "artifacts"])
    );
    assert_eq!(
        server
            .get("/api/threads/old/workspace?at=1")
            .await
            .expect(200),
        now,
        "the baseline is the workspace as it was"
    );
    let texts: Vec<&str> = now["todos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["First", "Second"]);
    // History goes on from the baseline.
    server
        .post(
            "/api/threads/old/tools/toggle_todos",
            &json!({"indices": [1], "action_and_reasoning": "Done."}),
        )
        .await
        .expect(200);
    let page = server.get("/api/threads/old/history").await.expect(200);
    assert_eq!(page["revisions"][0]["rev"], json!(2));
    assert_eq!(
        server
            .get("/api/threads/old/workspace?at=1")
            .await
            .expect(200),
        now
    );
    // The document's stored length (migration 0014) counts characters, not bytes: an append
    // reports the length of the old body plus its own.
    let appended = server
        .post(
            "/api/threads/old/tools/append_to_document",
            &json!({"text": "\nDay 3 ü", "action_and_reasoning": "Adding a day."}),
        )
        .await
        .expect(200);
    let old_chars = "Day 1: \"quotes\" and ünïcode\nDay 2".chars().count();
    assert_eq!(
        appended["summary"],
        json!(format!("appended ({} chars total)", old_chars + 8)),
        "{appended}"
    );
    // A thread with nothing in it has no history yet.
    let bare = server.get("/api/threads/bare/history").await.expect(200);
    assert_eq!(bare["revisions"], json!([]));
    server.shutdown().await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_workspaces_get_a_baseline_revision() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let url = format!("sqlite:{}", path.display());
    // Made as the builds of that time made it: sqlx's migrator, up to 0008.
    common::sqlx_made::create(&path, 8);
    let conn = rusqlite::Connection::open(&path).unwrap();
    for row in OLD_ROWS {
        conn.execute_batch(row).unwrap();
    }
    drop(conn);
    check(
        Database::connect(&url, &PoolConfig::default())
            .await
            .unwrap(),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_workspaces_get_a_baseline_revision() {
    needs!(postgres);
    let schema = format!(
        "haico_m_{}_{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    );
    let admin = sqlx::PgPool::connect(&postgres_url()).await.unwrap();
    sqlx::query(&format!("CREATE SCHEMA {schema}"))
        .execute(&admin)
        .await
        .unwrap();
    let base = postgres_url();
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options=-csearch_path%3D{schema}");
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    before_history(&sqlx::migrate!("./crates/haico-store/migrations/postgres"))
        .run(&pool)
        .await
        .unwrap();
    for row in OLD_ROWS {
        sqlx::query(row).execute(&pool).await.unwrap();
    }
    pool.close().await;
    check(
        Database::connect(&url, &PoolConfig::default())
            .await
            .unwrap(),
    )
    .await;
    let _ = sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
        .execute(&admin)
        .await;
    admin.close().await;
}
