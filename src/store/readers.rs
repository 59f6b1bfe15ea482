//! SQLite's read connections: a small pool of haico's own whose statements run inline.
//!
//! sqlx's pool answered every read statement from the connection's worker thread (a hop
//! there and back per statement) and pinged each connection as it came back (another hop),
//! which measured as ~12% of the server's time under the mixed load (PERFORMANCE §14). Each
//! connection here is [`Parked`], as the writer's is: reads run through rusqlite on the
//! caller's thread, and a connection goes back to the pool with no round trip at all. SQLite
//! connections live in this process and cannot go stale, so nothing is checked on the way out
//! either; a connection given back inside a transaction (a dropped snapshot) is rolled back
//! on its way in, or by its next taker when that could not be done on the spot.

use std::{
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use sqlx::sqlite::SqliteConnectOptions;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::parked::{Parked, inline_error, run};

/// The read connections. Cheap to clone.
#[derive(Clone)]
pub struct Readers {
    shared: Arc<Shared>,
}

struct Shared {
    /// How each connection is opened (read-only, with the writer's pragmas).
    options: SqliteConnectOptions,
    /// Connections given back, ready for the next taker.
    idle: Mutex<Vec<Parked>>,
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
    pub async fn open(
        options: SqliteConnectOptions,
        size: usize,
        acquire_timeout: Duration,
    ) -> Result<Self, sqlx::Error> {
        let first = Parked::open(&options).await?;
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
    pub async fn acquire(&self) -> Result<Reader, sqlx::Error> {
        let permit = tokio::time::timeout(
            self.shared.acquire_timeout,
            Arc::clone(&self.shared.permits).acquire_owned(),
        )
        .await
        .map_err(|_| sqlx::Error::PoolTimedOut)?
        .map_err(|_| sqlx::Error::PoolClosed)?;
        let kept = self
            .shared
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match kept {
            Some(conn) => conn,
            None => Parked::open(&self.shared.options).await?,
        };
        let mut reader = Reader {
            conn: Some(conn),
            shared: Arc::clone(&self.shared),
            _permit: permit,
        };
        // A connection given back un-parked could not be checked on its way in.
        let conn = reader.inline().await?;
        if !conn.is_autocommit() {
            run(conn, "ROLLBACK").map_err(inline_error)?;
        }
        Ok(reader)
    }

    /// A connection inside a read transaction: one snapshot for all its statements, taken
    /// at the first of them.
    pub async fn begin(&self) -> Result<Reader, sqlx::Error> {
        let mut reader = self.acquire().await?;
        run(reader.inline().await?, "BEGIN").map_err(inline_error)?;
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
        for mut conn in idle {
            if let Err(err) = conn.close().await {
                tracing::warn!(error = %err, "closing a SQLite reader failed");
            }
        }
    }
}

/// One read connection, given back to the pool when dropped.
pub struct Reader {
    /// `None` only while being dropped.
    conn: Option<Parked>,
    shared: Arc<Shared>,
    _permit: OwnedSemaphorePermit,
}

impl Reader {
    /// The connection, for statements run inline on this thread.
    pub async fn inline(&mut self) -> Result<&rusqlite::Connection, sqlx::Error> {
        match self.conn.as_mut() {
            Some(conn) => conn.park().await,
            None => Err(sqlx::Error::PoolClosed),
        }
    }

    /// sqlx's connection, for a query written for sqlx (tests, one-off tools). It un-parks
    /// the worker, so each statement hops to it and back; the next inline statement, or the
    /// next taker, parks it again.
    pub fn sqlx(&mut self) -> Option<&mut sqlx::SqliteConnection> {
        self.conn.as_mut().and_then(Parked::sqlx)
    }

    /// Ends the read transaction, if one is open.
    pub async fn finish(mut self) -> Result<(), sqlx::Error> {
        let conn = self.inline().await?;
        if !conn.is_autocommit() {
            run(conn, "COMMIT").map_err(inline_error)?;
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
        if let Some(inline) = conn.parked_now()
            && !inline.is_autocommit()
            && run(inline, "ROLLBACK").is_err()
        {
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
    use std::str::FromStr;

    use super::*;
    use crate::store::writer::Writer;

    async fn setup(dir: &tempfile::TempDir, size: usize) -> (Writer, Readers) {
        let url = format!("sqlite:{}", dir.path().join("r.db").display());
        let options = SqliteConnectOptions::from_str(&url)
            .unwrap()
            .create_if_missing(true)
            .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal);
        let writer = Writer::open(&options, Duration::from_secs(5), Duration::from_secs(5), 1)
            .await
            .unwrap();
        write(&writer, "CREATE TABLE t (v INTEGER)").await;
        let readers = Readers::open(options.read_only(true), size, Duration::from_millis(200))
            .await
            .unwrap();
        (writer, readers)
    }

    async fn write(writer: &Writer, sql: &str) {
        let mut held = writer.begin().await.unwrap();
        held.inline().await.unwrap().execute_batch(sql).unwrap();
        held.commit().await.unwrap();
    }

    async fn count(reader: &mut Reader) -> i64 {
        reader
            .inline()
            .await
            .unwrap()
            .query_row("SELECT COUNT(*) FROM t", [], |row| row.get(0))
            .unwrap()
    }

    #[tokio::test]
    async fn a_snapshot_keeps_its_view_and_a_dropped_one_is_ended_before_reuse() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, readers) = setup(&dir, 1).await;
        write(&writer, "INSERT INTO t VALUES (1)").await;
        let mut snapshot = readers.begin().await.unwrap();
        assert_eq!(count(&mut snapshot).await, 1);
        write(&writer, "INSERT INTO t VALUES (2)").await;
        // The snapshot still sees what it saw first; it is dropped without being ended.
        assert_eq!(count(&mut snapshot).await, 1);
        drop(snapshot);
        // The one connection comes back out of its transaction and sees the second row.
        let mut next = readers.acquire().await.unwrap();
        assert!(next.inline().await.unwrap().is_autocommit());
        assert_eq!(count(&mut next).await, 2);
    }

    #[tokio::test]
    async fn a_connection_given_back_after_a_sqlx_statement_is_parked_and_clean_again() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, readers) = setup(&dir, 1).await;
        write(&writer, "INSERT INTO t VALUES (1)").await;
        let mut reader = readers.acquire().await.unwrap();
        sqlx::query("BEGIN")
            .execute(reader.sqlx().unwrap())
            .await
            .unwrap();
        let seen: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM t")
            .fetch_one(reader.sqlx().unwrap())
            .await
            .unwrap();
        assert_eq!(seen, 1);
        // Given back un-parked, inside a transaction: the next taker ends it.
        drop(reader);
        write(&writer, "INSERT INTO t VALUES (2)").await;
        let mut next = readers.acquire().await.unwrap();
        assert_eq!(count(&mut next).await, 2);
    }

    #[tokio::test]
    async fn takers_wait_for_a_free_connection_up_to_the_time_out_and_close_refuses_new_ones() {
        let dir = tempfile::tempdir().unwrap();
        let (_writer, readers) = setup(&dir, 2).await;
        let first = readers.acquire().await.unwrap();
        let _second = readers.acquire().await.unwrap();
        assert!(matches!(
            readers.acquire().await,
            Err(sqlx::Error::PoolTimedOut)
        ));
        let waiting = tokio::spawn({
            let readers = readers.clone();
            async move { readers.acquire().await.map(|_| ()) }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(first);
        waiting.await.unwrap().unwrap();
        readers.close().await;
        assert!(matches!(
            readers.acquire().await,
            Err(sqlx::Error::PoolClosed)
        ));
    }
}
