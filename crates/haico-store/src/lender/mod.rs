//! [`Lender`]: PostgreSQL connections lent to one repository at a time and taken back as they
//! are, without the round trip sqlx's pool spends on every connection given back to it.
//!
//! sqlx's pool pings each returned connection (in a spawned task) to flush whatever a
//! cancelled statement may have left behind: one more round trip, and one more wake-up of a
//! PostgreSQL backend, per tool call. A repository knows better: it opens and ends its own
//! transaction, so when `COMMIT` or `ROLLBACK` has been answered, or every statement of an
//! autocommit read succeeded, the connection is known to be idle and in sync. The lender keeps
//! those for the next caller. Any other connection (a statement failed, or the repository was
//! dropped half-way, say because the request was cancelled) goes back to the pool, which checks
//! it, after an open transaction has been rolled back or by closing it.
//!
//! The lender holds at most `max_connections - RESERVED` connections at once, so the pool
//! always has some for its other users (the event poller, the doorbell, health checks).
//!
//! It also counts the round trips its connections make ([`Lender::round_trips`]): on
//! PostgreSQL haico's CPU per tool call goes mostly into talking to the server, once per round
//! trip, so the count per call is the number a change to the write path must keep down, and
//! unlike a timing it is the same on a busy machine as on a quiet one.

use std::{
    collections::HashSet,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use sqlx::{
    PgConnection, PgPool, Postgres,
    pool::PoolConnection,
    postgres::{PgArguments, PgQueryResult, PgRow},
    query::Query,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::{literal, query::Value};

mod ride;
pub use ride::Rider;

/// Connections the lender leaves to the pool's other users.
const RESERVED: u32 = 2;

/// Lent connections that sat idle this long are pinged before they are lent again (the
/// server or a proxy may have dropped them meanwhile).
const PING_AFTER_IDLE: Duration = Duration::from_secs(1);

/// Lends pooled PostgreSQL connections to repositories; cheap to clone.
#[derive(Clone)]
pub struct Lender {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Lender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lender")
            .field("available", &self.inner.permits.available_permits())
            .finish_non_exhaustive()
    }
}

struct Inner {
    pool: PgPool,
    idle: Mutex<Shelf>,
    permits: Arc<Semaphore>,
    /// Statements (and pings) sent on lent connections, each one round trip.
    round_trips: AtomicU64,
    /// Statements [`Lent::begin_with`] prepares along with its own, so that a connection it
    /// began on holds them all ([`Lender::also_preparing`]).
    companions: &'static [&'static Named],
}

/// The kept connections, and whether the lender still keeps any (not after [`Lender::close`]:
/// the pool's close waits for every connection, so none may be kept back from it). Both under
/// one lock, so a connection given back while closing cannot slip onto the shelf.
#[derive(Default)]
struct Shelf {
    idle: Vec<Idle>,
    closed: bool,
}

struct Idle {
    conn: PoolConnection<Postgres>,
    since: Instant,
    /// What is known to be prepared on it.
    known: Known,
}

/// What a connection is known to hold prepared under haico's own names. Prepared statements
/// belong to the server's session, so this travels with the connection while the lender keeps
/// it; a connection that went through the pool is not known to hold anything.
#[derive(Debug, Default)]
struct Known {
    /// The [`Named`] statements [`Lent::begin_with`] prepares (its own and the lender's
    /// companions).
    named: bool,
    /// The riders prepared on it ([`Lent::begin_with_then`]), by id.
    riders: HashSet<u32>,
}

impl Lender {
    /// A lender over `pool`, keeping up to the pool's size less [`RESERVED`].
    pub fn new(pool: PgPool) -> Self {
        Self::also_preparing(pool, &[])
    }

