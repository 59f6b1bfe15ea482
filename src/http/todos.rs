//! The plan on the user path: `/api/threads/{thread_id}/todos…`, addressed by stable ids.
//!
//! Every write takes the thread lock first (as the agent's tool calls do), so user edits and
//! tool calls on one thread run one after another and positions stay dense (0..n-1).
//!
//! Where `POST` puts a new step:
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

use axum::{
    Router,
    extract::State,
    http::StatusCode,
    routing::{get, patch},
};
use serde::Deserialize;

use super::{
    AppState,
    error::ApiError,
    extract::{Json, Path},
    require_thread,
};
use crate::{
    ThreadId,
    store::{Todo, WorkspaceRepository},
    tools::{
        checks::require_text,
        todos::{MAX_DEPTH, MAX_STEP_CHARS},
    },
};

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/api/threads/{thread_id}/todos",
            get(list_todos).post(create_todo),
        )
        .route(
            "/api/threads/{thread_id}/todos/{todo_id}",
            patch(update_todo).delete(delete_todo),
        )
}

/// Body of `POST …/todos` (see the module doc for the placement rules).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateTodo {
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
struct UpdateTodo {
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
    params(super::openapi::ThreadPath),
    responses(
        (status = 200, description = "The steps, in order", body = Vec<Todo>),
        (status = 400, description = "The id in the path is malformed", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn list_todos(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
) -> Result<Json<Vec<Todo>>, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    let mut repo = state.db().begin_read().await?;
    require_thread(&mut repo, &id).await?;
    let todos = repo.list_todos(id.as_str()).await?;
    repo.rollback().await?;
    Ok(Json(todos))
}

#[utoipa::path(
    post,
    path = "/api/threads/{thread_id}/todos",
    tag = "workspace",
    summary = "Add a step: at the end, under `parent_id` or after `after_id`",
    params(super::openapi::ThreadPath),
    request_body(content = CreateTodo, content_type = "application/json"),
    responses(
        (status = 201, description = "The new step", body = Todo),
        (status = 400, description = "Invalid input: JSON that does not parse, or a value that breaks a rule (the text says which)", body = super::openapi::ErrorBody),
        (status = 413, description = "The body is larger than HAICO_MAX_BODY_BYTES", body = super::openapi::ErrorBody),
        (status = 415, description = "The body is not declared as `application/json`", body = super::openapi::ErrorBody),
        (status = 422, description = "The JSON does not have the expected shape (the text names the field)", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn create_todo(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
    Json(body): Json<CreateTodo>,
) -> Result<(StatusCode, Json<Todo>), ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    let text = require_text(&body.text, "text", MAX_STEP_CHARS)?.to_string();
    if body.parent_id.is_some() && body.after_id.is_some() {
        return Err(ApiError::BadRequest(
            "give `parent_id` (nest under a step) or `after_id` (follow a step), not both"
                .to_string(),
        ));
    }
    if body.depth.is_some() && (body.parent_id.is_some() || body.after_id.is_some()) {
        return Err(ApiError::BadRequest(
            "`depth` follows from `parent_id` or `after_id`; send it only when appending at the \
             end of the plan"
                .to_string(),
        ));
    }
    if let Some(depth) = body.depth
        && !(0..=MAX_DEPTH).contains(&depth)
    {
        return Err(ApiError::BadRequest(format!(
            "`depth` is {depth}: give a depth from 0 to {MAX_DEPTH}"
        )));
    }

    let mut repo = state.db().begin_write().await?;
    lock_thread(&mut repo, &id).await?;
    let thread = id.as_str();
    let (position, depth) = if let Some(parent_id) = body.parent_id {
        let parent = repo
            .todo_place(thread, parent_id)
            .await?
            .ok_or_else(|| unknown_reference("parent_id", parent_id))?;
        if parent.depth + 1 > MAX_DEPTH {
            return Err(ApiError::BadRequest(format!(
                "step {parent_id} is at depth {}; the plan nests at most {MAX_DEPTH} levels",
                parent.depth
            )));
        }
        let end = repo
            .subtree_end(thread, parent.position, parent.depth)
            .await?;
        (end, parent.depth + 1)
    } else if let Some(after_id) = body.after_id {
        let sibling = repo
            .todo_place(thread, after_id)
            .await?
            .ok_or_else(|| unknown_reference("after_id", after_id))?;
        let end = repo
            .subtree_end(thread, sibling.position, sibling.depth)
            .await?;
        (end, sibling.depth)
    } else {
        let count = repo.count_todos(thread).await?;
        let deepest_allowed = if count > 0 {
            repo.todo_at(thread, count - 1)
                .await?
                .map_or(0, |step| step.depth + 1)
        } else {
            0
        };
        let depth = body.depth.unwrap_or(0);
        if depth > deepest_allowed {
            return Err(ApiError::BadRequest(format!(
                "`depth` is {depth} but the last step allows at most {deepest_allowed}: a step \
                 is at most one level deeper than the step before it"
            )));
        }
        (count, depth)
    };
    let todo = repo.insert_todo(thread, position, &text, depth).await?;
    state.commit_user_change(repo, &id).await?;
    Ok((StatusCode::CREATED, Json(todo)))
}

#[utoipa::path(
    patch,
    path = "/api/threads/{thread_id}/todos/{todo_id}",
    tag = "workspace",
    summary = "Change a step's text or tick it off",
    params(super::openapi::TodoPath),
    request_body(content = UpdateTodo, description = "Absent fields stay", content_type = "application/json"),
    responses(
        (status = 200, description = "The step as it is now", body = Todo),
        (status = 400, description = "Invalid input: JSON that does not parse, or a value that breaks a rule (the text says which)", body = super::openapi::ErrorBody),
        (status = 413, description = "The body is larger than HAICO_MAX_BODY_BYTES", body = super::openapi::ErrorBody),
        (status = 415, description = "The body is not declared as `application/json`", body = super::openapi::ErrorBody),
        (status = 422, description = "The JSON does not have the expected shape (the text names the field)", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread or the step does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn update_todo(
    State(state): State<AppState>,
    Path((thread_id, todo_id)): Path<(String, i64)>,
    Json(body): Json<UpdateTodo>,
) -> Result<Json<Todo>, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    if body.text.is_none() && body.done.is_none() {
        return Err(ApiError::BadRequest(
            "nothing to change: send text, done or both".to_string(),
        ));
    }
    let text = match body.text.as_deref() {
        Some(text) => Some(require_text(text, "text", MAX_STEP_CHARS)?.to_string()),
        None => None,
    };
    let mut repo = state.db().begin_write().await?;
    lock_thread(&mut repo, &id).await?;
    let Some(todo) = repo
        .update_todo_by_id(id.as_str(), todo_id, text.as_deref(), body.done)
        .await?
    else {
        repo.rollback().await?;
        return Err(todo_not_found(todo_id));
    };
    state.commit_user_change(repo, &id).await?;
    Ok(Json(todo))
}

#[utoipa::path(
    delete,
    path = "/api/threads/{thread_id}/todos/{todo_id}",
    tag = "workspace",
    summary = "Remove a step and its sub-steps",
    params(super::openapi::TodoPath),
    responses(
        (status = 204, description = "Removed"),
        (status = 400, description = "The id in the path is malformed", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread or the step does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn delete_todo(
    State(state): State<AppState>,
    Path((thread_id, todo_id)): Path<(String, i64)>,
) -> Result<StatusCode, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    let mut repo = state.db().begin_write().await?;
    lock_thread(&mut repo, &id).await?;
    if repo
        .remove_todo_subtree(id.as_str(), todo_id)
        .await?
        .is_none()
    {
        repo.rollback().await?;
        return Err(todo_not_found(todo_id));
    }
    state.commit_user_change(repo, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Takes the thread lock the agent's tool calls take; 404 when the thread does not exist.
async fn lock_thread(repo: &mut WorkspaceRepository, id: &ThreadId) -> Result<(), ApiError> {
    match repo.lock_thread(id.as_str()).await? {
        Some(_) => Ok(()),
        None => Err(ApiError::thread_not_found(id.as_str())),
    }
}

fn unknown_reference(field: &str, todo_id: i64) -> ApiError {
    ApiError::BadRequest(format!(
        "`{field}` {todo_id} does not name a step of this thread"
    ))
}

fn todo_not_found(todo_id: i64) -> ApiError {
    ApiError::NotFound(format!("step {todo_id} not found in this thread"))
}
