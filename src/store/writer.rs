//! SQLite's one write connection, held by haico itself instead of by a sqlx pool, and run on
//! the caller's own thread.
//!
//! Every write transaction on SQLite goes through this one connection, one after another, so
//! whatever a statement costs besides SQLite's own work is paid in series by every write. sqlx
//! runs each statement on the connection's worker thread: two context switches per statement,
//! which measured as most of a write's cost (PERFORMANCE §14). So the writer keeps sqlx's
//! connection *parked*: it holds sqlx's own handle lock ([`LockedSqliteHandle`]), which stops
//! the worker thread, and runs statements on the same `sqlite3` handle through rusqlite, on
//! whichever tokio thread the transaction's task is on. A write statement on a warm cache
//! takes microseconds, far less than the hop it replaces. Queries not yet written for the
//! inline path still run through sqlx: [`Held::conn`] un-parks the worker first, and the next
//! inline statement parks it again (one hop each way).
//!
//! Waiting is never done on a runtime thread: `BEGIN IMMEDIATE` is tried with SQLite's busy
//! wait switched off, and while another process holds the file's write lock the task sleeps
//! asynchronously and tries again, for as long as the busy time-out allows. Inside the
//! transaction the write lock is already held, so no statement waits.
//!
//! The connection sits behind a fair (first come, first served) mutex; the next caller gets it
//! the moment the last one commits. A transaction that is dropped without commit or rollback
//! (a cancelled request, say) is rolled back by whoever takes the connection next, and a task
//! is spawned to do it promptly when nobody is waiting, so another process's writes are not
//! kept waiting for the lock.

use std::{ptr::NonNull, sync::Arc, time::Duration};

use sqlx::{
    Connection, SqliteConnection,
    sqlite::{LockedSqliteHandle, SqliteConnectOptions},
};
use tokio::sync::{Mutex, OwnedMutexGuard};

/// How many statements the inline connection keeps prepared (every write-path statement,
/// with room to spare: a statement evicted from the cache is parsed again on its next use).
const PREPARED_STATEMENTS: usize = 128;

/// The connection and what haico knows about it.
struct State {
    /// rusqlite over sqlx's `sqlite3` handle, used only while `parked` is held. `None` only
    /// while the state is being dropped.
    inline: Option<rusqlite::Connection>,
    /// sqlx's handle lock: while held, sqlx's worker thread is stopped and the handle is ours.
    /// It borrows `*conn` (hence the made-up `'static`); see [`State::sqlx`].
    parked: Option<LockedSqliteHandle<'static>>,
    /// sqlx's connection, owned (from `Box::into_raw`) and only ever reached through
    /// [`State::sqlx`] and [`State::park`], which never let two borrows of it coexist.
    conn: NonNull<SqliteConnection>,
    /// A transaction was begun and not yet ended.
    open: bool,
    /// [`Writer::close`] was called: no new transactions.
    closed: bool,
}

// SAFETY: `conn` is uniquely owned by the state (as a `Box` would be), `SqliteConnection` is
// `Send`, and so are rusqlite's connection and sqlx's handle lock (a guard of an async mutex,
// released from whichever thread drops it). The state is only ever reached through the
// writer's mutex, so no two threads touch it at once.
unsafe impl Send for State {}

impl State {
    /// sqlx's connection, for a statement sent through sqlx. Un-parks the worker thread first:
    /// from here until the next [`park`](Self::park), the handle is sqlx's again.
    fn sqlx(&mut self) -> &mut SqliteConnection {
        self.parked = None;
        // SAFETY: `conn` is valid until the state is dropped, and with `parked` dropped no
        // other borrow of it exists; the one returned borrows `self`, so `park` cannot make a
        // second while it lives.
        unsafe { self.conn.as_mut() }
    }

