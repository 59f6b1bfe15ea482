//! SQLite's read connections: a small pool of haico's own whose statements run inline.
//!
//! sqlx's pool answered every read statement from the connection's worker thread (a hop
//! there and back per statement) and pinged each connection as it came back (another hop),
//! which measured as ~12% of the server's time under the mixed load. Each
//! connection here is a plain [`rusqlite::Connection`], as the writer's is: reads run on the
//! caller's thread, and a connection goes back to the pool with no round trip at all. SQLite
//! connections live in this process and cannot go stale, so nothing is checked on the way out
//! either; a connection given back inside a transaction (a dropped snapshot) is rolled back
//! on its way in, and one that cannot be is closed instead.

use std::{
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use rusqlite::Connection;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::sqlite::{self, SqliteError, SqliteOptions, run};

/// The read connections. Cheap to clone.
#[derive(Clone)]
pub struct Readers {
    shared: Arc<Shared>,
}

struct Shared {
    /// How each connection is opened (read-only, with the writer's pragmas).
    options: SqliteOptions,
    /// Connections given back, ready for the next taker.
    idle: Mutex<Vec<Connection>>,
    /// One permit per connection that may exist; closed by [`Readers::close`].
    permits: Arc<Semaphore>,
    acquire_timeout: Duration,
}

impl std::fmt::Debug for Readers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Readers")
            .field("acquire_timeout", &self.shared.acquire_timeout)
            .field("available", &self.shared.permits.available_permits())
            .finish()
    }
}

impl Readers {
    /// Up to `size` read-only connections opened with `options`; a taker waits at most
    /// `acquire_timeout` for one. One is opened now, so that a file that cannot be read is
    /// reported at start-up rather than on the first request.
    pub(crate) async fn open(
        options: SqliteOptions,
        size: usize,
        acquire_timeout: Duration,
    ) -> Result<Self, SqliteError> {
        let first = sqlite::open(&options).await?;
        Ok(Self {
            shared: Arc::new(Shared {
                options,
                idle: Mutex::new(vec![first]),
                permits: Arc::new(Semaphore::new(size.max(1))),
                acquire_timeout,
            }),
        })
    }

    /// A connection in autocommit mode (each statement its own snapshot).
    pub async fn acquire(&self) -> Result<Reader, SqliteError> {
        let permit = tokio::time::timeout(
            self.shared.acquire_timeout,
            Arc::clone(&self.shared.permits).acquire_owned(),
        )
        .await
        .map_err(|_| SqliteError::TimedOut(self.shared.acquire_timeout))?
        .map_err(|_| SqliteError::Closed)?;
        let kept = self
            .shared
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match kept {
            Some(conn) => conn,
            None => sqlite::open(&self.shared.options).await?,
        };
        // A connection given back whose transaction could not be ended is dropped on its way
        // in (see `Drop for Reader`), so every one kept is in autocommit mode; checked again
        // here, as it costs nothing.
        if !conn.is_autocommit() {
            run(&conn, "ROLLBACK")?;
        }
        Ok(Reader {
            conn: Some(conn),
            shared: Arc::clone(&self.shared),
            _permit: permit,
        })
    }

    /// A connection inside a read transaction: one snapshot for all its statements, taken
    /// at the first of them.
    pub async fn begin(&self) -> Result<Reader, SqliteError> {
        let reader = self.acquire().await?;
        run(reader.inline()?, "BEGIN")?;
        Ok(reader)
    }

    /// Refuses new takers and closes the idle connections, waiting for each; those still in
    /// use close as they come back.
    pub async fn close(&self) {
        self.shared.permits.close();
        let idle = std::mem::take(
            &mut *self
                .shared
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for conn in idle {
            if let Err(err) = sqlite::close(conn).await {
                tracing::warn!(error = %err, "closing a SQLite reader failed");
            }
        }
    }
}

/// One read connection, given back to the pool when dropped.
pub struct Reader {
    /// `None` only while being dropped.
    conn: Option<Connection>,
    shared: Arc<Shared>,
    _permit: OwnedSemaphorePermit,
}

impl Reader {
    /// The connection, for statements run on this thread.
    pub fn inline(&self) -> Result<&Connection, SqliteError> {
        self.conn.as_ref().ok_or(SqliteError::Closed)
    }

