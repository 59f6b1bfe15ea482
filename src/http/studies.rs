//! `/api/studies…`: a researcher's studies (issue 42, SPEC §14): design, open, close, delete,
//! previews, members, and the data (sessions, summary, exports, a session's timeline). A
//! study's owner, its members and administrators see it; for anyone else it does not exist
//! (`404`); a member whose role is too little for a route gets `403` (`studies/members.rs`
//! has the rule). The rules are `crate::studies`'; this module translates.

use axum::{
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::StudyFailure,
    extract::{AnyJson, Json, Path},
    schema::{BodyErrors, ErrorBody, PathErrors},
    state::AppState,
    wire::{self, Member},
};
use crate::{http::guards::authorized::Authorized, http::guards::authorized::UseServer};
use crate::{studies::StudyChange, studies::StudyError, studies::StudyOp, studies::StudyView};
use haico_store::StudyStatus;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_study, list_studies))
        .routes(routes!(get_study, change_study, delete_study))
        .routes(routes!(open_study))
        .routes(routes!(close_study))
        .routes(routes!(preview_study))
        .routes(routes!(study_members, add_study_member))
        .routes(routes!(change_study_member, remove_study_member))
}

/// A study in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(super) struct StudyPath {
    /// The study's id.
    pub(super) study_id: String,
}

/// A study as researchers read it: the design's fields, its status, its link and its counts.
/// The secret is never part of it.
pub(super) fn study_json(view: &StudyView) -> Value {
    let mut out = match serde_json::to_value(&view.design) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let conditions: Map<String, Value> = view
        .conditions
        .iter()
        .map(|c| (c.condition_key.clone(), json!(c.counted)))
        .collect();
    out.insert("id".into(), json!(view.row.id));
    out.insert("status".into(), json!(view.row.status));
    out.insert("owner".into(), json!(view.row.owner));
    out.insert("role".into(), json!(view.role.as_str()));
    // What the caller may do, by the rule the routes apply: the page offers these, no more.
    let may = |op| view.role.may(op);
    out.insert(
        "may".into(),
        json!({
            "change": may(StudyOp::Change),
            "share": may(StudyOp::Share),
            "delete": may(StudyOp::Delete),
        }),
    );
    out.insert("created_at".into(), json!(view.row.created_at));
    out.insert(
        "entry_url".into(),
        json!(format!("/s/{}", view.row.entry_key)),
    );
    out.insert(
        "counts".into(),
        json!({"by_condition": conditions, "by_status": view.by_status}),
    );
    Value::Object(out)
}

#[utoipa::path(
    post,
    path = "/api/studies",
    tag = "studies",
    summary = "Design a study (a draft)",
    request_body(content = Object, description = "The design: title, task, consent, entry, assignment, limits, completion, conditions (SPEC §14)", content_type = "application/json"),
    responses(
        UseServer,
        (status = 201, description = "The draft study, with its entry URL", body = Object),
        BodyErrors,
    ),
)]
async fn create_study(
    Authorized(state, _): Authorized<UseServer>,
    AnyJson(body): AnyJson,
) -> Result<(StatusCode, axum::Json<Value>), StudyFailure> {
    if !body.is_object() {
        return Err(StudyError::BadRequest("the design must be a JSON object".into()).into());
    }
    let view = state.studies().create(state.principal(), body).await?;
    Ok((StatusCode::CREATED, axum::Json(study_json(&view))))
}

#[utoipa::path(
    get,
    path = "/api/studies",
    tag = "studies",
    summary = "The studies the caller owns or is a member of, each with the caller's `role` (all of them for an administrator)",
    responses(UseServer, (status = 200, description = "Newest first", body = Vec<Object>)),
)]
async fn list_studies(
    Authorized(state, _): Authorized<UseServer>,
) -> Result<axum::Json<Value>, StudyFailure> {
    let views = state.studies().list(state.principal()).await?;
    Ok(axum::Json(Value::Array(
        views.iter().map(study_json).collect(),
    )))
}

#[utoipa::path(
    get,
    path = "/api/studies/{study_id}",
    tag = "studies",
    summary = "One study",
    params(StudyPath),
    responses(UseServer, (status = 200, description = "The study", body = Object),
              PathErrors),
)]
async fn get_study(
    Authorized(state, _): Authorized<UseServer>,
    Path(StudyPath { study_id }): Path<StudyPath>,
) -> Result<axum::Json<Value>, StudyFailure> {
    let view = state.studies().view(state.principal(), &study_id).await?;
    Ok(axum::Json(study_json(&view)))
}

