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

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use sqlx::{
    PgConnection, PgPool, Postgres,
    pool::PoolConnection,
    postgres::{PgArguments, PgQueryResult, PgRow},
    query::Query,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

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
}

impl Lender {
    /// A lender over `pool`, keeping up to the pool's size less [`RESERVED`].
    pub fn new(pool: PgPool) -> Self {
        let size = pool.options().get_max_connections();
        let lendable = size.saturating_sub(RESERVED).max(1);
        Self {
            inner: Arc::new(Inner {
                pool,
                idle: Mutex::new(Shelf::default()),
                permits: Arc::new(Semaphore::new(lendable as usize)),
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
            let conn = match idle {
                Some(Idle { mut conn, since }) => {
                    if since.elapsed() >= PING_AFTER_IDLE
                        && sqlx::Connection::ping(&mut *conn).await.is_err()
                    {
                        conn.close_on_drop();
                        continue;
                    }
                    conn
                }
                None => self.inner.pool.acquire().await?,
            };
            return Ok(Lent {
                conn: Some(conn),
                open: false,
                clean: true,
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

    fn take_idle(&self) -> Option<Idle> {
        match self.inner.idle.lock() {
            Ok(mut shelf) => shelf.idle.pop(),
            Err(poisoned) => poisoned.into_inner().idle.pop(),
        }
    }
}

impl Inner {
    fn keep(&self, conn: PoolConnection<Postgres>) {
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
    lender: Arc<Inner>,
    _permit: OwnedSemaphorePermit,
}

impl Lent {
    /// Starts a transaction with `begin` (`BEGIN`, or `BEGIN ISOLATION LEVEL …`).
    pub async fn begin(&mut self, begin: &str) -> Result<(), sqlx::Error> {
        // Counted open before it is sent: if this is cancelled half-way, the transaction may
        // have started, and the drop must not hand the connection on as it is.
        self.open = true;
        let result = simple(self.conn(), begin).await;
        self.saw(&result);
        result
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
        if !self.open {
            return Ok(());
        }
        let result = simple(self.conn(), statement).await;
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

/// Sends one statement as a simple query. Boxed, so the futures that await it stay `Send`
/// for any lifetime (sqlx's executor on `&mut PgConnection` otherwise trips the compiler's
/// higher-ranked `Send` check in callers).
fn simple<'c>(
    conn: &'c mut PgConnection,
    statement: &'c str,
) -> futures::future::BoxFuture<'c, Result<(), sqlx::Error>> {
    Box::pin(async move { sqlx::Executor::execute(conn, statement).await.map(|_| ()) })
}

impl Lent {
    /// Every row `query` returns.
    pub async fn fetch_all(
        &mut self,
        query: Query<'_, Postgres, PgArguments>,
    ) -> Result<Vec<PgRow>, sqlx::Error> {
        let result = query.fetch_all(self.conn()).await;
        self.saw(&result);
        result
    }

    /// The first row `query` returns, if any.
    pub async fn fetch_optional(
        &mut self,
        query: Query<'_, Postgres, PgArguments>,
    ) -> Result<Option<PgRow>, sqlx::Error> {
        let result = query.fetch_optional(self.conn()).await;
        self.saw(&result);
        result
    }

    /// Runs `query` for its effect.
    pub async fn execute(
        &mut self,
        query: Query<'_, Postgres, PgArguments>,
    ) -> Result<PgQueryResult, sqlx::Error> {
        let result = query.execute(self.conn()).await;
        self.saw(&result);
        result
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
        if self.open {
            // Dropped inside its transaction (a cancelled request): closing the connection
            // ends the transaction on the server; the pool opens a new one when needed.
            conn.close_on_drop();
        } else if self.clean {
            self.lender.keep(conn);
        }
        // Otherwise `conn` drops into the pool, which pings it before reuse.
    }
}
