//! Rows of the workspace as the rest of the program sees them. None of them is published as it
//! is: what clients read is `haico_core::wire`'s, made from these by `From`. The panel rows that the
//! history keeps as JSON (a document, a plan step, a preference) derive serde for that stored
//! format only.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::query::{OrDefault, row_shape};
use crate::panels::{DocumentMode, PreferenceKind, SuggestionKind, SuggestionStatus};

/// A conversation and its workspace.
#[derive(Debug, Clone, PartialEq)]
pub struct Thread {
    /// The thread id (`[A-Za-z0-9_-]{1,64}`).
    pub id: String,
    /// A human title for thread lists.
    pub title: String,
    /// How many agent turns the thread has had; 0 before the first.
    pub turn_index: i64,
    /// When the thread was made.
    pub created_at: DateTime<Utc>,
    /// When the thread or its workspace last changed through a thread-level write.
    pub updated_at: DateTime<Utc>,
    /// Where a forked thread came from; absent for a thread that was not forked.
    pub forked_from: Option<ForkOrigin>,
    /// The name of the person who owns it; absent for a thread without an owner (one-person
    /// mode, the administrator's token).
    pub owner: Option<String>,
    /// What the agent's document tools do: change the document, or make suggestions the
    /// person accepts or rejects.
    pub document_mode: DocumentMode,
    /// Which configured MCP servers the thread's agent may use: `null` for all of them (the
    /// default), or their names (an empty list: none).
    pub mcp_servers: Option<Vec<String>>,
    /// What the signed-in caller may do with it (`owner`, `editor` or `viewer`); absent in
    /// one-person mode and for the administrator's token, who may do everything.
    pub access: Option<String>,
}

/// The thread and revision a fork was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkOrigin {
    /// The thread forked.
    pub thread_id: String,
    /// Its revision the fork started from.
    pub rev: i64,
}

/// A thread row as stored.
#[derive(sqlx::FromRow)]
pub(crate) struct ThreadRow {
    id: String,
    title: String,
    turn_index: i64,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    forked_from_thread: Option<String>,
    forked_from_rev: Option<i64>,
    #[sqlx(default)]
    owner: Option<String>,
    #[sqlx(default)]
    document_mode: Option<String>,
    #[sqlx(default)]
    mcp_servers: Option<String>,
}

row_shape!(ThreadRow {
    id: String,
    title: String,
    turn_index: i64,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    forked_from_thread: Option<String>,
    forked_from_rev: Option<i64>,
    owner: OrDefault<Option<String>>,
    document_mode: OrDefault<Option<String>>,
    mcp_servers: OrDefault<Option<String>>,
} => ThreadRow {
    id,
    title,
    turn_index,
    created_at,
    updated_at,
    forked_from_thread,
    forked_from_rev,
    owner: owner.0,
    document_mode: document_mode.0,
    mcp_servers: mcp_servers.0,
});

impl From<ThreadRow> for Thread {
    fn from(row: ThreadRow) -> Self {
        let forked_from = match (row.forked_from_thread, row.forked_from_rev) {
            (Some(thread_id), Some(rev)) => Some(ForkOrigin { thread_id, rev }),
            _ => None,
        };
        Thread {
            id: row.id,
            title: row.title,
            turn_index: row.turn_index,
            created_at: row.created_at,
            updated_at: row.updated_at,
            forked_from,
            owner: row.owner,
            document_mode: DocumentMode::from_stored(row.document_mode.as_deref()),
            mcp_servers: row.mcp_servers.as_deref().and_then(server_names),
            access: None,
        }
    }
}

/// A stored `mcp_servers` column: a JSON array of names. Only haico writes it; should it ever
/// hold anything else, the thread falls back to every server (as before the setting existed)
/// and the log says so.
fn server_names(stored: &str) -> Option<Vec<String>> {
    match serde_json::from_str(stored) {
        Ok(names) => Some(names),
        Err(err) => {
            tracing::warn!(error = %err, "a thread's stored MCP servers are not a list of names; all are offered");
            None
        }
    }
}

/// The co-edited working document of a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
pub struct Document {
    /// Title shown above the document.
    pub title: String,
    /// Markdown body.
    pub content: String,
    /// Bumped on every write, so editors can detect that someone else wrote meanwhile.
    pub version: i64,
}

