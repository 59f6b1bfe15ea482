//! The scratch database a run measures: a SQLite file in a temporary directory, or a fresh
//! PostgreSQL database dropped again at the end. The store creates the schema with its own
//! migrations when it opens it.

use anyhow::{Context, Result};

/// A temporary SQLite file or a fresh PostgreSQL database.
pub struct Scratch {
    /// The URL `haico_store::Database::connect` opens.
    pub url: String,
    dir: Option<TempDir>,
    postgres: Option<Postgres>,
}

/// The scratch PostgreSQL database and the server it was made on.
struct Postgres {
    admin_url: String,
    name: String,
}

/// A directory removed again on drop.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Scratch {
    /// A fresh PostgreSQL database on the server `admin_url` names.
    pub async fn postgres(admin_url: &str) -> Result<Self> {
        let name = format!("haico_limit_{}", tag());
        let admin = sqlx::PgPool::connect(admin_url)
            .await
            .with_context(|| format!("connecting to {admin_url}"))?;
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&admin)
            .await?;
        admin.close().await;
        let base = admin_url
            .rsplit_once('/')
            .map_or(admin_url, |(base, _)| base);
        Ok(Self {
            url: format!("{base}/{name}"),
            dir: None,
            postgres: Some(Postgres {
                admin_url: admin_url.to_string(),
                name,
            }),
        })
    }

    /// A SQLite file in a new temporary directory (not created yet).
    pub fn sqlite() -> Result<Self> {
        let dir = std::env::temp_dir().join(format!("haico-limit-{}", tag()));
        std::fs::create_dir_all(&dir)?;
        Ok(Self {
            url: format!("sqlite:{}", dir.join("limit.db").display()),
            dir: Some(TempDir(dir)),
            postgres: None,
        })
    }

    /// Runs `sql` on the database outside haico, on a connection of its own: for what-if
    /// experiments (dropping an index, changing a setting) before a change is made in haico.
    pub async fn prepare(&self, sql: &str) -> Result<()> {
        match &self.dir {
            Some(TempDir(dir)) => {
                let conn = rusqlite::Connection::open(dir.join("limit.db"))?;
                conn.execute_batch(sql).context("running --prepare")?;
            }
            None => {
                let pool = sqlx::PgPool::connect(&self.url).await?;
                sqlx::raw_sql(sql)
                    .execute(&pool)
                    .await
                    .context("running --prepare")?;
                pool.close().await;
            }
        }
        Ok(())
    }

    /// Drops the PostgreSQL database (the SQLite directory goes with `self`).
    pub async fn drop_database(&self) {
        if let Some(pg) = &self.postgres
            && let Ok(admin) = sqlx::PgPool::connect(&pg.admin_url).await
        {
            let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", pg.name))
                .execute(&admin)
                .await;
            admin.close().await;
        }
    }
}

/// A name no other run uses at the same time.
fn tag() -> String {
    format!("{}_{}", std::process::id(), fastrand::u32(..))
}