    /// Parks sqlx's worker thread (a no-op when it is parked already) and returns the inline
    /// connection. Parking is one hand-over to the worker thread; it is paid at start-up and
    /// after each statement that went through sqlx, not per transaction.
    async fn park(&mut self) -> Result<&rusqlite::Connection, sqlx::Error> {
        if self.parked.is_none() {
            // SAFETY: no borrow of `conn` is alive (see `sqlx`); this one is stored in
            // `parked`, which is dropped before any other borrow is made and before `conn`
            // itself is freed (`Drop for State`).
            let conn: &'static mut SqliteConnection = unsafe { &mut *self.conn.as_ptr() };
            self.parked = Some(conn.lock_handle().await?);
        }
        self.inline
            .as_ref()
            .ok_or_else(|| sqlx::Error::Protocol("the SQLite writer is closing".into()))
    }
}

impl Drop for State {
    fn drop(&mut self) {
        // rusqlite finalizes its prepared statements while the handle is still ours; then the
        // worker is un-parked and sqlx closes the connection.
        self.inline = None;
        self.parked = None;
        // SAFETY: `conn` came from `Box::into_raw` and no borrow of it is left.
        drop(unsafe { Box::from_raw(self.conn.as_ptr()) });
    }
}

/// The write connection. Cheap to clone.
#[derive(Clone)]
pub struct Writer {
    state: Arc<Mutex<State>>,
    acquire_timeout: Duration,
    busy_timeout: Duration,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("acquire_timeout", &self.acquire_timeout)
            .field("busy_timeout", &self.busy_timeout)
            .finish()
    }
}

impl Writer {
    /// Opens the connection; callers wait at most `acquire_timeout` for their turn on it, and
    /// at most `busy_timeout` for another process to let go of the file's write lock.
    pub async fn open(
        options: &SqliteConnectOptions,
        acquire_timeout: Duration,
        busy_timeout: Duration,
    ) -> Result<Self, sqlx::Error> {
        let mut conn = Box::new(SqliteConnection::connect_with(options).await?);
        let inline = {
            let mut locked = conn.lock_handle().await?;
            // SAFETY: the handle stays open as long as sqlx's connection, which the state
            // owns and drops only after this connection (`Drop for State`); rusqlite's
            // `from_handle` never closes a handle it did not open.
            unsafe { rusqlite::Connection::from_handle(locked.as_raw_handle().as_ptr()) }
                .map_err(inline_error)?
        };
        inline.set_prepared_statement_cache_capacity(PREPARED_STATEMENTS);
        let state = State {
            inline: Some(inline),
            parked: None,
            conn: NonNull::from(Box::leak(conn)),
            open: false,
            closed: false,
        };
        Ok(Self {
            state: Arc::new(Mutex::new(state)),
            acquire_timeout,
            busy_timeout,
        })
    }

    /// The connection outside any transaction, for migrations at start-up.
    pub async fn with_connection<T>(
        &self,
        work: impl AsyncFnOnce(&mut SqliteConnection) -> T,
    ) -> T {
        let mut state = self.state.lock().await;
        work(state.sqlx()).await
    }

    /// Waits for the connection and begins `BEGIN IMMEDIATE` on it: the write lock is taken
    /// up front, so a transaction that reads and then writes never has to upgrade its lock.
    pub async fn begin(&self) -> Result<Held, sqlx::Error> {
        let guard = self.take().await?;
        let mut held = Held {
            guard,
            state: Arc::clone(&self.state),
        };
        held.begin_immediate(self.busy_timeout).await?;
        Ok(held)
    }

    /// [`begin`](Self::begin), then reads the turn counter of thread `id` (`None`: no such
    /// thread; the transaction is open anyway). Every write on a thread starts this way.
    pub async fn begin_on_thread(&self, id: &str) -> Result<(Held, Option<i64>), sqlx::Error> {
        let mut held = self.begin().await?;
        let turn = {
            let conn = held.inline().await?;
            let mut statement = conn
                .prepare_cached("SELECT turn_index FROM threads WHERE id = ?1")
                .map_err(inline_error)?;
            let mut rows = statement.query([id]).map_err(inline_error)?;
            match rows.next().map_err(inline_error)? {
                Some(row) => Some(row.get::<_, i64>(0).map_err(inline_error)?),
                None => None,
            }
        };
        Ok((held, turn))
    }

