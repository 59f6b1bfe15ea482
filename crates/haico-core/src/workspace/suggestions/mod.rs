//! Suggestions: in `suggest` mode the agent proposes document changes and a person decides.
//!
//! A thread's [`DocumentMode`] decides what the agent's document tools do: `direct` writes the
//! document (as before), `suggest` leaves it unchanged and stores the
//! [`DocumentChange`](super::DocumentChange) as a suggestion (`agent.rs`).
//! A person lists, accepts or rejects suggestions (`decide.rs`). Accepting applies the
//! suggestion's edits to the document *as it is now*: a suggestion made on version n still
//! applies after an unrelated edit, because each edit finds its passage by text, not by
//! position; one whose passage the person changed becomes `outdated` and changes nothing
//! (`apply.rs`). Suggestions are records: never deleted, never restored, only decided; the
//! history replays them like the plan (`history/replay.rs`).

mod agent;
mod apply;
mod decide;

mod selection;
mod wire;

pub use crate::workspace::focus::{Focus, Span, byte_at, mapped_offset};
pub use agent::Written;
pub use apply::{applied_body, suggestion_diff};
pub use decide::{Accepted, ListedSuggestion};
pub use selection::{MAX_SELECTION_CHARS, Selection, message_about};
pub use wire::{SuggestionBody, to_wire};

use crate::workspace::error::WorkspaceError;
/// The mode, a suggestion's kind and its status: the store's words, spelled there once.
pub use haico_store::{DocumentMode, SuggestionKind, SuggestionStatus};

/// A thread's document mode from its spelling, or the error a caller sees.
pub fn checked_mode(text: &str) -> Result<DocumentMode, WorkspaceError> {
    DocumentMode::parse(text).ok_or_else(|| {
        WorkspaceError::invalid(format!(
            "`document_mode` is {text:?}: use \"direct\" or \"suggest\""
        ))
    })
}

/// A suggestion status from its spelling, or the error a caller sees.
pub fn checked_status(text: &str) -> Result<SuggestionStatus, WorkspaceError> {
    SuggestionStatus::parse(text).ok_or_else(|| {
        WorkspaceError::invalid(format!(
            "`status` is {text:?}: use open, accepted, rejected or outdated"
        ))
    })
}
