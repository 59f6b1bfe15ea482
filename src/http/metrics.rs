//! `GET /metrics` (Prometheus text format) and the middleware that counts and times every
//! HTTP request. What is measured is listed in [`crate::metrics`].

use std::time::Instant;

use axum::{
    extract::{MatchedPath, Request},
    http::{Method, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::state::AppState;
use crate::{http::guards::authorized::Administer, http::guards::authorized::Authorized};

/// The `route` label of a request that matched no route (kept apart so a scan of random paths
/// cannot grow the label set).
const UNMATCHED: &str = "unmatched";

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(metrics_text))
}

/// The server's metrics in Prometheus' text exposition format.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    responses(
        Administer,
        (status = 200, description = "Metrics in Prometheus' text exposition format (version 0.0.4)",
         content_type = "text/plain", body = String),
    ),
)]
async fn metrics_text(_: Authorized<Administer>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        crate::metrics::render(),
    )
        .into_response()
}

/// Counts and times one request under its method, its route template (never the raw path) and
/// its status. Runs after routing, so the matched route is known.
pub(super) async fn track(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = method_label(request.method());
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| UNMATCHED.to_string(), |path| path.as_str().to_string());
    let response = next.run(request).await;
    let status = response.status().as_u16();
    if crate::telemetry::enabled() {
        let span = tracing::Span::current();
        span.record("http.response.status_code", i64::from(status));
        if status >= 500 {
            span.record("otel.status_code", "ERROR");
        }
    }
    crate::metrics::http_request(method, route, status, started.elapsed());
    response
}

/// The standard methods by name; anything else (extension methods are unbounded) as `OTHER`.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}
