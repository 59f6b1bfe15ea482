//! Shared test support: fresh SQLite and PostgreSQL databases, a harness that calls tools
//! through the real runtime, and `backend_tests!`, which runs one test body on both engines.

use std::sync::atomic::{AtomicU64, Ordering};

use haico::{
    ThreadId,
    store::{Database, PoolConfig, Workspace},
    tools::{Envelope, ToolCall, ToolRuntime, Toolset, build_tools},
};
use serde_json::Value;

/// The PostgreSQL server tests use; each test gets its own schema in it.
pub fn postgres_url() -> String {
    std::env::var("HAICO_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_string())
}

/// The order keys of a thread's steps (`todos.sort_key`, in key order) as the ranks they
/// stand for: `0..n` when every key is distinct, so `assert_eq!(ranks, 0..n)` checks that the
/// table holds `n` steps in one unambiguous order. Keys are sparse by design; two steps
/// sharing one would make their order undefined, and then the raw keys come back instead, so
/// the assertion fails showing them.
pub async fn step_ranks(db: &Database, thread: &str) -> Vec<i64> {
    let sql = "SELECT sort_key FROM todos WHERE thread_id = $1 ORDER BY sort_key";
    let keys: Vec<i64> = match db {
        Database::Sqlite { reader, .. } => {
            let conn = reader.acquire().await.unwrap();
            let mut statement = conn.inline().unwrap().prepare(sql).unwrap();
            statement
                .query_map([thread], |row| row.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        }
        Database::Postgres { pool, .. } => sqlx::query_scalar(sql)
            .bind(thread)
            .fetch_all(pool)
            .await
            .unwrap(),
    };
    if keys.windows(2).all(|pair| pair[0] < pair[1]) {
        (0..i64::try_from(keys.len()).unwrap()).collect()
    } else {
        keys
    }
}

/// Which engine a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

/// A fresh, migrated database, removed again when dropped (a test that fails leaves no
/// schema behind); [`TestDb::cleanup`] does the same after closing the pools first.
pub struct TestDb {
    pub db: Database,
    pub url: String,
    schema: Option<String>,
    _dir: Option<tempfile::TempDir>,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

impl TestDb {
    pub async fn new(engine: Engine) -> Self {
        Self::with_pool(engine, PoolConfig::default()).await
    }

    pub async fn with_pool(engine: Engine, pool: PoolConfig) -> Self {
        match engine {
            Engine::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let url = format!("sqlite:{}", dir.path().join("haico-test.db").display());
                let db = Database::connect(&url, &pool).await.expect("open sqlite");
                Self {
                    db,

                    url,
                    schema: None,
                    _dir: Some(dir),
                }
            }
            Engine::Postgres => {
                let schema = format!(
                    "haico_t_{}_{}_{}",
                    std::process::id(),
                    COUNTER.fetch_add(1, Ordering::Relaxed),
                    uuid_suffix()
                );
                let admin = sqlx::PgPool::connect(&postgres_url())
                    .await
                    .expect("PostgreSQL must be running for the test suite (see .ci/run)");
                sqlx::query(&format!("CREATE SCHEMA {schema}"))
                    .execute(&admin)
                    .await
                    .expect("create schema");
                admin.close().await;
                let base = postgres_url();
                let sep = if base.contains('?') { '&' } else { '?' };
                let url = format!("{base}{sep}options=-csearch_path%3D{schema}");
                let db = Database::connect(&url, &pool).await.expect("open postgres");
                Self {
                    db,

                    url,
                    schema: Some(schema),
                    _dir: None,
                }
            }
        }
    }

    /// Closes the pools, then drops the test's schema.
    pub async fn cleanup(mut self) {
        self.db.close().await;
        if let Some(schema) = self.schema.take() {
            drop_schema(&schema).await;
        }
    }
}

impl Drop for TestDb {
    /// A test that panicked (or never called `cleanup`) still removes its schema: on a thread
    /// of its own, since `Drop` cannot await and the test's runtime may be shutting down.
    fn drop(&mut self) {
        if let Some(schema) = self.schema.take() {
            let dropper = std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                if let Ok(runtime) = runtime {
                    runtime.block_on(drop_schema(&schema));
                }
            });
            let _ = dropper.join();
        }
    }
}

/// Drops a test's schema; a lock held by a connection the test left open gives up after a
/// few seconds rather than hanging the suite.
async fn drop_schema(schema: &str) {
    use sqlx::Connection;
    if let Ok(mut admin) = sqlx::PgConnection::connect(&postgres_url()).await {
        let _ = sqlx::query("SET lock_timeout = '5s'")
            .execute(&mut admin)
            .await;
        let _ = sqlx::query(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
            .execute(&mut admin)
            .await;
        let _ = admin.close().await;
    }
}

fn uuid_suffix() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..8].to_string()
}

/// Creates a thread directly through the repository.
pub async fn create_thread(db: &Database, id: &str) -> ThreadId {
    let id = tid(id);
    let mut repo = db.begin_write().await.unwrap();
    repo.threads()
        .create_thread(&id, "test thread")
        .await
        .unwrap();
    repo.commit().await.unwrap();
    id
}

