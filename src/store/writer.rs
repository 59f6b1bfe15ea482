//! SQLite's one write connection, held by haico itself instead of by a sqlx pool.
//!
//! Every write transaction on SQLite goes through this one connection, one after another, so
//! whatever it costs to take and give back the connection is paid in series by every write.
//! A sqlx pool adds two round trips to the connection's thread there: `begin_with("BEGIN
//! IMMEDIATE")` checks afterwards that a transaction really started (a handle lock, one more
//! trip), and giving a connection back pings it from a freshly spawned task before the next
//! caller may have it. Here the connection sits behind a fair (first come, first served) mutex,
//! `BEGIN IMMEDIATE` is one statement, and the next caller gets the connection the moment the
//! last one commits.
//!
//! A transaction that is dropped without commit or rollback (a cancelled request, say) is
//! rolled back by whoever takes the connection next, and a task is spawned to do it promptly
//! when nobody is waiting, so another process's writes are not kept waiting for the lock.

use std::{
    ops::{Deref, DerefMut},
    sync::Arc,
    time::Duration,
};

use sqlx::{Connection, Executor, SqliteConnection, sqlite::SqliteConnectOptions};
use tokio::sync::{Mutex, OwnedMutexGuard};

/// The connection and what haico knows about it.
struct State {
    conn: SqliteConnection,
    /// A transaction was begun and not yet ended.
    open: bool,
    /// [`Writer::close`] was called: no new transactions.
    closed: bool,
}

/// The write connection. Cheap to clone.
#[derive(Clone)]
pub struct Writer {
    state: Arc<Mutex<State>>,
    acquire_timeout: Duration,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("acquire_timeout", &self.acquire_timeout)
            .finish()
    }
}

impl Writer {
    /// Opens the connection; callers wait at most `acquire_timeout` for their turn on it.
    pub async fn open(
        options: &SqliteConnectOptions,
        acquire_timeout: Duration,
    ) -> Result<Self, sqlx::Error> {
        let conn = SqliteConnection::connect_with(options).await?;
        Ok(Self {
            state: Arc::new(Mutex::new(State {
                conn,
                open: false,
                closed: false,
            })),
            acquire_timeout,
        })
    }

    /// The connection outside any transaction, for migrations at start-up.
    pub async fn with_connection<T>(
        &self,
        work: impl AsyncFnOnce(&mut SqliteConnection) -> T,
    ) -> T {
        let mut state = self.state.lock().await;
        work(&mut state.conn).await
    }

    /// Waits for the connection and begins `BEGIN IMMEDIATE` on it: the write lock is taken
    /// up front, so a transaction that reads and then writes never has to upgrade its lock.
    pub async fn begin(&self) -> Result<Held, sqlx::Error> {
        let mut guard = self.take().await?;
        guard.conn.execute("BEGIN IMMEDIATE").await?;
        Ok(Held {
            guard,
            state: Arc::clone(&self.state),
        })
    }

    /// [`begin`](Self::begin), and in the same hand-over to the connection's thread reads the
    /// turn counter of thread `id` (`None`: no such thread; the transaction is open anyway).
    /// Every write on a thread starts this way, so it saves one trip per write.
    pub async fn begin_on_thread(&self, id: &str) -> Result<(Held, Option<i64>), sqlx::Error> {
        let mut guard = self.take().await?;
        let row: Option<(i64,)> =
            sqlx::query_as("BEGIN IMMEDIATE; SELECT turn_index FROM threads WHERE id = $1")
                .bind(id)
                .fetch_optional(&mut guard.conn)
                .await?;
        let held = Held {
            guard,
            state: Arc::clone(&self.state),
        };
        Ok((held, row.map(|(turn,)| turn)))
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
        // Marked open before it is sent: if this future is dropped while `BEGIN` is on its
        // way (a cancelled request), the statement still runs on the connection's thread,
        // and the next taker must roll it back rather than begin inside it.
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
/// back the whole transaction), so "no transaction is active" is not worth a warning.
async fn roll_back(state: &mut State) {
    if let Err(err) = state.conn.execute("ROLLBACK").await {
        let text = err.to_string();
        if !text.contains("no transaction is active") {
            tracing::warn!(error = %text, "rolling back an abandoned SQLite write failed");
        }
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
    /// Commits the transaction. Until the commit has answered, the transaction counts as open,
    /// so a failed or abandoned commit is rolled back by whoever comes next.
    pub async fn commit(mut self) -> Result<(), sqlx::Error> {
        self.guard.conn.execute("COMMIT").await?;
        self.guard.open = false;
        Ok(())
    }

    /// Rolls the transaction back.
    pub async fn rollback(mut self) -> Result<(), sqlx::Error> {
        let outcome = self.guard.conn.execute("ROLLBACK").await.map(|_| ());
        self.guard.open = false;
        outcome
    }
}

impl Deref for Held {
    type Target = SqliteConnection;

    fn deref(&self) -> &SqliteConnection {
        &self.guard.conn
    }
}

impl DerefMut for Held {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        &mut self.guard.conn
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use std::str::FromStr;

    use sqlx::Row;

    use super::*;

    async fn writer(dir: &tempfile::TempDir) -> Writer {
        let url = format!("sqlite:{}", dir.path().join("w.db").display());
        let options = SqliteConnectOptions::from_str(&url)
            .unwrap()
            .create_if_missing(true);
        let writer = Writer::open(&options, Duration::from_secs(5))
            .await
            .unwrap();
        let mut held = writer.begin().await.unwrap();
        held.execute("CREATE TABLE t (v INTEGER)").await.unwrap();
        held.commit().await.unwrap();
        writer
    }

    async fn count(writer: &Writer) -> i64 {
        let mut held = writer.begin().await.unwrap();
        let row = sqlx::query("SELECT COUNT(*) FROM t")
            .fetch_one(&mut *held)
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
        held.execute("INSERT INTO t VALUES (1)").await.unwrap();
        drop(held);
        assert_eq!(count(&writer).await, 0);
        let mut held = writer.begin().await.unwrap();
        held.execute("INSERT INTO t VALUES (2)").await.unwrap();
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
                .execute(&mut *held)
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
                    .execute(&mut *held)
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
}
