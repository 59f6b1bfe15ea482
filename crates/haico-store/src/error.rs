//! Errors of the storage layer.

use super::sqlite::{MigrationError, SqliteError};

/// A database driver's own error: PostgreSQL's through sqlx, SQLite's through rusqlite (with
/// what haico's own SQLite connections add: waiting too long, a closed database, a shared
/// commit lost). The query layer returns it; [`Context`] turns it into a [`StoreError`].
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// PostgreSQL, through sqlx.
    #[error(transparent)]
    Postgres(#[from] sqlx::Error),
    /// SQLite, through rusqlite and haico's own connections.
    #[error(transparent)]
    Sqlite(#[from] SqliteError),
    /// A query that must return a row returned none.
    #[error("the query returned no row")]
    NoRow,
    /// An agent's write found its thread missing as it took the lock with its first statement
    /// ([`Database::begin_agent_write`](super::Database::begin_agent_write)).
    #[error("the thread does not exist")]
    NoThread,
    /// Taking the thread's lock with an agent write's first statement failed (the database
    /// did not answer in time, say).
    #[error("taking the thread's lock: {0}")]
    Locking(Box<StoreError>),
}

impl From<rusqlite::Error> for DriverError {
    fn from(err: rusqlite::Error) -> Self {
        DriverError::Sqlite(SqliteError::Sqlite(err))
    }
}

impl DriverError {
    /// Whether the database refused a row because an equal one exists.
    pub fn is_unique_violation(&self) -> bool {
        match self {
            DriverError::Postgres(sqlx::Error::Database(db)) => db.is_unique_violation(),
            DriverError::Sqlite(err) => err.is_unique_violation(),
            _ => false,
        }
    }
}

/// What can go wrong talking to the database.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database URL is neither `sqlite:` nor `postgres:`/`postgresql:`, or is malformed.
    #[error("unsupported database URL {0:?}: use sqlite:PATH or postgres://…")]
    UnsupportedUrl(String),
    /// A query or connection failed.
    #[error("{context}: {source}")]
    Database {
        /// What the store was doing.
        context: &'static str,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    /// The database cannot be reached, or refused haico: the text names the server (never
    /// with a password), the cause and what to check.
    #[error("cannot connect to {target}: {cause}; {check}")]
    Unreachable {
        /// Which server, e.g. "PostgreSQL at 127.0.0.1:5432 (database `haico`, user `u`)".
        target: String,
        /// What went wrong: refused, no answer, authentication, a missing database.
        cause: String,
        /// What to check next.
        check: &'static str,
    },
    /// The database did not answer in time while serving a request (its link is cut or it is
    /// overloaded); the request is not retried.
    #[error("{target} did not answer within {after}")]
    NoAnswer {
        /// Which server.
        target: String,
        /// How long haico waited, as people write it ("1 s").
        after: String,
    },
    /// The SQLite file cannot be opened or created there.
    #[error(
        "cannot open the SQLite database {path}: {reason}; check that the directory exists and \
         this user may write to it, or point HAICO_DATABASE_URL elsewhere"
    )]
    SqlitePath {
        /// The file haico was asked to use.
        path: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// Running PostgreSQL's numbered migrations failed at start-up.
    #[error("running migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// Running SQLite's numbered migrations failed at start-up.
    #[error("running migrations: {0}")]
    SqliteMigrate(#[from] MigrationError),
    /// A row to be created already exists (a thread id, say).
    #[error("{0} already exists")]
    AlreadyExists(String),
    /// The database answered something its own constraints rule out (a statement matched
    /// fewer rows than the same statement counted); the transaction is rolled back.
    #[error("the database answered inconsistently: {0}")]
    Inconsistent(String),
    /// A column of the stored vocabulary (a suggestion's status or kind) holds a word haico
    /// never writes.
    #[error("the stored {column} {value:?} is not one haico writes")]
    UnknownWord {
        /// The column.
        column: &'static str,
        /// What it holds.
        value: String,
    },
    /// A stored JSON payload could not be decoded.
    #[error("stored JSON is corrupt: {0}")]
    CorruptJson(#[from] serde_json::Error),
}

/// Adds a short description of the operation to a driver error.
pub(crate) trait Context<T> {
    fn context(self, context: &'static str) -> Result<T, StoreError>;
}

impl<T, E: Into<DriverError>> Context<T> for Result<T, E> {
    fn context(self, context: &'static str) -> Result<T, StoreError> {
        self.map_err(|source| StoreError::Database {
            context,
            source: source.into(),
        })
    }
}

impl StoreError {
    /// Whether the error is a unique-constraint violation (used to turn races on `INSERT` into
    /// clean "already exists" answers).
    pub fn is_unique_violation(&self) -> bool {
        match self {
            StoreError::Database { source, .. } => source.is_unique_violation(),
            StoreError::AlreadyExists(_) => true,
            _ => false,
        }
    }
}
