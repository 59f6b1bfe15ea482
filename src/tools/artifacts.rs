//! Artifact tools: let the agent find and re-read what it produced in earlier turns.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{ToolError, ToolResult, workspace_tool, workspace_tools};
use crate::{
    ThreadId,
    store::{ArtifactSummary, WorkspaceRepository},
};

/// How many artifacts `list_artifacts` shows when no limit is given.
pub const DEFAULT_LIMIT: i64 = 20;
/// The most it shows whatever the limit.
pub const MAX_LIMIT: i64 = 100;

/// Reads a thread's artifacts.
pub struct ArtifactTools {
    thread_id: ThreadId,
}

impl ArtifactTools {
    /// The artifact tools of one thread.
    pub fn new(thread_id: ThreadId) -> Self {
        Self { thread_id }
    }
}

/// Arguments of `list_artifacts`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArtifactsArgs {
    /// Only list artifacts of this type, e.g. "bar_chart".
    #[serde(default)]
    pub artifact_type: Option<String>,
    /// How many to list, newest first (default 20, at most 100).
    #[serde(default)]
    pub limit: Option<i64>,
}

/// Arguments of `get_artifact`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetArtifactArgs {
    /// The artifact's id, as given by list_artifacts or by the tool that made it.
    pub artifact_id: i64,
}

#[workspace_tools]
impl ArtifactTools {
    #[workspace_tool(
        name = "list_artifacts",
        read_only,
        description = "List the artifacts (charts) made in this conversation, newest first: id, \
                       type, title and turn. Optionally filter by type and limit the count."
    )]
    async fn list_artifacts(
        &self,
        repo: &mut WorkspaceRepository,
        args: ListArtifactsArgs,
    ) -> ToolResult {
        let limit = match args.limit {
            None => DEFAULT_LIMIT,
            Some(n) if n >= 1 => n.min(MAX_LIMIT),
            Some(n) => {
                return Err(ToolError::invalid(format!(
                    "`limit` is {n}: give a number from 1 to {MAX_LIMIT}, or leave it out"
                )));
            }
        };
        let kind = args
            .artifact_type
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let artifacts = repo
            .list_artifacts(self.thread_id.as_str(), kind, limit)
            .await?;
        if artifacts.is_empty() {
            return Ok(match kind {
                Some(kind) => format!("(no {kind} artifacts yet)"),
                None => "(no artifacts yet)".to_string(),
            }
            .into());
        }
        let lines: Vec<String> = artifacts.iter().map(artifact_line).collect();
        Ok(lines.join("\n").into())
    }

    #[workspace_tool(
        name = "get_artifact",
        read_only,
        description = "Read one artifact of this conversation in full (its metadata and payload) \
                       by id, e.g. to build on an earlier chart."
    )]
    async fn get_artifact(
        &self,
        repo: &mut WorkspaceRepository,
        args: GetArtifactArgs,
    ) -> ToolResult {
        let artifact = repo
            .get_artifact(self.thread_id.as_str(), args.artifact_id)
            .await?
            .ok_or_else(|| {
                ToolError::NotFound(format!(
                    "artifact {} not found in this conversation; list_artifacts shows the ids",
                    args.artifact_id
                ))
            })?;
        let text = json!({
            "id": artifact.summary.id,
            "artifact_type": artifact.summary.artifact_type,
            "title": artifact.summary.title,
            "turn_index": artifact.summary.turn_index,
            "created_at": artifact.summary.created_at,
            "payload": artifact.payload,
        });
        Ok(text.to_string().into())
    }
}

/// One artifact as an index line, `#12 bar_chart "Sales" (turn 3)`; the same text the agent's
/// prompt shows.
pub fn artifact_line(artifact: &ArtifactSummary) -> String {
    format!(
        "#{} {} \"{}\" (turn {})",
        artifact.id,
        artifact.artifact_type,
        artifact.title.as_deref().unwrap_or("untitled"),
        artifact.turn_index
    )
}
