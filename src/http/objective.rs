//! The objective on the user path: `/api/threads/{thread_id}/objective`.

use serde::{Deserialize, Serialize};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::ApiError,
    extract::{Json, Path},
    schema::{BodyErrors, PathErrors, ThreadPath},
    state::AppState,
};
use crate::{
    http::guards::authorized::Authorized, http::guards::authorized::Edit,
    http::guards::authorized::Read,
};

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_objective, put_objective))
}

/// The answer of `GET` and `PUT`: `{"objective": "<text>" | null}`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct ObjectiveView {
    objective: Option<String>,
}

/// Body of `PUT …/objective`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct PutObjective {
    objective: String,
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/objective",
    tag = "workspace",
    summary = "Read the objective",
    params(ThreadPath),
    responses(
        Read,
        (status = 200, description = "The objective, `null` when none is set", body = ObjectiveView),
        PathErrors,
    ),
)]
async fn get_objective(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<ThreadPath>,
) -> Result<Json<ObjectiveView>, ApiError> {
    let objective = state.workspaces().objective(&path.thread_id).get().await?;
    Ok(Json(ObjectiveView { objective }))
}

#[utoipa::path(
    put,
    path = "/api/threads/{thread_id}/objective",
    tag = "workspace",
    summary = "Set the objective",
    params(ThreadPath),
    request_body(content = PutObjective, content_type = "application/json"),
    responses(
        Edit,
        (status = 200, description = "The objective as stored (one line)", body = ObjectiveView),
        PathErrors,
        BodyErrors,
    ),
)]
async fn put_objective(
    Authorized(state, _): Authorized<Edit>,
    Path(path): Path<ThreadPath>,
    Json(body): Json<PutObjective>,
) -> Result<Json<ObjectiveView>, ApiError> {
    let objective = state
        .workspaces()
        .objective(&path.thread_id)
        .put(&body.objective)
        .await?;
    Ok(Json(ObjectiveView {
        objective: Some(objective),
    }))
}