row_shape!(Document { title: String, content: String, version: i64 } => Document {
    title,
    content,
    version,
});

/// One step of the plan (a "todo" on the wire, as in the seeds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct PlanStep {
    /// Stable id, for the user path.
    pub id: i64,
    /// The step's text.
    pub text: String,
    /// Outline depth, 0 for a top-level step.
    pub depth: i64,
    /// Whether the step is ticked off.
    pub done: bool,
}

/// A user constraint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preference {
    /// Stable id, for the user path.
    pub id: i64,
    /// The constraint in a few words.
    pub title: String,
    /// Optional detail.
    pub subtitle: Option<String>,
    /// Hard or soft.
    pub kind: PreferenceKind,
    /// Whether only the user may change or remove it.
    pub locked: bool,
}

/// An artifact's metadata, as listed in indexes and the workspace snapshot.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct ArtifactSummary {
    /// Artifact id, unique across threads.
    pub id: i64,
    /// Type tag, e.g. `bar_chart`.
    pub artifact_type: String,
    /// Optional title.
    pub title: Option<String>,
    /// The turn that made it.
    pub turn_index: i64,
    /// When it was stored.
    pub created_at: DateTime<Utc>,
}

row_shape!(ArtifactSummary {
    id: i64,
    artifact_type: String,
    title: Option<String>,
    turn_index: i64,
    created_at: DateTime<Utc>,
} => ArtifactSummary { id, artifact_type, title, turn_index, created_at });

/// An artifact with its payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Artifact {
    /// Metadata.
    pub summary: ArtifactSummary,
    /// The typed content.
    pub payload: Value,
}

/// Everything a thread's panels show, in display order.
#[derive(Debug, Clone, PartialEq)]
pub struct Workspace {
    /// The one-line objective, if set.
    pub objective: Option<String>,
    /// The document, if one exists.
    pub document: Option<Document>,
    /// The plan, in order (`todos` on the wire).
    pub plan: Vec<PlanStep>,
    /// The preferences, in order.
    pub preferences: Vec<Preference>,
    /// Artifact index, newest first.
    pub artifacts: Vec<ArtifactSummary>,
}

/// One passage change of a suggestion: for an `edit`, `old_text` occurs exactly once where it
/// is applied; for an `append`, `old_text` is empty; for a `replace`, `old_text` is the whole
/// body the suggestion was made on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuggestedEdit {
    /// The passage to change.
    pub old_text: String,
    /// What takes its place.
    pub new_text: String,
}

/// A suggestion as stored (and as the history records it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    /// Its number in the thread, from 1.
    pub id: i64,
    /// Where it stands.
    pub status: SuggestionStatus,
    /// Which tool it stands for: `edit` (edit_document), `append` (append_to_document) or
    /// `replace` (update_document).
    pub kind: SuggestionKind,
    /// The turn that made it.
    pub turn_index: i64,
    /// The person on whose behalf the agent worked, when known.
    pub by: Option<String>,
    /// The agent's sentence on what and why.
    pub action_and_reasoning: Option<String>,
    /// The document version it was made on (0: no document yet).
    pub base_version: i64,
    /// A new title, when it proposes one.
    pub title: Option<String>,
    /// The changes, applied in order.
    pub edits: Vec<SuggestedEdit>,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it was decided.
    pub decided_at: Option<DateTime<Utc>>,
    /// Who decided it.
    pub decided_by: Option<String>,
    /// The diff it had when it was decided (accepted: what it changed), so a decided
    /// suggestion still shows what it was.
    pub diff: Option<String>,
}

/// An event to append: its SSE name and its JSON data, already encoded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewEvent {
    /// The SSE `event:` name (`workspace`, `artifact`, `step`, …).
    pub event: &'static str,
    /// The JSON data, encoded once here and sent as is to every subscriber.
    pub data: String,
}

/// An event as stored: its per-thread sequence number is its SSE `id`.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StoredEvent {
    /// Position in the thread's log, from 1.
    pub seq: i64,
    /// The SSE `event:` name.
    pub event: String,
    /// The JSON data.
    pub data: String,
}
