//! The tool list and the agent-path tools endpoint: `/api/tools`,
//! `/api/threads/{thread_id}/tools/{tool_name}`.

use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::ApiError,
    extract::{AnyJson, Json, Path},
    schema::{ErrorBody, ToolPath},
    state::AppState,
};
use crate::tools::{FailureKind, ToolSpec, build_tools, tool_specs};
use crate::{
    http::guards::authorized::Authorized, http::guards::authorized::CallTool,
    http::guards::authorized::UseServer,
};

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_tools))
        .routes(routes!(call_tool))
}

#[utoipa::path(
    get,
    path = "/api/tools",
    tag = "agent",
    summary = "The LLM-facing tool list",
    responses(
        UseServer,
        (status = 200, description = "Every tool: name, description and the JSON Schema of its arguments (with `action_and_reasoning`)", body = Vec<ToolSpec>),
    ),
)]
async fn list_tools(_: Authorized<UseServer>) -> Json<Vec<&'static ToolSpec>> {
    Json(tool_specs())
}

/// Runs one tool exactly as the agent would (locks respected, one transaction) and answers
/// with its envelope. Only an unknown thread or tool is an HTTP error: everything else,
/// invalid arguments included, is a failure envelope with status 200, as the model sees it.
#[utoipa::path(
    post,
    path = "/api/threads/{thread_id}/tools/{tool_name}",
    tag = "agent",
    summary = "Call one tool on the agent path",
    params(ToolPath),
    request_body(content = Object, description = "The tool's arguments, `action_and_reasoning` included", content_type = "application/json"),
    responses(
        CallTool,
        (status = 200, description = "The envelope, as the model sees it: `success` with a `summary` (and the artifact), or an `error` when the call failed and changed nothing", body = crate::tools::Envelope),
        (status = 400, description = "The thread id is malformed, or the body is not JSON", body = ErrorBody),
        (status = 404, description = "The thread or the tool does not exist", body = ErrorBody),
        (status = 413, description = "The body is larger than HAICO_MAX_BODY_BYTES", body = ErrorBody),
        (status = 415, description = "The body is not declared as `application/json`", body = ErrorBody),
    ),
)]
async fn call_tool(
    Authorized(state, _): Authorized<CallTool>,
    Path(path): Path<ToolPath>,
    AnyJson(args): AnyJson,
) -> Result<Json<Value>, ApiError> {
    let tools = build_tools(&path.thread_id);
    if tools.get(&path.tool_name).is_none() {
        return Err(ApiError::NotFound(format!(
            "tool `{}` not found",
            path.tool_name
        )));
    }
    let call = state.runtime().call(&tools, &path.tool_name, args).await;
    match call.failure {
        Some(FailureKind::UnknownThread) => {
            Err(ApiError::thread_not_found(path.thread_id.as_str()))
        }
        _ => Ok(Json(call.envelope.to_value())),
    }
}
