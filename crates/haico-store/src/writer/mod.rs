//! SQLite's one write connection: held by haico itself, run on the caller's own thread, and
//! committed for several calls at once.
//!
//! Every write transaction on SQLite goes through this one connection, one after another, so
//! whatever a statement costs besides SQLite's own work is paid in series by every write. The
//! connection is a plain [`rusqlite::Connection`] owned here: its statements run on whichever
//! tokio thread the transaction's task is on, with no hand-over to another thread. A write
//! statement on a warm cache takes microseconds, far less than such a hand-over.
//!
//! **Group commit** (state in `group.rs`). Each call runs inside its own savepoint of a
//! transaction that may hold the work of earlier calls. When a call ends and others are
//! queued for the connection, it releases its savepoint and waits: the next caller carries on
//! in the same transaction, and whoever finds nobody queued behind it (or the group full)
//! commits for all of them and tells each the outcome. A call is answered only once the
//! commit holding its work has returned, so durability is what it was; a call that fails
//! rolls back to its own savepoint, and its neighbours commit. If the queue empties because
//! waiters gave up, the last to leave spawns a task that commits the group.
//!
//! Waiting is never done on a runtime thread: `BEGIN IMMEDIATE` is tried with SQLite's busy
//! wait switched off, and while another process holds the file's write lock the task sleeps
//! asynchronously and tries again, for as long as the busy time-out allows. Inside the
//! transaction the write lock is already held, so no statement waits.
//!
//! The connection sits behind a fair (first come, first served) mutex. A call that is dropped
//! without commit or rollback (a cancelled request, say) is rolled back to its savepoint as
//! it is dropped.

mod group;
#[cfg(test)]
mod tests;

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use rusqlite::Connection;
use tokio::sync::{Mutex, OwnedMutexGuard, oneshot};

use super::sqlite::{self, SqliteError, SqliteOptions, is_busy, run};
use group::{RELEASE, SAVEPOINT, State};

/// The write connection. Cheap to clone.
#[derive(Clone)]
pub struct Writer {
    state: Arc<Mutex<State>>,
    /// Callers queued for the connection in [`begin`](Self::begin).
    queued: Arc<AtomicUsize>,
    acquire_timeout: Duration,
    busy_timeout: Duration,
    /// Calls committed together at most (1: every call commits on its own).
    group: usize,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("acquire_timeout", &self.acquire_timeout)
            .field("busy_timeout", &self.busy_timeout)
            .field("group", &self.group)
            .finish()
    }
}

/// A caller's place in the queue for the connection, counted in [`Writer::queued`] so that a
/// call ending can tell whether somebody will carry its transaction on.
struct InQueue {
    writer: Writer,
    arrived: bool,
}

impl InQueue {
    fn join(writer: &Writer) -> Self {
        writer.queued.fetch_add(1, Ordering::AcqRel);
        Self {
            writer: writer.clone(),
            arrived: false,
        }
    }
}

impl Drop for InQueue {
    fn drop(&mut self) {
        let left = self.writer.queued.fetch_sub(1, Ordering::AcqRel) - 1;
        if !self.arrived && left == 0 {
            // The last waiter gave up: calls may be waiting for a commit nobody would make.
            self.writer.spawn_settle();
        }
    }
}

impl Writer {
    /// Opens the connection; callers wait at most `acquire_timeout` for their turn on it, and
    /// at most `busy_timeout` for another process to let go of the file's write lock; at most
    /// `group` calls commit together (1: each on its own).
    pub(crate) async fn open(
        options: &SqliteOptions,
        acquire_timeout: Duration,
        busy_timeout: Duration,
        group: usize,
    ) -> Result<Self, SqliteError> {
        let conn = sqlite::open(&options.clone().busy_timeout(busy_timeout)).await?;
        Ok(Self {
            state: Arc::new(Mutex::new(State::new(conn))),
            queued: Arc::new(AtomicUsize::new(0)),
            acquire_timeout,
            busy_timeout,
            group: group.max(1),
        })
    }

