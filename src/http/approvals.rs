//! `GET /api/threads/{id}/approvals` and `POST /api/threads/{id}/approvals/{call_id}`: the
//! calls of servers marked `"approval": "always"` waiting for a person (SPEC §13), and an
//! editor's decision on one.
//!
//! The requests and decisions are in the database, so both routes work on any replica: a
//! decision recorded here reaches the waiting turn wherever it runs (at once on this replica,
//! within a quarter of a second on another).

use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::ApiError,
    extract::{Json, Path},
    schema::{BodyErrors, ErrorBody, PathErrors, ThreadPath},
    state::AppState,
};
use crate::{
    http::guards::authorized::Authorized, http::guards::authorized::Chat,
    http::guards::authorized::Read,
};
use haico_core::workspace::ApprovalRequest;
use haico_store::ThreadId;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_approvals))
        .routes(routes!(decide_approval))
}

/// A waiting call in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct ApprovalPath {
    /// The thread's id.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$")]
    thread_id: ThreadId,
    /// The call, as its `approval` event named it.
    call_id: String,
}

/// Body of `POST …/approvals/{call_id}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct DecisionBody {
    /// `true` makes the call; `false` declines it (the model is told the person declined).
    approve: bool,
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/approvals",
    tag = "agent",
    summary = "The calls of the thread's running turn waiting for the person's approval",
    params(ThreadPath),
    responses(
        Read,
        (status = 200, description = "The waiting calls, oldest first (the objects of their `approval` events); empty when none waits", body = Vec<ApprovalRequest>),
        PathErrors,
    ),
)]
async fn list_approvals(
    Authorized(state, _): Authorized<Read>,
    Path(ThreadPath { thread_id: id }): Path<ThreadPath>,
) -> Result<Json<Vec<ApprovalRequest>>, ApiError> {
    // A thread that does not exist is a 404, not an empty list.
    state.workspaces().threads().get(&id).await?;
    Ok(Json(state.workspaces().waiting_approvals(&id).await?))
}

#[utoipa::path(
    post,
    path = "/api/threads/{thread_id}/approvals/{call_id}",
    tag = "agent",
    summary = "Approve or decline a call waiting for the person's approval",
    params(ApprovalPath),
    request_body(content = DecisionBody, content_type = "application/json"),
    responses(
        Chat,
        (status = 200, description = "Decided: the turn goes on (approved, the call is made; declined, the model is told)", body = Object, example = json!({"call_id": "3-1", "approved": true})),
        PathErrors,
        BodyErrors,
        (status = 404, description = "No such call waits on this thread (unknown, already decided, timed out, or its turn was cancelled)", body = ErrorBody),
    ),
)]
async fn decide_approval(
    Authorized(state, _): Authorized<Chat>,
    Path(ApprovalPath { thread_id, call_id }): Path<ApprovalPath>,
    Json(body): Json<DecisionBody>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    // Recorded first: one decision wins, whichever replica it reaches.
    let decided = state
        .workspaces()
        .decide_approval(&thread_id, &call_id, body.approve)
        .await?;
    if decided && let Some(servers) = state.agent().mcp_servers() {
        // The turn waits here: woken now (elsewhere it reads the decision from the database).
        servers
            .approvals()
            .decide(thread_id.as_str(), &call_id, body.approve);
    }
    if !decided {
        return Err(ApiError::NotFound(format!(
            "no call `{call_id}` is waiting for approval on this thread"
        )));
    }
    Ok((
        StatusCode::OK,
        Json(json!({"call_id": call_id, "approved": body.approve})),
    ))
}
