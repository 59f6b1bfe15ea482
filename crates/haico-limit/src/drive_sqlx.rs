//! sqlx, set up as the server sets it up for PostgreSQL and set it up for SQLite until issue 24
//! (the server's SQLite now goes through rusqlite alone): on SQLite one write
//! connection behind a fair mutex (`BEGIN IMMEDIATE` … `COMMIT` as plain statements) and up to
//! eight readers, WAL, `synchronous=NORMAL`; on PostgreSQL one pool of the server's default
//! size (four connections per core, 8 to 32) whose connections
//! are lent and taken back by haico (`BEGIN` … `COMMIT` as plain statements, no ping on the
//! way back; `--pg-release-ping` uses sqlx's pool as it comes instead, which pings every
//! connection given back). Reads run outside a transaction, as the server's read-only tools
//! do. What this measures is the limit of
//! *this driver*: on SQLite it includes sqlx's hop to its connection thread for every
//! statement.

use std::{
    collections::{HashMap, HashSet},
    str::FromStr,
    sync::Arc,
    time::Duration,
};

use anyhow::{Context, Result};
use sqlx::{
    Connection, Executor, PgConnection, PgPool, Postgres, Row, SqliteConnection, SqlitePool,
    pool::PoolConnection,
    postgres::PgPoolOptions,
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous},
};

use tokio::sync::{Mutex, SemaphorePermit};

use crate::{
    ops::{Exec, P},
    sql,
};

/// An open sqlx database.
#[derive(Clone)]
pub enum Db {
    Sqlite {
        writer: Arc<Mutex<SqliteConnection>>,
        reader: SqlitePool,
    },
    Postgres {
        pool: PgPool,
        /// Connections taken back without a ping, as the server's lender does; `None`: sqlx's
        /// own pool hand-back.
        kept: Option<Arc<Kept>>,
    },
}

/// Connections given back clean, for the next call (the server's `store::lender`, reduced to
/// what the limit needs: no failure handling, every statement here succeeds or ends the run).
pub struct Kept {
    /// Each with what is prepared on it.
    idle: std::sync::Mutex<Vec<(PoolConnection<Postgres>, Prepared)>>,
    permits: tokio::sync::Semaphore,
}

/// What a kept connection holds prepared: the lock and the change log, and the riders by
/// their SQL (the server's `store::lender`'s `Known`).
#[derive(Default)]
pub struct Prepared {
    named: bool,
    riders: HashSet<String>,
}

/// An agent write whose `BEGIN` and thread lock ride with its first statement, as the
/// server's (`Lent::begin_with_then`, PERFORMANCE §27).
pub struct Ride {
    thread: String,
    /// Nothing sent yet.
    pending: bool,
    /// The turn counter the lock read, once it did.
    turn: Option<i64>,
    prepared: Prepared,
    /// Set once the change log has committed the transaction.
    committed: bool,
}

/// The server's `store::threads::LOCK_THREAD`: prepared once per connection, then every write
/// begins with `BEGIN; EXECUTE haico_lock_thread('…')`, one simple query, one round trip.
const LOCK_NAME: &str = "haico_lock_thread";

/// The server's `store::change_log::LOG_CHANGE`, prepared with the lock: a write's change log
/// and `COMMIT` go in one simple query, the parameters written as literals ([`literal`]).
const LOG_NAME: &str = "haico_log_change";

/// The server's `LOG_CHANGE_STAMPING`: the change log of a change that stored artifacts.
const LOG_STAMPING_NAME: &str = "haico_log_change_stamping";

/// How many parameters the stamping log takes (the plain one takes one fewer).
const LOG_STAMPING_PARAMS: usize = 22;

impl Kept {
    async fn lend(
        &self,
        pool: &PgPool,
    ) -> Result<(PoolConnection<Postgres>, Prepared, SemaphorePermit<'_>)> {
        let permit = self.permits.acquire().await?;
        let idle = self.idle.lock().map_or(None, |mut idle| idle.pop());
        let (conn, prepared) = match idle {
            Some(kept) => kept,
            None => (pool.acquire().await?, Prepared::default()),
        };
        Ok((conn, prepared, permit))
    }

    fn keep(&self, conn: PoolConnection<Postgres>, prepared: Prepared) {
        if let Ok(mut idle) = self.idle.lock() {
            idle.push((conn, prepared));
        }
    }
}

