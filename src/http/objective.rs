//! The objective on the user path: `/api/threads/{thread_id}/objective`.
//!
//! Also home of the two helpers the other workspace-panel modules share: the thread check and
//! the mapping of a validation failure to a 400.

use axum::{Router, extract::State, routing::get};
use serde::{Deserialize, Serialize};

use super::{
    AppState,
    error::ApiError,
    extract::{Json, Path},
    require_thread,
};
use crate::{
    ThreadId,
    tools::{checks::require_text, objective::MAX_OBJECTIVE_CHARS},
};

pub(super) fn router() -> Router<AppState> {
    Router::new().route(
        "/api/threads/{thread_id}/objective",
        get(get_objective).put(put_objective),
    )
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
    params(super::openapi::ThreadPath),
    responses(
        (status = 200, description = "The objective, `null` when none is set", body = ObjectiveView),
        (status = 400, description = "The id in the path is malformed", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn get_objective(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
) -> Result<Json<ObjectiveView>, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    let mut repo = state.db().begin_read().await?;
    require_thread(&mut repo, &id).await?;
    let objective = repo.get_objective(id.as_str()).await?;
    repo.rollback().await?;
    Ok(Json(ObjectiveView { objective }))
}

#[utoipa::path(
    put,
    path = "/api/threads/{thread_id}/objective",
    tag = "workspace",
    summary = "Set the objective",
    params(super::openapi::ThreadPath),
    request_body(content = PutObjective, content_type = "application/json"),
    responses(
        (status = 200, description = "The objective as stored (one line)", body = ObjectiveView),
        (status = 400, description = "Invalid input: JSON that does not parse, or a value that breaks a rule (the text says which)", body = super::openapi::ErrorBody),
        (status = 413, description = "The body is larger than HAICO_MAX_BODY_BYTES", body = super::openapi::ErrorBody),
        (status = 415, description = "The body is not declared as `application/json`", body = super::openapi::ErrorBody),
        (status = 422, description = "The JSON does not have the expected shape (the text names the field)", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn put_objective(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
    Json(body): Json<PutObjective>,
) -> Result<Json<ObjectiveView>, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    // The same rule as `set_objective`: one line (runs of whitespace, line breaks included,
    // become single spaces), not empty, at most MAX_OBJECTIVE_CHARS.
    let line = body
        .objective
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let objective = require_text(&line, "objective", MAX_OBJECTIVE_CHARS)?.to_string();
    let mut repo = state.db().begin_write().await?;
    require_thread(&mut repo, &id).await?;
    repo.set_objective(id.as_str(), &objective).await?;
    state.commit_user_change(repo, &id).await?;
    Ok(Json(ObjectiveView {
        objective: Some(objective),
    }))
}
