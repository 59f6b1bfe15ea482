//! The tool bridge: haico's tool specs as MCP tools, and a finished [`ToolCall`] as an MCP
//! tool result.
//!
//! The schemas are not rebuilt: each MCP tool's `inputSchema` is the very `parameters` object
//! of `GET /api/tools` (so `action_and_reasoning` is in it and required). Tools are not
//! declared with rmcp's `#[tool_router]`: they already exist, declared once with haico's own
//! `#[workspace_tool]` and bound per thread, and must reach MCP clients unchanged.

use std::sync::{Arc, LazyLock};

use base64::Engine;
use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{Map, Value};

use crate::tools::{ToolCall, tool_specs};
use haico_core::{charts::png, charts::svg};

static TOOLS: LazyLock<Vec<Tool>> = LazyLock::new(|| {
    tool_specs()
        .into_iter()
        .map(|spec| {
            let schema = match &spec.parameters {
                Value::Object(map) => map.clone(),
                _ => Map::new(),
            };
            Tool::new(spec.name, spec.description, Arc::new(schema))
        })
        .collect()
});

/// Every tool, in the agent's order; built once per process.
pub fn list() -> &'static [Tool] {
    &TOOLS
}

/// The MCP result of a call: the envelope JSON as the text content and as
/// `structuredContent`; `isError` mirrors `success: false`. A call that stored a chart also
/// carries the chart as `image` content (PNG), after the text, for clients that show images.
pub async fn call_result(call: &ToolCall) -> CallToolResult {
    let mut content = vec![ContentBlock::text(call.envelope.to_json_string())];
    if call.envelope.success
        && let Some(image) = chart_image(call).await
    {
        content.push(image);
    }
    let mut result = if call.envelope.success {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    };
    result.structured_content = Some(call.envelope.to_value());
    result
}

/// The chart the call stored, drawn as a PNG `image` block; `None` when it stored no chart. A
/// chart that cannot be drawn (which the chart tool's checks rule out) leaves the result
/// without its image rather than failing a call whose change is already made.
async fn chart_image(call: &ToolCall) -> Option<ContentBlock> {
    let artifact = call.artifact.as_ref()?;
    svg::chart_type_of(&artifact.artifact_type)?;
    match png::render_artifact(&artifact.artifact_type, &artifact.payload).await {
        Ok(bytes) => Some(ContentBlock::image(
            base64::engine::general_purpose::STANDARD.encode(bytes),
            png::MIME,
        )),
        Err(err) => {
            tracing::warn!(artifact_id = artifact.artifact_id, error = %err, "a chart could not be drawn as PNG");
            None
        }
    }
}
