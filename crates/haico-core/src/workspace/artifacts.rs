//! Artifacts: the typed outputs the agent made (today, charts), each tagged with the turn that
//! made it. They are records of what was made: stored by the call that made them, listed
//! newest first, never changed.
//!
//! A chart is checked here, whole, before it is stored ([`ArtifactsEdit::add_chart`]), and a recording
//! that brings one in passes the same check ([`checked_recorded_chart`]): there is no other way
//! into the artifacts table. How many artifacts a list shows is decided here too, for every
//! adapter: [`ArtifactQuery`] can only be made by its constructors, each with its limit.

use crate::{workspace::handles::ArtifactsEdit, workspace::handles::ThreadArtifacts};
use serde_json::Value;

use crate::{
    workspace::announce::StoredArtifact, workspace::artifact_query::ArtifactQuery,
    workspace::charts::ChartDraft, workspace::charts::ChartPayload, workspace::charts::ChartType,
    workspace::charts::validate_chart, workspace::error::WorkspaceError,
};
use haico_store::{Artifact, ArtifactSummary};

/// An artifact to store: only made by the checks of this module.
#[derive(Debug, Clone, PartialEq)]
struct NewArtifact {
    /// Stable type tag clients dispatch on, e.g. `line_chart`.
    artifact_type: String,
    /// The artifact's typed content, stored as JSON.
    payload: Value,
    /// Optional human-readable title for artifact indexes.
    title: Option<String>,
}

/// What adding a chart did: the artifact as stored, and the chart as checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartAdded {
    /// The stored artifact (its id, type, title, payload and turn).
    pub artifact: StoredArtifact,
    /// The chart as the check left it (trimmed texts, a style).
    pub chart: ChartPayload,
}

/// A chart as an artifact: its type tag, its payload as JSON and its title.
fn chart_artifact(
    chart_type: ChartType,
    chart: &ChartPayload,
) -> Result<NewArtifact, WorkspaceError> {
    let payload = serde_json::to_value(chart)
        .map_err(|err| WorkspaceError::invalid(format!("the chart could not be encoded: {err}")))?;
    Ok(NewArtifact {
        artifact_type: chart_type.artifact_type().to_string(),
        payload,
        title: Some(chart.title.clone()),
    })
}

/// A chart checked whole (see [`validate_chart`]); the error says what to fix.
fn checked_chart(draft: ChartDraft) -> Result<ChartPayload, WorkspaceError> {
    validate_chart(draft).map_err(|err| WorkspaceError::invalid(err.to_string()))
}

/// The payload a recording's artifact line may bring in: a chart (by its type tag) that passes
/// the same check as a new one, with the chart's title as its own, re-encoded as
/// [`ArtifactsEdit::add_chart`] would store it. A recording cannot bring in what no edit could make.
pub(super) fn checked_recorded_chart(
    artifact_type: &str,
    title: Option<&str>,
    payload: &Value,
) -> Result<Value, WorkspaceError> {
    let chart_type = ChartType::from_artifact_type(artifact_type).ok_or_else(|| {
        WorkspaceError::invalid(format!(
            "artifact type {artifact_type:?} is not one haico makes (line_chart, bar_chart or \
             pie_chart)"
        ))
    })?;
    let given: ChartPayload = serde_json::from_value(payload.clone()).map_err(|err| {
        WorkspaceError::invalid(format!(
            "the {artifact_type}'s payload is not a chart: {err}"
        ))
    })?;
    let chart = checked_chart(given.into_draft(chart_type))?;
    let artifact = chart_artifact(chart_type, &chart)?;
    if title != artifact.title.as_deref() {
        return Err(WorkspaceError::invalid(format!(
            "the artifact's title {title:?} is not its chart's title {:?}",
            chart.title
        )));
    }
    Ok(artifact.payload)
}

impl ArtifactsEdit<'_> {
    /// Checks a chart whole and stores it as an artifact of the thread's current turn, to be
    /// announced with the change: the one way a chart becomes an artifact, whichever adapter
    /// asks. A chart that breaks a rule stores nothing.
    pub async fn add_chart(&mut self, draft: ChartDraft) -> Result<ChartAdded, WorkspaceError> {
        let chart_type = draft.chart_type;
        let chart = checked_chart(draft)?;
        let artifact = self
            .store_artifact(chart_artifact(chart_type, &chart)?)
            .await?;
        Ok(ChartAdded { artifact, chart })
    }

    /// Stores a checked artifact with the thread's current turn index, to be announced with
    /// the change.
    async fn store_artifact(
        &mut self,
        artifact: NewArtifact,
    ) -> Result<StoredArtifact, WorkspaceError> {
        let thread = self.edit.thread_id();
        // An agent's call on PostgreSQL has not read the thread's row yet: the insert takes the
        // turn from it and goes with the lock, one round trip fewer.
        let known_turn = if self.edit.is_unconfirmed() {
            None
        } else {
            self.edit.confirm().await?;
            Some(self.edit.turn_index())
        };
        let (id, turn_index) = self
            .edit
            .repo()
            .artifacts()
            .add_artifact(
                &thread,
                &artifact.artifact_type,
                artifact.title.as_deref(),
                &artifact.payload,
                known_turn,
            )
            .await?
            .ok_or_else(|| WorkspaceError::UnknownThread(thread.to_string()))?;
        self.edit.confirm().await?;
        let stored = StoredArtifact {
            artifact_id: id,
            artifact_type: artifact.artifact_type,
            title: artifact.title,
            payload: artifact.payload,
            turn_index,
        };
        self.edit.stored_artifact(stored.clone());
        Ok(stored)
    }
}

impl ThreadArtifacts<'_> {
    /// The thread's artifacts as the query asks.
    pub async fn list(
        &self,
        query: &ArtifactQuery,
    ) -> Result<Vec<ArtifactSummary>, WorkspaceError> {
        {
            let mut view = self.workspaces.view(self.thread).await?;
            let found = view.artifacts(query).await;
            view.settle(found).await
        }
    }

    /// One artifact of the thread with its payload.
    pub async fn get(&self, id: i64) -> Result<Artifact, WorkspaceError> {
        {
            let mut view = self.workspaces.view(self.thread).await?;
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