impl Db {
    /// Opens `url` (`sqlite:PATH` or `postgres://…`) and applies haico's migrations.
    pub async fn open(url: &str, release_ping: bool) -> Result<Self> {
        if url.starts_with("postgres") {
            let size = server_pool_size();
            let pool = PgPoolOptions::new()
                .max_connections(size)
                .test_before_acquire(false)
                .connect(url)
                .await
                .with_context(|| format!("connecting to {url}"))?;
            sqlx::migrate!("../haico-store/migrations/postgres")
                .run(&pool)
                .await?;
            // The server lends all but two of its connections this way.
            let kept = (!release_ping).then(|| {
                Arc::new(Kept {
                    idle: std::sync::Mutex::new(Vec::new()),
                    permits: tokio::sync::Semaphore::new(size.saturating_sub(2).max(1) as usize),
                })
            });
            return Ok(Db::Postgres { pool, kept });
        }
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true)
            .pragma("temp_store", "memory")
            .pragma("cache_size", "-32000");
        let mut writer = SqliteConnection::connect_with(&options).await?;
        sqlx::migrate!("../haico-store/migrations/sqlite")
            .run(&mut writer)
            .await?;
        let reader = SqlitePoolOptions::new()
            .test_before_acquire(false)
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(options.read_only(true))
            .await?;
        Ok(Db::Sqlite {
            writer: Arc::new(Mutex::new(writer)),
            reader,
        })
    }

    /// [`transaction`](Self::transaction), where a write on `thread` begins and reads the
    /// thread's turn counter in one hand-over on SQLite, as the server's writes do; `body`
    /// gets the counter. On PostgreSQL with connections kept as the server keeps them, `BEGIN`
    /// and the lock are one simple query, as in the server (PERFORMANCE §22).
    pub async fn transaction_on<T>(
        &self,
        thread: Option<&str>,
        write: bool,
        body: impl AsyncFnOnce(&mut Tx<'_>, Option<i64>) -> Result<T>,
    ) -> Result<T> {
        let Some(thread) = thread.filter(|_| write) else {
            return self
                .transaction(write, async |tx| body(tx, None).await)
                .await;
        };
        match self {
            Db::Sqlite { writer, .. } => {
                let mut conn = writer.lock().await;
                let turn: Option<(i64,)> = sqlx::query_as(
                    "BEGIN IMMEDIATE; SELECT turn_index, document_mode FROM threads WHERE id = $1",
                )
                .bind(thread)
                .fetch_optional(&mut *conn)
                .await?;
                let out = body(&mut Tx::Sqlite(&mut conn), turn.map(|(t,)| t)).await;
                let end = if out.is_ok() { "COMMIT" } else { "ROLLBACK" };
                conn.execute(end).await?;
                out
            }
            Db::Postgres {
                pool,
                kept: Some(kept),
            } => {
                // As the server's agent writes: nothing is sent until the first statement, which
                // carries `BEGIN` and the lock (`Lent::begin_with_then`); the limit's
                // connections are its own, so it never finds anything prepared already.
                let (mut conn, prepared, _permit) = kept.lend(pool).await?;
                let mut ride = Ride {
                    thread: thread.to_string(),
                    pending: true,
                    turn: None,
                    prepared,
                    committed: false,
                };
                let out = body(&mut Tx::PostgresRiding(&mut conn, &mut ride), None).await;
                if !ride.committed && !ride.pending {
                    conn.execute(if out.is_ok() { "COMMIT" } else { "ROLLBACK" })
                        .await?;
                }
                kept.keep(conn, ride.prepared);
                out
            }
            Db::Postgres { .. } => {
                self.transaction(write, async |tx| body(tx, None).await)
                    .await
            }
        }
    }

    /// Runs `body` in a write transaction (`write`, committed at the end and rolled back when
    /// it fails) or, for a read, on a connection outside any transaction.
    pub async fn transaction<T>(
        &self,
        write: bool,
        body: impl AsyncFnOnce(&mut Tx<'_>) -> Result<T>,
    ) -> Result<T> {
        match self {
            Db::Sqlite { reader, .. } if !write => {
                let mut conn = reader.acquire().await?;
                body(&mut Tx::Sqlite(&mut conn)).await
            }
            Db::Postgres {
                pool,
                kept: Some(kept),
            } => {
                let (mut conn, prepared, _permit) = kept.lend(pool).await?;
                if write {
                    conn.execute("BEGIN").await?;
                }
                let out = body(&mut Tx::Postgres(&mut conn)).await;
                if write {
                    conn.execute(if out.is_ok() { "COMMIT" } else { "ROLLBACK" })
                        .await?;
                }
                kept.keep(conn, prepared);
                out
            }
            Db::Postgres { pool, .. } if !write => {
                let mut conn = pool.acquire().await?;
                body(&mut Tx::Postgres(&mut conn)).await
            }
            Db::Sqlite { writer, .. } => {
                let mut conn = writer.lock().await;
                conn.execute("BEGIN IMMEDIATE").await?;
                let out = body(&mut Tx::Sqlite(&mut conn)).await;
                let end = if out.is_ok() { "COMMIT" } else { "ROLLBACK" };
                conn.execute(end).await?;
                out
            }
            Db::Postgres { pool, .. } => {
                let mut tx = pool.begin().await?;
                let out = body(&mut Tx::Postgres(&mut tx)).await;
                match out {
                    Ok(value) => {
                        tx.commit().await?;
                        Ok(value)
                    }
                    Err(err) => {
                        tx.rollback().await?;
                        Err(err)
                    }
                }
            }
        }
    }

    /// Runs `sql` (one or more statements, no parameters) outside the measured calls.
    pub async fn execute(&self, sql: &str) -> Result<()> {
        match self {
            Db::Sqlite { writer, .. } => {
                sqlx::raw_sql(sql)
                    .execute(&mut *writer.lock().await)
                    .await?;
            }
            Db::Postgres { pool, .. } => {
                sqlx::raw_sql(sql).execute(pool).await?;
            }
        }
        Ok(())
    }

    pub async fn close(&self) {
        match self {
            Db::Sqlite { reader, .. } => reader.close().await,
            Db::Postgres { pool, .. } => pool.close().await,
        }
    }
}

/// A connection inside a sqlx transaction.
pub enum Tx<'a> {
    Sqlite(&'a mut SqliteConnection),
    Postgres(&'a mut PgConnection),
    /// An agent write whose lock rides with its first statement ([`Ride`]).
    PostgresRiding(&'a mut PgConnection, &'a mut Ride),
}

/// Binds every parameter as the server would (same Rust types, so the same wire types).
macro_rules! bind_all {
    ($query:expr, $params:expr) => {{
        let mut query = $query;
        for param in $params {
            query = match param {
                P::Int(v) => query.bind(*v),
                P::Text(v) => query.bind(v.as_str()),
                P::Bool(v) => query.bind(*v),
                P::Time(v) => query.bind(*v),
                P::NullInt => query.bind(None::<i64>),
                P::NullText => query.bind(None::<&str>),
                P::NullBool => query.bind(None::<bool>),
            };
        }
        query
    }};
}

impl Exec for Tx<'_> {
    fn postgres(&self) -> bool {
        matches!(self, Tx::Postgres(_) | Tx::PostgresRiding(..))
    }

    fn riding(&self) -> bool {
        matches!(self, Tx::PostgresRiding(_, ride) if ride.pending)
    }

    fn ridden_turn(&self) -> Option<i64> {
        match self {
            Tx::PostgresRiding(_, ride) => ride.turn,
            _ => None,
        }
    }

    async fn log_and_commit(&mut self, params: &[P]) -> Result<Option<Vec<[i64; 2]>>> {
        let Tx::PostgresRiding(conn, ride) = self else {
            return Ok(None);
        };
        if ride.pending {
            return Ok(None);
        }
        let committed = &mut ride.committed;
        let name = if params.len() == LOG_STAMPING_PARAMS {
            LOG_STAMPING_NAME
        } else {
            LOG_NAME
        };
        let mut sql = format!("EXECUTE {name}(");
        for (i, param) in params.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            literal(&mut sql, param);
        }
        sql.push_str("); COMMIT");
        let rows = conn
            .fetch_all(sql.as_str())
            .await
            .context("logging a change and committing")?;
        *committed = true;
        Ok(Some(
            rows.iter()
                .map(|row| {
                    [
                        row.try_get::<i64, _>(0).unwrap_or(0),
                        row.try_get::<i64, _>(1).unwrap_or(0),
                    ]
                })
                .collect(),
        ))
    }

    async fn rows(&mut self, sql: &str, params: &[P]) -> Result<Vec<[i64; 2]>> {
        // The same body for either engine's connection.
        macro_rules! first_two_ints {
            ($conn:expr) => {{
                let rows = bind_all!(sqlx::query(sql), params)
                    .fetch_all($conn)
                    .await
                    .with_context(|| format!("running {sql}"))?;
                rows.iter()
                    .map(|row| {
                        [
                            row.try_get::<i64, _>(0).unwrap_or(0),
                            row.try_get::<i64, _>(1).unwrap_or(0),
                        ]
                    })
                    .collect()
            }};
        }
        Ok(match self {
            Tx::Sqlite(conn) => first_two_ints!(&mut **conn),
            Tx::PostgresRiding(conn, ride) if ride.pending => ride_first(conn, ride, sql, params)
                .await
                .with_context(|| format!("running {sql} with the lock"))?,
            Tx::Postgres(conn) | Tx::PostgresRiding(conn, _) => first_two_ints!(&mut **conn),
        })
    }
}