    /// A lender over `pool` whose [`Lent::begin_with`] also prepares `companions` on each
    /// connection the first time, in the same round trip, so that later statements of the
    /// transaction can [`execute_and_commit`](Lent::execute_and_commit) them.
    pub fn also_preparing(pool: PgPool, companions: &'static [&'static Named]) -> Self {
        let size = pool.options().get_max_connections();
        let lendable = size.saturating_sub(RESERVED).max(1);
        Self {
            inner: Arc::new(Inner {
                pool,
                idle: Mutex::new(Shelf::default()),
                permits: Arc::new(Semaphore::new(lendable as usize)),
                round_trips: AtomicU64::new(0),
                companions,
            }),
        }
    }

    /// A connection, idle and outside any transaction: the one given back last, or a new one
    /// from the pool. Waits while every lendable connection is out; the caller bounds the wait.
    pub async fn lend(&self) -> Result<Lent, sqlx::Error> {
        let permit = Arc::clone(&self.inner.permits)
            .acquire_owned()
            .await
            .map_err(|_| sqlx::Error::PoolClosed)?;
        loop {
            let idle = self.take_idle();
            let (conn, known) = match idle {
                Some(Idle {
                    mut conn,
                    since,
                    known,
                }) => {
                    if since.elapsed() >= PING_AFTER_IDLE {
                        self.inner.count_trip();
                        if sqlx::Connection::ping(&mut *conn).await.is_err() {
                            conn.close_on_drop();
                            continue;
                        }
                    }
                    (conn, known)
                }
                None => (self.inner.pool.acquire().await?, Known::default()),
            };
            return Ok(Lent {
                conn: Some(conn),
                open: false,
                clean: true,
                known,
                poisoned: false,
                lender: Arc::clone(&self.inner),
                _permit: permit,
            });
        }
    }

    /// A lent connection inside a transaction started with `begin`.
    pub async fn begin(&self, begin: &str) -> Result<Lent, sqlx::Error> {
        let mut lent = self.lend().await?;
        lent.begin(begin).await?;
        Ok(lent)
    }

    /// Gives every kept connection back to the pool, so that closing the pool (which waits
    /// for all its connections) can finish; connections still lent follow when they are.
    pub fn close(&self) {
        let mut shelf = match self.inner.idle.lock() {
            Ok(shelf) => shelf,
            Err(poisoned) => poisoned.into_inner(),
        };
        shelf.closed = true;
        let drained = std::mem::take(&mut shelf.idle);
        drop(shelf);
        drop(drained);
    }

    /// How many round trips lent connections have made since the lender was made: every
    /// statement (one simple query counts once, however many statements it holds) and every
    /// ping of a connection that sat idle. Connections the pool hands out directly (the event
    /// poller, the doorbell, `/healthz`) are not counted.
    pub fn round_trips(&self) -> u64 {
        self.inner.round_trips.load(Ordering::Relaxed)
    }

    fn take_idle(&self) -> Option<Idle> {
        match self.inner.idle.lock() {
            Ok(mut shelf) => shelf.idle.pop(),
            Err(poisoned) => poisoned.into_inner().idle.pop(),
        }
    }
}

impl Inner {
    /// Counts one round trip, about to be made.
    fn count_trip(&self) {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
    }

    fn keep(&self, conn: PoolConnection<Postgres>, known: Known) {
        let mut shelf = match self.idle.lock() {
            Ok(shelf) => shelf,
            Err(poisoned) => poisoned.into_inner(),
        };
        if shelf.closed {
            // Closing: the pool is waiting for this one (dropped after the lock is let go).
            drop(shelf);
            drop(conn);
            return;
        }
        shelf.idle.push(Idle {
            conn,
            since: Instant::now(),
            known,
        });
    }
}

/// A lent connection. Statements go to it only through its own methods, which note every
/// outcome (a connection that saw a failure is not lent again unchecked); there is no way to
/// reach the connection around them. [`commit`](Self::commit) and [`rollback`](Self::rollback)
/// end its transaction (or, when none was begun, an autocommit use) and give it back, as
/// dropping it does.
pub struct Lent {
    conn: Option<PoolConnection<Postgres>>,
    /// `BEGIN` was sent and no `COMMIT` or `ROLLBACK` has been answered since.
    open: bool,
    /// No statement on it has failed.
    clean: bool,
    /// What is known to be prepared on this connection.
    known: Known,
    /// A one-trip commit failed: the connection is closed when dropped (which ends whatever is
    /// left of its transaction on the server), and nothing more is sent on it.
    poisoned: bool,
    lender: Arc<Inner>,
    _permit: OwnedSemaphorePermit,
}

impl Lent {
    /// Starts a transaction with `begin` (`BEGIN`, or `BEGIN ISOLATION LEVEL …`).
    pub async fn begin(&mut self, begin: &str) -> Result<(), sqlx::Error> {
        // Counted open before it is sent: if this is cancelled half-way, the transaction may
        // have started, and the drop must not hand the connection on as it is.
        self.open = true;
        let result = self.simple(begin).await;
        self.saw(&result);
        result
    }

