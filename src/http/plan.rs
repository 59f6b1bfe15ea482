//! The plan on the user path: `/api/threads/{thread_id}/todos…`, steps addressed by stable ids.
//!
//! Where `POST` puts a new step (the rules are the workspace's: [`StepPlacement`]):
//! - `{"text"}`: at the end of the plan, at depth 0;
//! - `{"text", "depth"}`: at the end, at `depth`, which may be at most one deeper than the
//!   last step (0 when the plan is empty), so the plan stays an outline;
//! - `{"text", "parent_id"}`: the last sub-step of that step (depth parent + 1), right after
//!   the parent's last descendant;
//! - `{"text", "after_id"}`: the next sibling of that step (same depth), right after its
//!   sub-steps.
//!
//! `parent_id` and `after_id` exclude each other, and `depth` goes with neither (it follows
//! from them). A `parent_id` or `after_id` that names no step of this thread is a 400.

use axum::http::StatusCode;
use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::wire;
use super::{
    error::ApiError,
    extract::{Json, Path},
    schema::{BodyErrors, PathErrors, StepPath, ThreadPath},
    state::AppState,
};
use crate::{
    http::guards::authorized::Authorized, http::guards::authorized::Edit,
    http::guards::authorized::Read,
};
use haico_core::{wire::PlanStep, workspace::StepPlacement};

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_steps, create_step))
        .routes(routes!(update_step, delete_step))
}

/// Body of `POST …/todos` (see the module doc for the placement rules).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateStep {
    text: String,
    #[serde(default)]
    parent_id: Option<i64>,
    #[serde(default)]
    after_id: Option<i64>,
    #[serde(default)]
    depth: Option<i64>,
}

/// Body of `PATCH …/todos/{todo_id}`: absent fields stay as they are.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateStep {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    done: Option<bool>,
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/todos",
    tag = "workspace",
    summary = "List the plan",
    params(ThreadPath),
    responses(
        Read,
        (status = 200, description = "The steps, in order", body = Vec<PlanStep>),
        PathErrors,
    ),
)]
async fn list_steps(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<ThreadPath>,
) -> Result<Json<Vec<PlanStep>>, ApiError> {
    Ok(Json(wire::list(
        state.workspaces().plan(&path.thread_id).steps().await?,
    )))
}

#[utoipa::path(
    post,
    path = "/api/threads/{thread_id}/todos",
    tag = "workspace",
    summary = "Add a step: at the end, under `parent_id` or after `after_id`",
    params(ThreadPath),
    request_body(content = CreateStep, content_type = "application/json"),
    responses(
        Edit,
        (status = 201, description = "The new step", body = PlanStep),
        PathErrors,
        BodyErrors,
    ),
)]
async fn create_step(
    Authorized(state, _): Authorized<Edit>,
    Path(path): Path<ThreadPath>,
    Json(body): Json<CreateStep>,
) -> Result<(StatusCode, Json<PlanStep>), ApiError> {
    let placement = StepPlacement::from_fields(body.parent_id, body.after_id, body.depth)?;
    let step = state
        .workspaces()
        .plan(&path.thread_id)
        .add_step(&body.text, placement)
        .await?;
    Ok((StatusCode::CREATED, Json(step.into())))
}

#[utoipa::path(
    patch,
    path = "/api/threads/{thread_id}/todos/{todo_id}",
    tag = "workspace",
    summary = "Change a step's text or tick it off",
    params(StepPath),
    request_body(content = UpdateStep, description = "Absent fields stay", content_type = "application/json"),
    responses(
        Edit,
        (status = 200, description = "The step as it is now", body = PlanStep),
        PathErrors,
        BodyErrors,
    ),
)]
async fn update_step(
    Authorized(state, _): Authorized<Edit>,
    Path(path): Path<StepPath>,
    Json(body): Json<UpdateStep>,
) -> Result<Json<PlanStep>, ApiError> {
    let step = state
        .workspaces()
        .plan(&path.thread_id)
        .update_step(path.todo_id, body.text.as_deref(), body.done)
        .await?;
    Ok(Json(step.into()))
}

#[utoipa::path(
    delete,
    path = "/api/threads/{thread_id}/todos/{todo_id}",
    tag = "workspace",
    summary = "Remove a step and its sub-steps",
    params(StepPath),
    responses(
        Edit,
        (status = 204, description = "Removed"),
        PathErrors,
    ),
)]
async fn delete_step(
    Authorized(state, _): Authorized<Edit>,
    Path(path): Path<StepPath>,
) -> Result<StatusCode, ApiError> {
    state
        .workspaces()
        .plan(&path.thread_id)
        .remove_step(path.todo_id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
