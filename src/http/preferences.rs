//! The user path for preferences: `/api/threads/{thread_id}/preferences…`.
//!
//! Unlike the agent's tools, these ignore locks (the user may always edit), and `PATCH` is
//! the only way to lock or unlock. They do not take the thread lock, so a user's lock can land
//! while an agent call is in flight; the agent's SQL re-checks the lock on write.

use axum::{
    Router,
    extract::State,
    http::StatusCode,
    routing::{get, patch},
};
use serde::{Deserialize, Deserializer};

use super::{
    AppState,
    error::ApiError,
    extract::{Json, Path},
    require_thread,
};
use crate::{
    ThreadId,
    store::{NewPreference, Preference, PreferenceKind, PreferencePatch, WriteOutcome},
    tools::{
        checks::{check_length, require_text},
        preferences::{MAX_SUBTITLE_CHARS, MAX_TITLE_CHARS},
    },
};

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/api/threads/{thread_id}/preferences",
            get(list_preferences).post(create_preference),
        )
        .route(
            "/api/threads/{thread_id}/preferences/{preference_id}",
            patch(update_preference).delete(delete_preference),
        )
}

/// Body of `POST …/preferences`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreatePreference {
    title: String,
    #[serde(default)]
    subtitle: Option<String>,
    #[serde(default)]
    kind: Option<PreferenceKind>,
    #[serde(default)]
    locked: Option<bool>,
}

/// Body of `PATCH …/preferences/{id}`: absent fields stay; `"subtitle": null` clears it.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdatePreference {
    #[serde(default)]
    title: Option<String>,
    #[serde(default, deserialize_with = "present")]
    subtitle: Option<Option<String>>,
    #[serde(default)]
    kind: Option<PreferenceKind>,
    #[serde(default)]
    locked: Option<bool>,
}

