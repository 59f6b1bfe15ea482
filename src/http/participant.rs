//! A participant's routes (issue 42, SPEC §14): entering by the study's link, and the
//! session's consent, Start, Finish and withdraw. The participant's token (or the cookie set
//! on entry) is what they act by; everything else it reaches is its own thread's REST, chat
//! and events routes, which the access guard lets through within its condition
//! (`studies::access`).

use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::ApiError,
    error::StudyFailure,
    extract::{Json, Path},
    schema::{BodyErrors, ErrorBody},
    state::AppState,
};
use crate::{http::guards::authorized::Anyone, http::guards::authorized::Authorized};
use crate::{studies::PARTICIPANT_COOKIE, studies::ParticipantView, studies::StudyError};
use haico_core::markdown::to_safe_html;
use haico_core::people::Participant;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(enter_study))
        .routes(routes!(participant_session))
        .routes(routes!(participant_consent))
        .routes(routes!(participant_start))
        .routes(routes!(participant_finish))
        .routes(routes!(participant_withdraw))
}

/// A study's entry link in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
struct EntryPath {
    /// The secret part of the study's link (`/s/{entry_key}`).
    entry_key: String,
}

/// Body of `POST /api/s/{entry_key}/sessions`.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct EnterBody {
    /// The participant's id on the recruiting platform (also taken from `params` under the
    /// study's `participant_param`).
    #[serde(default)]
    participant_id: Option<String>,
    /// The link's query parameters; only those the study names are kept.
    #[serde(default)]
    #[schema(value_type = Object)]
    params: Map<String, Value>,
}

/// The participant's session as it may know it.
fn view_json(view: &ParticipantView) -> Value {
    let remaining = view
        .deadline
        .map(|d| (d - chrono::Utc::now()).num_seconds().max(0));
    json!({
        "session": view.session_ref,
        "status": view.status,
        // The page shows the Markdown rendered here: a participant reaches no other route
        // that renders (`POST /api/markdown` is not its).
        "task": {"title": view.task_title, "instructions": view.instructions,
                 "instructions_html": to_safe_html(&view.instructions)},
        "consent": {"text": view.consent.0, "html": to_safe_html(&view.consent.0),
                    "required": view.consent.1, "records": crate::studies::RECORDED},
        "thread_id": view.thread_id,
        "panels": view.panels,
        "deadline": view.deadline,
        "remaining_s": remaining,
        "can_finish": view.can_finish,
        "completion": view.completion.as_ref().map(|(code, url)| json!({"code": code, "redirect_url": url})),
    })
}

/// The request's participant, or `404` for anyone else.
fn participant(state: &AppState) -> Result<&Participant, StudyFailure> {
    state.principal().participant().ok_or_else(|| {
        StudyFailure(StudyError::NotFound(
            "no participant session: open the study's link first".to_string(),
        ))
    })
}

#[utoipa::path(
    post,
    path = "/api/s/{entry_key}/sessions",
    tag = "participants",
    security(()),
    summary = "Enter a study by its link (the same participant id resumes its session)",
    params(EntryPath),
    request_body(content = EnterBody, content_type = "application/json"),
    responses(
        Anyone,
        (status = 201, description = "A new session: `{session, participant_token, status}`, and the participant cookie", body = Object),
        (status = 200, description = "The participant's existing session, with a new token", body = Object),
        (status = 404, description = "No open or closed study has this link", body = ErrorBody),
        (status = 410, description = "The study is closed", body = ErrorBody),
        (status = 422, description = "A malformed participant id or parameter, or a missing required id", body = ErrorBody),
        (status = 429, description = "Too many entries from this address (HAICO_STUDY_ENTRIES_PER_MINUTE)", body = ErrorBody),
        BodyErrors,
    ),
)]
async fn enter_study(
    Authorized(state, _): Authorized<Anyone>,
    parts: axum::http::request::Parts,
    Path(EntryPath { entry_key }): Path<EntryPath>,
    Json(body): Json<EnterBody>,
) -> Result<Response, Response> {
    state
        .guards()
        .limits
        .study_entry(&parts)
        .map_err(IntoResponse::into_response)?;
    let entered = state
        .studies()
        .enter(&entry_key, body.participant_id, body.params)
        .await
        .map_err(|err| StudyFailure(err).into_response())?;
    let status = if entered.new {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let mut response = (
        status,
        axum::Json(json!({
            "session": entered.session_ref,
            "participant_token": entered.token,
            "status": entered.status,
        })),
    )
        .into_response();
    let cookie = format!(
        "{PARTICIPANT_COOKIE}={}; Path=/; HttpOnly; SameSite=Strict",
        entered.token
    );
    match HeaderValue::from_str(&cookie) {
        Ok(value) => {
            response.headers_mut().insert(header::SET_COOKIE, value);
        }
        Err(_) => {
            return Err(
                ApiError::Internal("the session cookie could not be set".into()).into_response(),
            );
        }
    }
    Ok(response)
}

#[utoipa::path(
    get,
    path = "/api/participant",
    tag = "participants",
    security(()),
    summary = "The participant's session: status, task, thread, panels, time left, completion",
    responses(Anyone, (status = 200, description = "The session (never its condition)", body = Object),
              (status = 404, description = "No participant token or cookie", body = ErrorBody)),
)]
async fn participant_session(
    Authorized(state, _): Authorized<Anyone>,
) -> Result<axum::Json<Value>, StudyFailure> {
    let view = state
        .studies()
        .participant_view(participant(&state)?)
        .await?;
    Ok(axum::Json(view_json(&view)))
}

