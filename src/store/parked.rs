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
    conn: NonNull<SqliteConnection>,
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
                .map_err(crate::store::writer::inline_error)?
        };
        inline.set_prepared_statement_cache_capacity(PREPARED_STATEMENTS);
        let mut parked = Self {
            inline: Some(inline),
            parked: None,
            conn: NonNull::from(Box::leak(conn)),
        };
        parked.park().await?;
        Ok(parked)
    }

    /// sqlx's connection, for a statement sent through sqlx. Un-parks the worker thread first:
    /// from here until the next [`park`](Self::park), the handle is sqlx's again.
    pub(crate) fn sqlx(&mut self) -> &mut SqliteConnection {
        self.parked = None;
        // SAFETY: `conn` is valid until `self` is dropped, and with `parked` dropped no other
        // borrow of it exists; the one returned borrows `self`, so `park` cannot make a second
        // while it lives.
        unsafe { self.conn.as_mut() }
    }

    /// Parks sqlx's worker thread (a no-op when it is parked already) and returns the inline
    /// connection. Parking is one hand-over to the worker thread; it is paid when the
    /// connection opens and after each statement that went through sqlx, not per statement.
    pub(crate) async fn park(&mut self) -> Result<&rusqlite::Connection, sqlx::Error> {
        if self.parked.is_none() {
            // SAFETY: no borrow of `conn` is alive (see `sqlx`); this one is stored in
            // `parked`, which is dropped before any other borrow is made and before `conn`
            // itself is freed (`Drop for Parked`).
            let conn: &'static mut SqliteConnection = unsafe { &mut *self.conn.as_ptr() };
            self.parked = Some(conn.lock_handle().await?);
        }
        self.inline.as_ref().ok_or(sqlx::Error::PoolClosed)
    }

    /// The inline connection if the worker is parked now: for clean-up that cannot wait (a
    /// `Drop`), which then leaves an un-parked connection alone.
    pub(crate) fn parked_now(&self) -> Option<&rusqlite::Connection> {
        self.parked.as_ref().and(self.inline.as_ref())
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        // rusqlite finalizes its prepared statements while the handle is still ours; then the
        // worker is un-parked and sqlx closes the connection (rolling back anything open).
        self.inline = None;
        self.parked = None;
        // SAFETY: `conn` came from `Box::into_raw` and no borrow of it is left.
        drop(unsafe { Box::from_raw(self.conn.as_ptr()) });
    }
}
