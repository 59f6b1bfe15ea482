//! `GET /api/threads/{thread_id}/events`: every event of the thread as Server-Sent Events.
//!
//! Durable events carry their per-thread sequence number as the SSE `id`, so a browser's
//! automatic reconnect (which sends `Last-Event-ID`) resumes exactly where it left off, also
//! across a server restart. Clients that cannot set headers may pass `?last_event_id=N`.
//!
//! The stream ends once its caller may no longer read the thread (see
//! [`People::access_lost`](crate::people::People::access_lost)), so the browser's reconnection
//! gets the same 404 as anyone without access.

use std::{convert::Infallible, time::Duration};

use axum::{
    http::HeaderMap,
    response::sse::{Event, KeepAlive, Sse},
};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    error::ApiError,
    extract::{Path, Query},
    schema::{PathErrors, ThreadPath},
    state::AppState,
};
use crate::{
    http::guards::authorized::Authorized, http::guards::authorized::Read,
    http::guards::identify::TokenInQuery,
};
use haico_core::events::subscribe;

/// How often an idle stream sends a comment line, so proxies keep it open and dead clients
/// are noticed.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(events))
}

/// Query of the events endpoint.
#[derive(Debug, Default, Deserialize)]
struct EventsQuery {
    last_event_id: Option<i64>,
}

#[utoipa::path(
    get,
    path = "/api/threads/{thread_id}/events",
    tag = "agent",
    summary = "Every event of the thread, live, as Server-Sent Events",
    params(ThreadPath,
        ("Last-Event-ID" = Option<String>, Header, description = "Resume after this event number (sent by browsers when they reconnect)"),
        ("last_event_id" = Option<i64>, Query, description = "Resume after this event number, for clients that cannot set headers"),
        ("access_token" = Option<String>, Query, description = "The API token, for `EventSource` clients that cannot send `Authorization` (only this route accepts it)")),
    responses(
        Read,
        (status = 200, description = "`text/event-stream`: `turn`, `token`, `step`, `artifact`, `workspace`, `message`, `error` and `done` events; durable ones carry their sequence number as `id`", content_type = "text/event-stream", body = String),
        PathErrors,
    ),
)]
async fn events(
    _: TokenInQuery,
    Authorized(state, _): Authorized<Read>,
    Path(ThreadPath { thread_id: id }): Path<ThreadPath>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let last_seen = match headers.get("last-event-id") {
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .and_then(|v| v.trim().parse::<i64>().ok())
                .ok_or_else(|| {
                    ApiError::BadRequest("Last-Event-ID must be an event number".to_string())
                })?,
        ),
        None => query.last_event_id,
    };
    state.workspaces().threads().get(&id).await?;
    let stream = subscribe(state.db().clone(), state.bus().clone(), &id, last_seen)
        .await
        .map_err(|err| ApiError::Store(err.0))?;
    // The stream is polled after the handler returned, outside the request's span.
    let thread = id.clone();
    let sse = stream
        .take_until(state.closing().clone().cancelled_owned())
        .take_until(
            state
                .people()
                .clone()
                .access_lost(state.principal().clone(), id.clone()),
        )
        .map(move |item| match item {
            Ok(event) => {
                let mut sse = Event::default().event(&event.event).data(&event.data);
                if let Some(seq) = event.seq {
                    sse = sse.id(seq.to_string());
                }
                Ok(sse)
            }
            Err(err) => {
                tracing::warn!(thread = %thread, error = %err, "event stream failed");
                Ok(Event::default().event("error").data(
                    r#"{"message":"the event stream lost the database; reconnect to resume"}"#,
                ))
            }
        });
    Ok(Sse::new(sse).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}
