//! A fresh PostgreSQL schema for the store's own tests, migrated and dropped afterwards.
//!
//! PostgreSQL is found at `HAICO_TEST_POSTGRES_URL` (user `postgres` on 127.0.0.1:5432 by
//! default). Where none answers, a test returns at its start with a note on stderr, unless
//! `HAICO_TEST_REQUIRE_ALL=1` (what `.ci/run` sets) asks that it fail instead.

use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::{Connection, PgConnection, PgPool};

/// The server the tests use.
fn admin_url() -> String {
    std::env::var("HAICO_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_string())
}

/// A schema of its own with haico's migrations applied, and a pool whose connections use it.
pub(crate) struct TestSchema {
    pub pool: PgPool,
    schema: String,
}

impl TestSchema {
    /// `None` (with a note) when PostgreSQL does not answer and the run does not require it.
    pub async fn new() -> Option<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut admin = match PgConnection::connect(&admin_url()).await {
            Ok(admin) => admin,
            Err(err) if std::env::var("HAICO_TEST_REQUIRE_ALL").as_deref() != Ok("1") => {
                eprintln!(
                    "skipped: PostgreSQL does not answer at {} ({err}); start it or set \
                     HAICO_TEST_POSTGRES_URL",
                    admin_url()
                );
                return None;
            }
            Err(err) => panic!("PostgreSQL must answer at {}: {err}", admin_url()),
        };
        let schema = format!(
            "haico_store_t_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        sqlx::query(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
            .execute(&mut admin)
            .await
            .expect("drop a leftover schema");
        sqlx::query(&format!("CREATE SCHEMA {schema}"))
            .execute(&mut admin)
            .await
            .expect("create the test schema");
        let _ = admin.close().await;
        let base = admin_url();
        let sep = if base.contains('?') { '&' } else { '?' };
        let pool = PgPool::connect(&format!("{base}{sep}options=-csearch_path%3D{schema}"))
            .await
            .expect("connect to the test schema");
        sqlx::migrate!("./migrations/postgres")
            .run(&pool)
            .await
            .expect("migrate the test schema");
        Some(Self { pool, schema })
    }

    /// Closes the pool and drops the schema.
    pub async fn drop(self) {
        self.pool.close().await;
        if let Ok(mut admin) = PgConnection::connect(&admin_url()).await {
            let _ = sqlx::query(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema))
                .execute(&mut admin)
                .await;
            let _ = admin.close().await;
        }
    }
}