/// Body of `POST /api/participant/consent`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ConsentBody {
    /// Whether the participant agrees.
    agree: bool,
}

#[utoipa::path(
    post,
    path = "/api/participant/consent",
    tag = "participants",
    security(()),
    summary = "Agree (assigned, a thread made) or decline (the no-consent code, no thread)",
    request_body(content = ConsentBody, content_type = "application/json"),
    responses(Anyone, (status = 200, description = "The session", body = Object),
              (status = 404, description = "No participant token or cookie", body = ErrorBody),
              (status = 409, description = "`{status: \"full\"}`: no condition takes anyone", body = ErrorBody),
              (status = 410, description = "The study closed", body = ErrorBody),
              BodyErrors),
)]
async fn participant_consent(
    Authorized(state, _): Authorized<Anyone>,
    Json(body): Json<ConsentBody>,
) -> Result<axum::Json<Value>, StudyFailure> {
    let view = state
        .studies()
        .consent(participant(&state)?, body.agree)
        .await?;
    Ok(axum::Json(view_json(&view)))
}

#[utoipa::path(
    post,
    path = "/api/participant/start",
    tag = "participants",
    security(()),
    summary = "Start the task: the clock runs",
    responses(Anyone, (status = 200, description = "The session, with its deadline", body = Object),
              (status = 404, description = "No participant token or cookie", body = ErrorBody),
              (status = 409, description = "Not assigned yet, or ended", body = ErrorBody)),
)]
async fn participant_start(
    Authorized(state, _): Authorized<Anyone>,
) -> Result<axum::Json<Value>, StudyFailure> {
    let view = state.studies().start(participant(&state)?).await?;
    Ok(axum::Json(view_json(&view)))
}

#[utoipa::path(
    post,
    path = "/api/participant/finish",
    tag = "participants",
    security(()),
    summary = "Finish: the completion code and redirect URL",
    responses(Anyone, (status = 200, description = "The completed session with its code", body = Object),
              (status = 404, description = "No participant token or cookie", body = ErrorBody),
              (status = 409, description = "`{needs: {turns}}` before the study's minimum of turns; `time is up`", body = ErrorBody)),
)]
async fn participant_finish(
    Authorized(state, _): Authorized<Anyone>,
) -> Result<axum::Json<Value>, StudyFailure> {
    let view = state.studies().finish(participant(&state)?).await?;
    Ok(axum::Json(view_json(&view)))
}

#[utoipa::path(
    post,
    path = "/api/participant/withdraw",
    tag = "participants",
    security(()),
    summary = "Withdraw from the study (the session never counts)",
    responses(Anyone, (status = 200, description = "The withdrawn session", body = Object),
              (status = 404, description = "No participant token or cookie", body = ErrorBody)),
)]
async fn participant_withdraw(
    Authorized(state, _): Authorized<Anyone>,
) -> Result<axum::Json<Value>, StudyFailure> {
    let view = state.studies().withdraw(participant(&state)?).await?;
    Ok(axum::Json(view_json(&view)))
}