    /// Waits for the connection, rolls back a transaction its last holder abandoned, and marks
    /// it open for the `BEGIN` the caller sends next.
    async fn take(&self) -> Result<OwnedMutexGuard<State>, sqlx::Error> {
        let taken = tokio::time::timeout(self.acquire_timeout, self.state.clone().lock_owned());
        let mut guard = taken.await.map_err(|_| sqlx::Error::PoolTimedOut)?;
        if guard.closed {
            return Err(sqlx::Error::PoolClosed);
        }
        if guard.open {
            roll_back(&mut guard).await;
        }
        // Marked open before `BEGIN` is sent: if the caller is dropped while it waits for
        // another process's lock, the next taker checks rather than begins inside it.
        guard.open = true;
        Ok(guard)
    }

    /// Lets the transaction in flight (if any) end, rolls back one that was abandoned, and
    /// refuses new ones.
    pub async fn close(&self) {
        let mut guard = self.state.lock().await;
        if guard.open {
            roll_back(&mut guard).await;
        }
        guard.closed = true;
    }
}

/// Ends an abandoned transaction. SQLite may already have ended it itself (some errors roll
/// back the whole transaction), and a `BEGIN` abandoned while it waited never began one.
async fn roll_back(state: &mut State) {
    let outcome = match state.park().await {
        Ok(conn) if conn.is_autocommit() => Ok(()),
        Ok(conn) => conn.execute_batch("ROLLBACK").map_err(inline_error),
        Err(err) => Err(err),
    };
    if let Err(err) = outcome {
        tracing::warn!(error = %err, "rolling back an abandoned SQLite write failed");
    }
    state.open = false;
}

/// The write connection inside a transaction, until [`commit`](Self::commit) or
/// [`rollback`](Self::rollback).
pub struct Held {
    guard: OwnedMutexGuard<State>,
    state: Arc<Mutex<State>>,
}

impl Held {
    /// The connection for statements run inline, on this thread.
    pub async fn inline(&mut self) -> Result<&rusqlite::Connection, sqlx::Error> {
        self.guard.park().await
    }

    /// The connection for a statement sent through sqlx (to its worker thread).
    pub fn conn(&mut self) -> &mut SqliteConnection {
        self.guard.sqlx()
    }

    /// `BEGIN IMMEDIATE` without SQLite's busy wait, which would block this runtime thread:
    /// while another process holds the write lock, sleep and try again until `busy_timeout`.
    async fn begin_immediate(&mut self, busy_timeout: Duration) -> Result<(), sqlx::Error> {
        let deadline = tokio::time::Instant::now() + busy_timeout;
        let mut pause = Duration::from_millis(1);
        loop {
            let conn = self.inline().await?;
            conn.busy_timeout(Duration::ZERO).map_err(inline_error)?;
            let begun = conn.execute_batch("BEGIN IMMEDIATE");
            conn.busy_timeout(busy_timeout).map_err(inline_error)?;
            match begun {
                Ok(()) => return Ok(()),
                Err(err) if is_busy(&err) && tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                Err(err) => {
                    self.guard.open = false;
                    return Err(inline_error(err));
                }
            }
        }
    }

    /// Commits the transaction. Until the commit has answered, the transaction counts as open,
    /// so a failed or abandoned commit is rolled back by whoever comes next.
    pub async fn commit(mut self) -> Result<(), sqlx::Error> {
        let conn = self.inline().await?;
        conn.prepare_cached("COMMIT")
            .and_then(|mut statement| statement.execute([]))
            .map_err(inline_error)?;
        self.guard.open = false;
        Ok(())
    }

