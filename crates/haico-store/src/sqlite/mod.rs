//! SQLite through rusqlite: how haico opens a connection (`open.rs`), its migration runner
//! (`migrate.rs`) and the errors of its SQLite connections.
//!
//! The writer (`writer/`) and the readers (`readers.rs`) each own plain
//! [`rusqlite::Connection`]s and run every statement on the caller's own thread: a statement
//! on a warm cache takes microseconds, less than a hand-over to another thread would cost.
//! One driver for SQLite means one SQLite library, one error type and no
//! borrowed handles.

mod migrate;
mod open;

pub use migrate::MigrationError;
pub(crate) use migrate::{migrate, sqlite_migrations};
pub(crate) use open::SqliteOptions;

/// Why a statement on one of haico's SQLite connections did not run, or did not last.
#[derive(Debug, thiserror::Error)]
pub enum SqliteError {
    /// SQLite (through rusqlite) refused or failed the statement; SQLite's own result code is
    /// in it (a unique violation, "busy", an I/O error).
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// No connection came free within the configured wait (`acquire_timeout`).
    #[error("no SQLite connection came free within {0:?}")]
    TimedOut(std::time::Duration),
    /// The database was closed (the server is shutting down).
    #[error("the SQLite database is closed")]
    Closed,
    /// A write that shared its transaction with other calls was lost with it: SQLite rolled
    /// the transaction back after an error in one of them.
    #[error(
        "SQLite rolled back the transaction this write shared with other calls (after an error \
         in one of them); nothing of it was saved, so it can be sent again"
    )]
    SharedRollback,
    /// A connection could not be opened or closed off the runtime's threads.
    #[error("a SQLite task did not finish: {0}")]
    Task(String),
}

impl SqliteError {
    /// Whether SQLite refused a row because an equal one exists (a unique or primary key).
    pub fn is_unique_violation(&self) -> bool {
        matches!(
            self,
            SqliteError::Sqlite(rusqlite::Error::SqliteFailure(failure, _))
                if failure.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    || failure.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
        )
    }
}

/// Runs one statement without parameters (a transaction's begin or end), prepared once.
pub(crate) fn run(conn: &rusqlite::Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

/// Whether SQLite answered "busy": another connection holds the lock asked for.
pub(crate) fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err,
        rusqlite::Error::SqliteFailure(failure, _)
            if failure.code == rusqlite::ErrorCode::DatabaseBusy
    )
}

/// Opens a connection with `options` on a blocking thread (opening may wait for the file's
/// lock); without a runtime it opens here.
pub(crate) async fn open(options: &SqliteOptions) -> Result<rusqlite::Connection, SqliteError> {
    let options = options.clone();
    off_runtime(move || options.open().map_err(SqliteError::from)).await
}

/// Runs blocking SQLite work on the runtime's blocking threads and waits for it; without a
/// runtime it runs here.
pub(crate) async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, SqliteError> + Send + 'static,
) -> Result<T, SqliteError> {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => runtime
            .spawn_blocking(work)
            .await
            .map_err(|err| SqliteError::Task(err.to_string()))?,
        Err(_) => work(),
    }
}

/// Closes `conn` on a blocking thread and waits for it: the last connection of a database to
/// close copies the WAL back into the file and syncs it, which is not work for a runtime
/// thread.
pub(crate) async fn close(conn: rusqlite::Connection) -> Result<(), SqliteError> {
    off_runtime(move || conn.close().map_err(|(_, err)| SqliteError::from(err))).await
}
