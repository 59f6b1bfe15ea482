//! Suggestions: in `suggest` mode the agent proposes document changes and a person decides.
//!
//! A thread's [`DocumentMode`] decides what the agent's document tools do: `direct` writes the
//! document (as before), `suggest` leaves it unchanged and stores a suggestion (`agent.rs`).
//! A person lists, accepts or rejects suggestions (`decide.rs`). Accepting applies the
//! suggestion's edits to the document *as it is now*: a suggestion made on version n still
//! applies after an unrelated edit, because each edit finds its passage by text, not by
//! position; one whose passage the person changed becomes `outdated` and changes nothing
//! (`apply.rs`). Suggestions are records: never deleted, never restored, only decided; the
//! history replays them like the plan (`history/replay.rs`).

mod agent;
mod apply;
mod decide;
mod focus;
mod selection;
mod wire;

pub use agent::{SuggestionDraft, Written};
pub use apply::{applied_body, suggestion_diff};
pub use decide::{Accepted, ListedSuggestion};
pub use focus::{Focus, Span, byte_at, mapped_offset};
pub use selection::{MAX_SELECTION_CHARS, Selection, message_about};
pub use wire::{SuggestionBody, to_wire};

use super::WorkspaceError;

/// What the agent's document tools do on a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DocumentMode {
    /// They change the document (the default).
    #[default]
    Direct,
    /// They make suggestions a person accepts or rejects.
    Suggest,
}

impl DocumentMode {
    /// The stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DocumentMode::Direct => "direct",
            DocumentMode::Suggest => "suggest",
        }
    }

    /// The mode with this spelling.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "direct" => Some(DocumentMode::Direct),
            "suggest" => Some(DocumentMode::Suggest),
            _ => None,
        }
    }

    /// The mode with this spelling, or the error a caller sees.
    pub fn checked(text: &str) -> Result<Self, WorkspaceError> {
        Self::parse(text).ok_or_else(|| {
            WorkspaceError::invalid(format!(
                "`document_mode` is {text:?}: use \"direct\" or \"suggest\""
            ))
        })
    }
}

/// Where a suggestion stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuggestionStatus {
    /// Waiting for a person.
    Open,
    /// Applied to the document.
    Accepted,
    /// Turned down.
    Rejected,
    /// Its text no longer matched the document when someone tried to accept it.
    Outdated,
}

impl SuggestionStatus {
    /// The stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SuggestionStatus::Open => "open",
            SuggestionStatus::Accepted => "accepted",
            SuggestionStatus::Rejected => "rejected",
            SuggestionStatus::Outdated => "outdated",
        }
    }

    /// The status with this spelling.
    pub fn parse(text: &str) -> Option<Self> {
        [
            SuggestionStatus::Open,
            SuggestionStatus::Accepted,
            SuggestionStatus::Rejected,
            SuggestionStatus::Outdated,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
    }

    /// The status with this spelling, or the error a caller sees.
    pub fn checked(text: &str) -> Result<Self, WorkspaceError> {
        Self::parse(text).ok_or_else(|| {
            WorkspaceError::invalid(format!(
                "`status` is {text:?}: use open, accepted, rejected or outdated"
            ))
        })
    }
}
