//! The workspace's history: `/api/threads/{thread_id}/history`, the document's diff between
//! revisions, restore, undoing an agent turn, and forks. The rules are the workspace's
//! ([`crate::workspace::history`]); `GET …/workspace?at=` lives with the snapshot
//! (`threads.rs`).

use axum::{
    body::Bytes,
    extract::rejection::BytesRejection,
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::ApiError,
    extract::{Json, Path, Query},
    schema::{BodyErrors, ErrorBody, PathErrors, ThreadPath, TurnPath},
    state::AppState,
};
use crate::{
    http::guards::authorized::Authorized, http::guards::authorized::Edit,
    http::guards::authorized::Read, http::guards::authorized::UseServer,
};
use haico_core::{
    wire::Thread, workspace::DocumentDiff, workspace::HistoryPage, workspace::RevertConflict,
    workspace::recording::to_jsonl,
};
use haico_store::{ThreadId, Workspace};

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(history))
        .routes(routes!(document_diff))
        .routes(routes!(restore))
        .routes(routes!(revert_turn))
        .routes(routes!(fork))
        .routes(routes!(export))
        .routes(routes!(import))
}

/// The media type of a recording.
const NDJSON: &str = "application/x-ndjson";

/// Query of `GET …/history`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct HistoryQuery {
    /// At most this many revisions (default 50, at most 500).
    #[serde(default)]
    limit: Option<i64>,
    /// Only revisions older than this one (the `next_before` of the previous page).
    #[serde(default)]
    before: Option<i64>,
}

/// Query of `GET …/document/diff`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct DiffQuery {
    /// The older revision.
    from: i64,
    /// The newer revision; the latest when left out.
    #[serde(default)]
    to: Option<i64>,
}

/// Body of `POST …/restore`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct RestoreRequest {
    /// The revision to go back to (0: the empty workspace).
    rev: i64,
    /// The panels to set back (`objective`, `document`, `plan`, `preferences`); all four when
    /// left out. Artifacts are records and are never removed.
    #[serde(default)]
    panels: Option<Vec<String>>,
}

/// Answer of a restore or an undone turn: the revision the workspace is at now, and the
/// workspace.
#[derive(Debug, Serialize, ToSchema)]
struct Rewritten {
    /// The new revision (or the latest, when nothing had to change).
    rev: i64,
    /// The workspace now.
    workspace: super::html::WorkspaceView,
}

/// The `409` of an undo that would lose later changes.
#[derive(Debug, Serialize, ToSchema)]
struct RevertConflicts {
    /// What happened and what to do instead.
    error: String,
    /// The later revisions that changed the same panels.
    conflicts: Vec<RevertConflict>,
}

/// Body of `POST …/fork`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct ForkRequest {
    /// The revision to fork from; the latest when left out.
    #[serde(default)]
    at: Option<i64>,
    /// The new thread's id; a fresh one when left out.
    #[serde(default)]
    id: Option<String>,
    /// The new thread's title; "<title> (fork)" when left out.
    #[serde(default)]
    title: Option<String>,
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/history",
    tag = "history",
    summary = "The thread's revisions, newest first, a page at a time",
    params(ThreadPath, HistoryQuery),
    responses(
        Read,
        (status = 200, description = "A page of revisions and where the next one starts", body = HistoryPage),
        PathErrors,
    ),
)]
async fn history(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<ThreadPath>,
    Query(query): Query<HistoryQuery>,
) -> Result<Json<HistoryPage>, ApiError> {
    let page = state
        .workspaces()
        .history(&path.thread_id, query.before, query.limit)
        .await?;
    Ok(Json(page))
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/document/diff",
    tag = "history",
    summary = "What changed in the document between two revisions, as a unified diff",
    params(ThreadPath, DiffQuery),
    responses(
        Read,
        (status = 200, description = "The line-based unified diff", body = DocumentDiff),
        PathErrors,
    ),
)]
async fn document_diff(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<ThreadPath>,
    Query(query): Query<DiffQuery>,
) -> Result<Json<DocumentDiff>, ApiError> {
    let diff = state
        .workspaces()
        .document_diff(&path.thread_id, query.from, query.to)
        .await?;
    Ok(Json(diff))
}

/// The answer of a restore or an undone turn: the workspace as `GET …/workspace?at=rev` reads.
async fn rewritten(
    state: &AppState,
    thread: &haico_store::ThreadId,
    rev: i64,
    workspace: Workspace,
) -> Result<Json<Rewritten>, ApiError> {
    let suggestions = state
        .workspaces()
        .suggestions(thread)
        .panel(Some(rev))
        .await?;
    let workspace = super::html::workspace_view(workspace, suggestions, Default::default()).await?;
    Ok(Json(Rewritten { rev, workspace }))
}

