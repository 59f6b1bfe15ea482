//! How a suggestion reads to clients (REST, MCP, the UI): one shape, so every adapter answers
//! the same fields. Its status and kind are the store's enums, published by their one
//! spelling; the schema keeps them plain strings, as it always published them.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::workspace::suggestions::decide::ListedSuggestion;

use crate::wire::SuggestedEdit;
use haico_store::{SuggestionKind, SuggestionStatus};

/// A suggestion as clients read it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct SuggestionBody {
    /// Its number in the thread, from 1.
    pub id: i64,
    /// `open`, `accepted`, `rejected` or `outdated`.
    #[schema(value_type = String)]
    pub status: SuggestionStatus,
    /// `edit` (edit_document), `append` (append_to_document) or `replace` (update_document).
    #[schema(value_type = String)]
    pub kind: SuggestionKind,
    /// The agent turn that made it.
    pub turn_index: i64,
    /// The person on whose behalf the agent worked, when known.
    pub by: Option<String>,
    /// The agent's reason.
    pub action_and_reasoning: Option<String>,
    /// The document version it was made on.
    pub base_version: i64,
    /// The title it proposes, if any.
    pub title: Option<String>,
    /// The passage changes, applied in order (`old_text` empty for an append; the whole body
    /// it was made on for a replace).
    pub edits: Vec<SuggestedEdit>,
    /// Open: the unified diff from the document as it is now to the document with the
    /// suggestion applied (`null` when it no longer applies). Decided: the diff it had then.
    pub diff: Option<String>,
    /// Whether accepting it now would apply (false once decided).
    pub applies: bool,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it was decided.
    pub decided_at: Option<DateTime<Utc>>,
    /// Who decided it.
    pub decided_by: Option<String>,
}

/// The client shape of `listed`.
pub fn to_wire(listed: &ListedSuggestion) -> SuggestionBody {
    let s = &listed.suggestion;
    SuggestionBody {
        id: s.id,
        status: s.status,
        kind: s.kind,
        turn_index: s.turn_index,
        by: s.by.clone(),
        action_and_reasoning: s.action_and_reasoning.clone(),
        base_version: s.base_version,
        title: s.title.clone(),
        edits: s.edits.iter().cloned().map(SuggestedEdit::from).collect(),
        diff: listed.diff.clone(),
        applies: listed.applies,
        created_at: s.created_at,
        decided_at: s.decided_at,
        decided_by: s.decided_by.clone(),
    }
}