    /// Blocking work on the connection outside any transaction (the migrations at start-up),
    /// run on a blocking thread while every caller waits.
    pub(crate) async fn with_connection<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> T + Send + 'static,
    ) -> Result<T, SqliteError> {
        let mut state = self.state.lock().await;
        state.settle(false);
        let conn = state.conn.take().ok_or(SqliteError::Closed)?;
        // The connection comes back with the answer; if the work panicked, it is gone and the
        // writer is closed.
        let (conn, answer) = sqlite::off_runtime(move || {
            let answer = work(&conn);
            Ok((conn, answer))
        })
        .await?;
        state.conn = Some(conn);
        Ok(answer)
    }

    /// Waits for the connection and starts a call on it: in the transaction earlier calls
    /// left open for their group, or in a new one begun with `BEGIN IMMEDIATE` (the write
    /// lock is taken up front, so a call that reads and then writes never has to upgrade it).
    pub async fn begin(&self) -> Result<Held, SqliteError> {
        let guard = self.take().await?;
        let mut held = Held {
            guard,
            writer: self.clone(),
            settled: false,
        };
        held.start().await?;
        Ok(held)
    }

    /// [`begin`](Self::begin), then reads the turn counter and the document mode of thread
    /// `id` (`None`: no such thread; the call is open anyway). Every write on a thread starts this way.
    pub async fn begin_on_thread(
        &self,
        id: &str,
    ) -> Result<(Held, Option<(i64, String)>), SqliteError> {
        let held = self.begin().await?;
        let turn = {
            let conn = held.inline()?;
            let mut statement =
                conn.prepare_cached("SELECT turn_index, document_mode FROM threads WHERE id = ?1")?;
            let mut rows = statement.query([id])?;
            match rows.next()? {
                Some(row) => Some((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)),
                None => None,
            }
        };
        Ok((held, turn))
    }

    /// Waits for the connection and rolls back a call its last holder abandoned.
    async fn take(&self) -> Result<OwnedMutexGuard<State>, SqliteError> {
        let mut place = InQueue::join(self);
        let taken = tokio::time::timeout(self.acquire_timeout, self.state.clone().lock_owned())
            .await
            .map_err(|_| SqliteError::TimedOut(self.acquire_timeout));
        place.arrived = taken.is_ok();
        drop(place);
        let mut guard = taken?;
        if guard.conn.is_none() {
            return Err(SqliteError::Closed);
        }
        if guard.call_open
            && let Err(err) = guard.undo_call()
        {
            tracing::warn!(error = %err, "rolling back an abandoned SQLite write failed");
        }
        Ok(guard)
    }

    /// Settles what the last holder left (see [`State::settle`]) from a task of its own, when
    /// there is a runtime to run one.
    fn spawn_settle(&self) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let writer = self.clone();
            runtime.spawn(async move {
                let mut guard = writer.state.clone().lock_owned().await;
                let queued = writer.queued.load(Ordering::Acquire) > 0;
                guard.settle(queued);
            });
        }
    }

    /// Lets the call in flight (if any) end, rolls back one that was abandoned, commits the
    /// calls waiting for a commit, refuses new ones and closes the connection, waiting until
    /// SQLite has let go of it: the last connection of a database to close copies the WAL
    /// back and removes the WAL and shared-memory files.
    pub async fn close(&self) {
        let mut guard = self.state.lock().await;
        guard.settle(false);
        if let Some(conn) = guard.conn.take()
            && let Err(err) = sqlite::close(conn).await
        {
            tracing::warn!(error = %err, "closing the SQLite writer failed");
        }
    }
}

/// The write connection inside a call, until [`commit`](Self::commit) or
/// [`rollback`](Self::rollback).
pub struct Held {
    guard: OwnedMutexGuard<State>,
    writer: Writer,
    /// The call ended cleanly (committed, joined a group or rolled back); dropping it then
    /// leaves nothing to clean up.
    settled: bool,
}

impl Held {
    /// The connection, for statements run on this thread inside the call.
    pub fn inline(&self) -> Result<&Connection, SqliteError> {
        self.guard.conn()
    }

    /// Opens the call's savepoint, beginning the transaction first when no group holds one.
    async fn start(&mut self) -> Result<(), SqliteError> {
        if self.inline()?.is_autocommit() {
            if !self.guard.members.is_empty() {
                self.guard.fail_members();
            }
            self.begin_immediate().await?;
        }
        run(self.inline()?, SAVEPOINT)?;
        self.guard.call_open = true;
        Ok(())
    }

    /// `BEGIN IMMEDIATE` without SQLite's busy wait, which would block this runtime thread:
    /// while another process holds the write lock, sleep and try again until the busy
    /// time-out.
    async fn begin_immediate(&mut self) -> Result<(), SqliteError> {
        let busy_timeout = self.writer.busy_timeout;
        let deadline = tokio::time::Instant::now() + busy_timeout;
        let mut pause = Duration::from_millis(1);
        loop {
            let conn = self.inline()?;
            conn.busy_timeout(Duration::ZERO)?;
            let begun = run(conn, "BEGIN IMMEDIATE");
            conn.busy_timeout(busy_timeout)?;
            match begun {
                Ok(()) => return Ok(()),
                Err(err) if is_busy(&err) && tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                Err(err) => return Err(err.into()),
            }
        }
    }

    /// Makes the call's writes durable. When other callers are queued, its work joins their
    /// commit: the connection passes on at once and this returns when that commit has.
    pub async fn commit(mut self) -> Result<(), SqliteError> {
        if self.inline()?.is_autocommit() {
            // SQLite ended the transaction itself after an error inside the call.
            self.guard.call_open = false;
            self.guard.fail_members();
            self.settled = true;
            return Err(SqliteError::SharedRollback);
        }
        run(self.inline()?, RELEASE)?;
        self.guard.call_open = false;
        let queued = self.writer.queued.load(Ordering::Acquire) > 0;
        if queued && self.guard.members.len() + 1 < self.writer.group {
            let (tell, outcome) = oneshot::channel();
            self.guard.members.push(tell);
            self.settled = true;
            // The next caller carries the transaction on; whoever ends the group commits it.
            drop(self);
            return match outcome.await {
                Ok(outcome) => outcome.map_err(group::Failure::into_error),
                Err(_) => Err(SqliteError::Closed),
            };
        }
        let outcome = self.guard.finish();
        self.settled = true;
        outcome
    }

    /// Discards the call's writes; the work of calls before it in the transaction stays.
    pub async fn rollback(mut self) -> Result<(), SqliteError> {
        let outcome = if self.guard.call_open {
            self.guard.undo_call()
        } else {
            Ok(())
        };
        let queued = self.writer.queued.load(Ordering::Acquire) > 0;
        self.guard.settle(queued);
        self.settled = true;
        outcome
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        // Rolled back to its savepoint here and now (statements on this connection never
        // wait), so the file's write lock is not held while the connection sits idle, and
        // calls waiting for a commit get one unless a queued caller carries the group on.
        let queued = self.writer.queued.load(Ordering::Acquire) > 0;
        self.guard.settle(queued);
    }
}
