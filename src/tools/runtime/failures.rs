//! How a call fails: the kinds of failure, a body's panic contained, and the text the model
//! reads for each.

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use serde::Serialize;

use crate::{tools::output::ToolError, tools::output::ToolOutput};

use haico_core::workspace::WorkspaceError;

/// Why a call failed, for callers that map failures onto something else (HTTP status codes,
/// metrics labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// No tool has that name.
    UnknownTool,
    /// The thread does not exist.
    UnknownThread,
    /// The arguments were malformed or broke a rule.
    InvalidArguments,
    /// The call referred to something that does not exist.
    NotFound,
    /// The database failed.
    Storage,
    /// The body panicked.
    Panic,
    /// The same call was already made in the turn; it was not run again.
    Repeated,
    /// Another MCP server's tool failed, timed out, or its server could not be reached.
    External,
}

impl FailureKind {
    /// The snake-case name, as in metrics labels.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::UnknownTool => "unknown_tool",
            FailureKind::UnknownThread => "unknown_thread",
            FailureKind::InvalidArguments => "invalid_arguments",
            FailureKind::NotFound => "not_found",
            FailureKind::Storage => "storage",
            FailureKind::Panic => "panic",
            FailureKind::Repeated => "repeated",
            FailureKind::External => "external",
        }
    }
}

/// A failure on its way to the envelope.
pub(super) type Failure = (FailureKind, String);

/// Runs a body with its panics contained: a panic becomes a failure, never a crashed turn.
pub(super) async fn contain(
    name: &str,
    body: crate::tools::collection::ToolFuture<'_>,
) -> Result<ToolOutput, Failure> {
    match AssertUnwindSafe(body).catch_unwind().await {
        Ok(Ok(output)) => Ok(output),
        Ok(Err(err)) => Err(body_failure(err)),
        Err(panic) => {
            tracing::error!(
                panic = panic_message(&*panic),
                "tool body panicked; its transaction was rolled back"
            );
            Err((
                FailureKind::Panic,
                format!(
                    "tool `{name}` failed with an internal error; nothing was changed. Try again \
                     or continue without it."
                ),
            ))
        }
    }
}

/// A tool's glue and its declaration disagree (cannot happen with generated glue).
pub(super) fn declaration_mismatch(name: &str) -> Failure {
    (
        FailureKind::Panic,
        format!("tool `{name}` is declared inconsistently; nothing was changed"),
    )
}

/// Opening the call's edit or view failed: the thread is unknown, or the database is down.
pub(super) fn open_failure(err: WorkspaceError) -> Failure {
    match err {
        WorkspaceError::UnknownThread(_) => (FailureKind::UnknownThread, err.to_string()),
        other => storage_failure(other),
    }
}

pub(super) fn storage_failure(err: WorkspaceError) -> Failure {
    tracing::error!(error = %err, "tool call hit a storage error");
    (
        FailureKind::Storage,
        format!("the workspace could not be saved ({err}); nothing was changed"),
    )
}

pub(super) fn body_failure(err: ToolError) -> Failure {
    let kind = match &err {
        ToolError::InvalidArguments(_) => FailureKind::InvalidArguments,
        ToolError::NotFound(_) => FailureKind::NotFound,
        ToolError::Store(_) => FailureKind::Storage,
    };
    if let ToolError::Store(inner) = &err {
        tracing::error!(error = %inner, "tool body hit a storage error");
    }
    (kind, err.to_string())
}

pub(super) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "non-text panic".to_string()
    }
}
