//! Suggestions on the user path: `/api/threads/{thread_id}/suggestions…` (issue 25).
//!
//! Viewers list; editors accept and reject (each handler's `Authorized<…>`). The rules —
//! what applies, what becomes outdated, what was decided already — are the domain's
//! (`workspace/suggestions/`); this module only translates.

use serde::{Deserialize, Serialize};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::ApiError,
    extract::{Json, Path, Query},
    schema::{ErrorBody, PathErrors},
    state::AppState,
};
use crate::{
    http::guards::authorized::Authorized, http::guards::authorized::Edit,
    http::guards::authorized::Read,
};
use haico_core::{
    wire::Document, workspace::suggestions::SuggestionBody, workspace::suggestions::checked_status,
    workspace::suggestions::to_wire,
};
use haico_store::ThreadId;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_suggestions))
        .routes(routes!(accept_suggestion))
        .routes(routes!(reject_suggestion))
}

/// A suggestion of a thread, in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct SuggestionPath {
    /// The thread's id.
    #[param(value_type = String, pattern = "^[A-Za-z0-9_-]{1,64}$")]
    thread_id: ThreadId,
    /// The suggestion's number in the thread.
    suggestion_id: i64,
}

/// `?status=`: only suggestions with this status.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct StatusParam {
    /// `open`, `accepted`, `rejected` or `outdated`; every suggestion when absent.
    #[serde(default)]
    status: Option<String>,
}

/// The answer of an accept: the suggestion and the document it made.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct AcceptedBody {
    suggestion: SuggestionBody,
    document: Document,
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/suggestions",
    tag = "suggestions",
    summary = "The agent's suggestions, oldest first",
    params(crate::http::schema::ThreadPath, StatusParam),
    responses(
        Read,
        (status = 200, description = "The suggestions, each with its diff against the document as it is now", body = Vec<SuggestionBody>),
        (status = 400, description = "An unknown status", body = ErrorBody),
        PathErrors,
    ),
)]
async fn list_suggestions(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<crate::http::schema::ThreadPath>,
    Query(param): Query<StatusParam>,
) -> Result<Json<Vec<SuggestionBody>>, ApiError> {
    let status = param.status.as_deref().map(checked_status).transpose()?;
    let listed = state
        .workspaces()
        .suggestions(&path.thread_id)
        .list(status)
        .await?;
    Ok(Json(listed.iter().map(to_wire).collect()))
}

#[utoipa::path(
    post,
    path = "/api/threads/{thread_id}/suggestions/{suggestion_id}/accept",
    tag = "suggestions",
    summary = "Accept a suggestion: apply it to the document as it is now",
    params(SuggestionPath),
    responses(
        Edit,
        (status = 200, description = "Applied: a new document version and revision by the caller", body = AcceptedBody),
        (status = 409, description = "Already decided, or its text no longer matches the document (then it is now `outdated` and nothing else changed)", body = ErrorBody),
        PathErrors,
    ),
)]
async fn accept_suggestion(
    Authorized(state, _): Authorized<Edit>,
    Path(path): Path<SuggestionPath>,
) -> Result<Json<AcceptedBody>, ApiError> {
    let accepted = state
        .workspaces()
        .suggestions(&path.thread_id)
        .accept(path.suggestion_id)
        .await?;
    Ok(Json(AcceptedBody {
        suggestion: to_wire(&accepted.suggestion),
        document: accepted.document.into(),
    }))
}

#[utoipa::path(
    post,
    path = "/api/threads/{thread_id}/suggestions/{suggestion_id}/reject",
    tag = "suggestions",
    summary = "Reject a suggestion; the document is unchanged",
    params(SuggestionPath),
    responses(
        Edit,
        (status = 200, description = "Rejected", body = SuggestionBody),
        (status = 409, description = "Already decided", body = ErrorBody),
        PathErrors,
    ),
)]
async fn reject_suggestion(
    Authorized(state, _): Authorized<Edit>,
    Path(path): Path<SuggestionPath>,
) -> Result<Json<SuggestionBody>, ApiError> {
    let rejected = state
        .workspaces()
        .suggestions(&path.thread_id)
        .reject(path.suggestion_id)
        .await?;
    Ok(Json(to_wire(&rejected)))
}
