//! The tool list and the agent-path tools endpoint: `/api/tools`,
//! `/api/threads/{thread_id}/tools/{tool_name}`.

use axum::{
    Router,
    extract::State,
    routing::{get, post},
};
use serde_json::Value;

use super::{
    AppState,
    error::ApiError,
    extract::{Json, Path},
};
use crate::{
    ThreadId,
    tools::{FailureKind, ToolSpec, build_tools, tool_specs},
};

pub(super) fn router() -> Router<AppState> {
    Router::new().route("/api/tools", get(list_tools)).route(
        "/api/threads/{thread_id}/tools/{tool_name}",
        post(call_tool),
    )
}

async fn list_tools() -> Json<Vec<&'static ToolSpec>> {
    Json(tool_specs())
}

/// Runs one tool exactly as the agent would (locks respected, one transaction) and answers
/// with its envelope. Only an unknown thread or tool is an HTTP error: everything else,
/// invalid arguments included, is a failure envelope with status 200, as the model sees it.
async fn call_tool(
    State(state): State<AppState>,
    Path((thread_id, tool_name)): Path<(String, String)>,
    Json(args): Json<Value>,
) -> Result<Json<Value>, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    let tools = build_tools(&id);
    if tools.get(&tool_name).is_none() {
        return Err(ApiError::NotFound(format!("tool `{tool_name}` not found")));
    }
    let call = state.runtime().call(&tools, &tool_name, args).await;
    match call.failure {
        Some(FailureKind::UnknownThread) => Err(ApiError::thread_not_found(id.as_str())),
        _ => Ok(Json(call.envelope.to_value())),
    }
}
