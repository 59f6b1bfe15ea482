//! Agent turns over HTTP: `POST …/chat` streams one turn as Server-Sent Events, `POST
//! …/cancel` stops it, `GET …/messages` returns the conversation with its steps.
//!
//! The chat response is a subscription to the thread's event log starting at the turn's first
//! event and ending after its `done`: the same events, ids and order every other subscriber
//! of the thread sees, plus the streamed tokens.

use std::convert::Infallible;

use axum::{
    http::StatusCode,
    response::sse::{Event, KeepAlive, Sse},
};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::wire::TurnRecord;
use super::{
    error::ApiError,
    extract::{Json, Path, Query},
    html::{HtmlParam, render_turns},
    schema::{BodyErrors, ErrorBody, PathErrors, ThreadPath},
    state::AppState,
};
use crate::agent::turn::StartError;
use crate::{
    http::guards::authorized::Authorized, http::guards::authorized::Chat,
    http::guards::authorized::Read, http::guards::authorized::TurnAllowed,
};
use haico_core::events::subscribe;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(chat))
        .routes(routes!(cancel))
        .routes(routes!(messages))
}

/// Body of `POST …/chat`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ChatRequest {
    message: String,
    /// A passage of the document the message is about (code-point offsets into that
    /// version's body; an older version's passage is found again where later edits moved
    /// it): the agent reads it quoted before the message and marked in its snapshot, and in
    /// suggest mode may only suggest changes to it.
    #[serde(default)]
    selection: Option<haico_core::workspace::Selection>,
}

#[utoipa::path(
    post,
    path = "/api/threads/{thread_id}/chat",
    tag = "agent",
    summary = "Run one agent turn, streamed as Server-Sent Events",
    params(ThreadPath),
    request_body(content = ChatRequest, content_type = "application/json"),
    responses(
        Chat,
        (status = 200, description = "`text/event-stream`: `turn`, then `token`, `step`, `artifact` and `workspace` events as they happen, `message` with the answer (or `error`), and `done` last", content_type = "text/event-stream", body = String),
        PathErrors,
        BodyErrors,
        (status = 409, description = "A turn is already running on this thread", body = ErrorBody),
        (status = 422, description = "The selection's text is not at its offsets in the version it names, or no longer in the document", body = ErrorBody),
        (status = 429, description = "The caller started too many turns (HAICO_CHAT_TURNS_PER_MINUTE): wait `Retry-After` seconds", body = ErrorBody),
    ),
)]
async fn chat(
    Authorized(state, _): Authorized<Chat>,
    _: TurnAllowed,
    Path(ThreadPath { thread_id: id }): Path<ThreadPath>,
    Json(body): Json<ChatRequest>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let (message, focus) = match &body.selection {
        Some(selection) => {
            if body.message.trim().is_empty() {
                return Err(ApiError::BadRequest(
                    "`message` is empty: say what to do with the selected passage".to_string(),
                ));
            }
            let focus = state.workspaces().focus_for(&id, selection).await?;
            let message = haico_core::workspace::suggestions::message_about(&focus, &body.message);
            (message, Some(focus))
        }
        None => (body.message, None),
    };
    // Subscribe before the turn starts, so its tokens and its logged events arrive in the
    // order they happen.
    let stream = subscribe(state.db().clone(), state.bus().clone(), &id, None)
        .await
        .map_err(|err| ApiError::Store(err.0))?;
    let started = state
        .agent()
        .start_about(&id, &message, state.actor(), focus)
        .await
        .map_err(|err| match err {
            StartError::InvalidMessage(message) => ApiError::BadRequest(message),
            StartError::UnknownThread(_) => ApiError::thread_not_found(id.as_str()),
            StartError::Busy => ApiError::Conflict(err.to_string()),
            StartError::Stopping => ApiError::Unavailable(err.to_string()),
            StartError::Store(store) => ApiError::Store(store),
        })?;
    let turn = started.turn_index;
    let first_seq = started.first_seq;
    // Everything from the turn's first event on, ending right after this turn's `done`.
    // The answer ends, like every stream, once its caller may no longer read the thread (the
    // turn itself runs on: it was started by someone who could).
    let events = stream
        .take_until(state.closing().clone().cancelled_owned())
        .take_until(
            state
                .people()
                .clone()
                .access_lost(state.principal().clone(), id.clone()),
        )
        .filter(move |item| {
            // Events logged before this turn began (another client's edit a moment earlier)
            // belong to the thread's stream, not to this response.
            let keep = match item {
                Ok(event) => event.seq.is_none_or(|seq| seq >= first_seq),
                Err(_) => true,
            };
            futures::future::ready(keep)
        })
        .map(move |item| match item {
            Ok(event) => {
                let last = event.event == "done" && event_turn(&event.data) == Some(turn);
                let mut sse = Event::default().event(&event.event).data(&event.data);
                if let Some(seq) = event.seq {
                    sse = sse.id(seq.to_string());
                }
                (sse, last)
            }
            Err(err) => (
                Event::default()
                    .event("error")
                    .data(json!({"message": err.to_string(), "turn_index": turn}).to_string()),
                true,
            ),
        })
        .boxed();
    let through_done = futures::stream::unfold((events, false), |(mut events, ended)| async move {
        if ended {
            return None;
        }
        let (event, last) = events.next().await?;
        Some((Ok::<_, Infallible>(event), (events, last)))
    });
    Ok(Sse::new(through_done).keep_alive(KeepAlive::default()))
}

fn event_turn(data: &str) -> Option<i64> {
    serde_json::from_str::<Value>(data)
        .ok()
        .and_then(|v| v.get("turn_index").and_then(Value::as_i64))
}

#[utoipa::path(
    post,
    path = "/api/threads/{thread_id}/cancel",
    tag = "agent",
    summary = "Cancel the thread's running turn",
    params(ThreadPath),
    responses(
        Chat,
        (status = 202, description = "The turn is being cancelled", body = Object, example = json!({"cancelled": true})),
        PathErrors,
        (status = 409, description = "No turn is running on this thread", body = ErrorBody),
    ),
)]
async fn cancel(
    Authorized(state, _): Authorized<Chat>,
    Path(ThreadPath { thread_id: id }): Path<ThreadPath>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    // Here or on another replica; a 404 for a thread that does not exist.
    if state.agent().cancel_anywhere(&id).await? {
        return Ok((StatusCode::ACCEPTED, Json(json!({"cancelled": true}))));
    }
    Err(ApiError::Conflict(
        "no turn is running on this thread".to_string(),
    ))
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/messages",
    tag = "agent",
    summary = "The conversation: every turn with its messages and steps",
    params(ThreadPath, HtmlParam),
    responses(
        Read,
        (status = 200, description = "The turns, in order; with `?html=true` the assistant's messages also have `html`, their text rendered to sanitised HTML", body = Vec<TurnRecord>),
        PathErrors,
    ),
)]
async fn messages(
    Authorized(state, _): Authorized<Read>,
    Path(path): Path<ThreadPath>,
    Query(param): Query<HtmlParam>,
) -> Result<Json<Vec<TurnRecord>>, ApiError> {
    let turns = state.workspaces().conversation(&path.thread_id).await?;
    Ok(Json(render_turns(turns, param).await?))
}
