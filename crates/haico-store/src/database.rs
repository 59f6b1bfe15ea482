//! [`Database`]: the open database, its pools and its settings; how transactions begin on
//! each engine.

use crate::{
    change_log, checkpoint, connect, error::Context, error::StoreError, lender,
    outage::ALIVE_BUT_SLOW, outage::HEALTH_PROBE_TIMEOUT, outage::outage_limit,
    outage::within_postgres_timeout, panels, readers, repository, repository::Backend,
    repository::ThreadHead, repository::Transaction, sqlite, sqlite_build, thread_lock, writer,
};

use std::{
    str::FromStr,
    sync::{Arc, Mutex},
    time::Duration,
};

use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};

/// The default database: a SQLite file in the working directory.
pub const DEFAULT_DATABASE_URL: &str = "sqlite:haico.db";

/// How long a SQLite connection waits for another process's write lock before giving up.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Write calls that may share one SQLite commit by default (`writer.rs`: a call waits for the
/// shared commit only while others are queued behind it, so a lone call is not delayed).
pub const DEFAULT_SQLITE_GROUP_COMMIT: usize = 16;

/// A pooled PostgreSQL connection idle at least this long is pinged before it is handed out.
const PG_PING_AFTER_IDLE: Duration = Duration::from_secs(1);

/// Default of `HAICO_DB_TIMEOUT_MS`: short, so that while PostgreSQL is unreachable a request
/// answers `503` within a second or two instead of hanging, yet far above what a healthy
/// server needs to hand out a connection (well under a millisecond; a new one, a few).
pub const DEFAULT_POSTGRES_TIMEOUT: Duration = Duration::from_millis(1000);

/// Database connections per CPU core of this machine, by default
/// ([`default_max_connections`]).
pub const CONNECTIONS_PER_CORE: u32 = 4;

/// Default of `HAICO_DB_MAX_CONNECTIONS`: [`CONNECTIONS_PER_CORE`] per core this process may
/// use, at least 8 and at most 32.
///
/// On PostgreSQL every lent connection is a transaction in flight, and past a few per core the
/// server spends more on them than it gains: backends waiting on each other's row locks,
/// wake-ups, snapshots over more backends. On two cores 8 connections instead of 16 cut
/// PostgreSQL's CPU per call by 8–22% and the p99 by about a quarter, with calls/s unchanged
/// within the noise. Four cores keep the old 16. A PostgreSQL on another
/// machine with many more cores, or far away, may want more: the setting says so.
pub fn default_max_connections() -> u32 {
    connections_for_cores(std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn connections_for_cores(cores: usize) -> u32 {
    u32::try_from(cores)
        .unwrap_or(u32::MAX)
        .saturating_mul(CONNECTIONS_PER_CORE)
        .clamp(8, 32)
}

/// Pool sizes and time-outs; the defaults suit one server on a small machine.
#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// PostgreSQL connections, or SQLite reader connections.
    pub max_connections: u32,
    /// How long a SQLite caller waits for a free connection (the one writer is shared, so
    /// writes queue for it).
    pub acquire_timeout: Duration,
    /// How long a PostgreSQL caller waits for a connection (opening a new one included) and
    /// the start of its transaction before giving up with an outage error.
    pub postgres_timeout: Duration,
    /// SQLite: how many write calls may share one commit (1: each commits on its own).
    pub sqlite_group_commit: usize,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self {
            max_connections: default_max_connections(),
            acquire_timeout: Duration::from_secs(30),
            postgres_timeout: DEFAULT_POSTGRES_TIMEOUT,
            sqlite_group_commit: DEFAULT_SQLITE_GROUP_COMMIT,
        }
    }
}

/// An open database with its migrations applied.
#[derive(Debug, Clone)]
pub enum Database {
    /// An embedded SQLite file.
    Sqlite {
        /// The one connection every write transaction goes through.
        writer: writer::Writer,
        /// Read-only connections for snapshots and lists.
        reader: readers::Readers,
        /// Copies the WAL back into the database file off the write path (`None` for an
        /// in-memory database, or when it could not start: the writer then checkpoints).
        checkpointer: Option<Arc<Mutex<checkpoint::Checkpointer>>>,
    },
    /// A PostgreSQL server.
    Postgres {
        /// The connections; everything that is not a workspace repository uses them directly.
        pool: PgPool,
        /// Lends the pool's connections to repositories and keeps the clean ones given back.
        lender: lender::Lender,
    },
}

