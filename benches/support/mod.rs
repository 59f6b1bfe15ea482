//! Shared set-up for the benchmarks: fresh SQLite files and PostgreSQL schemas (as the tests
//! make them), a thread with its toolset, and one-call helpers that insist on success.
#![allow(dead_code)]

use std::time::Duration;

use anyhow::{Context, Result, bail};
use haico::{
    ThreadId,
    store::{Database, PoolConfig},
    tools::{ToolRuntime, Toolset, build_tools},
};
use serde_json::{Value, json};

/// The engines a benchmark runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::Postgres => "postgres",
        }
    }
}

/// The PostgreSQL server benchmarks use; each run gets its own schema in it.
pub fn postgres_url() -> String {
    std::env::var("HAICO_BENCH_POSTGRES_URL")
        .or_else(|_| std::env::var("HAICO_TEST_POSTGRES_URL"))
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_string())
}

/// A fresh, migrated database, removed again by [`BenchDb::cleanup`].
pub struct BenchDb {
    pub db: Database,
    pub engine: Engine,
    pub url: String,
    schema: Option<String>,
    _dir: Option<tempfile::TempDir>,
}

impl BenchDb {
    /// Opens a fresh database on `engine` with the server's default pool settings.
    pub async fn open(engine: Engine) -> Result<Self> {
        let pool = PoolConfig::default();
        match engine {
            Engine::Sqlite => {
                let dir = tempfile::tempdir().context("creating a temp dir")?;
                let url = format!("sqlite:{}", dir.path().join("haico-bench.db").display());
                let db = Database::connect(&url, &pool).await?;
                Ok(Self {
                    db,
                    engine,
                    url,
                    schema: None,
                    _dir: Some(dir),
                })
            }
            Engine::Postgres => {
                let schema = format!(
                    "haico_bench_{}_{}",
                    std::process::id(),
                    &uuid::Uuid::new_v4().simple().to_string()[..8]
                );
                let admin = sqlx::postgres::PgPoolOptions::new()
                    .max_connections(1)
                    .acquire_timeout(Duration::from_secs(5))
                    .connect(&postgres_url())
                    .await
                    .context("connecting to PostgreSQL (set HAICO_BENCH_POSTGRES_URL)")?;
                sqlx::query(&format!("CREATE SCHEMA {schema}"))
                    .execute(&admin)
                    .await?;
                admin.close().await;
                let base = postgres_url();
                let sep = if base.contains('?') { '&' } else { '?' };
                let url = format!("{base}{sep}options=-csearch_path%3D{schema}");
                let db = Database::connect(&url, &pool).await?;
                Ok(Self {
                    db,
                    engine,
                    url,
                    schema: Some(schema),
                    _dir: None,
                })
            }
        }
    }

    /// On PostgreSQL, the bytes the history tables take (TOAST and indexes included); on
    /// SQLite, the size of the database file after a WAL checkpoint.
    pub async fn disk_bytes(&self) -> Result<i64> {
        match self.engine {
            Engine::Postgres => {
                let pool = sqlx::PgPool::connect(&self.url).await?;
                let (bytes,): (i64,) = sqlx::query_as(
                    "SELECT (pg_total_relation_size('revisions') \
                     + pg_total_relation_size('panel_changes'))::bigint",
                )
                .fetch_one(&pool)
                .await?;
                pool.close().await;
                Ok(bytes)
            }
            Engine::Sqlite => {
                let path = self.url.trim_start_matches("sqlite:");
                let conn = rusqlite::Connection::open(path)?;
                conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
                let (pages, size): (i64, i64) = conn.query_row(
                    "SELECT page_count, page_size FROM pragma_page_count(), pragma_page_size()",
                    [],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )?;
                Ok(pages * size)
            }
        }
    }

    /// Closes the pools and drops the PostgreSQL schema.
    pub async fn cleanup(self) {
        self.db.close().await;
        let Some(schema) = &self.schema else {
            return;
        };
        match sqlx::PgPool::connect(&postgres_url()).await {
            Ok(admin) => {
                if let Err(err) = sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
                    .execute(&admin)
                    .await
                {
                    eprintln!("could not drop schema {schema}: {err}");
                }
                admin.close().await;
            }
            Err(err) => eprintln!("could not drop schema {schema}: {err}"),
        }
    }
}

/// A thread and the runtime that calls its tools.
pub struct Bench {
    pub runtime: ToolRuntime,
    pub tools: Toolset,
    pub thread: ThreadId,
}

impl Bench {
    /// Creates thread `id` in `db`.
    pub async fn new(db: &Database, id: &str) -> Result<Self> {
        let thread = ThreadId::parse(id).map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut repo = db.begin_write().await?;
        repo.threads()
            .create_thread(&thread, "bench thread")
            .await?;
        repo.commit().await?;
        Ok(Self {
            runtime: ToolRuntime::new(db.clone()),
            tools: build_tools(&thread),
            thread,
        })
    }

    /// Calls `tool` through the runtime and fails unless the envelope says success.
    pub async fn ok(&self, tool: &str, args: Value) -> Result<String> {
        let call = self.runtime.call(&self.tools, tool, args).await;
        if !call.envelope.success {
            bail!("{tool} failed: {:?}", call.envelope.error);
        }
        Ok(call.envelope.summary.unwrap_or_default())
    }

    /// Adds `n` top-level steps, at most 1,000 per call (the tool's batch limit).
    pub async fn add_steps(&self, n: usize) -> Result<()> {
        let mut added = 0;
        while added < n {
            let batch = (n - added).min(1_000);
            let steps: Vec<Value> = (0..batch)
                .map(|i| json!({"text": format!("Step {} of the plan", added + i + 1), "depth": 0}))
                .collect();
            self.ok("add_todos", with_reason(json!({ "steps": steps })))
                .await?;
            added += batch;
        }
        Ok(())
    }

    /// Replaces the document with `chars` ASCII characters (`replace_all`: a smaller size
    /// drops most of a larger one on purpose).
    pub async fn set_document(&self, chars: usize) -> Result<()> {
        let line = "The quick brown fox jumps over the lazy dog, then plans a trip by train.\n";
        let mut content = line.repeat(chars / line.len() + 1);
        content.truncate(chars);
        self.ok(
            "update_document",
            with_reason(
                json!({"title": "Bench document", "content": content, "replace_all": true}),
            ),
        )
        .await?;
        Ok(())
    }
}

/// `args` plus the required `action_and_reasoning`.
pub fn with_reason(mut args: Value) -> Value {
    if let Value::Object(map) = &mut args {
        map.insert(
            "action_and_reasoning".to_string(),
            Value::String("Benchmarking one tool call.".to_string()),
        );
    }
    args
}

/// The tokio runtime benchmarks run on: two workers, like the server on this machine.
pub fn tokio_runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting tokio")
}

/// Whether PostgreSQL benches can run; prints why not when they cannot.
pub async fn postgres_available() -> bool {
    let attempt = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(3))
        .connect(&postgres_url())
        .await;
    match attempt {
        Ok(pool) => {
            pool.close().await;
            true
        }
        Err(err) => {
            eprintln!("skipping PostgreSQL benchmarks: {err} (set HAICO_BENCH_POSTGRES_URL)");
            false
        }
    }
}
