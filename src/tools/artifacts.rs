//! Artifact tools: let the agent find and re-read what it produced in earlier turns.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::tools::output::ToolResult;

use haico_core::{
    workspace::AGENT_LIST_MAX, workspace::ArtifactQuery, workspace::MAX_ARTIFACT_TYPE_CHARS,
    workspace::View, workspace::artifact_line,
};
use haico_macros::{workspace_tool, workspace_tools};

/// Reads the artifacts.
pub struct ArtifactTools;

/// Arguments of `list_artifacts`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArtifactsArgs {
    /// Only this type, e.g. "bar_chart".
    #[serde(default)]
    #[schemars(length(max = MAX_ARTIFACT_TYPE_CHARS))]
    pub artifact_type: Option<String>,
    /// How many to list (default 20).
    #[serde(default)]
    #[schemars(range(min = 1, max = AGENT_LIST_MAX))]
    pub limit: Option<i64>,
}

/// Arguments of `get_artifact`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetArtifactArgs {
    /// The artifact's id.
    #[schemars(range(min = 1))]
    pub artifact_id: i64,
}

#[workspace_tools]
impl ArtifactTools {
    #[workspace_tool(
        name = "list_artifacts",
        read_only,
        description = "List the charts made in this conversation, newest first."
    )]
    async fn list_artifacts(&self, view: &mut View, args: ListArtifactsArgs) -> ToolResult {
        let query = ArtifactQuery::for_agent(args.artifact_type.as_deref(), args.limit)?;
        let artifacts = view.artifacts(&query).await?;
        if artifacts.is_empty() {
            return Ok(match query.artifact_type() {
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
        description = "Read one chart of this conversation in full, by its id."
    )]
    async fn get_artifact(&self, view: &mut View, args: GetArtifactArgs) -> ToolResult {
        let artifact = view.artifact(args.artifact_id).await?;
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