#[utoipa::path(
    post,
    path = "/api/threads/{thread_id}/restore",
    tag = "history",
    summary = "Set panels back to their state at a revision, as one new revision",
    params(ThreadPath),
    request_body(content = RestoreRequest, content_type = "application/json"),
    responses(
        Edit,
        (status = 200, description = "The revision the workspace is at now, and the workspace", body = Rewritten),
        PathErrors,
        BodyErrors,
    ),
)]
async fn restore(
    Authorized(state, _): Authorized<Edit>,
    Path(path): Path<ThreadPath>,
    Json(body): Json<RestoreRequest>,
) -> Result<Json<Rewritten>, ApiError> {
    let (rev, workspace) = state
        .workspaces()
        .restore(&path.thread_id, body.rev, body.panels.as_deref())
        .await?;
    rewritten(&state, &path.thread_id, rev, workspace).await
}

#[utoipa::path(
    post,
    path = "/api/threads/{thread_id}/turns/{turn_index}/revert",
    tag = "history",
    summary = "Undo the workspace changes of an agent turn, as one new revision",
    params(TurnPath),
    responses(
        Edit,
        (status = 200, description = "The revision the workspace is at now, and the workspace", body = Rewritten),
        PathErrors,
        (status = 409, description = "A later change touched a panel the turn changed (or the turn changed nothing to undo): nothing was changed", body = RevertConflicts),
    ),
)]
async fn revert_turn(
    Authorized(state, _): Authorized<Edit>,
    Path(path): Path<TurnPath>,
) -> Result<Json<Rewritten>, ApiError> {
    let (rev, workspace) = state
        .workspaces()
        .revert_turn(&path.thread_id, path.turn_index)
        .await?;
    rewritten(&state, &path.thread_id, rev, workspace).await
}

#[utoipa::path(
    post,
    path = "/api/threads/{thread_id}/fork",
    tag = "history",
    summary = "A new thread from a revision of this one, with the conversation so far",
    params(ThreadPath),
    request_body(content = ForkRequest, content_type = "application/json"),
    responses(
        Read,
        (status = 201, description = "The new thread; `forked_from` names where it came from", body = Thread),
        PathErrors,
        BodyErrors,
        (status = 409, description = "A thread with the chosen id exists", body = ErrorBody),
    ),
)]
async fn fork(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<ThreadPath>,
    Json(body): Json<ForkRequest>,
) -> Result<(StatusCode, Json<Thread>), ApiError> {
    let id = body.id.as_deref().map(ThreadId::parse).transpose()?;
    let thread = state
        .workspaces()
        .fork(&path.thread_id, body.at, id, body.title.as_deref())
        .await?;
    let thread = state.people().annotate(state.principal(), thread).await?;
    Ok((StatusCode::CREATED, Json(thread.into())))
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/export",
    tag = "history",
    summary = "The thread as a recording (JSON Lines, `haico-recording/1`)",
    params(ThreadPath),
    responses(
        Read,
        (status = 200, description = "One JSON object per line, in order of occurrence: the thread, then its turns, messages, tool calls (`step`), revisions with what they changed, and artifacts with their payloads (see docs/RECORDING.md)", content_type = "application/x-ndjson", body = String),
        PathErrors,
    ),
)]
async fn export(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<ThreadPath>,
) -> Result<Response, ApiError> {
    let lines = state.workspaces().export(&path.thread_id).await?;
    let body = to_jsonl(&lines)?;
    let disposition = format!("attachment; filename=\"{}.haico.jsonl\"", path.thread_id);
    Ok((
        [
            (header::CONTENT_TYPE, NDJSON.to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response())
}

/// Query of `POST /api/threads/import`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct ImportQuery {
    /// The new thread's id; a fresh one when left out.
    #[serde(default)]
    id: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/threads/import",
    tag = "history",
    summary = "Load a recording as a new thread",
    params(ImportQuery),
    request_body(content = String, description = "A recording, as `GET …/export` answers it", content_type = "application/x-ndjson"),
    responses(
        UseServer,
        (status = 201, description = "The new thread: its messages, history and workspace at every revision are the recording's", body = Thread),
        (status = 400, description = "The recording is not valid (the text gives the line and the reason); nothing was written", body = ErrorBody),
        (status = 409, description = "A thread with the chosen id exists", body = ErrorBody),
        (status = 413, description = "The body is larger than HAICO_MAX_BODY_BYTES", body = ErrorBody),
        (status = 415, description = "The body is not declared as `application/x-ndjson`", body = ErrorBody),
    ),
)]
async fn import(
    Authorized(state, _): Authorized<UseServer>,
    Query(query): Query<ImportQuery>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Thread>), ApiError> {
    let declared = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
    if !matches!(
        declared.as_deref(),
        Some(NDJSON | "application/jsonl" | "application/json-lines")
    ) {
        return Err(ApiError::UnsupportedMediaType(format!(
            "send the recording with `Content-Type: {NDJSON}`"
        )));
    }
    let body = body?;
    let text = std::str::from_utf8(&body)
        .map_err(|err| ApiError::BadRequest(format!("the recording is not UTF-8 text: {err}")))?;
    let id = query.id.as_deref().map(ThreadId::parse).transpose()?;
    let thread = state.workspaces().import(text, id).await?;
    let thread = state.people().annotate(state.principal(), thread).await?;
    Ok((StatusCode::CREATED, Json(thread.into())))
}