/// The server's default pool (`store::default_max_connections`: four connections per core,
/// 8 to 32), so that the limit runs as many transactions at once as the server does.
fn server_pool_size() -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    u32::try_from(cores)
        .unwrap_or(u32::MAX)
        .saturating_mul(4)
        .clamp(8, 32)
}

/// How many statements [`prepare_named`] prepares: the two change logs and the lock.
const NAMED_PREPARES: usize = 3;

/// `PREPARE` of the lock and the change logs, when the connection does not hold them yet.
fn prepare_named(prepared: &Prepared) -> String {
    if prepared.named {
        return String::new();
    }
    format!(
        "PREPARE {LOG_NAME}{} AS {}; PREPARE {LOG_STAMPING_NAME}{} AS {}; \
         PREPARE {LOCK_NAME} AS {}; ",
        sql::LOG_CHANGE_TYPES,
        sql::LOG_CHANGE_POSTGRES,
        sql::LOG_CHANGE_STAMPING_TYPES,
        sql::LOG_CHANGE_POSTGRES_STAMPING,
        sql::LOCK_THREAD.1
    )
}

/// Every rider, numbered as first seen (the server's `rider_id`).
static RIDERS: std::sync::LazyLock<std::sync::Mutex<HashMap<String, u32>>> =
    std::sync::LazyLock::new(Default::default);

