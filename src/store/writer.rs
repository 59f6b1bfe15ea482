//! SQLite's one write connection: held by haico itself, run on the caller's own thread, and
//! committed for several calls at once.
//!
//! Every write transaction on SQLite goes through this one connection, one after another, so
//! whatever a statement costs besides SQLite's own work is paid in series by every write. The
//! connection is [`Parked`]: its statements run through rusqlite on whichever tokio thread
//! the transaction's task is on, with no hop to sqlx's worker thread. A write statement on a
//! warm cache takes microseconds, far less than the hop it replaces. A statement still sent
//! through sqlx ([`Held::conn`]) un-parks the worker first, and the next inline statement
//! parks it again.
//!
//! **Group commit.** Each call runs inside its own savepoint of a transaction that may hold
//! the work of earlier calls. When a call ends and others are queued for the connection, it
//! releases its savepoint and waits: the next caller carries on in the same transaction, and
//! whoever finds nobody queued behind it (or the group full) commits for all of them and tells
//! each the outcome. A call is answered only once the commit holding its work has returned,
//! so durability is what it was; a call that fails rolls back to its own savepoint, and its
//! neighbours commit. If the queue empties because waiters gave up, the last to leave spawns
//! a task that commits the group.
//!
//! Waiting is never done on a runtime thread: `BEGIN IMMEDIATE` is tried with SQLite's busy
//! wait switched off, and while another process holds the file's write lock the task sleeps
//! asynchronously and tries again, for as long as the busy time-out allows. Inside the
//! transaction the write lock is already held, so no statement waits.
//!
//! The connection sits behind a fair (first come, first served) mutex. A call that is dropped
//! without commit or rollback (a cancelled request, say) is rolled back to its savepoint by
//! whoever takes the connection next, or by a task spawned at drop when nobody is queued.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use sqlx::{SqliteConnection, sqlite::SqliteConnectOptions};
use tokio::sync::{Mutex, OwnedMutexGuard, oneshot};

use super::parked::{Parked, database_error, inline_error, run};

/// The savepoint each call runs in.
const SAVEPOINT: &str = "SAVEPOINT haico_call";
const RELEASE: &str = "RELEASE haico_call";
const ROLLBACK_TO: &str = "ROLLBACK TO haico_call";

/// What the commit holding a waiting call's work came to.
type Outcome = Result<(), Failure>;

/// A failed commit, as each call that shared it is told.
#[derive(Debug, Clone)]
struct Failure {
    message: String,
    code: i32,
}

impl Failure {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: rusqlite::ffi::SQLITE_ABORT,
        }
    }

    fn from_inline(err: &rusqlite::Error) -> Self {
        match err {
            rusqlite::Error::SqliteFailure(failure, message) => Self {
                message: message.clone().unwrap_or_else(|| failure.to_string()),
                code: failure.extended_code,
            },
            other => Self::new(other.to_string()),
        }
    }

    fn into_error(self) -> sqlx::Error {
        database_error(self.message, self.code)
    }
}

/// The connection and what haico knows about it.
struct State {
    conn: Parked,
    /// The current call's savepoint is open: begun, and neither released nor rolled back.
    call_open: bool,
    /// Calls whose work is released into the open transaction, waiting for its commit.
    members: Vec<oneshot::Sender<Outcome>>,
    /// [`Writer::close`] was called: no new transactions.
    closed: bool,
}

impl State {
    /// sqlx's connection, for a statement sent through sqlx (un-parks the worker); `None`
    /// once the writer is closed.
    fn sqlx(&mut self) -> Option<&mut SqliteConnection> {
        self.conn.sqlx()
    }

    /// The inline connection, parking sqlx's worker first if a statement un-parked it.
    async fn park(&mut self) -> Result<&rusqlite::Connection, sqlx::Error> {
        self.conn.park().await
    }

