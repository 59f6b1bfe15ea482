//! What a tool body hands back to the runtime: a summary for the model, optionally the artifact
//! the call stored, or a typed error that becomes a failure envelope.

use haico_store::StoreError;

use haico_core::{workspace::StoredArtifact, workspace::WorkspaceError};

/// The successful result of a tool body.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The text the model reads in the envelope's `summary`.
    pub summary: String,
    /// The artifact this call stored in its edit (through the workspace, e.g.
    /// [`ArtifactsEdit::add_chart`](crate::workspace::ArtifactsEdit::add_chart)), for the envelope to report.
    pub artifact: Option<StoredArtifact>,
}

impl ToolOutput {
    /// A plain summary with no artifact.
    pub fn summary(summary: impl Into<String>) -> Self {
        Self {
            summary: summary.into(),
            artifact: None,
        }
    }

    /// A summary plus the artifact the call stored, which the envelope reports with its id.
    pub fn with_artifact(summary: impl Into<String>, artifact: StoredArtifact) -> Self {
        Self {
            summary: summary.into(),
            artifact: Some(artifact),
        }
    }
}

impl From<String> for ToolOutput {
    fn from(summary: String) -> Self {
        Self::summary(summary)
    }
}

impl From<&str> for ToolOutput {
    fn from(summary: &str) -> Self {
        Self::summary(summary)
    }
}

/// Why a tool call failed. Every variant becomes a failure envelope whose text the model can act
/// on; none of them crashes a turn.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit the tool's schema or its rules; the text says what to fix.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// Something the call refers to (an artifact, a step) does not exist in this thread.
    #[error("{0}")]
    NotFound(String),
    /// The storage layer failed; the call's transaction is rolled back.
    #[error("storage error: {0}")]
    Store(#[from] StoreError),
}

/// A workspace rule refusing the call, as the model reads it.
impl From<WorkspaceError> for ToolError {
    fn from(err: WorkspaceError) -> Self {
        match err {
            WorkspaceError::NotFound(message) => Self::NotFound(message),
            WorkspaceError::UnknownThread(_) => Self::NotFound(err.to_string()),
            WorkspaceError::Store(store) => Self::Store(store),
            WorkspaceError::Invalid(message) => Self::InvalidArguments(message),
            other @ (WorkspaceError::ThreadExists(_)
            | WorkspaceError::StaleDocument { .. }
            | WorkspaceError::Conflicts { .. }
            | WorkspaceError::Conflict(_)
            | WorkspaceError::Mismatch(_)
            | WorkspaceError::Busy) => Self::InvalidArguments(other.to_string()),
        }
    }
}

impl ToolError {
    /// Shorthand for an argument error with a message aimed at the model.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::InvalidArguments(message.into())
    }
}

/// What every tool body returns.
pub type ToolResult = Result<ToolOutput, ToolError>;

/// Lets a tool body return `Result<String, ToolError>`, `Result<&str, _>` or a full
/// [`ToolResult`]; the generated glue converts all of them the same way.
pub trait IntoToolResult {
    /// Converts the body's return value into the runtime's result type.
    fn into_tool_result(self) -> ToolResult;
}

impl<T: Into<ToolOutput>> IntoToolResult for Result<T, ToolError> {
    fn into_tool_result(self) -> ToolResult {
        self.map(Into::into)
    }
}
