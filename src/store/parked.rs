//! A SQLite connection opened by sqlx and driven by rusqlite on the caller's own thread.
//!
//! sqlx runs every SQLite statement on the connection's worker thread: two context switches
//! per statement, which measured as most of a short statement's cost (PERFORMANCE §14). A
//! [`Parked`] connection keeps sqlx's worker *parked*: it holds sqlx's own handle lock
//! ([`LockedSqliteHandle`]), which stops the worker thread, and runs statements on the same
//! `sqlite3` handle through rusqlite, on whichever tokio thread its holder is on. sqlx still
//! opens and closes the connection (so every connect option, pragma and the in-memory naming
//! stay sqlx's), and a statement sent through sqlx ([`Parked::sqlx`]) un-parks the worker
//! first; the next inline statement parks it again.
//!
//! Both the writer (`writer.rs`) and the readers (`readers.rs`) are built on it; this is the
//! one module that needs `unsafe`, for the borrow of sqlx's connection that the handle lock
//! keeps across calls.

use std::ptr::NonNull;

use sqlx::{
    Connection, SqliteConnection,
    sqlite::{LockedSqliteHandle, SqliteConnectOptions},
};

/// How many statements a connection keeps prepared (every statement of the store, with room
/// to spare: one evicted from the cache is parsed again on its next use).
const PREPARED_STATEMENTS: usize = 128;

/// One SQLite connection, parked for inline use.
pub(crate) struct Parked {
    /// rusqlite over sqlx's `sqlite3` handle, used only while `parked` is held. `None` only
    /// while the connection is being dropped.
    inline: Option<rusqlite::Connection>,
    /// sqlx's handle lock: while held, sqlx's worker thread is stopped and the handle is ours.
    /// It borrows `*conn` (hence the made-up `'static`); see [`Parked::sqlx`].
    parked: Option<LockedSqliteHandle<'static>>,
    /// sqlx's connection, owned (from `Box::into_raw`) and only ever reached through
    /// [`Parked::sqlx`] and [`Parked::park`], which never let two borrows of it coexist.
    /// `None` once [`Parked::close`] has closed it.
    conn: Option<NonNull<SqliteConnection>>,
}

// SAFETY: `conn` is uniquely owned (as a `Box` would be), `SqliteConnection` is `Send`, and so
// are rusqlite's connection and sqlx's handle lock (a guard of an async mutex, released from
// whichever thread drops it). A `Parked` is reached through `&mut` only, never shared.
unsafe impl Send for Parked {}

impl Parked {
    /// Opens a connection with `options` and parks it.
    pub(crate) async fn open(options: &SqliteConnectOptions) -> Result<Self, sqlx::Error> {
        let mut conn = Box::new(SqliteConnection::connect_with(options).await?);
        let inline = {
            let mut locked = conn.lock_handle().await?;
            // SAFETY: the handle stays open as long as sqlx's connection, which this owns and
            // drops only after the rusqlite connection (`Drop for Parked`); rusqlite's
            // `from_handle` never closes a handle it did not open.
            unsafe { rusqlite::Connection::from_handle(locked.as_raw_handle().as_ptr()) }
                .map_err(inline_error)?
        };
        inline.set_prepared_statement_cache_capacity(PREPARED_STATEMENTS);
        let mut parked = Self {
            inline: Some(inline),
            parked: None,
            conn: Some(NonNull::from(Box::leak(conn))),
        };
        parked.park().await?;
        Ok(parked)
    }

    /// sqlx's connection, for a statement sent through sqlx (`None` once closed). Un-parks
    /// the worker thread first: from here until the next [`park`](Self::park), the handle is
    /// sqlx's again.
    pub(crate) fn sqlx(&mut self) -> Option<&mut SqliteConnection> {
        self.parked = None;
        // SAFETY: `conn` is valid until it is closed or `self` is dropped, and with `parked`
        // dropped no other borrow of it exists; the one returned borrows `self`, so `park`
        // cannot make a second while it lives.
        self.conn.as_mut().map(|conn| unsafe { conn.as_mut() })
    }

    /// Parks sqlx's worker thread (a no-op when it is parked already) and returns the inline
    /// connection. Parking is one hand-over to the worker thread; it is paid when the
    /// connection opens and after each statement that went through sqlx, not per statement.
    pub(crate) async fn park(&mut self) -> Result<&rusqlite::Connection, sqlx::Error> {
        if self.parked.is_none() {
            let conn = self.conn.ok_or(sqlx::Error::PoolClosed)?;
            // SAFETY: no borrow of `conn` is alive (see `sqlx`); this one is stored in
            // `parked`, which is dropped before any other borrow is made and before `conn`
            // itself is freed (`close`, `Drop for Parked`).
            let conn: &'static mut SqliteConnection = unsafe { &mut *conn.as_ptr() };
            self.parked = Some(conn.lock_handle().await?);
        }
        self.inline.as_ref().ok_or(sqlx::Error::PoolClosed)
    }

    /// The inline connection if the worker is parked now: for clean-up that cannot wait (a
    /// `Drop`), which then leaves an un-parked connection alone.
    pub(crate) fn parked_now(&self) -> Option<&rusqlite::Connection> {
        self.parked.as_ref().and(self.inline.as_ref())
    }

    /// Closes the connection and waits until SQLite has let go of it. Dropping one closes it
    /// too, but on sqlx's worker thread, later: at a clean shutdown that thread may not get to
    /// it before the process ends, and SQLite then leaves the WAL and shared-memory files
    /// behind. The last connection of a database closed here removes them.
    pub(crate) async fn close(&mut self) -> Result<(), sqlx::Error> {
        match self.release() {
            Some(conn) => conn.close().await,
            None => Ok(()),
        }
    }

    /// Takes sqlx's connection back, after rusqlite has finalized its prepared statements
    /// while the handle was still ours and the worker is un-parked. `None` when closed.
    fn release(&mut self) -> Option<Box<SqliteConnection>> {
        self.inline = None;
        self.parked = None;
        // SAFETY: `conn` came from `Box::into_raw`, no borrow of it is left, and taking it
        // out of the `Option` means it is freed only once.
        self.conn
            .take()
            .map(|conn| unsafe { Box::from_raw(conn.as_ptr()) })
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        // sqlx closes a dropped connection on its worker thread (rolling back anything open).
        drop(self.release());
    }
}

/// Runs one statement without parameters (a transaction's begin or end), prepared once.
pub(crate) fn run(conn: &rusqlite::Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

/// A rusqlite error as the sqlx error the rest of the store handles: SQLite's own errors keep
/// their code and message (so a unique violation is still recognised as one), anything else
/// is a decoding error.
pub(crate) fn inline_error(err: rusqlite::Error) -> sqlx::Error {
    match err {
        rusqlite::Error::SqliteFailure(failure, message) => database_error(
            message.unwrap_or_else(|| failure.to_string()),
            failure.extended_code,
        ),
        other => sqlx::Error::Decode(Box::new(other)),
    }
}

/// An error with SQLite's extended result `code`, as sqlx reports a database's own errors.
pub(crate) fn database_error(message: String, code: i32) -> sqlx::Error {
    sqlx::Error::Database(Box::new(InlineDbError { message, code }))
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
