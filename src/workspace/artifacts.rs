//! Artifacts: the typed outputs the agent made (today, charts), each tagged with the turn that
//! made it. They are records of what was made: stored by the call that made them, listed
//! newest first, never changed.

use serde::Serialize;
use serde_json::Value;

use super::{Edit, WorkspaceError, Workspaces};
use crate::{
    ThreadId,
    store::{Artifact, ArtifactSummary},
};

/// How many artifacts the agent's list shows when it names no limit.
pub const AGENT_LIST_DEFAULT: i64 = 20;
/// The most the agent's list shows whatever the limit (a larger one is taken as this).
pub const AGENT_LIST_MAX: i64 = 100;
/// How many artifacts the user path lists when no limit is given.
pub const LIST_DEFAULT: i64 = 50;
/// The largest limit the user path accepts.
pub const LIST_MAX: i64 = 500;

/// An artifact to store, as a tool body returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewArtifact {
    /// Stable type tag clients dispatch on, e.g. `line_chart`.
    pub artifact_type: String,
    /// The artifact's typed content, stored as JSON.
    pub payload: Value,
    /// Optional human-readable title for artifact indexes.
    pub title: Option<String>,
}

/// An artifact as stored and announced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredArtifact {
    /// Its id.
    pub artifact_id: i64,
    /// Its type tag.
    pub artifact_type: String,
    /// Its title.
    pub title: Option<String>,
    /// Its content.
    pub payload: Value,
    /// The turn it belongs to.
    pub turn_index: i64,
}

/// Which artifacts to list: optionally one type, at most `limit`, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactQuery {
    /// Only this type; `None` for all.
    pub artifact_type: Option<String>,
    /// At most this many.
    pub limit: i64,
}

/// A blank type filter means no filter.
fn type_filter(artifact_type: Option<&str>) -> Result<Option<String>, WorkspaceError> {
    let filter = artifact_type
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string);
    if let Some(filter) = &filter {
        super::rules::check_length(filter, "artifact_type", 100)?;
    }
    Ok(filter)
}

impl ArtifactQuery {
    /// The agent's list: [`AGENT_LIST_DEFAULT`] unless it asks, never more than
    /// [`AGENT_LIST_MAX`] (the prompt stays small); a limit below 1 is refused.
    pub fn for_agent(
        artifact_type: Option<&str>,
        limit: Option<i64>,
    ) -> Result<Self, WorkspaceError> {
        let limit = match limit {
            None => AGENT_LIST_DEFAULT,
            Some(n) if n >= 1 => n.min(AGENT_LIST_MAX),
            Some(n) => {
                return Err(WorkspaceError::invalid(format!(
                    "`limit` is {n}: give a number from 1 to {AGENT_LIST_MAX}, or leave it out"
                )));
            }
        };
        Ok(Self {
            artifact_type: type_filter(artifact_type)?,
            limit,
        })
    }

    /// The user path's list: [`LIST_DEFAULT`] unless asked, a limit from 1 to [`LIST_MAX`].
    pub fn for_user(
        artifact_type: Option<&str>,
        limit: Option<i64>,
    ) -> Result<Self, WorkspaceError> {
        let limit = match limit {
            None => LIST_DEFAULT,
            Some(n) if (1..=LIST_MAX).contains(&n) => n,
            Some(n) => {
                return Err(WorkspaceError::invalid(format!(
                    "`limit` is {n}: give a number from 1 to {LIST_MAX}, or leave it out for \
                     {LIST_DEFAULT}"
                )));
            }
        };
        Ok(Self {
            artifact_type: type_filter(artifact_type)?,
            limit,
        })
    }
}

impl Edit {
    /// Stores an artifact with the thread's current turn index, to be announced with the
    /// change.
    pub async fn store_artifact(
        &mut self,
        artifact: NewArtifact,
    ) -> Result<StoredArtifact, WorkspaceError> {
        let thread = self.thread_str();
        let turn_index = self.turn_index();
        let id = self
            .repo()
            .add_artifact(
                &thread,
                &artifact.artifact_type,
                artifact.title.as_deref(),
                &artifact.payload,
                turn_index,
            )
            .await?;
        let stored = StoredArtifact {
            artifact_id: id,
            artifact_type: artifact.artifact_type,
            title: artifact.title,
            payload: artifact.payload,
            turn_index,
        };
        self.stored_artifact(stored.clone());
        Ok(stored)
    }
}

impl Workspaces {
    /// The thread's artifacts as the query asks.
    pub async fn artifacts(
        &self,
        thread: &ThreadId,
        query: &ArtifactQuery,
    ) -> Result<Vec<ArtifactSummary>, WorkspaceError> {
        {
            let mut view = self.view(thread).await?;
            let found = view.artifacts(query).await;
            view.settle(found).await
        }
    }

    /// One artifact of the thread with its payload.
    pub async fn artifact(&self, thread: &ThreadId, id: i64) -> Result<Artifact, WorkspaceError> {
        {
            let mut view = self.view(thread).await?;
            let found = view.artifact(id).await;
            view.settle(found).await
        }
    }
}

/// One artifact as an index line, `#12 bar_chart "Sales" (turn 3)`: what `list_artifacts`
/// answers and the agent's prompt shows.
pub fn artifact_line(artifact: &ArtifactSummary) -> String {
    format!(
        "#{} {} \"{}\" (turn {})",
        artifact.id,
        artifact.artifact_type,
        artifact.title.as_deref().unwrap_or("untitled"),
        artifact.turn_index
    )
}
