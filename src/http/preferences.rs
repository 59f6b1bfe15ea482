//! The user path for preferences: `/api/threads/{thread_id}/preferences…`.
//!
//! A person's edits ignore locks (the user may always edit), and `PATCH` is the only way to
//! lock or unlock; the rules are the workspace's ([`crate::workspace::preferences`]).

use axum::http::StatusCode;
use serde::{Deserialize, Deserializer};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::ApiError,
    extract::{Json, Path},
    schema::{BodyErrors, PathErrors, PreferencePath, ThreadPath},
    state::AppState,
};
use crate::{
    http::guards::authorized::Authorized, http::guards::authorized::Edit,
    http::guards::authorized::Read,
};
use haico_core::{wire::Preference, workspace::PreferenceChange, workspace::PreferenceDraft};
use haico_store::panels::PreferenceKind;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_preferences, create_preference))
        .routes(routes!(update_preference, delete_preference))
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
    params(ThreadPath),
    responses(
        Read,
        (status = 200, description = "The preferences, in order", body = Vec<Preference>),
        PathErrors,
    ),
)]
async fn list_preferences(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<ThreadPath>,
) -> Result<Json<Vec<Preference>>, ApiError> {
    Ok(Json(haico_core::wire::list(
        state
            .workspaces()
            .preferences(&path.thread_id)
            .list()
            .await?,
    )))
}

#[utoipa::path(
    post,
    path = "/api/threads/{thread_id}/preferences",
    tag = "workspace",
    summary = "Add a preference (soft unless `kind` says hard)",
    params(ThreadPath),
    request_body(content = CreatePreference, content_type = "application/json"),
    responses(
        Edit,
        (status = 201, description = "The new preference", body = Preference),
        PathErrors,
        BodyErrors,
    ),
)]
async fn create_preference(
    Authorized(state, _): Authorized<Edit>,
    Path(path): Path<ThreadPath>,
    Json(body): Json<CreatePreference>,
) -> Result<(StatusCode, Json<Preference>), ApiError> {
    let draft = PreferenceDraft {
        title: body.title,
        subtitle: body.subtitle,
        kind: body.kind.unwrap_or(PreferenceKind::Soft),
    };
    let preference = state
        .workspaces()
        .preferences(&path.thread_id)
        .create(&draft, body.locked == Some(true))
        .await?;
    Ok((StatusCode::CREATED, Json(preference.into())))
}

#[utoipa::path(
    patch,
    path = "/api/threads/{thread_id}/preferences/{preference_id}",
    tag = "workspace",
    summary = "Change, lock or unlock a preference (the user path ignores locks)",
    params(PreferencePath),
    request_body(content = UpdatePreference, description = "Absent fields stay; `\"subtitle\": null` clears the subtitle", content_type = "application/json"),
    responses(
        Edit,
        (status = 200, description = "The preference as it is now", body = Preference),
        PathErrors,
        BodyErrors,
    ),
)]
async fn update_preference(
    Authorized(state, _): Authorized<Edit>,
    Path(path): Path<PreferencePath>,
    Json(body): Json<UpdatePreference>,
) -> Result<Json<Preference>, ApiError> {
    let change = PreferenceChange {
        title: body.title,
        subtitle: body.subtitle,
        kind: body.kind,
        locked: body.locked,
    };
    let preference = state
        .workspaces()
        .preferences(&path.thread_id)
        .update(path.preference_id, &change)
        .await?;
    Ok(Json(preference.into()))
}

#[utoipa::path(
    delete,
    path = "/api/threads/{thread_id}/preferences/{preference_id}",
    tag = "workspace",
    summary = "Remove a preference (also a locked one)",
    params(PreferencePath),
    responses(
        Edit,
        (status = 204, description = "Removed"),
        PathErrors,
    ),
)]
async fn delete_preference(
    Authorized(state, _): Authorized<Edit>,
    Path(path): Path<PreferencePath>,
) -> Result<StatusCode, ApiError> {
    state
        .workspaces()
        .preferences(&path.thread_id)
        .delete(path.preference_id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
