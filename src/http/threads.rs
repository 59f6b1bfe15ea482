//! Threads and their workspace snapshot: `/api/threads…`.

use axum::{body::Bytes, extract::rejection::BytesRejection, http::StatusCode};
use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::ApiError,
    extract::{Json, Path, Query},
    html::{HtmlParam, WorkspaceView, workspace_view},
    schema::{BodyErrors, ErrorBody, PathErrors, ThreadPath},
    state::AppState,
};
use crate::{
    http::guards::authorized::Authorized, http::guards::authorized::Delete,
    http::guards::authorized::Edit, http::guards::authorized::Read,
    http::guards::authorized::UseServer,
};
use haico_core::wire::Thread;
use haico_store::ThreadId;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_threads, create_thread))
        .routes(routes!(get_thread, rename_thread, delete_thread))
        .routes(routes!(workspace))
}

/// Body of `POST /api/threads`.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateThread {
    id: Option<String>,
    title: Option<String>,
}

/// `?at=REV`: the workspace as it stood right after revision `REV` (0: empty).
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct AtParam {
    /// A revision of the thread, from `GET …/history`.
    #[serde(default)]
    at: Option<i64>,
}

/// Body of `PATCH /api/threads/{thread_id}`: a new title, a document mode, the MCP servers the
/// agent may use, or several of them.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct RenameThread {
    #[serde(default)]
    title: Option<String>,
    /// `direct` (the agent's document tools change the document) or `suggest` (they make
    /// suggestions the person accepts or rejects).
    #[serde(default)]
    document_mode: Option<String>,
    /// Which configured MCP servers (`GET /api/mcp-servers`) the agent may use: their names
    /// (`[]`: none), or `null` for all of them. Absent leaves the choice as it is.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Vec<String>>, nullable)]
    mcp_servers: Option<Option<Vec<String>>>,
}

/// Tells a field sent as `null` (`Some(None)`) from one left out (`None`, by `default`).
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

#[utoipa::path(
    post,
    path = "/api/threads",
    tag = "threads",
    summary = "Create a thread",
    request_body(content = Option<CreateThread>, description = "Optional: an empty body makes a thread with a new id and the title `New thread`", content_type = "application/json"),
    responses(
        UseServer,
        (status = 201, description = "The new thread", body = Thread),
        (status = 400, description = "JSON that does not parse, an invalid id or title", body = ErrorBody),
        (status = 409, description = "A thread with that id exists", body = ErrorBody),
        (status = 413, description = "The body is larger than HAICO_MAX_BODY_BYTES", body = ErrorBody),
    ),
)]
async fn create_thread(
    Authorized(state, _): Authorized<UseServer>,
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
    let thread = state
        .workspaces()
        .threads()
        .create(&id, body.title.as_deref())
        .await?;
    let thread = state.people().annotate(state.principal(), thread).await?;
    Ok((StatusCode::CREATED, Json(thread.into())))
}

#[utoipa::path(
    get,
    path = "/api/threads",
    tag = "threads",
    summary = "List the threads",
    responses(
        UseServer,
        (status = 200, description = "Every thread the caller may see (all of them for an administrator and in one-person mode), most recently active first", body = Vec<Thread>),
    ),
)]
async fn list_threads(
    Authorized(state, _): Authorized<UseServer>,
) -> Result<Json<Vec<Thread>>, ApiError> {
    let threads = state.workspaces().threads().list().await?;
    let visible = state.people().visible(state.principal(), threads).await?;
    Ok(Json(visible.into_iter().map(Thread::from).collect()))
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}",
    tag = "threads",
    summary = "Read a thread",
    params(ThreadPath),
    responses(
        Read,
        (status = 200, description = "The thread", body = Thread),
        PathErrors,
    ),
)]
async fn get_thread(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<ThreadPath>,
) -> Result<Json<Thread>, ApiError> {
    let thread = state.workspaces().threads().get(&path.thread_id).await?;
    let thread = state.people().annotate(state.principal(), thread).await?;
    Ok(Json(thread.into()))
}

#[utoipa::path(
    patch,
    path = "/api/threads/{thread_id}",
    tag = "threads",
    summary = "Rename a thread, set its document mode, or choose its agent's MCP servers",
    params(ThreadPath),
    request_body(content = RenameThread, content_type = "application/json"),
    responses(
        Edit,
        (status = 200, description = "The changed thread", body = Thread),
        PathErrors,
        BodyErrors,
    ),
)]
async fn rename_thread(
    Authorized(state, _): Authorized<Edit>,
    Path(path): Path<ThreadPath>,
    Json(body): Json<RenameThread>,
) -> Result<Json<Thread>, ApiError> {
    let document_mode = body
        .document_mode
        .as_deref()
        .map(haico_core::workspace::suggestions::checked_mode)
        .transpose()?;
    let configured: Vec<String> = state
        .agent()
        .mcp_servers()
        .map(crate::mcp_client::McpServers::names)
        .unwrap_or_default();
    let change = haico_core::workspace::ThreadChange {
        title: body.title.as_deref(),
        document_mode,
        mcp_servers: body
            .mcp_servers
            .as_ref()
            .map(|names| haico_core::workspace::ServerChoice {
                names: names.as_deref(),
                configured: &configured,
            }),
    };
    let thread = state
        .workspaces()
        .threads()
        .change(&path.thread_id, change)
        .await?;
    let thread = state.people().annotate(state.principal(), thread).await?;
    Ok(Json(thread.into()))
}

#[utoipa::path(
    delete,
    path = "/api/threads/{thread_id}",
    tag = "threads",
    summary = "Delete a thread and its whole workspace",
    params(ThreadPath),
    responses(
        Delete,
        (status = 204, description = "Deleted"),
        PathErrors,
    ),
)]
async fn delete_thread(
    Authorized(state, _): Authorized<Delete>,
    Path(path): Path<ThreadPath>,
) -> Result<StatusCode, ApiError> {
    state.workspaces().threads().delete(&path.thread_id).await?;
    state.people().thread_deleted();
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/workspace",
    tag = "threads",
    summary = "The workspace snapshot, in display order",
    params(ThreadPath, HtmlParam, AtParam),
    responses(
        Read,
        (status = 200, description = "Objective, document, plan, preferences and the artifact index (with `?at=`, exactly as they stood right after that revision); with `?html=true` the document also has `html`", body = WorkspaceView),
        PathErrors,
    ),
)]
async fn workspace(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<ThreadPath>,
    Query(param): Query<HtmlParam>,
    Query(at): Query<AtParam>,
) -> Result<Json<WorkspaceView>, ApiError> {
    let workspaces = state.workspaces();
    let snapshot = match at.at {
        Some(rev) => workspaces.workspace_at(&path.thread_id, rev).await?,
        None => workspaces.snapshot(&path.thread_id).await?,
    };
    let suggestions = workspaces.suggestions(&path.thread_id).panel(at.at).await?;
    Ok(Json(workspace_view(snapshot, suggestions, param).await?))
}