/// Distinguishes a field sent as `null` (`Some(None)`) from one left out (`None`).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/preferences",
    tag = "workspace",
    summary = "List the preferences",
    params(super::openapi::ThreadPath),
    responses(
        (status = 200, description = "The preferences, in order", body = Vec<Preference>),
        (status = 400, description = "The id in the path is malformed", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn list_preferences(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
) -> Result<Json<Vec<Preference>>, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    let mut repo = state.db().begin_read().await?;
    require_thread(&mut repo, &id).await?;
    let list = repo.list_preferences(id.as_str()).await?;
    repo.rollback().await?;
    Ok(Json(list))
}

#[utoipa::path(
    post,
    path = "/api/threads/{thread_id}/preferences",
    tag = "workspace",
    summary = "Add a preference (soft unless `kind` says hard)",
    params(super::openapi::ThreadPath),
    request_body(content = CreatePreference, content_type = "application/json"),
    responses(
        (status = 201, description = "The new preference", body = Preference),
        (status = 400, description = "Invalid input: JSON that does not parse, or a value that breaks a rule (the text says which)", body = super::openapi::ErrorBody),
        (status = 413, description = "The body is larger than HAICO_MAX_BODY_BYTES", body = super::openapi::ErrorBody),
        (status = 415, description = "The body is not declared as `application/json`", body = super::openapi::ErrorBody),
        (status = 422, description = "The JSON does not have the expected shape (the text names the field)", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn create_preference(
    State(state): State<AppState>,
    Path(thread_id): Path<String>,
    Json(body): Json<CreatePreference>,
) -> Result<(StatusCode, Json<Preference>), ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    let item = NewPreference {
        title: require_text(&body.title, "title", MAX_TITLE_CHARS)?.to_string(),
        subtitle: subtitle(body.subtitle.as_deref())?,
        kind: body.kind.unwrap_or(PreferenceKind::Soft),
    };
    let mut repo = state.db().begin_write().await?;
    require_thread(&mut repo, &id).await?;
    let mut added = repo.add_preferences(id.as_str(), &[item]).await?;
    let Some(mut preference) = added.pop() else {
        repo.rollback().await?;
        return Err(ApiError::BadRequest("nothing was recorded".to_string()));
    };
    if body.locked == Some(true) {
        let patch = PreferencePatch {
            locked: Some(true),
            ..PreferencePatch::default()
        };
        if let (_, Some(locked)) = repo
            .update_preference(id.as_str(), preference.id, &patch, false)
            .await?
        {
            preference = locked;
        }
    }
    state.commit_user_change(repo, &id).await?;
    Ok((StatusCode::CREATED, Json(preference)))
}

#[utoipa::path(
    patch,
    path = "/api/threads/{thread_id}/preferences/{preference_id}",
    tag = "workspace",
    summary = "Change, lock or unlock a preference (the user path ignores locks)",
    params(super::openapi::PreferencePath),
    request_body(content = UpdatePreference, description = "Absent fields stay; `\"subtitle\": null` clears the subtitle", content_type = "application/json"),
    responses(
        (status = 200, description = "The preference as it is now", body = Preference),
        (status = 400, description = "Invalid input: JSON that does not parse, or a value that breaks a rule (the text says which)", body = super::openapi::ErrorBody),
        (status = 413, description = "The body is larger than HAICO_MAX_BODY_BYTES", body = super::openapi::ErrorBody),
        (status = 415, description = "The body is not declared as `application/json`", body = super::openapi::ErrorBody),
        (status = 422, description = "The JSON does not have the expected shape (the text names the field)", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread or the preference does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn update_preference(
    State(state): State<AppState>,
    Path((thread_id, preference_id)): Path<(String, i64)>,
    Json(body): Json<UpdatePreference>,
) -> Result<Json<Preference>, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    if body.title.is_none()
        && body.subtitle.is_none()
        && body.kind.is_none()
        && body.locked.is_none()
    {
        return Err(ApiError::BadRequest(
            "nothing to change: send title, subtitle, kind or locked".to_string(),
        ));
    }
    let title = match body.title.as_deref() {
        Some(t) => Some(require_text(t, "title", MAX_TITLE_CHARS)?.to_string()),
        None => None,
    };
    let subtitle = match body.subtitle {
        Some(sub) => Some(subtitle(sub.as_deref())?),
        None => None,
    };
    let patch = PreferencePatch {
        title,
        subtitle,
        kind: body.kind,
        locked: body.locked,
    };
    let mut repo = state.db().begin_write().await?;
    require_thread(&mut repo, &id).await?;
    match repo
        .update_preference(id.as_str(), preference_id, &patch, false)
        .await?
    {
        (WriteOutcome::Applied, Some(preference)) => {
            state.commit_user_change(repo, &id).await?;
            Ok(Json(preference))
        }
        _ => {
            repo.rollback().await?;
            Err(preference_not_found(preference_id))
        }
    }
}

#[utoipa::path(
    delete,
    path = "/api/threads/{thread_id}/preferences/{preference_id}",
    tag = "workspace",
    summary = "Remove a preference (also a locked one)",
    params(super::openapi::PreferencePath),
    responses(
        (status = 204, description = "Removed"),
        (status = 400, description = "The id in the path is malformed", body = super::openapi::ErrorBody),
        (status = 404, description = "The thread or the preference does not exist", body = super::openapi::ErrorBody),
    ),
)]
async fn delete_preference(
    State(state): State<AppState>,
    Path((thread_id, preference_id)): Path<(String, i64)>,
) -> Result<StatusCode, ApiError> {
    let id = ThreadId::parse(&thread_id)?;
    let mut repo = state.db().begin_write().await?;
    require_thread(&mut repo, &id).await?;
    match repo
        .delete_preference(id.as_str(), preference_id, false)
        .await?
    {
        WriteOutcome::Applied => {
            state.commit_user_change(repo, &id).await?;
            Ok(StatusCode::NO_CONTENT)
        }
        _ => {
            repo.rollback().await?;
            Err(preference_not_found(preference_id))
        }
    }
}

fn subtitle(raw: Option<&str>) -> Result<Option<String>, ApiError> {
    match raw.map(str::trim).filter(|s| !s.is_empty()) {
        Some(sub) => {
            check_length(sub, "subtitle", MAX_SUBTITLE_CHARS)?;
            Ok(Some(sub.to_string()))
        }
        None => Ok(None),
    }
}

fn preference_not_found(id: i64) -> ApiError {
    ApiError::NotFound(format!("preference {id} not found in this thread"))
}