    /// Starts a transaction with `begin` and runs `statement` with `argument` in it, in **one
    /// round trip**: one simple query holding `BEGIN` and an `EXECUTE` of the statement, which
    /// is prepared on the connection the first time (in the same simple query), so that the
    /// server neither parses nor plans it again. Returns the statement's first row (in text
    /// format, which sqlx decodes). `argument` goes into the query as a string literal, so the
    /// caller must pass only text that needs no quoting (a [`ThreadId`](crate::ThreadId)).
    ///
    /// sqlx sends parameters only with its extended protocol, which waits for each statement's
    /// answer before the next; a simple query is the one way to have `BEGIN` and a statement
    /// answered together.
    pub async fn begin_with(
        &mut self,
        begin: &str,
        statement: &Named,
        argument: &str,
    ) -> Result<Option<PgRow>, sqlx::Error> {
        check_inline_argument(argument)?;
        let execute = format!("{begin}; EXECUTE {}('{argument}')", statement.name);
        // At most one retry after each of the two failures below; a third try fails as is.
        let mut tries = 0;
        loop {
            tries += 1;
            let sql = if self.known.named {
                execute.clone()
            } else {
                let mut sql = String::new();
                for named in self.lender.companions.iter().copied().chain([statement]) {
                    sql.push_str(&format!(
                        "PREPARE {}{} AS {}; ",
                        named.name, named.params, named.definition
                    ));
                }
                sql + &execute
            };
            // Counted open before it is sent, as in `begin`.
            self.open = true;
            self.lender.count_trip();
            let result = fetch_optional_simple(self.conn(), sql).await;
            let code = match &result {
                Ok(_) => {
                    self.known.named = true;
                    return result;
                }
                Err(sqlx::Error::Database(err)) => err.code().map(|code| code.into_owned()),
                Err(_) => None,
            };
            match code.as_deref() {
                // Prepared by an earlier lending this connection forgot (it went back to the
                // pool in between): `PREPARE` failed first, so nothing after it ran.
                Some(DUPLICATE_PREPARED) if !self.known.named && tries < 3 => {
                    self.open = false;
                    self.known.named = true;
                }
                // Not prepared after all: `BEGIN` ran and the transaction is aborted.
                Some(UNKNOWN_PREPARED) if self.known.named && tries < 3 => {
                    self.known.named = false;
                    self.lender.count_trip();
                    let rollback = simple(self.conn(), "ROLLBACK").await;
                    self.saw(&rollback);
                    rollback?;
                    self.open = false;
                }
                _ => {
                    self.clean = false;
                    return result;
                }
            }
        }
    }

    /// Whether [`execute_and_commit`](Self::execute_and_commit) can run now: inside a
    /// transaction [`begin_with`](Self::begin_with) began (or one on a connection it began on
    /// before), so that the lender's companion statements are known to be prepared.
    pub fn can_execute_and_commit(&self) -> bool {
        self.open && self.clean && self.known.named
    }

    /// Runs `statement` (one of the lender's companions) with `params` and commits, in **one
    /// round trip**: one simple query, `EXECUTE name(…); COMMIT`, the parameters written as
    /// literals. Returns the statement's rows. The commit counts only when every statement
    /// answered: on any failure the transaction is over or aborted, and the connection is
    /// closed rather than lent again.
    ///
    /// Only when [`can_execute_and_commit`](Self::can_execute_and_commit) says so; otherwise
    /// (and for a parameter no literal can carry, a NUL character) it fails without sending
    /// anything, the transaction still open for the caller to end.
    pub async fn execute_and_commit(
        &mut self,
        statement: &Named,
        params: &[Value<'_>],
    ) -> Result<Vec<PgRow>, sqlx::Error> {
        if !self.can_execute_and_commit() {
            return Err(sqlx::Error::Protocol(format!(
                "{} is not known to be prepared on this connection",
                statement.name
            )));
        }
        let mut sql = literal::execute(statement.name, params)
            .map_err(|err| sqlx::Error::Protocol(err.to_string()))?;
        sql.push_str("; COMMIT");
        self.lender.count_trip();
        let result = fetch_all_simple(self.conn(), sql).await;
        match &result {
            Ok(_) => {
                self.open = false;
                self.clean = true;
            }
            // The transaction may be aborted, or over (a failed `COMMIT`), and the statement
            // may be missing (`26000`): the connection is not used again.
            Err(_) => {
                self.clean = false;
                self.poisoned = true;
            }
        }
        result
    }

    /// The pool the connection was lent from (its time-outs bound waits on it).
    pub fn pool(&self) -> &PgPool {
        &self.lender.pool
    }

    /// Makes the transaction's writes durable and gives the connection back.
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        self.end("COMMIT").await
    }

    /// Discards the transaction's writes and gives the connection back.
    pub async fn rollback(self) -> Result<(), sqlx::Error> {
        self.end("ROLLBACK").await
    }

    /// Notes a statement's outcome: after a failure the connection is handed back to the
    /// pool to be checked, not kept.
    fn saw<T>(&mut self, result: &Result<T, sqlx::Error>) {
        if result.is_err() {
            self.clean = false;
        }
    }

    async fn end(mut self, statement: &str) -> Result<(), sqlx::Error> {
        if !self.open || self.poisoned {
            // Nothing to end, or a poisoned connection, whose closing on drop ends it.
            return Ok(());
        }
        let result = self.simple(statement).await;
        match &result {
            Ok(()) => {
                self.open = false;
                self.clean = true;
            }
            Err(_) => self.clean = false,
        }
        result
    }
}