    /// Tells every waiting call that its work is gone with the transaction.
    fn fail_members(&mut self, why: &str) {
        for member in self.members.drain(..) {
            let _ = member.send(Err(Failure::new(why)));
        }
    }

    /// Rolls the current call back to its savepoint, keeping the work of the calls before it.
    async fn undo_call(&mut self) -> Result<(), sqlx::Error> {
        // Parked first: if that fails, the call stays open for the next taker to undo.
        let ended = self.park().await?.is_autocommit();
        self.call_open = false;
        if ended {
            // SQLite ended the whole transaction itself (an I/O error, say), and the work of
            // the calls waiting on it went too.
            self.fail_members(VANISHED);
            return Ok(());
        }
        let conn = self.park().await?;
        run(conn, ROLLBACK_TO)
            .and_then(|()| run(conn, RELEASE))
            .map_err(inline_error)
    }

    /// Commits the open transaction for every call whose work it holds, and tells each one.
    async fn finish(&mut self) -> Result<(), sqlx::Error> {
        if self.park().await?.is_autocommit() {
            self.fail_members(VANISHED);
            return Err(Failure::new(VANISHED).into_error());
        }
        let conn = self.park().await?;
        let outcome = run(conn, "COMMIT").map_err(|err| Failure::from_inline(&err));
        if outcome.is_err()
            && !conn.is_autocommit()
            && let Err(err) = run(conn, "ROLLBACK")
        {
            tracing::warn!(error = %err, "rolling back after a failed SQLite commit failed");
        }
        for member in self.members.drain(..) {
            let _ = member.send(outcome.clone());
        }
        outcome.map_err(Failure::into_error)
    }

    /// With no call running: commits the waiting calls' work unless another caller is queued
    /// to carry the transaction on, and ends a transaction that holds nobody's work. Once the
    /// writer is closed there is nothing left to settle (closing settled it last).
    async fn settle(&mut self, queued: bool) {
        if self.closed {
            return;
        }
        if self.call_open
            && let Err(err) = self.undo_call().await
        {
            tracing::warn!(error = %err, "rolling back an abandoned SQLite write failed");
        }
        if !self.members.is_empty() {
            if !queued {
                // Each waiting call hears the outcome; nobody else is owed it.
                let _ = self.finish().await;
            }
            return;
        }
        match self.park().await {
            Ok(conn) if !conn.is_autocommit() => {
                if let Err(err) = run(conn, "ROLLBACK") {
                    tracing::warn!(error = %err, "ending an empty SQLite transaction failed");
                }
            }
            Ok(_) => {}
            Err(err) => tracing::warn!(error = %err, "parking the SQLite writer failed"),
        }
    }
}

