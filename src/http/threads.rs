//! Threads and their workspace snapshot: `/api/threads…`.

use axum::{
    Router,
    body::Bytes,
    extract::{State, rejection::BytesRejection},
    http::StatusCode,
    routing::get,
};
use serde::Deserialize;

use super::{
    AppState,
    error::ApiError,
    extract::{Json, Path, Query},
    html::{HtmlParam, WorkspaceView, workspace_view},
};
use crate::{
    ThreadId,
    store::{StoreError, Thread},
};

/// The longest thread title.
const MAX_TITLE_CHARS: usize = 200;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/api/threads", get(list_threads).post(create_thread))
        .route(
            "/api/threads/{thread_id}",
            get(get_thread).patch(rename_thread).delete(delete_thread),
        )
        .route("/api/threads/{thread_id}/workspace", get(workspace))
}

/// Body of `POST /api/threads`.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateThread {
    id: Option<String>,
    title: Option<String>,
}

/// Body of `PATCH /api/threads/{thread_id}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct RenameThread {
    title: String,
}

#[utoipa::path(
    post,
    path = "/api/threads",
    tag = "threads",
    summary = "Create a thread",
    request_body(content = Option<CreateThread>, description = "Optional: an empty body makes a thread with a new id and the title `New thread`", content_type = "application/json"),
    responses(
        (status = 201, description = "The new thread", body = Thread),
        (status = 400, description = "JSON that does not parse, an invalid id or title", body = super::openapi::ErrorBody),
        (status = 409, description = "A thread with that id exists", body = super::openapi::ErrorBody),
        (status = 413, description = "The body is larger than HAICO_MAX_BODY_BYTES", body = super::openapi::ErrorBody),
    ),
)]
async fn create_thread(
    State(state): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Thread>), ApiError> {
    // The body is optional: an empty one means "a new thread with defaults".
    let body = body?;
    let body: CreateThread = if body.iter().all(u8::is_ascii_whitespace) {
        CreateThread::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|err| ApiError::BadRequest(format!("invalid JSON body: {err}")))?
    };
    let id = match body.id.as_deref() {
        Some(raw) => ThreadId::parse(raw)?,
        None => ThreadId::generate(),
    };
    let title = match body.title.as_deref() {
        Some(title) => checked_title(title)?,
        None => "New thread".to_string(),
    };
    let mut repo = state.db().begin_write().await?;
    let thread = match repo.create_thread(id.as_str(), &title).await {
        Ok(thread) => thread,
        Err(StoreError::AlreadyExists(_)) => {
            repo.rollback().await?;
            return Err(ApiError::Conflict(format!("thread `{id}` already exists")));
        }
        Err(err) => return Err(err.into()),
    };
    repo.commit().await?;
    Ok((StatusCode::CREATED, Json(thread)))
}

#[utoipa::path(
    get,
    path = "/api/threads",
    tag = "threads",
    summary = "List the threads",
    responses(
        (status = 200, description = "Every thread", body = Vec<Thread>),
    ),
)]
async fn list_threads(State(state): State<AppState>) -> Result<Json<Vec<Thread>>, ApiError> {
    let mut repo = state.db().begin_read().await?;
    let threads = repo.list_threads().await?;
    repo.rollback().await?;
    Ok(Json(threads))
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}",
    tag = "threads",
    summary = "Read a thread",
    params(super::openapi::ThreadPath),
    responses(
        (status = 200, description = "The thread", body = Thread),
        (status = 400, description = "The id in the path is malformed", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn get_thread(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
) -> Result<Json<Thread>, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    let mut repo = state.db().begin_read().await?;
    let thread = repo.get_thread(id.as_str()).await?;
    repo.rollback().await?;
    thread
        .map(Json)
        .ok_or_else(|| ApiError::thread_not_found(id.as_str()))
}

#[utoipa::path(
    patch,
    path = "/api/threads/{thread_id}",
    tag = "threads",
    summary = "Rename a thread",
    params(super::openapi::ThreadPath),
    request_body(content = RenameThread, content_type = "application/json"),
    responses(
        (status = 200, description = "The renamed thread", body = Thread),
        (status = 400, description = "Invalid input: JSON that does not parse, or a value that breaks a rule (the text says which)", body = super::openapi::ErrorBody),
        (status = 413, description = "The body is larger than HAICO_MAX_BODY_BYTES", body = super::openapi::ErrorBody),
        (status = 415, description = "The body is not declared as `application/json`", body = super::openapi::ErrorBody),
        (status = 422, description = "The JSON does not have the expected shape (the text names the field)", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn rename_thread(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
    Json(body): Json<RenameThread>,
) -> Result<Json<Thread>, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    let title = checked_title(&body.title)?;
    let mut repo = state.db().begin_write().await?;
    match repo.rename_thread(id.as_str(), &title).await? {
        Some(thread) => {
            repo.commit().await?;
            Ok(Json(thread))
        }
        None => {
            repo.rollback().await?;
            Err(ApiError::thread_not_found(id.as_str()))
        }
    }
}

#[utoipa::path(
    delete,
    path = "/api/threads/{thread_id}",
    tag = "threads",
    summary = "Delete a thread and its whole workspace",
    params(super::openapi::ThreadPath),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "The id in the path is malformed", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn delete_thread(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    let mut repo = state.db().begin_write().await?;
    if repo.delete_thread(id.as_str()).await? {
        repo.commit().await?;
        Ok(StatusCode::NO_CONTENT)
    } else {
        repo.rollback().await?;
        Err(ApiError::thread_not_found(id.as_str()))
    }
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/workspace",
    tag = "threads",
    summary = "The workspace snapshot, in display order",
    params(super::openapi::ThreadPath, HtmlParam),
    responses(
        (status = 200, description = "Objective, document, plan, preferences and the artifact index; with `?html=true` the document also has `html`", body = WorkspaceView),
        (status = 400, description = "The id in the path or the query string is malformed", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn workspace(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
    Query(param): Query<HtmlParam>,
) -> Result<Json<WorkspaceView>, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    let mut repo = state.db().begin_read().await?;
    if repo.get_thread(id.as_str()).await?.is_none() {
        repo.rollback().await?;
        return Err(ApiError::thread_not_found(id.as_str()));
    }
    let snapshot = repo.workspace(id.as_str()).await?;
    repo.rollback().await?;
    Ok(Json(workspace_view(snapshot, param).await?))
}

fn checked_title(title: &str) -> Result<String, ApiError> {
    Ok(crate::tools::checks::require_text(title, "title", MAX_TITLE_CHARS)?.to_string())
}
