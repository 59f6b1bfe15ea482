//! Storage: one repository API over SQLite and PostgreSQL.
//!
//! [`Database`] owns the pools and hands out [`Transaction`] values, each bound to one
//! transaction; the queries are grouped by aggregate into repositories over it
//! (`tx.plan()`, `tx.threads()`, …). SQLite gets a single writer connection (so writes queue in-process instead of
//! spinning on the file lock) plus a few readers; PostgreSQL gets one pool. Migrations run when
//! the database is opened.

mod approvals;
mod artifacts;
mod change_log;
mod checkpoint;
mod connect;
mod conversation;
mod copy;
mod database;
mod documents;
mod error;
mod events;
mod history;
pub mod journal;
mod leases;
mod lender;
mod literal;
mod mcp_sessions;
mod models;
mod objectives;
mod outage;
pub mod panels;
mod people;
mod plan;
mod preferences;
mod prompt_view;
mod query;
mod readers;
pub mod recording;
mod repository;
mod sqlite;
mod sqlite_build;
mod statements;
mod studies;
mod suggestions;
#[cfg(test)]
#[allow(clippy::expect_used, clippy::panic)]
mod test_postgres;
mod thread_id;
mod thread_lock;
mod threads;
pub mod usage;
mod writer;

pub use artifacts::ArtifactsRepo;
pub use change_log::{ChangeLog, LoggedChange};
pub use conversation::TurnsRepo;
pub use conversation::{MessageRecord, NewToolCall, StoredToolCall, StoredTurn, TurnStatus};
pub use copy::ForksRepo;
pub use database::{
    CONNECTIONS_PER_CORE, DEFAULT_DATABASE_URL, DEFAULT_POSTGRES_TIMEOUT,
    DEFAULT_SQLITE_GROUP_COMMIT, Database, PoolConfig, default_max_connections,
};
pub use documents::DocumentWrite;
pub use documents::DocumentsRepo;
pub use error::{DriverError, StoreError};
pub use events::EventsRepo;
pub use history::HistoryRepo;
pub use history::{Chain, NewRevision, PanelRecord, PanelWrite, Revision, revision_time};
pub use leases::LeasesRepo;
pub use leases::{ExpiredTurn, HeldTurn, TurnLease, now_ms};
pub use mcp_sessions::McpSessionRecord;
pub use mcp_sessions::McpSessionsRepo;
pub use models::{
    Artifact, ArtifactSummary, Document, ForkOrigin, NewEvent, PlanStep, Preference, StoredEvent,
    SuggestedEdit, Suggestion, Thread, Workspace,
};
pub use objectives::ObjectivesRepo;
pub use panels::{DocumentMode, SuggestionKind, SuggestionStatus};
pub use people::PeopleRepo;
pub use people::{Member, User};
pub use plan::PlanRepo;
pub use plan::{
    InsertAt, KEY_GAP, KeyBefore, NestingPlace, NewPlanStep, PlanTail, StepAt, StepPlace,
    StepRange, StepRun, StepsChanged,
};
pub use preferences::PreferencesRepo;
pub use preferences::{NewPreference, PreferencePatch, WriteOutcome};
pub use prompt_view::PromptViewRepo;
pub use prompt_view::{DocumentExcerpt, PlanPage};
/// A statement parameter, for [`lender::Lent::execute_and_commit`].
pub use query::Value as SqlValue;
pub use recording::RecordingsRepo;
pub use repository::ThreadHead;
pub use repository::{Backend, Transaction};
pub use sqlite::{MigrationError, SqliteError};
pub use studies::{
    ConditionRow, NewSession, SessionRow, SessionStatus, StudiesRepo, StudyRow, StudyStatus,
};
pub use suggestions::NewSuggestion;
pub use suggestions::SuggestionsRepo;
pub use thread_id::{InvalidThreadId, ThreadId};
pub use threads::ThreadsRepo;