impl Database {
    /// Opens the database `url` names and runs the migrations. `sqlite:PATH` (or a bare path)
    /// selects SQLite, creating the file if needed; `postgres://…` selects PostgreSQL.
    pub async fn connect(url: &str, config: &PoolConfig) -> Result<Self, StoreError> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Self::connect_postgres(url, config).await
        } else {
            Self::connect_sqlite(url, config).await
        }
    }

    async fn connect_sqlite(url: &str, config: &PoolConfig) -> Result<Self, StoreError> {
        let url = if url.starts_with("sqlite:") {
            url.to_string()
        } else if url.contains("://") {
            return Err(StoreError::UnsupportedUrl(url.to_string()));
        } else {
            format!("sqlite:{url}")
        };
        let options = sqlite::SqliteOptions::parse(&url)
            .ok_or_else(|| StoreError::UnsupportedUrl(url.clone()))?;
        sqlite_build::warn_if_slow();
        let in_memory = options.in_memory();
        let path = options.path().to_path_buf();
        if !in_memory {
            connect::check_sqlite_directory(&path)?;
        }
        let options = options
            .create_if_missing(true)
            .busy_timeout(SQLITE_BUSY_TIMEOUT);
        // Writes go through one connection of haico's own (`writer/`): every write queues
        // for it, so what a pool would add to taking and returning it is paid in series.
        let writer = writer::Writer::open(
            &options,
            config.acquire_timeout,
            SQLITE_BUSY_TIMEOUT,
            config.sqlite_group_commit,
        )
        .await
        .map_err(|err| connect::sqlite_error(&path, &err))?;
        writer
            .with_connection(|conn| sqlite::migrate(conn, &sqlite::sqlite_migrations()))
            .await
            .context("migrating the SQLite database")??;
        // Checkpoints run on a thread of their own (`checkpoint.rs`), so the writer's commits
        // never stop to copy the WAL back; if that thread cannot start, SQLite's automatic
        // checkpoints stay on.
        let checkpointer = if in_memory {
            None
        } else {
            match checkpoint::Checkpointer::start(&path) {
                Ok(checkpointer) => Some(Arc::new(Mutex::new(checkpointer))),
                Err(err) => {
                    tracing::warn!(error = %err, "SQLite checkpoints stay on the write path");
                    None
                }
            }
        };
        if checkpointer.is_some() {
            writer
                .with_connection(|conn| conn.execute_batch("PRAGMA wal_autocheckpoint = 0"))
                .await
                .context("handing SQLite's checkpoints to their own thread")?
                .context("handing SQLite's checkpoints to their own thread")?;
        }
        let reader = readers::Readers::open(
            options.read_only(),
            config.max_connections.clamp(1, 8) as usize,
            config.acquire_timeout,
        )
        .await
        .context("opening SQLite reader connections")?;
        Ok(Self::Sqlite {
            writer,
            reader,
            checkpointer,
        })
    }

    async fn connect_postgres(url: &str, config: &PoolConfig) -> Result<Self, StoreError> {
        let options =
            PgConnectOptions::from_str(url).map_err(|_| StoreError::UnsupportedUrl(redact(url)))?;
        // One plain connection first, within a few seconds: the pool would retry a refused
        // port until its time-out and then report only that it timed out.
        connect::probe_postgres(&options, connect::STARTUP_CONNECT_TIMEOUT).await?;
        // sqlx pings a connection before every acquire by default: one extra round trip per
        // call. Only connections that sat idle (the server may have dropped them) get pinged.
        let pool = PgPoolOptions::new()
            .test_before_acquire(false)
            .before_acquire(|conn, meta| {
                Box::pin(async move {
                    if meta.idle_for >= PG_PING_AFTER_IDLE {
                        sqlx::Connection::ping(conn).await?;
                    }
                    Ok(true)
                })
            })
            .max_connections(config.max_connections.max(1))
            .acquire_timeout(config.postgres_timeout * ALIVE_BUT_SLOW)
            .connect_with(options.clone())
            .await
            .map_err(|err| connect::postgres_error(&options, &err))?;
        sqlx::migrate!("./migrations/postgres").run(&pool).await?;
        Ok(Self::postgres(pool))
    }

    /// A database over an open PostgreSQL pool (migrations already run).
    pub fn postgres(pool: PgPool) -> Self {
        let lender = lender::Lender::also_preparing(
            pool.clone(),
            &[&change_log::LOG_CHANGE, &change_log::LOG_CHANGE_STAMPING],
        );
        Self::Postgres { pool, lender }
    }

    /// Which engine this is.
    pub fn backend(&self) -> Backend {
        match self {
            Database::Sqlite { .. } => Backend::Sqlite,
            Database::Postgres { .. } => Backend::Postgres,
        }
    }

    /// Starts a transaction that may write. On SQLite it takes the write lock up front
    /// (`BEGIN IMMEDIATE`), so a transaction that reads and then writes can never fail to
    /// upgrade its lock because another process wrote in between.
    pub async fn begin_write(&self) -> Result<Transaction, StoreError> {
        let span = repository::transaction_span(self.backend(), repository::Access::Write);
        match self {
            Database::Sqlite { writer, .. } => {
                let held = writer
                    .begin()
                    .await
                    .context("starting a write transaction")?;
                Ok(Transaction::sqlite_writer(held).traced(span))
            }
            Database::Postgres { pool, lender } => {
                let lent = within_postgres_timeout(pool, lender.begin("BEGIN"))
                    .await?
                    .context("starting a write transaction")?;
                Ok(Transaction::postgres(lent).traced(span))
            }
        }
    }

    /// Starts a write transaction on thread `thread` and reads its [`ThreadHead`] (`None`: no
    /// such thread; the transaction is open all the same, for the caller to end). With `lock`
    /// the read also takes the thread's lock, as every agent write does first. On SQLite,
    /// where the write lock already serialises writers, `BEGIN IMMEDIATE` and the read go to
    /// the connection's thread in one hand-over.
    pub async fn begin_write_on(
        &self,
        thread: &crate::thread_id::ThreadId,
        lock: bool,
    ) -> Result<(Transaction, Option<ThreadHead>), StoreError> {
        match self {
            Database::Sqlite { writer, .. } => {
                let span = repository::transaction_span(self.backend(), repository::Access::Write);
                let (held, head) = writer
                    .begin_on_thread(thread.as_str())
                    .await
                    .context("starting a write transaction")?;
                let head = head.map(|(turn_index, document_mode)| ThreadHead {
                    turn_index,
                    document_mode: panels::DocumentMode::from_stored(Some(&document_mode)),
                });
                Ok((Transaction::sqlite_writer(held).traced(span), head))
            }
            Database::Postgres { pool, lender } if lock => {
                // `BEGIN` and the lock in one round trip.
                let span = repository::transaction_span(self.backend(), repository::Access::Write);
                let mut lent = within_postgres_timeout(pool, lender.lend())
                    .await?
                    .context("starting a write transaction")?;
                let head = thread_lock::lock_thread(pool, &mut lent, thread).await?;
                Ok((Transaction::postgres(lent).traced(span), head))
            }
            Database::Postgres { .. } => {
                let mut repo = self.begin_write().await?;
                let read = repo.threads().get_thread(thread).await.map(|row| {
                    row.map(|t| ThreadHead {
                        turn_index: t.turn_index,
                        document_mode: t.document_mode,
                    })
                });
                match read {
                    Ok(head) => Ok((repo, head)),
                    Err(err) => {
                        if let Err(end) = repo.rollback().await {
                            tracing::warn!(error = %end, "rollback failed");
                        }
                        Err(err)
                    }
                }
            }
        }
    }

    /// Starts an agent's write on `thread`, which holds the thread's lock from its first
    /// statement on. On PostgreSQL nothing is sent yet: `BEGIN` and the lock travel with the
    /// first statement, in its round trip ([`Lent::begin_with_then`](lender::Lent::begin_with_then)),
    /// which saves a round trip per agent write. The thread may therefore turn out missing only
    /// then (that statement fails): [`Transaction::thread_head`] says whether it exists, and a
    /// caller that got a failure asks it before reporting one. On SQLite the thread is read
    /// (and the write lock taken) at once, as [`begin_write_on`](Self::begin_write_on) does.
    pub async fn begin_agent_write(
        &self,
        thread: &crate::thread_id::ThreadId,
    ) -> Result<Transaction, StoreError> {
        match self {
            Database::Sqlite { .. } => {
                let (repo, head) = self.begin_write_on(thread, true).await?;
                Ok(repo.holding(repository::Head::Known(head)))
            }
            Database::Postgres { pool, lender } => {
                let span = repository::transaction_span(self.backend(), repository::Access::Write);
                let lent = within_postgres_timeout(pool, lender.lend())
                    .await?
                    .context("starting a write transaction")?;
                Ok(Transaction::postgres(lent)
                    .traced(span)
                    .holding(repository::Head::Pending {
                        thread: thread.clone(),
                        pool: pool.clone(),
                    }))
            }
        }
    }

    /// Starts a read-only transaction that sees one consistent snapshot.
    pub async fn begin_read(&self) -> Result<Transaction, StoreError> {
        let span = repository::transaction_span(self.backend(), repository::Access::Read);
        match self {
            Database::Sqlite { reader, .. } => {
                let tx = reader
                    .begin()
                    .await
                    .context("starting a read transaction")?;
                Ok(Transaction::sqlite_reader(tx).traced(span))
            }
            Database::Postgres { pool, lender } => {
                let begin = lender.begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
                let lent = within_postgres_timeout(pool, begin)
                    .await?
                    .context("starting a read transaction")?;
                Ok(Transaction::postgres(lent).traced(span))
            }
        }
    }

    /// A read connection outside any transaction: every statement sees its own snapshot, and
    /// the `BEGIN` and `COMMIT` round trips of [`begin_read`](Self::begin_read) are saved. For
    /// reads whose answer is one statement (a read-only tool lists one panel); a read that must
    /// agree across several statements takes a snapshot instead. Only ever used for reads:
    /// on SQLite the reader connections are read-only, and the workspace layer hands it out
    /// only inside a `haico_core::workspace::View`, whose methods read.
    pub async fn autocommit_read(&self) -> Result<Transaction, StoreError> {
        match self {
            Database::Sqlite { reader, .. } => {
                let conn = reader.acquire().await.context("taking a read connection")?;
                Ok(Transaction::sqlite_reader(conn))
            }
            Database::Postgres { pool, lender } => {
                let lent = within_postgres_timeout(pool, lender.lend())
                    .await?
                    .context("taking a read connection")?;
                Ok(Transaction::postgres(lent))
            }
        }
    }

    /// Checks that the database answers, for `/healthz`. When PostgreSQL does not, a fresh
    /// connection attempt finds out why (the pool only knows that it timed out), so the error
    /// names the server and the cause.
    pub async fn ping(&self) -> Result<(), StoreError> {
        match self {
            Database::Sqlite { .. } => {
                let mut repo = self.autocommit_read().await?;
                let ok = repo.fetch_one::<(i64,)>("SELECT 1", &[]).await;
                repo.rollback().await?;
                ok.map(|_| ()).context("pinging the database")
            }
            Database::Postgres { pool, .. } => {
                // Its own probe below explains a slow answer, so the ping gets only the
                // outage limit (not `within_postgres_timeout`, which would probe twice).
                let ping = sqlx::query("SELECT 1").execute(pool);
                match tokio::time::timeout(outage_limit(pool), ping).await {
                    Ok(Ok(_)) => Ok(()),
                    Ok(Err(_)) | Err(_) => {
                        let options = pool.connect_options();
                        connect::probe_postgres(&options, HEALTH_PROBE_TIMEOUT).await?;
                        // The server answers a new connection: the pool's connections were
                        // lost and are being replaced.
                        Err(StoreError::NoAnswer {
                            target: connect::postgres_target(&options),
                            after: connect::seconds(outage_limit(pool)),
                        })
                    }
                }
            }
        }
    }

    /// The PostgreSQL pool, for what talks to the server itself rather than through the
    /// repositories (the replicas' doorbell, `LISTEN`/`NOTIFY`); `None` on SQLite.
    pub fn postgres_pool(&self) -> Option<&PgPool> {
        match self {
            Database::Postgres { pool, .. } => Some(pool),
            Database::Sqlite { .. } => None,
        }
    }

    /// Round trips to PostgreSQL so far through the repositories' connections (`None` on
    /// SQLite, which has none): on PostgreSQL most of a call's CPU is spent once per round
    /// trip, so the tests pin how many each kind of call makes.
    pub fn round_trips(&self) -> Option<u64> {
        match self {
            Database::Postgres { lender, .. } => Some(lender.round_trips()),
            Database::Sqlite { .. } => None,
        }
    }

    /// Closes every connection, letting in-flight transactions finish first.
    pub async fn close(&self) {
        match self {
            Database::Sqlite {
                writer,
                reader,
                checkpointer,
            } => {
                // Every connection closed before the checkpointer's: the last one to close
                // (read-write) copies the WAL into the file and removes it.
                reader.close().await;
                writer.close().await;
                if let Some(checkpointer) = checkpointer {
                    let checkpointer = Arc::clone(checkpointer);
                    // A last checkpoint syncs the file: not on a runtime thread.
                    let _ = tokio::task::spawn_blocking(move || {
                        checkpointer
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .stop();
                    })
                    .await;
                }
            }
            Database::Postgres { pool, lender } => {
                lender.close();
                pool.close().await;
            }
        }
    }
}

/// Hides a password in a URL before it reaches an error message or a log.
fn redact(url: &str) -> String {
    match (url.find("://"), url.find('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let userinfo = &url[scheme_end + 3..at];
            match userinfo.find(':') {
                Some(colon) => format!(
                    "{}{}:***{}",
                    &url[..scheme_end + 3],
                    &userinfo[..colon],
                    &url[at..]
                ),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::{connections_for_cores, redact};

    #[test]
    fn the_default_pool_grows_with_the_cores_within_bounds() {
        let sizes: Vec<u32> = [0, 1, 2, 3, 4, 6, 8, 64, usize::MAX]
            .into_iter()
            .map(connections_for_cores)
            .collect();
        assert_eq!(sizes, [8, 8, 8, 12, 16, 24, 32, 32, 32]);
    }

    #[test]
    fn redacts_passwords_only() {
        assert_eq!(
            redact("postgres://u:secret@h:5432/db"),
            "postgres://u:***@h:5432/db"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
    }
}
