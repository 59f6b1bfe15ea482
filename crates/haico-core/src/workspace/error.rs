//! Why a workspace operation was refused. Each adapter words these for its own callers (a
//! failure envelope for the model, a status code for HTTP), but the text of a broken rule is
//! written once, here or in the rule that fails.

use haico_store::{Document, StoreError};
use serde::Serialize;

/// Everything a workspace operation can fail with. A failed operation has written nothing.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The input breaks a rule of the workspace; the text says what to change.
    #[error("{0}")]
    Invalid(String),
    /// Something the operation names (a step, a preference, an artifact) is not in this thread.
    #[error("{0}")]
    NotFound(String),
    /// The thread does not exist.
    #[error("thread `{0}` does not exist")]
    UnknownThread(String),
    /// A thread with this id exists already.
    #[error("thread `{0}` already exists")]
    ThreadExists(String),
    /// The document was written by someone else since the version the writer read.
    #[error(
        "the document changed meanwhile: it is at version {}, not {expected}; merge your edit \
         into the current document and send it again with its version",
        current.version
    )]
    StaleDocument {
        /// The version the writer expected.
        expected: i64,
        /// The document as it is now.
        current: Document,
    },
    /// Later changes stand in the way (of undoing a turn); nothing was changed.
    #[error("{message}")]
    Conflicts {
        /// What happened and what to do instead.
        message: String,
        /// The later changes, panel by panel.
        conflicts: Vec<RevertConflict>,
    },
    /// What the operation acts on is in a state that rules it out (a suggestion decided
    /// already, or one that no longer applies); nothing was changed.
    #[error("{0}")]
    Conflict(String),
    /// Well-formed input that does not match the workspace (a selected passage that is not
    /// where it says); nothing was changed.
    #[error("{0}")]
    Mismatch(String),
    /// A turn is already running on the thread.
    #[error("a turn is already running on this thread; wait for it or cancel it")]
    Busy,
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl WorkspaceError {
    /// A broken rule, with the text that says how to fix it.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::Invalid(message.into())
    }
}

/// One later change that stands in the way of undoing a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct RevertConflict {
    /// The panel both changed.
    pub panel: String,
    /// The later revision that changed it.
    pub rev: i64,
}
