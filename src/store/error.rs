//! Errors of the storage layer.

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
        source: sqlx::Error,
    },
    /// Running the numbered migrations failed at start-up.
    #[error("running migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A row to be created already exists (a thread id, say).
    #[error("{0} already exists")]
    AlreadyExists(String),
    /// A stored JSON payload could not be decoded.
    #[error("stored JSON is corrupt: {0}")]
    CorruptJson(#[from] serde_json::Error),
}

/// Adds a short description of the operation to a driver error.
pub(crate) trait Context<T> {
    fn context(self, context: &'static str) -> Result<T, StoreError>;
}

impl<T> Context<T> for Result<T, sqlx::Error> {
    fn context(self, context: &'static str) -> Result<T, StoreError> {
        self.map_err(|source| StoreError::Database { context, source })
    }
}

impl StoreError {
    /// Whether the error is a unique-constraint violation (used to turn races on `INSERT` into
    /// clean "already exists" answers).
    pub fn is_unique_violation(&self) -> bool {
        match self {
            StoreError::Database {
                source: sqlx::Error::Database(db),
                ..
            } => db.is_unique_violation(),
            StoreError::AlreadyExists(_) => true,
            _ => false,
        }
    }
}
