//! A study's data over HTTP: its sessions with their measures, the per-condition summary, the
//! `haico-study/1` export (pseudonymised unless its owner asks otherwise), the sessions as CSV
//! and a session's timeline for replay. Every member of the study (any role), its owner and
//! administrators read them; the raw export stays the owner's.

use axum::response::Response;
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::StudyFailure,
    extract::{Path, Query},
    schema::{ErrorBody, PathErrors},
    state::AppState,
    studies::{ExportQuery, StudyPath, typed},
};
use crate::studies::export::{self, Identities};
use crate::{http::guards::authorized::Authorized, http::guards::authorized::UseServer};

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(study_sessions))
        .routes(routes!(study_summary))
        .routes(routes!(export_study))
        .routes(routes!(study_sessions_csv))
        .routes(routes!(session_timeline))
}

/// A session of a study in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct SessionPath {
    /// The study's id.
    study_id: String,
    /// The session's reference.
    session_ref: String,
}

#[utoipa::path(
    get,
    path = "/api/studies/{study_id}/sessions",
    tag = "studies",
    summary = "The study's sessions (previews aside), pseudonymised, with their measures",
    params(StudyPath),
    responses(UseServer, (status = 200, description = "In the order they entered", body = Vec<Object>),
              PathErrors),
)]
async fn study_sessions(
    Authorized(state, _): Authorized<UseServer>,
    Path(StudyPath { study_id }): Path<StudyPath>,
) -> Result<axum::Json<Value>, StudyFailure> {
    let (study, design, data) = state.studies().data(state.principal(), &study_id).await?;
    Ok(axum::Json(Value::Array(
        data.iter()
            .map(|d| export::session_json(&study, &design, d, Identities::Pseudonymised))
            .collect(),
    )))
}

#[utoipa::path(
    get,
    path = "/api/studies/{study_id}/summary",
    tag = "studies",
    summary = "Per condition: the flow of sessions and each measure's n, mean, sd and median",
    params(StudyPath),
    responses(UseServer, (status = 200, description = "The summary", body = Object),
              PathErrors),
)]
async fn study_summary(
    Authorized(state, _): Authorized<UseServer>,
    Path(StudyPath { study_id }): Path<StudyPath>,
) -> Result<axum::Json<Value>, StudyFailure> {
    let (_, design, data) = state.studies().data(state.principal(), &study_id).await?;
    Ok(axum::Json(export::summary(&design, &data)))
}

#[utoipa::path(
    get,
    path = "/api/studies/{study_id}/export",
    tag = "studies",
    summary = "The study as JSON Lines (`haico-study/1`): the design as it ran, sessions, recordings",
    params(StudyPath, ExportQuery),
    responses(UseServer,
              (status = 200, description = "`application/x-ndjson`", content_type = "application/x-ndjson", body = String),
              (status = 403, description = "`pseudonymise=false` from someone other than the owner", body = ErrorBody),
              PathErrors),
)]
async fn export_study(
    Authorized(state, _): Authorized<UseServer>,
    Path(StudyPath { study_id }): Path<StudyPath>,
    Query(query): Query<ExportQuery>,
) -> Result<Response, StudyFailure> {
    let how = if query.pseudonymise == Some(false) {
        state
            .studies()
            .check_raw_export(state.principal(), &study_id)
            .await?;
        Identities::Raw
    } else {
        Identities::Pseudonymised
    };
    let (study, design, data) = state.studies().data(state.principal(), &study_id).await?;
    let agent = state.agent();
    let body = export::export_jsonl(
        &study,
        &design,
        &data,
        how,
        &agent.describe_model(),
        agent.instructions(),
    )?;
    Ok(typed("application/x-ndjson", body))
}

#[utoipa::path(
    get,
    path = "/api/studies/{study_id}/sessions.csv",
    tag = "studies",
    summary = "One row per session with its measures, pseudonymised",
    params(StudyPath),
    responses(UseServer,
              (status = 200, description = "`text/csv`", content_type = "text/csv", body = String),
              PathErrors),
)]
async fn study_sessions_csv(
    Authorized(state, _): Authorized<UseServer>,
    Path(StudyPath { study_id }): Path<StudyPath>,
) -> Result<Response, StudyFailure> {
    let (study, design, data) = state.studies().data(state.principal(), &study_id).await?;
    Ok(typed(
        "text/csv; charset=utf-8",
        export::sessions_csv(&study, &design, &data),
    ))
}

#[utoipa::path(
    get,
    path = "/api/studies/{study_id}/sessions/{session_ref}/timeline",
    tag = "studies",
    summary = "A session's messages, steps, revisions and decisions in time order, for replay",
    params(SessionPath),
    responses(UseServer, (status = 200, description = "`{session, condition, panels, events: [{t_s, kind, actor, turn, rev?, …}]}`", body = Object),
              PathErrors),
)]
async fn session_timeline(
    Authorized(state, _): Authorized<UseServer>,
    Path(SessionPath {
        study_id,
        session_ref,
    }): Path<SessionPath>,
) -> Result<axum::Json<Value>, StudyFailure> {
    let timeline = state
        .studies()
        .timeline(state.principal(), &study_id, &session_ref)
        .await?;
    Ok(axum::Json(timeline))
}
