//! SQLite through a synchronous driver (rusqlite, the same SQLite library sqlx links): one
//! writer thread owns the write connection and runs each call's whole transaction in one go,
//! reader threads own a read connection each. A caller hands its call over once and gets the
//! answer back once, instead of once per statement: this is the engine's own limit for the
//! workload, the denominator the product is measured against.
//!
//! With `group > 1` the writer also commits several queued calls together: each runs inside
//! its own savepoint (a failed call rolls back to it and its neighbours still commit), and
//! one `COMMIT` ends the group. Every caller is answered only after that commit.

use std::{
    path::PathBuf,
    sync::{Arc, Mutex, mpsc},
    thread,
};

use anyhow::{Context, Result, anyhow};
use rusqlite::{Connection, OpenFlags, types::ValueRef};
use tokio::sync::oneshot;

use crate::ops::{Exec, Learned, P};

/// Work for a connection thread: it runs on that thread with the thread's connection.
type Job = Box<dyn FnOnce(&Connection) -> Result<Learned> + Send>;

/// A job and where to send its outcome.
struct Queued {
    job: Job,
    done: oneshot::Sender<Result<Learned>>,
}

/// The writer and reader threads.
#[derive(Clone)]
pub struct SyncDb {
    writer: mpsc::Sender<Queued>,
    readers: mpsc::Sender<Queued>,
}

fn open(path: &PathBuf, read_only: bool) -> Result<Connection> {
    let flags = if read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
    };
    let conn = Connection::open_with_flags(path, flags)
        .with_context(|| format!("opening {}", path.display()))?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; \
         PRAGMA temp_store = memory; PRAGMA cache_size = -32000;",
    )?;
    conn.set_prepared_statement_cache_capacity(128);
    Ok(conn)
}

impl SyncDb {
    /// Opens the SQLite file at `path` (already migrated) with `readers` reader threads and
    /// a writer that commits up to `group` queued calls together; with `checkpoint_thread`
    /// the writer never checkpoints and a thread of its own does, every 100 ms.
    pub fn open(
        path: PathBuf,
        readers: usize,
        group: usize,
        checkpoint_thread: bool,
    ) -> Result<Self> {
        let (writer, writer_queue) = mpsc::channel::<Queued>();
        let conn = open(&path, false)?;
        if checkpoint_thread {
            conn.execute_batch("PRAGMA wal_autocheckpoint = 0")?;
            let checkpointer = open(&path, false)?;
            checkpointer.busy_timeout(std::time::Duration::ZERO)?;
            thread::Builder::new()
                .name("sqlite-checkpoint".into())
                .spawn(move || {
                    loop {
                        thread::sleep(std::time::Duration::from_millis(100));
                        // Busy (another checkpoint running) is tried again next time.
                        let _ = checkpointer.query_row(
                            "PRAGMA wal_checkpoint(PASSIVE)",
                            [],
                            |_| Ok(()),
                        );
                    }
                })?;
        }
        thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || write_loop(&conn, &writer_queue, group.max(1)))?;
        let (readers_tx, readers_queue) = mpsc::channel::<Queued>();
        let shared = Arc::new(Mutex::new(readers_queue));
        for i in 0..readers.max(1) {
            let conn = open(&path, true)?;
            let queue = Arc::clone(&shared);
            thread::Builder::new()
                .name(format!("sqlite-reader-{i}"))
                .spawn(move || read_loop(&conn, &queue))?;
        }
        Ok(Self {
            writer,
            readers: readers_tx,
        })
    }

    /// Runs `job` in a write transaction (`write`) or, for a read, outside any transaction, on
    /// a connection thread.
    pub async fn run(
        &self,
        write: bool,
        job: impl FnOnce(&Connection) -> Result<Learned> + Send + 'static,
    ) -> Result<Learned> {
        let (done, answer) = oneshot::channel();
        let queue = if write { &self.writer } else { &self.readers };
        queue
            .send(Queued {
                job: Box::new(job),
                done,
            })
            .map_err(|_| anyhow!("the SQLite thread stopped"))?;
        answer
            .await
            .map_err(|_| anyhow!("the SQLite thread dropped a call"))?
    }
}

