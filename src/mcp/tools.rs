//! The tool bridge: haico's tool specs as MCP tools, and a finished [`ToolCall`] as an MCP
//! tool result.
//!
//! The schemas are not rebuilt: each MCP tool's `inputSchema` is the very `parameters` object
//! of `GET /api/tools` (so `action_and_reasoning` is in it and required). Tools are not
//! declared with rmcp's `#[tool_router]`: they already exist, declared once with haico's own
//! `#[workspace_tool]` and bound per thread, and must reach MCP clients unchanged.

use std::sync::{Arc, LazyLock};

use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{Map, Value};

use crate::tools::{ToolCall, tool_specs};

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
/// `structuredContent`; `isError` mirrors `success: false`.
pub fn call_result(call: &ToolCall) -> CallToolResult {
    let text = ContentBlock::text(call.envelope.to_json_string());
    let mut result = if call.envelope.success {
        CallToolResult::success(vec![text])
    } else {
        CallToolResult::error(vec![text])
    };
    result.structured_content = Some(call.envelope.to_value());
    result
}