    /// Rolls the transaction back.
    pub async fn rollback(mut self) -> Result<(), sqlx::Error> {
        let outcome = match self.inline().await {
            Ok(conn) if conn.is_autocommit() => Ok(()),
            Ok(conn) => conn.execute_batch("ROLLBACK").map_err(inline_error),
            Err(err) => Err(err),
        };
        self.guard.open = false;
        outcome
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if !self.guard.open {
            return;
        }
        // The next `begin` would roll it back anyway; this makes it happen now when nobody
        // is queued, so the file's write lock is not held while the connection sits idle.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let state = Arc::clone(&self.state);
            runtime.spawn(async move {
                let mut guard = state.lock().await;
                if guard.open {
                    roll_back(&mut guard).await;
                }
            });
        }
    }
}

/// Whether SQLite answered "busy": another connection holds the lock asked for.
fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err,
        rusqlite::Error::SqliteFailure(failure, _)
            if failure.code == rusqlite::ErrorCode::DatabaseBusy
    )
}

/// A rusqlite error as the sqlx error the rest of the store handles: SQLite's own errors keep
/// their code and message (so a unique violation is still recognised as one), anything else
/// is a decoding error.
pub(crate) fn inline_error(err: rusqlite::Error) -> sqlx::Error {
    match err {
        rusqlite::Error::SqliteFailure(failure, message) => {
            sqlx::Error::Database(Box::new(InlineDbError {
                message: message.unwrap_or_else(|| failure.to_string()),
                code: failure.extended_code,
            }))
        }
        other => sqlx::Error::Decode(Box::new(other)),
    }
}

/// An error SQLite returned on the inline path, in the shape of sqlx's database errors.
#[derive(Debug)]
struct InlineDbError {
    message: String,
    /// SQLite's extended result code.
    code: i32,
}

impl std::fmt::Display for InlineDbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for InlineDbError {}

impl sqlx::error::DatabaseError for InlineDbError {
    fn message(&self) -> &str {
        &self.message
    }

    fn code(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(self.code.to_string().into())
    }

    fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        self
    }

    fn kind(&self) -> sqlx::error::ErrorKind {
        use rusqlite::ffi;
        match self.code {
            ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
                sqlx::error::ErrorKind::UniqueViolation
            }
            ffi::SQLITE_CONSTRAINT_FOREIGNKEY => sqlx::error::ErrorKind::ForeignKeyViolation,
            ffi::SQLITE_CONSTRAINT_NOTNULL => sqlx::error::ErrorKind::NotNullViolation,
            ffi::SQLITE_CONSTRAINT_CHECK => sqlx::error::ErrorKind::CheckViolation,
            _ => sqlx::error::ErrorKind::Other,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use std::str::FromStr;

    use sqlx::{Executor, Row};

    use super::*;

    async fn writer(dir: &tempfile::TempDir) -> Writer {
        let url = format!("sqlite:{}", dir.path().join("w.db").display());
        let options = SqliteConnectOptions::from_str(&url)
            .unwrap()
            .create_if_missing(true);
        let writer = Writer::open(&options, Duration::from_secs(5), Duration::from_secs(5))
            .await
            .unwrap();
        let mut held = writer.begin().await.unwrap();
        held.conn()
            .execute("CREATE TABLE t (v INTEGER)")
            .await
            .unwrap();
        held.commit().await.unwrap();
        writer
    }

    async fn count(writer: &Writer) -> i64 {
        let mut held = writer.begin().await.unwrap();
        let row = sqlx::query("SELECT COUNT(*) FROM t")
            .fetch_one(held.conn())
            .await
            .unwrap();
        held.rollback().await.unwrap();
        row.get(0)
    }

    #[tokio::test]
    async fn an_abandoned_transaction_is_rolled_back_and_the_next_one_starts_clean() {
        let dir = tempfile::tempdir().unwrap();
        let writer = writer(&dir).await;
        let mut held = writer.begin().await.unwrap();
        held.conn()
            .execute("INSERT INTO t VALUES (1)")
            .await
            .unwrap();
        drop(held);
        assert_eq!(count(&writer).await, 0);
        let mut held = writer.begin().await.unwrap();
        held.conn()
            .execute("INSERT INTO t VALUES (2)")
            .await
            .unwrap();
        held.commit().await.unwrap();
        assert_eq!(count(&writer).await, 1);
    }

    #[tokio::test]
    async fn a_begin_abandoned_half_way_never_leaves_a_transaction_behind() {
        let dir = tempfile::tempdir().unwrap();
        let writer = writer(&dir).await;
        for round in 0..40 {
            // Dropped at its first wait: sometimes before `BEGIN` is sent, sometimes after.
            tokio::select! {
                biased;
                _ = tokio::task::yield_now() => {}
                _ = writer.begin() => {}
            }
            let mut held = writer.begin().await.unwrap();
            sqlx::query("INSERT INTO t VALUES ($1)")
                .bind(round)
                .execute(held.conn())
                .await
                .unwrap();
            held.commit().await.unwrap();
        }
        assert_eq!(count(&writer).await, 40);
    }

    #[tokio::test]
    async fn writers_take_turns_and_a_closed_writer_refuses_new_work() {
        let dir = tempfile::tempdir().unwrap();
        let writer = writer(&dir).await;
        let mut tasks = Vec::new();
        for i in 0..8 {
            let writer = writer.clone();
            tasks.push(tokio::spawn(async move {
                let mut held = writer.begin().await.unwrap();
                sqlx::query("INSERT INTO t VALUES ($1)")
                    .bind(i)
                    .execute(held.conn())
                    .await
                    .unwrap();
                held.commit().await.unwrap();
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(count(&writer).await, 8);
        writer.close().await;
        assert!(matches!(writer.begin().await, Err(sqlx::Error::PoolClosed)));
    }

    #[tokio::test]
    async fn inline_and_sqlx_statements_share_one_transaction() {
        let dir = tempfile::tempdir().unwrap();
        let writer = writer(&dir).await;
        let mut held = writer.begin().await.unwrap();
        for round in 0..3 {
            // Inline, then through sqlx's worker, then inline again: each sees the others.
            held.inline()
                .await
                .unwrap()
                .execute("INSERT INTO t VALUES (?1)", [round])
                .unwrap();
            let row = sqlx::query("SELECT COUNT(*) FROM t")
                .fetch_one(held.conn())
                .await
                .unwrap();
            assert_eq!(row.get::<i64, _>(0), round + 1);
        }
        let seen: i64 = held
            .inline()
            .await
            .unwrap()
            .query_row("SELECT COUNT(*) FROM t", [], |row| row.get(0))
            .unwrap();
        assert_eq!(seen, 3);
        held.rollback().await.unwrap();
        assert_eq!(count(&writer).await, 0);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn waiting_for_another_process_s_lock_never_blocks_the_runtime() {
        let dir = tempfile::tempdir().unwrap();
        let writer = writer(&dir).await;
        let url = format!("sqlite:{}", dir.path().join("w.db").display());
        let mut other = SqliteConnection::connect(&url).await.unwrap();
        other.execute("BEGIN IMMEDIATE").await.unwrap();
        other.execute("INSERT INTO t VALUES (7)").await.unwrap();
        let ticks = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let ticker = {
            let ticks = Arc::clone(&ticks);
            tokio::spawn(async move {
                loop {
                    ticks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
        };
        let waiting = tokio::spawn({
            let writer = writer.clone();
            async move {
                let mut held = writer.begin().await.unwrap();
                held.conn()
                    .execute("INSERT INTO t VALUES (8)")
                    .await
                    .unwrap();
                held.commit().await.unwrap();
            }
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        // On this one-thread runtime the ticker only ran if the waiting begin let it.
        assert!(ticks.load(std::sync::atomic::Ordering::Relaxed) >= 10);
        assert!(!waiting.is_finished());
        other.execute("COMMIT").await.unwrap();
        waiting.await.unwrap();
        ticker.abort();
        assert_eq!(count(&writer).await, 2);
    }
}
