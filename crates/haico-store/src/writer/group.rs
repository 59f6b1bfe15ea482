//! The write connection's group-commit state: which call's savepoint is open, which calls wait
//! for the commit that holds their work, and how a group ends (committed for all, or each
//! call told why not). `mod.rs` decides when; this decides what each ending does.

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::super::sqlite::{SqliteError, run};

/// The savepoint each call runs in.
pub(super) const SAVEPOINT: &str = "SAVEPOINT haico_call";
pub(super) const RELEASE: &str = "RELEASE haico_call";
const ROLLBACK_TO: &str = "ROLLBACK TO haico_call";

/// What the commit holding a waiting call's work came to.
pub(super) type Outcome = Result<(), Failure>;

/// Why a waiting call's work did not last, as each call of the group is told (every one gets
/// its own copy, so it is kept as SQLite's code and text).
#[derive(Debug, Clone)]
pub(super) enum Failure {
    /// The shared `COMMIT` failed with SQLite's extended result `code`.
    Commit { code: i32, message: String },
    /// SQLite rolled the whole transaction back after an error in another call.
    Vanished,
}

impl Failure {
    fn from_commit(err: &rusqlite::Error) -> Self {
        match err {
            rusqlite::Error::SqliteFailure(failure, message) => Failure::Commit {
                code: failure.extended_code,
                message: message.clone().unwrap_or_else(|| failure.to_string()),
            },
            other => Failure::Commit {
                code: rusqlite::ffi::SQLITE_ERROR,
                message: other.to_string(),
            },
        }
    }

    /// The error the call is answered with: SQLite's own, rebuilt from its code and text.
    pub(super) fn into_error(self) -> SqliteError {
        match self {
            Failure::Commit { code, message } => SqliteError::Sqlite(
                rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), Some(message)),
            ),
            Failure::Vanished => SqliteError::SharedRollback,
        }
    }
}

/// The connection and what haico knows about it.
pub(super) struct State {
    /// `None` once [`Writer::close`](super::Writer::close) has closed it: no new calls.
    pub(super) conn: Option<Connection>,
    /// The current call's savepoint is open: begun, and neither released nor rolled back.
    pub(super) call_open: bool,
    /// Calls whose work is released into the open transaction, waiting for its commit.
    pub(super) members: Vec<oneshot::Sender<Outcome>>,
}

impl State {
    pub(super) fn new(conn: Connection) -> Self {
        Self {
            conn: Some(conn),
            call_open: false,
            members: Vec::new(),
        }
    }

    /// The connection; an error once the writer is closed.
    pub(super) fn conn(&self) -> Result<&Connection, SqliteError> {
        self.conn.as_ref().ok_or(SqliteError::Closed)
    }

    /// Tells every waiting call that its work is gone with the transaction.
    pub(super) fn fail_members(&mut self) {
        for member in self.members.drain(..) {
            let _ = member.send(Err(Failure::Vanished));
        }
    }

    /// Rolls the current call back to its savepoint, keeping the work of the calls before it.
    pub(super) fn undo_call(&mut self) -> Result<(), SqliteError> {
        let ended = self.conn()?.is_autocommit();
        self.call_open = false;
        if ended {
            // SQLite ended the whole transaction itself (an I/O error, say), and the work of
            // the calls waiting on it went too.
            self.fail_members();
            return Ok(());
        }
        let conn = self.conn()?;
        run(conn, ROLLBACK_TO).and_then(|()| run(conn, RELEASE))?;
        Ok(())
    }

    /// Commits the open transaction for every call whose work it holds, and tells each one.
    pub(super) fn finish(&mut self) -> Result<(), SqliteError> {
        if self.conn()?.is_autocommit() {
            self.fail_members();
            return Err(SqliteError::SharedRollback);
        }
        let conn = self.conn()?;
        let committed = run(conn, "COMMIT");
        if committed.is_err()
            && !conn.is_autocommit()
            && let Err(err) = run(conn, "ROLLBACK")
        {
            tracing::warn!(error = %err, "rolling back after a failed SQLite commit failed");
        }
        let outcome = committed.as_ref().map_err(Failure::from_commit).copied();
        for member in self.members.drain(..) {
            let _ = member.send(outcome.clone());
        }
        committed.map_err(SqliteError::from)
    }

    /// With no call running: commits the waiting calls' work unless another caller is queued
    /// to carry the transaction on, and ends a transaction that holds nobody's work. Once the
    /// writer is closed there is nothing left to settle (closing settled it last).
    pub(super) fn settle(&mut self, queued: bool) {
        if self.conn.is_none() {
            return;
        }
        if self.call_open
            && let Err(err) = self.undo_call()
        {
            tracing::warn!(error = %err, "rolling back an abandoned SQLite write failed");
        }
        if !self.members.is_empty() {
            if !queued {
                // Each waiting call hears the outcome; nobody else is owed it.
                let _ = self.finish();
            }
            return;
        }
        if let Ok(conn) = self.conn()
            && !conn.is_autocommit()
            && let Err(err) = run(conn, "ROLLBACK")
        {
            tracing::warn!(error = %err, "ending an empty SQLite transaction failed");
        }
    }
}