/// A thread id written in a test.
/// The pixel size of a PNG, from its header, after checking its signature.
pub fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(png.len() > 24, "a PNG of {} bytes", png.len());
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "the PNG signature");
    assert_eq!(&png[12..16], b"IHDR", "the header chunk comes first");
    let be = |at: usize| u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]);
    (be(16), be(20))
}

pub fn tid(id: &str) -> ThreadId {
    ThreadId::parse(id).unwrap()
}

/// Calls tools of one thread through the real runtime, as the agent would.
pub struct Harness {
    pub test_db: TestDb,
    pub runtime: ToolRuntime,
    pub thread: ThreadId,
    pub tools: Toolset,
}

/// The workspace plus the thread row, for "nothing changed" checks.
#[derive(Debug, PartialEq)]
pub struct State {
    pub workspace: Workspace,
    pub thread: haico::store::Thread,
}

impl Harness {
    pub async fn new(engine: Engine) -> Self {
        let test_db = TestDb::new(engine).await;
        let thread = create_thread(&test_db.db, "main").await;
        Self {
            runtime: ToolRuntime::new(test_db.db.clone()),
            tools: build_tools(&thread),
            thread,
            test_db,
        }
    }

    pub fn db(&self) -> &Database {
        &self.test_db.db
    }

    /// Runs one call and returns everything about it.
    pub async fn call_full(&self, tool: &str, args: Value) -> ToolCall {
        self.runtime.call(&self.tools, tool, args).await
    }

    /// Runs one call and returns its envelope.
    pub async fn call(&self, tool: &str, args: Value) -> Envelope {
        self.call_full(tool, args).await.envelope
    }

    /// Runs a call that must succeed; returns the summary.
    pub async fn ok(&self, tool: &str, args: Value) -> String {
        let env = self.call(tool, args.clone()).await;
        assert!(env.success, "{tool}({args}) failed: {env:?}");
        env.summary.expect("success carries a summary")
    }

    /// Runs a call that must fail AND leave the database exactly as it was; returns the error.
    pub async fn fail(&self, tool: &str, args: Value) -> String {
        let before = self.state().await;
        let env = self.call(tool, args.clone()).await;
        assert!(!env.success, "{tool}({args}) should have failed: {env:?}");
        assert!(env.summary.is_none() && env.artifact.is_none() && env.artifact_id.is_none());
        let after = self.state().await;
        assert_eq!(
            before, after,
            "{tool}({args}) failed but changed the database"
        );
        env.error.expect("failure carries an error")
    }

    /// The thread's workspace and row, read in one snapshot.
    pub async fn state(&self) -> State {
        let mut repo = self.db().begin_read().await.unwrap();
        let workspace = repo.threads().workspace(&self.thread).await.unwrap();
        let thread = repo
            .threads()
            .get_thread(&self.thread)
            .await
            .unwrap()
            .unwrap();
        repo.rollback().await.unwrap();
        State { workspace, thread }
    }

    /// Asserts that a successful call left everything as it was at `before` but the thread's
    /// activity time, which every agent write marks, one that changed nothing included.
    pub async fn assert_only_marked_since(&self, before: &State) {
        let now = self.state().await;
        assert_eq!(
            now.workspace, before.workspace,
            "the call changed the workspace"
        );
        assert!(now.thread.updated_at >= before.thread.updated_at);
        let unmarked = haico::store::Thread {
            updated_at: before.thread.updated_at,
            ..now.thread
        };
        assert_eq!(unmarked, before.thread, "the call changed the thread's row");
    }

    pub async fn workspace(&self) -> Workspace {
        self.state().await.workspace
    }

    pub async fn cleanup(self) {
        self.test_db.cleanup().await;
    }
}

/// Runs each test body once on SQLite and once on PostgreSQL:
/// `backend_tests! { async fn name(engine) { … } }` makes `name::sqlite` and `name::postgres`.
#[macro_export]
macro_rules! backend_tests {
    ($(async fn $name:ident($engine:ident) $body:block)*) => {
        $(
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                async fn run($engine: $crate::common::Engine) $body

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    run($crate::common::Engine::Sqlite).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if !$crate::common::needs::postgres() {
                        return;
                    }
                    run($crate::common::Engine::Postgres).await;
                }
            }
        )*
    };
}

/// A port that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind a local port")
        .local_addr()
        .expect("local addr")
        .port()
}

/// Sends a request with a bearer token through `client`; returns the status and the JSON body
/// (`null` when there is none).
pub async fn send_as(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = client.request(method, url).bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

pub mod agent;
pub mod child;
pub mod cluster;
pub mod fuzz;
#[macro_use]
pub mod isolated;
pub mod mcp;
pub mod mock_llm;
pub mod nginx;
#[macro_use]
pub mod needs;
pub mod server;
pub mod sqlx_made;
pub mod sse;

/// A `done` event's data without its `usage` (what the turn cost varies with timing; the
/// tests that check usage read it themselves).
pub fn done_without_usage(data: &serde_json::Value) -> serde_json::Value {
    let mut data = data.clone();
    if let Some(object) = data.as_object_mut() {
        object.remove("usage");
    }
    data
}