/// `BEGIN`, the lock and `sql` in one simple query, as the server's `Lent::begin_with_then`
/// sends them; returns `sql`'s rows and records the turn the lock read.
async fn ride_first(
    conn: &mut PgConnection,
    ride: &mut Ride,
    sql: &str,
    params: &[P],
) -> Result<Vec<[i64; 2]>> {
    let types: Vec<&str> = params.iter().map(type_of).collect();
    let types = format!("({})", types.join(", "));
    let id = {
        let mut riders = RIDERS.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
        let next = u32::try_from(riders.len())?;
        *riders.entry(format!("{types}{sql}")).or_insert(next)
    };
    let mut text = prepare_named(&ride.prepared);
    let prepares = if ride.prepared.named {
        0
    } else {
        NAMED_PREPARES
    };
    let fresh = !ride.prepared.riders.contains(sql);
    if fresh {
        text.push_str(&format!("PREPARE haico_r{id}{types} AS {sql}; "));
    }
    text.push_str(&format!(
        "BEGIN; EXECUTE {LOCK_NAME}('{}'); EXECUTE haico_r{id}(",
        ride.thread
    ));
    for (i, param) in params.iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        literal(&mut text, param);
    }
    text.push(')');
    let mut answers: Vec<Vec<sqlx::postgres::PgRow>> = Vec::new();
    let mut rows = Vec::new();
    {
        let mut stream = conn.fetch_many(text.as_str());
        while let Some(item) = futures::TryStreamExt::try_next(&mut stream).await? {
            match item {
                sqlx::Either::Left(_) => answers.push(std::mem::take(&mut rows)),
                sqlx::Either::Right(row) => rows.push(row),
            }
        }
    }
    ride.prepared.named = true;
    ride.prepared.riders.insert(sql.to_string());
    ride.pending = false;
    let skip = prepares + usize::from(fresh) + 1;
    let mut answers = answers.into_iter().skip(skip);
    let lock = answers.next().unwrap_or_default();
    ride.turn = lock
        .first()
        .map(|row| row.try_get::<i64, _>(0))
        .transpose()?;
    Ok(answers
        .next()
        .unwrap_or_default()
        .iter()
        .map(|row| {
            [
                row.try_get::<i64, _>(0).unwrap_or(0),
                row.try_get::<i64, _>(1).unwrap_or(0),
            ]
        })
        .collect())
}

/// The type a parameter is declared with, as the server's `literal::types` declares it.
fn type_of(param: &P) -> &'static str {
    match param {
        P::Int(_) | P::NullInt => "int8",
        P::Text(_) | P::NullText => "text",
        P::Bool(_) | P::NullBool => "bool",
        P::Time(_) => "timestamptz",
    }
}

/// `param` as a PostgreSQL literal, written as the server's `store::literal` writes it (the
/// limit's own statements hold no NUL, which the server refuses).
fn literal(sql: &mut String, param: &P) {
    match param {
        P::NullInt | P::NullText | P::NullBool => sql.push_str("NULL"),
        P::Int(n) => sql.push_str(&n.to_string()),
        P::Bool(b) => sql.push_str(if *b { "TRUE" } else { "FALSE" }),
        P::Time(t) => {
            sql.push('\'');
            sql.push_str(&t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true));
            sql.push('\'');
        }
        P::Text(text) => {
            sql.push_str("E'");
            sql.push_str(&text.replace('\\', "\\\\").replace('\'', "''"));
            sql.push('\'');
        }
    }
}
