//! The working document on the user path: `/api/threads/{thread_id}/document`.
//!
//! `PUT` may carry `expected_version`: the write then happens only if the stored version (0
//! when there is no document yet) still equals it, checked inside the SQL write itself. A stale
//! version answers `409` with the current document, so the editor can merge and retry.

use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::ApiError,
    extract::{Json, Path, Query},
    html::{DocumentView, HtmlParam, document_view},
    schema::{BodyErrors, DocumentConflict, PathErrors, ThreadPath},
    state::AppState,
};
use crate::{
    http::guards::authorized::Authorized, http::guards::authorized::Edit,
    http::guards::authorized::Read,
};
use haico_core::wire::Document;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_document, put_document))
}

/// Body of `PUT …/document`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct PutDocument {
    /// The whole new body (may be empty).
    content: String,
    /// A new title; absent keeps the current one.
    #[serde(default)]
    title: Option<String>,
    /// Write only if the stored version is this one (0: "there is no document yet").
    #[serde(default)]
    expected_version: Option<i64>,
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/document",
    tag = "workspace",
    summary = "Read the document (version 0 when there is none yet)",
    params(ThreadPath, HtmlParam),
    responses(
        Read,
        (status = 200, description = "The document; with `?html=true` also `html`, its body rendered to sanitised HTML", body = DocumentView),
        PathErrors,
    ),
)]
async fn get_document(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<ThreadPath>,
    Query(param): Query<HtmlParam>,
) -> Result<Json<DocumentView>, ApiError> {
    let document = state.workspaces().document(&path.thread_id).get().await?;
    Ok(Json(document_view(document, param).await?))
}

#[utoipa::path(
    put,
    path = "/api/threads/{thread_id}/document",
    tag = "workspace",
    summary = "Replace the document, optionally only if it is still at `expected_version`",
    params(ThreadPath),
    request_body(content = PutDocument, content_type = "application/json"),
    responses(
        Edit,
        (status = 200, description = "The document as stored, with its new version", body = Document),
        PathErrors,
        BodyErrors,
        (status = 409, description = "The document is no longer at `expected_version`: the body carries the current one", body = DocumentConflict),
    ),
)]
async fn put_document(
    Authorized(state, _): Authorized<Edit>,
    Path(path): Path<ThreadPath>,
    Json(body): Json<PutDocument>,
) -> Result<Json<Document>, ApiError> {
    let document = state
        .workspaces()
        .document(&path.thread_id)
        .put(&body.content, body.title.as_deref(), body.expected_version)
        .await?;
    Ok(Json(document.into()))
}