#[utoipa::path(
    patch,
    path = "/api/studies/{study_id}",
    tag = "studies",
    summary = "Change a draft's design, or any study's recruiting and targets",
    params(StudyPath),
    request_body(content = Object, description = "Design fields to replace (drafts only), `recruiting: {key: bool}`, `targets: {key: n|null}`", content_type = "application/json"),
    responses(
        UseServer,
        (status = 200, description = "The study as changed", body = Object),
        PathErrors,
        (status = 403, description = "The caller is the study's viewer", body = ErrorBody),
        (status = 409, description = "The design is frozen (the study is open or closed)", body = ErrorBody),
        BodyErrors,
    ),
)]
async fn change_study(
    Authorized(state, _): Authorized<UseServer>,
    Path(StudyPath { study_id }): Path<StudyPath>,
    AnyJson(body): AnyJson,
) -> Result<axum::Json<Value>, StudyFailure> {
    let Value::Object(mut body) = body else {
        return Err(StudyError::BadRequest("the body must be a JSON object".into()).into());
    };
    let mut change = StudyChange::default();
    if let Some(recruiting) = body.remove("recruiting") {
        change.recruiting = serde_json::from_value(recruiting).map_err(|err| {
            StudyError::Invalid(format!(
                "recruiting: an object of condition keys to true/false ({err})"
            ))
        })?;
    }
    if let Some(targets) = body.remove("targets") {
        change.targets = serde_json::from_value(targets).map_err(|err| {
            StudyError::Invalid(format!(
                "targets: an object of condition keys to numbers or null ({err})"
            ))
        })?;
    }
    change.design = body;
    let view = state
        .studies()
        .change(state.principal(), &study_id, change)
        .await?;
    Ok(axum::Json(study_json(&view)))
}

#[utoipa::path(
    delete,
    path = "/api/studies/{study_id}",
    tag = "studies",
    summary = "Delete a study with its sessions and their threads",
    params(StudyPath),
    responses(UseServer, (status = 204, description = "Deleted"),
              PathErrors,
              (status = 403, description = "The caller is a member, not the owner", body = ErrorBody)),
)]
async fn delete_study(
    Authorized(state, _): Authorized<UseServer>,
    Path(StudyPath { study_id }): Path<StudyPath>,
) -> Result<StatusCode, StudyFailure> {
    state.studies().delete(state.principal(), &study_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post,
    path = "/api/studies/{study_id}/open",
    tag = "studies",
    summary = "Open a draft: its link takes participants, its design is frozen",
    params(StudyPath),
    responses(UseServer, (status = 200, description = "The open study", body = Object),
              PathErrors,
              (status = 403, description = "The caller is the study's viewer", body = ErrorBody),
              (status = 409, description = "The study is not a draft", body = ErrorBody)),
)]
async fn open_study(
    Authorized(state, _): Authorized<UseServer>,
    Path(StudyPath { study_id }): Path<StudyPath>,
) -> Result<axum::Json<Value>, StudyFailure> {
    let view = state
        .studies()
        .advance(
            state.principal(),
            &study_id,
            StudyStatus::Draft,
            StudyStatus::Open,
        )
        .await?;
    Ok(axum::Json(study_json(&view)))
}

#[utoipa::path(
    post,
    path = "/api/studies/{study_id}/close",
    tag = "studies",
    summary = "Close an open study: its link answers 410",
    params(StudyPath),
    responses(UseServer, (status = 200, description = "The closed study", body = Object),
              PathErrors,
              (status = 403, description = "The caller is the study's viewer", body = ErrorBody),
              (status = 409, description = "The study is not open", body = ErrorBody)),
)]
async fn close_study(
    Authorized(state, _): Authorized<UseServer>,
    Path(StudyPath { study_id }): Path<StudyPath>,
) -> Result<axum::Json<Value>, StudyFailure> {
    let view = state
        .studies()
        .advance(
            state.principal(),
            &study_id,
            StudyStatus::Open,
            StudyStatus::Closed,
        )
        .await?;
    Ok(axum::Json(study_json(&view)))
}

/// Body of `POST …/preview`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct PreviewBody {
    /// The condition to preview, by key.
    condition: String,
}

#[utoipa::path(
    post,
    path = "/api/studies/{study_id}/preview",
    tag = "studies",
    summary = "A preview session of one condition (counts nowhere)",
    params(StudyPath),
    request_body(content = PreviewBody, content_type = "application/json"),
    responses(UseServer, (status = 201, description = "`{session, participant_token, status}`", body = Object),
              PathErrors,
              (status = 403, description = "The caller is the study's viewer", body = ErrorBody),
              BodyErrors),
)]
async fn preview_study(
    Authorized(state, _): Authorized<UseServer>,
    Path(StudyPath { study_id }): Path<StudyPath>,
    Json(body): Json<PreviewBody>,
) -> Result<(StatusCode, axum::Json<Value>), StudyFailure> {
    let entered = state
        .studies()
        .preview(state.principal(), &study_id, &body.condition)
        .await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(json!({
            "session": entered.session_ref,
            "participant_token": entered.token,
            "status": entered.status,
        })),
    ))
}

