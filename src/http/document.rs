//! The working document on the user path: `/api/threads/{thread_id}/document`.
//!
//! `PUT` may carry `expected_version`: the write then happens only if the stored version (0
//! when there is no document yet) still equals it, checked inside the SQL write itself. A stale
//! version answers `409` with the current document, so the editor can merge and retry.

use axum::{
    Router,
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::get,
};
use serde::Deserialize;
use serde_json::json;

use super::{
    AppState,
    error::ApiError,
    extract::{Json, Path, Query},
    html::{DocumentView, HtmlParam, document_view},
    require_thread,
};
use crate::{
    ThreadId,
    store::Document,
    tools::{
        checks::check_length,
        documents::{MAX_DOCUMENT_CHARS, MAX_TITLE_CHARS},
    },
};

pub(super) fn router() -> Router<AppState> {
    Router::new().route(
        "/api/threads/{thread_id}/document",
        get(get_document).put(put_document),
    )
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

/// What a thread without a document shows: empty, version 0.
fn empty_document() -> Document {
    Document {
        title: String::new(),
        content: String::new(),
        version: 0,
    }
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/document",
    tag = "workspace",
    summary = "Read the document (version 0 when there is none yet)",
    params(super::openapi::ThreadPath, HtmlParam),
    responses(
        (status = 200, description = "The document; with `?html=true` also `html`, its body rendered to sanitised HTML", body = DocumentView),
        (status = 400, description = "The id in the path or the query string is malformed", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn get_document(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
    Query(param): Query<HtmlParam>,
) -> Result<Json<DocumentView>, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    let mut repo = state.db().begin_read().await?;
    require_thread(&mut repo, &id).await?;
    let document = repo.get_document(id.as_str()).await?;
    repo.rollback().await?;
    let document = document.unwrap_or_else(empty_document);
    Ok(Json(document_view(document, param).await?))
}

#[utoipa::path(
    put,
    path = "/api/threads/{thread_id}/document",
    tag = "workspace",
    summary = "Replace the document, optionally only if it is still at `expected_version`",
    params(super::openapi::ThreadPath),
    request_body(content = PutDocument, content_type = "application/json"),
    responses(
        (status = 200, description = "The document as stored, with its new version", body = Document),
        (status = 400, description = "Invalid input: JSON that does not parse, or a value that breaks a rule (the text says which)", body = super::openapi::ErrorBody),
        (status = 413, description = "The body is larger than HAICO_MAX_BODY_BYTES", body = super::openapi::ErrorBody),
        (status = 415, description = "The body is not declared as `application/json`", body = super::openapi::ErrorBody),
        (status = 422, description = "The JSON does not have the expected shape (the text names the field)", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread does not exist", body = super::openapi::ErrorBody),
        (status = 409, description = "The document is no longer at `expected_version`: the body carries the current one", body = super::openapi::DocumentConflict),
    ),
)]
async fn put_document(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
    Json(body): Json<PutDocument>,
) -> Result<Response, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    check_length(&body.content, "content", MAX_DOCUMENT_CHARS)?;
    let title = match body.title.as_deref() {
        Some(title) => {
            let title = title.trim();
            check_length(title, "title", MAX_TITLE_CHARS)?;
            Some(title)
        }
        None => None,
    };
    if let Some(expected) = body.expected_version
        && expected < 0
    {
        return Err(ApiError::BadRequest(format!(
            "`expected_version` is {expected}: versions start at 0 (no document yet)"
        )));
    }
    let mut repo = state.db().begin_write().await?;
    require_thread(&mut repo, &id).await?;
    match repo
        .put_document(id.as_str(), &body.content, title, body.expected_version)
        .await?
    {
        Some(document) => {
            state.commit_user_change(repo, &id).await?;
            Ok(Json(document).into_response())
        }
        None => {
            // Stale: answer with the document as it is now, written by someone else.
            let current = repo
                .get_document(id.as_str())
                .await?
                .unwrap_or_else(empty_document);
            repo.rollback().await?;
            let expected = body.expected_version.unwrap_or_default();
            let message = format!(
                "the document changed meanwhile: it is at version {}, not {expected}; merge your \
                 edit into the current document and send it again with its version",
                current.version
            );
            Ok((
                StatusCode::CONFLICT,
                axum::Json(json!({ "error": message, "document": current })),
            )
                .into_response())
        }
    }
}