/// Why a waiting call's work was lost without a failed commit of its own.
const VANISHED: &str = "SQLite rolled back the transaction this write shared with other calls \
    (after an error in one of them); nothing of it was saved, so it can be sent again";

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
    pub async fn open(
        options: &SqliteConnectOptions,
        acquire_timeout: Duration,
        busy_timeout: Duration,
        group: usize,
    ) -> Result<Self, sqlx::Error> {
        let state = State {
            conn: Parked::open(options).await?,
            call_open: false,
            members: Vec::new(),
            closed: false,
        };
        Ok(Self {
            state: Arc::new(Mutex::new(state)),
            queued: Arc::new(AtomicUsize::new(0)),
            acquire_timeout,
            busy_timeout,
            group: group.max(1),
        })
    }

    /// The connection outside any transaction, for migrations at start-up.
    pub async fn with_connection<T>(
        &self,
        work: impl AsyncFnOnce(&mut SqliteConnection) -> T,
    ) -> Result<T, sqlx::Error> {
        let mut state = self.state.lock().await;
        state.settle(false).await;
        match state.sqlx() {
            Some(conn) => Ok(work(conn).await),
            None => Err(sqlx::Error::PoolClosed),
        }
    }

    /// Waits for the connection and starts a call on it: in the transaction earlier calls
    /// left open for their group, or in a new one begun with `BEGIN IMMEDIATE` (the write
    /// lock is taken up front, so a call that reads and then writes never has to upgrade it).
    pub async fn begin(&self) -> Result<Held, sqlx::Error> {
        let guard = self.take().await?;
        let mut held = Held {
            guard,
            writer: self.clone(),
            settled: false,
        };
        held.start().await?;
        Ok(held)
    }

    /// [`begin`](Self::begin), then reads the turn counter of thread `id` (`None`: no such
    /// thread; the call is open anyway). Every write on a thread starts this way.
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

    /// Waits for the connection and rolls back a call its last holder abandoned.
    async fn take(&self) -> Result<OwnedMutexGuard<State>, sqlx::Error> {
        let mut place = InQueue::join(self);
        let taken = tokio::time::timeout(self.acquire_timeout, self.state.clone().lock_owned())
            .await
            .map_err(|_| sqlx::Error::PoolTimedOut);
        place.arrived = taken.is_ok();
        drop(place);
        let mut guard = taken?;
        if guard.closed {
            return Err(sqlx::Error::PoolClosed);
        }
        if guard.call_open
            && let Err(err) = guard.undo_call().await
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
                guard.settle(queued).await;
            });
        }
    }

    /// Lets the call in flight (if any) end, rolls back one that was abandoned, commits the
    /// calls waiting for a commit, refuses new ones and closes the connection.
    pub async fn close(&self) {
        let mut guard = self.state.lock().await;
        guard.settle(false).await;
        guard.closed = true;
        if let Err(err) = guard.conn.close().await {
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
    /// The connection for statements run inline, on this thread.
    pub async fn inline(&mut self) -> Result<&rusqlite::Connection, sqlx::Error> {
        self.guard.park().await
    }

    /// The connection for a statement sent through sqlx (to its worker thread); `None` only
    /// if the writer was closed under it, which [`Writer::close`] waits to prevent.
    pub fn conn(&mut self) -> Option<&mut SqliteConnection> {
        self.guard.sqlx()
    }

    /// Opens the call's savepoint, beginning the transaction first when no group holds one.
    async fn start(&mut self) -> Result<(), sqlx::Error> {
        if self.guard.park().await?.is_autocommit() {
            if !self.guard.members.is_empty() {
                self.guard.fail_members(VANISHED);
            }
            self.begin_immediate().await?;
        }
        let conn = self.inline().await?;
        run(conn, SAVEPOINT).map_err(inline_error)?;
        self.guard.call_open = true;
        Ok(())
    }

    /// `BEGIN IMMEDIATE` without SQLite's busy wait, which would block this runtime thread:
    /// while another process holds the write lock, sleep and try again until the busy
    /// time-out.
    async fn begin_immediate(&mut self) -> Result<(), sqlx::Error> {
        let busy_timeout = self.writer.busy_timeout;
        let deadline = tokio::time::Instant::now() + busy_timeout;
        let mut pause = Duration::from_millis(1);
        loop {
            let conn = self.inline().await?;
            conn.busy_timeout(Duration::ZERO).map_err(inline_error)?;
            let begun = run(conn, "BEGIN IMMEDIATE");
            conn.busy_timeout(busy_timeout).map_err(inline_error)?;
            match begun {
                Ok(()) => return Ok(()),
                Err(err) if is_busy(&err) && tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                Err(err) => return Err(inline_error(err)),
            }
        }
    }

    /// Makes the call's writes durable. When other callers are queued, its work joins their
    /// commit: the connection passes on at once and this returns when that commit has.
    pub async fn commit(mut self) -> Result<(), sqlx::Error> {
        let conn = self.inline().await?;
        if conn.is_autocommit() {
            // SQLite ended the transaction itself after an error inside the call.
            self.guard.call_open = false;
            self.guard.fail_members(VANISHED);
            self.settled = true;
            return Err(Failure::new(VANISHED).into_error());
        }
        run(conn, RELEASE).map_err(inline_error)?;
        self.guard.call_open = false;
        let queued = self.writer.queued.load(Ordering::Acquire) > 0;
        if queued && self.guard.members.len() + 1 < self.writer.group {
            let (tell, outcome) = oneshot::channel();
            self.guard.members.push(tell);
            self.settled = true;
            // The next caller carries the transaction on; whoever ends the group commits it.
            drop(self);
            return match outcome.await {
                Ok(outcome) => outcome.map_err(Failure::into_error),
                Err(_) => Err(sqlx::Error::PoolClosed),
            };
        }
        let outcome = self.guard.finish().await;
        self.settled = true;
        outcome
    }

    /// Discards the call's writes; the work of calls before it in the transaction stays.
    pub async fn rollback(mut self) -> Result<(), sqlx::Error> {
        let outcome = if self.guard.call_open {
            self.guard.undo_call().await
        } else {
            Ok(())
        };
        let queued = self.writer.queued.load(Ordering::Acquire) > 0;
        self.guard.settle(queued).await;
        self.settled = true;
        outcome
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        // A queued caller rolls the call back when it takes the connection; with nobody
        // queued this does it now, so the file's write lock is not held while the
        // connection sits idle, and calls waiting for a commit get one.
        if self.writer.queued.load(Ordering::Acquire) == 0 {
            self.writer.spawn_settle();
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use std::str::FromStr;

    use sqlx::{Connection, Executor, Row};

    use super::*;

    async fn writer(dir: &tempfile::TempDir) -> Writer {
        grouped(dir, 1).await
    }

    async fn grouped(dir: &tempfile::TempDir, group: usize) -> Writer {
        let url = format!("sqlite:{}", dir.path().join("w.db").display());
        let options = SqliteConnectOptions::from_str(&url)
            .unwrap()
            .create_if_missing(true);
        let writer = Writer::open(
            &options,
            Duration::from_secs(5),
            Duration::from_secs(5),
            group,
        )
        .await
        .unwrap();
        let mut held = writer.begin().await.unwrap();
        held.conn()
            .unwrap()
            .execute("CREATE TABLE t (v INTEGER)")
            .await
            .unwrap();
        held.commit().await.unwrap();
        writer
    }

    async fn count(writer: &Writer) -> i64 {
        let mut held = writer.begin().await.unwrap();
        let row = sqlx::query("SELECT COUNT(*) FROM t")
            .fetch_one(held.conn().unwrap())
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
            .unwrap()
            .execute("INSERT INTO t VALUES (1)")
            .await
            .unwrap();
        drop(held);
        assert_eq!(count(&writer).await, 0);
        let mut held = writer.begin().await.unwrap();
        held.conn()
            .unwrap()
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
                .execute(held.conn().unwrap())
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
                    .execute(held.conn().unwrap())
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
        assert!(matches!(
            writer.with_connection(async |_| ()).await,
            Err(sqlx::Error::PoolClosed)
        ));
        // Closing again finds nothing to settle and nothing to close.
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
                .fetch_one(held.conn().unwrap())
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
                    .unwrap()
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

    /// Rows another connection sees: only what was committed.
    async fn committed(dir: &tempfile::TempDir) -> Vec<i64> {
        let url = format!("sqlite:{}", dir.path().join("w.db").display());
        let mut other = SqliteConnection::connect(&url).await.unwrap();
        sqlx::query_scalar("SELECT v FROM t ORDER BY v")
            .fetch_all(&mut other)
            .await
            .unwrap()
    }

    async fn until_queued(writer: &Writer, n: usize) {
        while writer.queued.load(Ordering::Acquire) < n {
            tokio::task::yield_now().await;
        }
    }

    async fn insert(held: &mut Held, v: i64) {
        held.inline()
            .await
            .unwrap()
            .execute("INSERT INTO t VALUES (?1)", [v])
            .unwrap();
    }

    /// A first call that wrote 1 and is committing while a second call is queued behind it:
    /// the first's commit and the second's begin, each running as a task of its own.
    async fn committing_with_one_queued(
        writer: &Writer,
    ) -> (
        tokio::task::JoinHandle<Result<(), sqlx::Error>>,
        tokio::task::JoinHandle<Result<Held, sqlx::Error>>,
    ) {
        let mut first = writer.begin().await.unwrap();
        insert(&mut first, 1).await;
        let second = tokio::spawn({
            let writer = writer.clone();
            async move { writer.begin().await }
        });
        until_queued(writer, 1).await;
        (tokio::spawn(first.commit()), second)
    }

    #[tokio::test]
    async fn a_call_with_others_queued_is_answered_only_when_their_shared_commit_is_made() {
        let dir = tempfile::tempdir().unwrap();
        let writer = grouped(&dir, 8).await;
        let (first_commit, second) = committing_with_one_queued(&writer).await;
        let mut second = second.await.unwrap().unwrap();
        // The second call runs in the transaction the first left open: its row is there for
        // it, and nobody else sees either row yet, so the first has not been answered.
        let seen: i64 = second
            .inline()
            .await
            .unwrap()
            .query_row("SELECT COUNT(*) FROM t", [], |row| row.get(0))
            .unwrap();
        assert_eq!(seen, 1);
        assert!(committed(&dir).await.is_empty());
        assert!(!first_commit.is_finished());
        insert(&mut second, 2).await;
        second.commit().await.unwrap();
        first_commit.await.unwrap().unwrap();
        assert_eq!(committed(&dir).await, vec![1, 2]);
    }

    #[tokio::test]
    async fn a_failed_call_rolls_back_alone_and_its_neighbours_commit() {
        let dir = tempfile::tempdir().unwrap();
        let writer = grouped(&dir, 16).await;
        let mut tasks = Vec::new();
        for v in 0..24_i64 {
            let writer = writer.clone();
            tasks.push(tokio::spawn(async move {
                let mut held = writer.begin().await.unwrap();
                insert(&mut held, v).await;
                if v % 3 == 0 {
                    held.rollback().await.unwrap();
                } else if v % 3 == 1 {
                    // Abandoned mid-call: dropped, as a cancelled request is.
                    drop(held);
                } else {
                    held.commit().await.unwrap();
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        // Let the clean-up an abandoned last call spawns run.
        let _ = writer.begin().await.unwrap().rollback().await;
        let expected: Vec<i64> = (0..24).filter(|v| v % 3 == 2).collect();
        assert_eq!(committed(&dir).await, expected);
    }

    #[tokio::test]
    async fn calls_waiting_for_a_commit_get_it_when_the_queue_gives_up() {
        let dir = tempfile::tempdir().unwrap();
        let writer = grouped(&dir, 8).await;
        let (first_commit, gives_up) = committing_with_one_queued(&writer).await;
        // The call behind it never takes the connection: its request is cancelled.
        tokio::task::yield_now().await;
        gives_up.abort();
        // (Had it taken the connection before the abort, dropping it gives the call up.)
        drop(gives_up);
        let answered = tokio::time::timeout(Duration::from_secs(5), first_commit).await;
        answered.unwrap().unwrap().unwrap();
        assert_eq!(committed(&dir).await, vec![1]);
    }

    #[tokio::test]
    async fn closing_commits_the_calls_waiting_for_a_commit() {
        let dir = tempfile::tempdir().unwrap();
        let writer = grouped(&dir, 8).await;
        let (first_commit, second) = committing_with_one_queued(&writer).await;
        drop(second.await.unwrap().unwrap());
        writer.close().await;
        first_commit.await.unwrap().unwrap();
        assert_eq!(committed(&dir).await, vec![1]);
    }
}