/// A member of a study in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct StudyMemberPath {
    /// The study's id.
    study_id: String,
    /// The account's name.
    name: String,
}

/// Body of `POST …/members`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct NewStudyMember {
    /// The account's name.
    name: String,
    /// `viewer` (reads the study and its pseudonymised data) or `editor` (also changes, opens
    /// and closes it, and makes previews).
    role: String,
}

/// Body of `PATCH …/members/{name}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct StudyMemberRole {
    /// `viewer` or `editor`.
    role: String,
}

#[utoipa::path(
    get,
    path = "/api/studies/{study_id}/members",
    tag = "studies",
    summary = "Whom the study is shared with (its owner and administrators)",
    params(StudyPath),
    responses(
        UseServer,
        (status = 200, description = "The owner first (when it has one), then editors and viewers, by name", body = Vec<Member>),
        PathErrors,
        (status = 403, description = "The caller is a member, not the owner", body = ErrorBody),
    ),
)]
async fn study_members(
    Authorized(state, _): Authorized<UseServer>,
    Path(StudyPath { study_id }): Path<StudyPath>,
) -> Result<axum::Json<Vec<Member>>, StudyFailure> {
    let members = state
        .studies()
        .members(state.principal(), &study_id)
        .await?;
    Ok(axum::Json(wire::list(members)))
}

#[utoipa::path(
    post,
    path = "/api/studies/{study_id}/members",
    tag = "studies",
    summary = "Share the study with a person as viewer or editor",
    params(StudyPath),
    request_body(content = NewStudyMember, content_type = "application/json"),
    responses(
        UseServer,
        (status = 201, description = "The study's members now", body = Vec<Member>),
        PathErrors,
        BodyErrors,
        (status = 403, description = "The caller is a member, not the owner", body = ErrorBody),
        (status = 409, description = "The person is a member already (`PATCH` changes a role)", body = ErrorBody),
    ),
)]
async fn add_study_member(
    Authorized(state, _): Authorized<UseServer>,
    Path(StudyPath { study_id }): Path<StudyPath>,
    Json(body): Json<NewStudyMember>,
) -> Result<(StatusCode, axum::Json<Vec<Member>>), StudyFailure> {
    let members = state
        .studies()
        .add_member(state.principal(), &study_id, &body.name, &body.role)
        .await?;
    state.people().study_members_changed();
    Ok((StatusCode::CREATED, axum::Json(wire::list(members))))
}

#[utoipa::path(
    patch,
    path = "/api/studies/{study_id}/members/{name}",
    tag = "studies",
    summary = "Change a member's role",
    params(StudyMemberPath),
    request_body(content = StudyMemberRole, content_type = "application/json"),
    responses(
        UseServer,
        (status = 200, description = "The study's members now", body = Vec<Member>),
        PathErrors,
        BodyErrors,
        (status = 403, description = "The caller is a member, not the owner", body = ErrorBody),
    ),
)]
async fn change_study_member(
    Authorized(state, _): Authorized<UseServer>,
    Path(path): Path<StudyMemberPath>,
    Json(body): Json<StudyMemberRole>,
) -> Result<axum::Json<Vec<Member>>, StudyFailure> {
    let members = state
        .studies()
        .change_member(state.principal(), &path.study_id, &path.name, &body.role)
        .await?;
    state.people().study_members_changed();
    Ok(axum::Json(wire::list(members)))
}

#[utoipa::path(
    delete,
    path = "/api/studies/{study_id}/members/{name}",
    tag = "studies",
    summary = "Stop sharing the study with a person",
    params(StudyMemberPath),
    responses(
        UseServer,
        (status = 200, description = "The study's members now", body = Vec<Member>),
        PathErrors,
        (status = 403, description = "The caller is a member, not the owner", body = ErrorBody),
    ),
)]
async fn remove_study_member(
    Authorized(state, _): Authorized<UseServer>,
    Path(path): Path<StudyMemberPath>,
) -> Result<axum::Json<Vec<Member>>, StudyFailure> {
    let members = state
        .studies()
        .remove_member(state.principal(), &path.study_id, &path.name)
        .await?;
    state.people().study_members_changed();
    Ok(axum::Json(wire::list(members)))
}

/// `?pseudonymise=` of the export.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct ExportQuery {
    /// `false`: participant ids and parameters as given (the study's owner only, not its
    /// members).
    #[serde(default)]
    pub(super) pseudonymise: Option<bool>,
}

/// A body of `content_type` as it is.
pub(super) fn typed(content_type: &'static str, body: String) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}
