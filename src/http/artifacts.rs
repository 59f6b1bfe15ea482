//! Artifacts on the user path (read-only): `/api/threads/{thread_id}/artifacts…`, and a chart
//! artifact drawn as SVG or PNG.

use axum::{
    http::header,
    response::{IntoResponse, Response},
};
use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::ApiError,
    extract::{Json, Path, Query},
    schema::{ArtifactPath, ErrorBody, PathErrors, ThreadPath},
    state::AppState,
};
use crate::{http::guards::authorized::Authorized, http::guards::authorized::Read};
use haico_core::{
    charts::png, charts::png::PngError, charts::svg, charts::svg::RenderError, wire::Artifact,
    wire::ArtifactSummary, workspace::ArtifactQuery,
};

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_artifacts))
        .routes(routes!(get_artifact))
        .routes(routes!(chart_svg))
        .routes(routes!(chart_png))
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
    params(ThreadPath, ListQuery),
    responses(
        Read,
        (status = 200, description = "The artifacts' metadata", body = Vec<ArtifactSummary>),
        PathErrors,
    ),
)]
async fn list_artifacts(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<ThreadPath>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Vec<ArtifactSummary>>, ApiError> {
    let query = ArtifactQuery::for_user(query.artifact_type.as_deref(), query.limit)?;
    let list = state
        .workspaces()
        .artifacts(&path.thread_id)
        .list(&query)
        .await?;
    Ok(Json(list.into_iter().map(ArtifactSummary::from).collect()))
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/artifacts/{artifact_id}",
    tag = "workspace",
    summary = "Read an artifact with its payload",
    params(ArtifactPath),
    responses(
        Read,
        (status = 200, description = "The artifact", body = Artifact),
        PathErrors,
    ),
)]
async fn get_artifact(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<ArtifactPath>,
) -> Result<Json<Artifact>, ApiError> {
    let artifact = state
        .workspaces()
        .artifacts(&path.thread_id)
        .get(path.artifact_id)
        .await?;
    Ok(Json(artifact.into()))
}

/// The chart as `image/svg+xml`, drawn on the server so any client can show it.
#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/artifacts/{artifact_id}/chart.svg",
    tag = "workspace",
    summary = "Draw a chart artifact as SVG",
    params(ArtifactPath),
    responses(
        Read,
        (status = 200, description = "The chart", content_type = "image/svg+xml", body = String),
        PathErrors,
        (status = 422, description = "The chart's payload cannot be drawn", body = ErrorBody),
    ),
)]
async fn chart_svg(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<ArtifactPath>,
) -> Result<Response, ApiError> {
    let (artifact_id, artifact) = chart_artifact(&state, &path).await?;
    let svg = svg::render_artifact(&artifact.summary.artifact_type, &artifact.payload)
        .map_err(|err| not_drawable(artifact_id, "chart.svg", err))?;
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

/// The chart as `image/png` (1600×960, the SVG drawn at twice its size with the fonts the
/// server carries), for clients that cannot show SVG.
#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/artifacts/{artifact_id}/chart.png",
    tag = "workspace",
    summary = "Draw a chart artifact as PNG",
    params(ArtifactPath),
    responses(
        Read,
        (status = 200, description = "The chart, 1600×960", content(("image/png"))),
        PathErrors,
        (status = 422, description = "The chart's payload cannot be drawn", body = ErrorBody),
    ),
)]
async fn chart_png(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<ArtifactPath>,
) -> Result<Response, ApiError> {
    let (artifact_id, artifact) = chart_artifact(&state, &path).await?;
    let png = png::render_artifact(&artifact.summary.artifact_type, &artifact.payload)
        .await
        .map_err(|err| match err {
            PngError::Render(err) => not_drawable(artifact_id, "chart.png", err),
            other => {
                tracing::error!(artifact_id, error = %other, "a chart could not be drawn as PNG");
                ApiError::Internal(format!("artifact {artifact_id} could not be drawn as PNG"))
            }
        })?;
    Ok((
        [
            (header::CONTENT_TYPE, png::MIME),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        png,
    )
        .into_response())
}

/// The artifact a chart route draws, with its id.
async fn chart_artifact(
    state: &AppState,
    path: &ArtifactPath,
) -> Result<(i64, haico_store::Artifact), ApiError> {
    let artifact = state
        .workspaces()
        .artifacts(&path.thread_id)
        .get(path.artifact_id)
        .await?;
    Ok((path.artifact_id, artifact))
}

/// The answer to an artifact that cannot be drawn as `file`: not a chart at all (404, as for a
/// file that does not exist), or a chart whose payload cannot be drawn (422).
fn not_drawable(artifact_id: i64, file: &str, err: RenderError) -> ApiError {
    match err {
        RenderError::NotAChart(kind) => ApiError::NotFound(format!(
            "artifact {artifact_id} is a `{kind}`, not a chart: there is no {file} for it"
        )),
        RenderError::InvalidPayload(reason) => {
            ApiError::Unprocessable(format!("artifact {artifact_id} cannot be drawn: {reason}"))
        }
    }
}
