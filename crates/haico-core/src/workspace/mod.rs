//! The domain layer: every rule of a thread's workspace, in one place that every entry point
//! calls.
//!
//! The tools (the agent and MCP), the REST user path, the agent loop and the command line are
//! adapters: they translate their input into calls on this module and its answers back into
//! envelopes, status codes or terminal lines. They never write to the store or publish events
//! themselves. What lives here:
//!
//! - **limits and validation** ([`rules`] and each panel's module): text lengths, batch sizes,
//!   one-line objectives, outline depths, so a rule and its error text exist once;
//! - **the two paths** ([`Source`]): the agent path respects preference locks, the user path
//!   overrides them and is the only one that can lock or unlock;
//! - **placement** ([`plan`]): where an outline or a step goes, and what a removal takes with it;
//! - **the thread lock** ([`Edit`]): an agent call holds its thread for the whole transaction,
//!   so every index it sees is resolved against one snapshot; a person's plan edits take it
//!   too, while a person's preference, document and objective edits deliberately do not, so a
//!   lock never waits behind an agent call;
//! - **one commit path** ([`Edit::commit`]): the change's events are appended to the thread's
//!   log in the same transaction, the transaction commits, and only then are the events
//!   published, so every client (in any process) learns of exactly what was committed;
//! - **what a change announces** ([`announce`]): the JSON of every event.
//!
//! [`Workspaces`] is the entry point: it opens an [`Edit`] (a write) or a [`View`] (a read
//! snapshot) of one thread, and offers the user path's one-shot operations, each a complete
//! change (checked, written, committed and announced) or an error that wrote nothing.

pub(crate) mod actor;
pub mod announce;
mod approvals;
mod artifact_query;
mod artifacts;
pub mod charts;
mod conversation;
mod document;
mod edit;
mod error;
pub(crate) mod focus;
mod handles;
pub mod history;
mod objective;
pub mod plan;
pub mod preferences;
pub mod recording;
pub(crate) mod revision;
pub mod rules;
mod service;
mod study_events;
pub mod suggestions;
mod threads;
mod view;

pub use actor::Actor;
pub use announce::{Source, StoredArtifact};
pub use approvals::ApprovalRequest;
pub use artifact_query::{
    AGENT_LIST_DEFAULT, AGENT_LIST_MAX, ArtifactQuery, INDEX_MAX, LIST_DEFAULT, LIST_MAX,
    MAX_ARTIFACT_TYPE_CHARS,
};
pub use artifacts::{ChartAdded, artifact_line};
pub use conversation::{MAX_MESSAGE_CHARS, TurnEnd, TurnOpened, checked_message};
pub use document::{
    DocumentChange, DocumentChanged, MAX_DOCUMENT_CHARS, MAX_DOCUMENT_TITLE_CHARS, TextEdit,
    empty_document, loss,
};
pub use edit::{Committed, Edit};
pub use error::{RevertConflict, WorkspaceError};
pub use handles::{
    ArtifactsEdit, DocumentEdit, ObjectiveEdit, PlanEdit, PreferencesEdit, ThreadArtifacts,
    ThreadDocument, ThreadObjective, ThreadPlan, ThreadPreferences, ThreadSuggestions, Threads,
};
pub use history::{DocumentDiff, HistoryPage};
pub use objective::{MAX_OBJECTIVE_CHARS, ObjectiveSet, normalize_objective};
pub use plan::{MAX_DEPTH, MAX_STEP_CHARS, StepDraft, StepPlacement};
pub use preferences::{
    MAX_SUBTITLE_CHARS, MAX_TITLE_CHARS, PreferenceChange, PreferenceDraft, TargetOutcome,
};
pub use revision::ChangeNote;
pub use service::Workspaces;
pub use suggestions::{
    Accepted, DocumentMode, Focus, ListedSuggestion, Selection, SuggestionKind, SuggestionStatus,
    Written,
};
pub use threads::{
    DEFAULT_THREAD_TITLE, MAX_SERVER_NAME_LEN, MAX_THREAD_TITLE_CHARS, ServerChoice, ThreadChange,
    check_server_names, checked_title as checked_thread_title, valid_server_name,
};
pub use view::View;