fn read_loop(conn: &Connection, queue: &Mutex<mpsc::Receiver<Queued>>) {
    loop {
        let next = match queue.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => return,
        };
        let Ok(Queued { job, done }) = next else {
            return;
        };
        // Outside a transaction, as the server's read-only tools read.
        let _ = done.send(job(conn));
    }
}

fn write_loop(conn: &Connection, queue: &mpsc::Receiver<Queued>, group: usize) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < group {
            match queue.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        if let Err(err) = conn.execute_batch("BEGIN IMMEDIATE") {
            for queued in batch {
                let _ = queued.done.send(Err(anyhow!("BEGIN failed: {err}")));
            }
            continue;
        }
        let mut outcomes = Vec::with_capacity(batch.len());
        let mut waiting = Vec::with_capacity(batch.len());
        let grouped = batch.len() > 1;
        for Queued { job, done } in batch {
            let outcome = if grouped {
                in_savepoint(conn, job)
            } else {
                job(conn)
            };
            outcomes.push(outcome);
            waiting.push(done);
        }
        // Alone, a failed call rolls the whole transaction back; grouped, it already rolled
        // back to its savepoint and the others commit.
        let alone_failed = !grouped && outcomes.first().is_some_and(Result::is_err);
        let end = if alone_failed { "ROLLBACK" } else { "COMMIT" };
        let ended = conn.execute_batch(end);
        for (done, outcome) in waiting.into_iter().zip(outcomes) {
            let outcome = match &ended {
                Ok(()) => outcome,
                Err(err) => Err(anyhow!("{end} failed: {err}")),
            };
            let _ = done.send(outcome);
        }
    }
}

fn in_savepoint(conn: &Connection, job: Job) -> Result<Learned> {
    conn.execute_batch("SAVEPOINT call")?;
    match job(conn) {
        Ok(learned) => {
            conn.execute_batch("RELEASE call")?;
            Ok(learned)
        }
        Err(err) => {
            conn.execute_batch("ROLLBACK TO call; RELEASE call")?;
            Err(err)
        }
    }
}

/// A connection thread's connection, inside its transaction.
pub struct SyncTx<'a>(pub &'a Connection);

impl Exec for SyncTx<'_> {
    fn postgres(&self) -> bool {
        false
    }

    async fn rows(&mut self, sql: &str, params: &[P]) -> Result<Vec<[i64; 2]>> {
        let mut out = Vec::new();
        // sqlx runs a batch statement by statement; rusqlite prepares one at a time.
        for one in sql.split("; ") {
            let mut stmt = self.0.prepare_cached(one)?;
            for index in 1..=stmt.parameter_count() {
                let Some(name) = stmt.parameter_name(index) else {
                    continue;
                };
                let number: usize = name.trim_start_matches('$').parse()?;
                let param = params
                    .get(number - 1)
                    .with_context(|| format!("no parameter {name}"))?;
                match param {
                    P::Int(v) => stmt.raw_bind_parameter(index, v)?,
                    P::Text(v) => stmt.raw_bind_parameter(index, v)?,
                    P::Bool(v) => stmt.raw_bind_parameter(index, v)?,
                    P::Time(v) => stmt.raw_bind_parameter(index, v.to_rfc3339())?,
                    P::NullInt | P::NullText | P::NullBool => {
                        stmt.raw_bind_parameter(index, rusqlite::types::Null)?
                    }
                }
            }
            let columns = stmt.column_count();
            let mut rows = stmt.raw_query();
            while let Some(row) = rows.next()? {
                let mut ints = [0i64; 2];
                for column in 0..columns {
                    // Every column is read, as a driver decoding the row would.
                    let value = row.get_ref(column)?;
                    if let (ValueRef::Integer(v), Some(slot)) = (value, ints.get_mut(column)) {
                        *slot = v;
                    }
                }
                out.push(ints);
            }
        }
        Ok(out)
    }
}
