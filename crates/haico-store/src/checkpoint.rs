//! SQLite's WAL checkpoints, moved off the write path onto a thread of their own.
//!
//! Left to itself, SQLite checkpoints inside a `COMMIT`: the connection whose commit takes the
//! WAL past 1,000 pages copies them all back into the database file and syncs it, before that
//! commit returns. On haico's one writer that stalls every queued write for the length of the
//! copy and the syncs, and it blocks the tokio worker the commit runs on; it showed as the
//! tail of the write latency under load. So the writer's connection has
//! automatic checkpoints switched off, and this thread runs a `PASSIVE` checkpoint every
//! [`INTERVAL`] on a connection of its own. A passive checkpoint never waits for the writer
//! or the readers and never blocks them; it copies what no reader still needs, and SQLite
//! starts the WAL over from its beginning once everything in it has been copied. What a
//! commit promises does not change: a committed transaction is in the WAL before the commit
//! returns, checkpointed or not.

use std::{
    path::Path,
    sync::mpsc::{self, RecvTimeoutError},
    thread::JoinHandle,
    time::Duration,
};

use rusqlite::OpenFlags;

/// How often the thread checkpoints. A checkpoint with nothing new to copy costs a few
/// microseconds; one that copies syncs the database file once.
const INTERVAL: Duration = Duration::from_millis(100);

/// The checkpointing thread; stopped (after one last checkpoint) by [`stop`](Self::stop) or
/// when dropped.
#[derive(Debug)]
pub struct Checkpointer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts checkpointing the WAL of the database file at `path`.
    pub fn start(path: &Path) -> Result<Self, rusqlite::Error> {
        let conn = rusqlite::Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // Never wait for a lock: a checkpoint that finds one taken (another process
        // checkpointing) is simply tried again next time.
        conn.busy_timeout(Duration::ZERO)?;
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("haico-sqlite-checkpoint".to_string())
            .spawn(move || {
                loop {
                    let last = match stopped.recv_timeout(INTERVAL) {
                        Err(RecvTimeoutError::Timeout) => false,
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
                    };
                    if let Err(err) = checkpoint(&conn) {
                        tracing::warn!(error = %err, "checkpointing the SQLite WAL failed");
                    }
                    if last {
                        return;
                    }
                }
            })
            .map_err(|err| {
                rusqlite::Error::ToSqlConversionFailure(Box::new(std::io::Error::other(format!(
                    "starting the checkpoint thread: {err}"
                ))))
            })?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Runs a last checkpoint and ends the thread.
    pub fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One passive checkpoint. SQLite answers "busy" in its first column when another
/// checkpoint was running; that is not an error here.
fn checkpoint(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    match conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
        Err(rusqlite::Error::SqliteFailure(failure, _))
            if failure.code == rusqlite::ErrorCode::DatabaseBusy =>
        {
            Ok(())
        }
        other => other,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_copies_the_wal_back_while_the_writer_never_checkpoints() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db");
        let writer = rusqlite::Connection::open(&path).unwrap();
        writer
            .execute_batch(
                "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; \
                 CREATE TABLE t (v TEXT);",
            )
            .unwrap();
        let db_file = || std::fs::metadata(&path).unwrap().len();
        let mut checkpointer = Checkpointer::start(&path).unwrap();
        for i in 0..200 {
            writer
                .execute(
                    "INSERT INTO t VALUES (?1)",
                    [format!("row {i} {}", "x".repeat(500))],
                )
                .unwrap();
        }
        // The rows are in the WAL; the database file itself grows only when a checkpoint
        // copies them there, and the writer never checkpoints (its automatic ones are off).
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while db_file() < 100_000 {
            assert!(
                std::time::Instant::now() < deadline,
                "the database file is still {} bytes",
                db_file()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        checkpointer.stop();
        let count: i64 = rusqlite::Connection::open(&path)
            .unwrap()
            .query_row("SELECT COUNT(*) FROM t", [], |row| row.get(0))
            .unwrap();
        assert_eq!(count, 200);
    }
}