    /// Ends the read transaction, if one is open.
    pub async fn finish(self) -> Result<(), SqliteError> {
        let conn = self.inline()?;
        if !conn.is_autocommit() {
            run(conn, "COMMIT")?;
        }
        Ok(())
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else {
            return;
        };
        if self.shared.permits.is_closed() {
            return;
        }
        if !conn.is_autocommit() && run(&conn, "ROLLBACK").is_err() {
            // A connection that cannot end its transaction is not given to anyone else.
            return;
        }
        self.shared
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(conn);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::writer::Writer;

    async fn setup(dir: &tempfile::TempDir, size: usize) -> (Writer, Readers) {
        let url = format!("sqlite:{}", dir.path().join("r.db").display());
        let options = SqliteOptions::parse(&url).unwrap().create_if_missing(true);
        let writer = Writer::open(&options, Duration::from_secs(5), Duration::from_secs(5), 1)
            .await
            .unwrap();
        write(&writer, "CREATE TABLE t (v INTEGER)").await;
        let readers = Readers::open(options.read_only(), size, Duration::from_millis(200))
            .await
            .unwrap();
        (writer, readers)
    }

    async fn write(writer: &Writer, sql: &str) {
        let held = writer.begin().await.unwrap();
        held.inline().unwrap().execute_batch(sql).unwrap();
        held.commit().await.unwrap();
    }

    fn count(reader: &Reader) -> i64 {
        reader
            .inline()
            .unwrap()
            .query_row("SELECT COUNT(*) FROM t", [], |row| row.get(0))
            .unwrap()
    }

    #[tokio::test]
    async fn a_snapshot_keeps_its_view_and_a_dropped_one_is_ended_before_reuse() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, readers) = setup(&dir, 1).await;
        write(&writer, "INSERT INTO t VALUES (1)").await;
        let snapshot = readers.begin().await.unwrap();
        assert_eq!(count(&snapshot), 1);
        write(&writer, "INSERT INTO t VALUES (2)").await;
        // The snapshot still sees what it saw first; it is dropped without being ended.
        assert_eq!(count(&snapshot), 1);
        drop(snapshot);
        // The one connection comes back out of its transaction and sees the second row.
        let next = readers.acquire().await.unwrap();
        assert!(next.inline().unwrap().is_autocommit());
        assert_eq!(count(&next), 2);
    }

    #[tokio::test]
    async fn a_connection_given_back_inside_a_transaction_begun_by_hand_is_clean_again() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, readers) = setup(&dir, 1).await;
        write(&writer, "INSERT INTO t VALUES (1)").await;
        let reader = readers.acquire().await.unwrap();
        reader.inline().unwrap().execute_batch("BEGIN").unwrap();
        assert_eq!(count(&reader), 1);
        // Given back inside a transaction: it is ended on the way in.
        drop(reader);
        write(&writer, "INSERT INTO t VALUES (2)").await;
        let next = readers.acquire().await.unwrap();
        assert_eq!(count(&next), 2);
    }

    #[tokio::test]
    async fn takers_wait_for_a_free_connection_up_to_the_time_out_and_close_refuses_new_ones() {
        let dir = tempfile::tempdir().unwrap();
        let (_writer, readers) = setup(&dir, 2).await;
        let first = readers.acquire().await.unwrap();
        let _second = readers.acquire().await.unwrap();
        assert!(matches!(
            readers.acquire().await,
            Err(SqliteError::TimedOut(_))
        ));
        let waiting = tokio::spawn({
            let readers = readers.clone();
            async move { readers.acquire().await.map(|_| ()) }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(first);
        waiting.await.unwrap().unwrap();
        readers.close().await;
        assert!(matches!(readers.acquire().await, Err(SqliteError::Closed)));
    }
}