/// Refuses an argument [`Lent::begin_with`] would have to quote: never sent, so that a
/// caller's mistake cannot become SQL.
fn check_inline_argument(argument: &str) -> Result<(), sqlx::Error> {
    if argument
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Ok(())
    } else {
        Err(sqlx::Error::Protocol(format!(
            "{argument:?} cannot be sent inline: only A-Z, a-z, 0-9, `_` and `-` can"
        )))
    }
}

/// Sends one statement as a simple query. Boxed, so the futures that await it stay `Send`
/// for any lifetime (sqlx's executor on `&mut PgConnection` otherwise trips the compiler's
/// higher-ranked `Send` check in callers).
fn simple<'c>(
    conn: &'c mut PgConnection,
    statement: &'c str,
) -> futures::future::BoxFuture<'c, Result<(), sqlx::Error>> {
    Box::pin(async move { sqlx::Executor::execute(conn, statement).await.map(|_| ()) })
}

/// Sends `sql` as one simple query and returns the first row any of its statements answered.
/// Boxed like [`simple`].
fn fetch_optional_simple(
    conn: &mut PgConnection,
    sql: String,
) -> futures::future::BoxFuture<'_, Result<Option<PgRow>, sqlx::Error>> {
    Box::pin(async move { sqlx::Executor::fetch_optional(conn, sql.as_str()).await })
}

/// Sends `sql` as one simple query and returns every row its statements answered, after every
/// statement in it has been answered (so a failing `COMMIT` at its end is seen). Boxed like
/// [`simple`].
fn fetch_all_simple(
    conn: &mut PgConnection,
    sql: String,
) -> futures::future::BoxFuture<'_, Result<Vec<PgRow>, sqlx::Error>> {
    Box::pin(async move { sqlx::Executor::fetch_all(conn, sql.as_str()).await })
}

/// SQLSTATE `duplicate_prepared_statement`.
const DUPLICATE_PREPARED: &str = "42P05";
/// SQLSTATE `invalid_sql_statement_name`: no prepared statement by that name.
const UNKNOWN_PREPARED: &str = "26000";

/// A statement [`Lent::begin_with`] prepares once per connection under `name`:
/// `definition` is what follows `PREPARE name AS`, with its parameters `$1`, `$2`, ….
#[derive(Debug, Clone, Copy)]
pub struct Named {
    /// The prepared statement's name (unlike sqlx's own, which are `sqlx_s_N`).
    pub name: &'static str,
    /// Its parameters' types, in parentheses (`"(text, int8)"`), or empty to let the server
    /// infer them from the statement.
    pub params: &'static str,
    /// The statement.
    pub definition: &'static str,
}

impl Lent {
    /// Every row `query` returns.
    pub async fn fetch_all(
        &mut self,
        query: Query<'_, Postgres, PgArguments>,
    ) -> Result<Vec<PgRow>, sqlx::Error> {
        self.lender.count_trip();
        let result = query.fetch_all(self.conn()).await;
        self.saw(&result);
        result
    }

    /// The first row `query` returns, if any.
    pub async fn fetch_optional(
        &mut self,
        query: Query<'_, Postgres, PgArguments>,
    ) -> Result<Option<PgRow>, sqlx::Error> {
        self.lender.count_trip();
        let result = query.fetch_optional(self.conn()).await;
        self.saw(&result);
        result
    }

    /// Runs `query` for its effect.
    pub async fn execute(
        &mut self,
        query: Query<'_, Postgres, PgArguments>,
    ) -> Result<PgQueryResult, sqlx::Error> {
        self.lender.count_trip();
        let result = query.execute(self.conn()).await;
        self.saw(&result);
        result
    }

    /// Sends `statement` as one simple query: one round trip.
    async fn simple(&mut self, statement: &str) -> Result<(), sqlx::Error> {
        self.lender.count_trip();
        simple(self.conn(), statement).await
    }

    fn conn(&mut self) -> &mut PgConnection {
        match &mut self.conn {
            Some(conn) => conn,
            None => unreachable!("a lent connection is only taken out when it is dropped"),
        }
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        let Some(mut conn) = self.conn.take() else {
            return;
        };
        if self.open || self.poisoned {
            // Dropped inside its transaction (a cancelled request), or after a one-trip commit
            // failed: closing the connection ends the transaction on the server; the pool
            // opens a new one when needed.
            conn.close_on_drop();
        } else if self.clean {
            self.lender.keep(conn, std::mem::take(&mut self.known));
        }
        // Otherwise `conn` drops into the pool, which pings it before reuse.
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
