//! Artifacts on the user path (read-only): `/api/threads/{thread_id}/artifacts…`, and the SVG
//! rendering of a chart artifact.

use axum::{
    Router,
    extract::State,
    http::header,
    response::{IntoResponse, Response},
    routing::get,
};
use serde::Deserialize;

use super::{
    AppState,
    error::ApiError,
    extract::{Json, Path, Query},
    require_thread,
};
use crate::{
    ThreadId,
    charts::svg::{self, RenderError},
    store::{Artifact, ArtifactSummary},
};

/// How many artifacts a list answers with when no `limit` is given.
pub const DEFAULT_LIMIT: i64 = 50;
/// The largest `limit` accepted.
pub const MAX_LIMIT: i64 = 500;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/api/threads/{thread_id}/artifacts", get(list_artifacts))
        .route(
            "/api/threads/{thread_id}/artifacts/{artifact_id}",
            get(get_artifact),
        )
        .route(
            "/api/threads/{thread_id}/artifacts/{artifact_id}/chart.svg",
            get(chart_svg),
        )
}

/// Query of `GET …/artifacts`: `?artifact_type=bar_chart&limit=10`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    #[serde(default)]
    artifact_type: Option<String>,
    #[serde(default)]
    limit: Option<i64>,
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/artifacts",
    tag = "workspace",
    summary = "List the thread's artifacts, newest first",
    params(super::openapi::ThreadPath, ListQuery),
    responses(
        (status = 200, description = "The artifacts' metadata", body = Vec<ArtifactSummary>),
        (status = 400, description = "The thread id, `limit` or the query string is invalid", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn list_artifacts(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Vec<ArtifactSummary>>, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    let limit = match query.limit {
        None => DEFAULT_LIMIT,
        Some(n) if (1..=MAX_LIMIT).contains(&n) => n,
        Some(n) => {
            return Err(ApiError::BadRequest(format!(
                "`limit` is {n}: give a number from 1 to {MAX_LIMIT}, or leave it out for \
                 {DEFAULT_LIMIT}"
            )));
        }
    };
    // An empty `artifact_type=` means no filter, as in the `list_artifacts` tool.
    let kind = query
        .artifact_type
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let mut repo = state.db().begin_read().await?;
    require_thread(&mut repo, &id).await?;
    let list = repo.list_artifacts(id.as_str(), kind, limit).await?;
    repo.rollback().await?;
    Ok(Json(list))
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/artifacts/{artifact_id}",
    tag = "workspace",
    summary = "Read an artifact with its payload",
    params(super::openapi::ArtifactPath),
    responses(
        (status = 200, description = "The artifact", body = Artifact),
        (status = 400, description = "The id in the path is malformed", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread or the artifact does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn get_artifact(
    State(state): State<AppState>,
    Path((thread_id, artifact_id)): Path<(String, i64)>,
) -> Result<Json<Artifact>, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    read_artifact(&state, &id, artifact_id).await.map(Json)
}

/// The chart as `image/svg+xml`, drawn on the server so any client can show it.
#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/artifacts/{artifact_id}/chart.svg",
    tag = "workspace",
    summary = "Draw a chart artifact as SVG",
    params(super::openapi::ArtifactPath),
    responses(
        (status = 200, description = "The chart", content_type = "image/svg+xml", body = String),
        (status = 400, description = "The id in the path is malformed", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread or the artifact does not exist, or the artifact is not a chart", body = super::openapi::ErrorBody),
        (status = 422, description = "The chart's payload cannot be drawn", body = super::openapi::ErrorBody),
    ),
)]
async fn chart_svg(
    State(state): State<AppState>,
    Path((thread_id, artifact_id)): Path<(String, i64)>,
) -> Result<Response, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    let artifact = read_artifact(&state, &id, artifact_id).await?;
    let svg = svg::render_artifact(&artifact.summary.artifact_type, &artifact.payload).map_err(
        |err| match err {
            RenderError::NotAChart(kind) => ApiError::NotFound(format!(
                "artifact {artifact_id} is a `{kind}`, not a chart: there is no chart.svg for it"
            )),
            RenderError::InvalidPayload(reason) => {
                ApiError::Unprocessable(format!("artifact {artifact_id} cannot be drawn: {reason}"))
            }
        },
    )?;
    Ok((
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            // Opened on its own, the image may not run or fetch anything.
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'",
            ),
        ],
        svg,
    )
        .into_response())
}

/// One artifact of this thread; 404 for an unknown thread or an id of another thread.
async fn read_artifact(
    state: &AppState,
    id: &ThreadId,
    artifact_id: i64,
) -> Result<Artifact, ApiError> {
    let mut repo = state.db().begin_read().await?;
    require_thread(&mut repo, id).await?;
    let artifact = repo.get_artifact(id.as_str(), artifact_id).await?;
    repo.rollback().await?;
    artifact.ok_or_else(|| {
        ApiError::NotFound(format!("artifact {artifact_id} not found in this thread"))
    })
}
