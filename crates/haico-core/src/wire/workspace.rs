//! A thread and its panels as clients read them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{people::Access, people::Op, people::permits};

use haico_store::panels::PreferenceKind;

use haico_store as store;

/// A conversation and its workspace.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
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
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub forked_from: Option<ForkOrigin>,
    /// The name of the person who owns it; absent for a thread without an owner (one-person
    /// mode, the administrator's token).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub owner: Option<String>,
    /// What the agent's document tools do: `direct` (change the document) or `suggest` (make
    /// suggestions the person accepts or rejects).
    #[schema(value_type = String)]
    pub document_mode: store::DocumentMode,
    /// Which configured MCP servers the thread's agent may use: `null` for all of them (the
    /// default), or their names (an empty list: none).
    pub mcp_servers: Option<Vec<String>>,
    /// What the signed-in caller may do with it (`owner`, `editor` or `viewer`); absent in
    /// one-person mode and for the administrator's token, who may do everything.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub access: Option<String>,
    /// What the caller may do with it, by the server's one access rule: a page offers these
    /// and nothing else, so it never restates the rule.
    pub may: ThreadMay,
}

/// What the caller may do with a thread; reading it goes without saying (whoever gets the
/// thread may read it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct ThreadMay {
    /// Start and stop agent turns, and call the tools that write.
    pub chat: bool,
    /// Change the workspace and the thread as a person: panels, title, mode, restore, undo.
    pub edit: bool,
    /// Say whom the thread is shared with.
    pub share: bool,
    /// Delete the thread.
    pub delete: bool,
}

impl ThreadMay {
    /// What `access` allows. A thread without one (one-person mode, the administrator's
    /// token) allows everything, as the rule does for those callers.
    fn of(access: Option<&str>) -> Self {
        let access = match access {
            Some("viewer") => Access::Viewer,
            Some("editor") => Access::Editor,
            Some("owner") | None => Access::Owner,
            Some(_) => Access::None,
        };
        let may = |op| permits(access, op).is_ok();
        Self {
            chat: may(Op::Chat),
            edit: may(Op::Edit),
            share: may(Op::Share),
            delete: may(Op::Delete),
        }
    }
}

impl From<store::Thread> for Thread {
    fn from(t: store::Thread) -> Self {
        Thread {
            id: t.id,
            title: t.title,
            turn_index: t.turn_index,
            created_at: t.created_at,
            updated_at: t.updated_at,
            forked_from: t.forked_from.map(ForkOrigin::from),
            owner: t.owner,
            document_mode: t.document_mode,
            mcp_servers: t.mcp_servers,
            may: ThreadMay::of(t.access.as_deref()),
            access: t.access,
        }
    }
}

/// The thread and revision a fork was made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ForkOrigin {
    /// The thread forked.
    pub thread_id: String,
    /// Its revision the fork started from.
    pub rev: i64,
}

impl From<store::ForkOrigin> for ForkOrigin {
    fn from(f: store::ForkOrigin) -> Self {
        ForkOrigin {
            thread_id: f.thread_id,
            rev: f.rev,
        }
    }
}

impl From<ForkOrigin> for store::ForkOrigin {
    fn from(f: ForkOrigin) -> Self {
        store::ForkOrigin {
            thread_id: f.thread_id,
            rev: f.rev,
        }
    }
}

/// The co-edited working document of a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Document {
    /// Title shown above the document.
    pub title: String,
    /// Markdown body.
    pub content: String,
    /// Bumped on every write, so editors can detect that someone else wrote meanwhile.
    pub version: i64,
}

impl From<store::Document> for Document {
    fn from(d: store::Document) -> Self {
        Document {
            title: d.title,
            content: d.content,
            version: d.version,
        }
    }
}

/// One step of the plan (a "todo" on the wire, as in the seeds).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
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

impl From<store::PlanStep> for PlanStep {
    fn from(s: store::PlanStep) -> Self {
        PlanStep {
            id: s.id,
            text: s.text,
            depth: s.depth,
            done: s.done,
        }
    }
}

/// A user constraint.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
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

impl From<store::Preference> for Preference {
    fn from(p: store::Preference) -> Self {
        Preference {
            id: p.id,
            title: p.title,
            subtitle: p.subtitle,
            kind: p.kind,
            locked: p.locked,
        }
    }
}

/// An artifact's metadata, as listed in indexes and the workspace snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
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

impl From<store::ArtifactSummary> for ArtifactSummary {
    fn from(a: store::ArtifactSummary) -> Self {
        ArtifactSummary {
            id: a.id,
            artifact_type: a.artifact_type,
            title: a.title,
            turn_index: a.turn_index,
            created_at: a.created_at,
        }
    }
}

/// An artifact with its payload.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Artifact {
    /// Metadata.
    #[serde(flatten)]
    pub summary: ArtifactSummary,
    /// The typed content.
    pub payload: Value,
}

impl From<store::Artifact> for Artifact {
    fn from(a: store::Artifact) -> Self {
        Artifact {
            summary: a.summary.into(),
            payload: a.payload,
        }
    }
}

/// Everything a thread's panels show, in display order.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Workspace {
    /// The one-line objective, if set.
    pub objective: Option<String>,
    /// The document, if one exists.
    pub document: Option<Document>,
    /// The plan, in order (`todos` on the wire).
    #[serde(rename = "todos")]
    pub plan: Vec<PlanStep>,
    /// The preferences, in order.
    pub preferences: Vec<Preference>,
    /// Artifact index, newest first.
    pub artifacts: Vec<ArtifactSummary>,
}

impl From<store::Workspace> for Workspace {
    fn from(w: store::Workspace) -> Self {
        Workspace {
            objective: w.objective,
            document: w.document.map(Document::from),
            plan: w.plan.into_iter().map(PlanStep::from).collect(),
            preferences: w.preferences.into_iter().map(Preference::from).collect(),
            artifacts: w.artifacts.into_iter().map(ArtifactSummary::from).collect(),
        }
    }
}

/// One passage change of a suggestion: for an `edit`, `old_text` occurs exactly once where it
/// is applied; for an `append`, `old_text` is empty; for a `replace`, `old_text` is the whole
/// body the suggestion was made on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct SuggestedEdit {
    /// The passage to change.
    pub old_text: String,
    /// What takes its place.
    pub new_text: String,
}

impl From<store::SuggestedEdit> for SuggestedEdit {
    fn from(e: store::SuggestedEdit) -> Self {
        SuggestedEdit {
            old_text: e.old_text,
            new_text: e.new_text,
        }
    }
}
