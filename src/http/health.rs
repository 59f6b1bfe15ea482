//! `GET /healthz`: is the server up and does the database answer? While it does not, the
//! answer is `503` with `Retry-After` and says which dependency is down and why, within two
//! seconds, so a load balancer or a person can tell an outage from a hang.

use axum::{
    extract::State,
    http::{HeaderValue, StatusCode, header::RETRY_AFTER},
    response::{IntoResponse, Response},
};
use serde::Serialize;
use serde_json::json;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{error::OUTAGE_RETRY_AFTER_SECS, state::AppState};
use haico_store::StoreError;

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(healthz))
}

#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    summary = "Whether the server is up and its database answers",
    security(()),
    responses(
        (status = 200, description = "Up, and the database answers. On PostgreSQL, `events` says \
         how other replicas' events arrive: `{\"mode\": \"listen\", \"ok\": true}`, or, with \
         `status: \"degraded\"`, `mode: \"poll\"` and why (the LISTEN connection is down, or \
         LISTEN does not work through a transaction-mode pooler)", body = Object,
         example = json!({"status": "ok", "events": {"mode": "listen", "ok": true}})),
        (status = 503, description = "The database does not answer: why and what to check \
         (with `Retry-After`; the address is in the server log)", body = Degraded,
         example = json!({"status": "degraded", "error": "the database is unavailable",
             "database": {"ok": false, "error":
             "cannot connect to the database: connection refused; is PostgreSQL running and \
              listening there? Check the host and port in HAICO_DATABASE_URL (the server log \
              names the address)"}})),
    ),
)]
async fn healthz(State(state): State<AppState>) -> Response {
    match state.db().ping().await {
        Ok(()) => match state.doorbell().map(|d| d.health()) {
            // Events still flow (by polling), so the replica keeps serving: 200, but it says
            // what is wrong.
            Some(events) if !events.ok => {
                tracing::warn!(reason = ?events.error, "health check: the doorbell is not heard");
                axum::Json(json!({"status": "degraded", "events": events})).into_response()
            }
            Some(events) => axum::Json(json!({"status": "ok", "events": events})).into_response(),
            None => axum::Json(json!({"status": "ok"})).into_response(),
        },
        Err(err) => {
            // The address and the account go to the log only: the check is open to anyone.
            tracing::warn!(error = %err, "health check: the database does not answer");
            let body = Degraded {
                status: "degraded",
                error: "the database is unavailable",
                database: Dependency {
                    ok: false,
                    error: public_reason(&err),
                },
            };
            let mut response = (StatusCode::SERVICE_UNAVAILABLE, axum::Json(body)).into_response();
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(OUTAGE_RETRY_AFTER_SECS));
            response
        }
    }
}

/// Why the database does not answer, for anyone who asks: the cause and what to check, but
/// not the server's address or account (those are in the log).
fn public_reason(err: &StoreError) -> String {
    match err {
        StoreError::Unreachable { cause, check, .. } => {
            format!(
                "cannot connect to the database: {cause}; {check} (the server log names the address)"
            )
        }
        StoreError::NoAnswer { after, .. } => format!(
            "the database did not answer within {after}; is its server up and reachable? The \
             server log names the address (HAICO_DATABASE_URL)"
        ),
        _ => "the database failed the check; the server log says why".to_string(),
    }
}

/// The answer while a dependency is down: `error` says so in one line, as every error answer
/// does, and each dependency says whether it answers and why not.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct Degraded {
    /// Always `degraded`.
    status: &'static str,
    /// Which dependency is down, in one line.
    error: &'static str,
    /// The database.
    database: Dependency,
}

/// One dependency's state.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct Dependency {
    /// Whether it answers.
    ok: bool,
    /// Why not: which server, the cause, what to check.
    error: String,
}
