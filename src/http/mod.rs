//! The HTTP server: the REST API over the workspace (the user path), the agent-path tools
//! endpoint, the agent's turns and events, health, and the web UI's shell ([`ui`]).
//!
//! Handlers are adapters: they take typed paths and bodies, call the workspace's domain layer
//! ([`crate::workspace`]) and answer its outcome as JSON; every rule, write and announcement
//! happens there. [`api`] holds the one route list and the OpenAPI document made from it;
//! [`app`] builds the router, [`serve`] runs it until a shutdown signal. Every error body is
//! `{"error": "…"}` (see [`ApiError`]). Around the routes: who the caller is ([`guards`]: one-person
//! mode, the administrator's token, personal tokens and sign-in sessions) — each handler then
//! names what it asks to do (`Authorized<Edit>`…), which [`crate::people::may`] allows or
//! refuses —, request metrics (`GET /metrics`), one tracing span per request, and response
//! compression (gzip or Brotli when the client asks; never for event streams, which must flush
//! every event as it happens).

mod approvals;
mod artifacts;
mod chat;
mod connections;
mod deadline;
mod document;
mod error;
mod events;
mod extract;
pub mod guards;
mod health;
mod history;
mod html;
mod info;
mod mcp;
mod mcp_servers;
mod metrics;
mod objective;
mod open_files;
mod participant;
mod people;
mod plan;
mod preferences;
mod routes;
mod schema;
mod state;
mod studies;
mod study_data;
mod suggestions;
mod threads;
mod tools;
pub mod ui;
mod unread_body;
mod wire;

use std::{future::Future, sync::Arc};

use axum::http::{HeaderName, HeaderValue, header};
use axum::{Router, extract::DefaultBodyLimit, middleware};
use tokio::net::TcpListener;
use tower_http::{
    compression::CompressionLayer, set_header::SetResponseHeaderLayer, trace::TraceLayer,
};

pub use connections::{ConnectionLimits, DEFAULT_HEADER_TIMEOUT_SECS, DEFAULT_IDLE_TIMEOUT_SECS};
pub use error::ApiError;
pub use guards::auth::{ApiToken, InvalidApiToken};
pub use guards::limits::{
    DEFAULT_CHAT_TURNS_PER_MINUTE, DEFAULT_SIGN_INS_PER_MINUTE, DEFAULT_STUDY_ENTRIES_PER_MINUTE,
    RateLimit, RateLimits,
};
pub use guards::origin::{InvalidOriginPolicy, OriginPolicy};
pub use guards::{ACCESS_TOKEN_PARAM, SESSION_COOKIE};
pub use open_files::{
    OpenFiles, default_max_connections, open_files_limit, raise_open_files_limit,
};
pub use routes::openapi_document;
pub use state::{AppState, DEFAULT_MAX_BODY_BYTES, HttpConfig};

/// The policy of every answer but the web UI's shell: nothing loads, nothing frames it.
pub const API_CONTENT_SECURITY_POLICY: &str = "default-src 'none'; frame-ancestors 'none'";

/// The whole application router.
pub fn app(state: AppState, config: &HttpConfig) -> Router {
    // Installs the process-wide recorder on first use, so `/metrics` and the hooks in the tool
    // runtime and the agent record from the first request on.
    crate::metrics::handle();
    let (api, mut doc) = routes::guarded_routes().split_for_parts();
    // The health check is everybody's and must answer within its own time budget even while
    // the database (which knows the accounts) does not: it is served outside the guards.
    let (health, health_doc) = health::router().split_for_parts();
    doc.merge(health_doc);
    utoipa::Modify::modify(&routes::Conventions, &mut doc);
    let openapi_json = serde_json::to_string_pretty(&doc).unwrap_or_else(|err| {
        tracing::error!(error = %err, "could not encode the OpenAPI document");
        String::from("{}")
    });
    let state = state.serving(config, Arc::from(openapi_json));
    let router = api
        .merge(ui::router())
        .merge(mcp::router(&state, config.max_body_bytes))
        .fallback(guards::authorized::no_route)
        .method_not_allowed_fallback(guards::authorized::unserved_method);
    // Layers run after routing (so both see the matched route); the guard sits inside the
    // metrics layer, so refused requests are counted too.
    let router = router
        .layer(middleware::from_fn_with_state(
            state.clone(),
            guards::identify::guard,
        ))
        .merge(health)
        // The health route's other methods, answered like any route's (the extractor finds
        // the caller itself there).
        .method_not_allowed_fallback(guards::authorized::unserved_method);
    // Compression's default predicate skips small bodies, images (but SVG) and
    // `text/event-stream`, so event streams are never buffered by an encoder.
    router
        .layer(middleware::from_fn(metrics::track))
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .layer(CompressionLayer::new())
        // What every answer tells the browser, unless the route set its own (the web UI's
        // shell has a policy for its page): nothing in it is to be run, framed or sniffed
        // into another type, so a JSON answer or a chart a foreign page opens stays inert.
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(API_CONTENT_SECURITY_POLICY),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
        // A proxy in front (nginx) must pass event streams through as they are written, not
        // buffer them; nginx obeys this header even where its config forgot
        // `proxy_buffering off`.
        .layer(SetResponseHeaderLayer::if_not_present(
            HeaderName::from_static("x-accel-buffering"),
            |response: &axum::response::Response| {
                let streams = response
                    .headers()
                    .get(header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.starts_with("text/event-stream"));
                streams.then(|| HeaderValue::from_static("no"))
            },
        ))
        // A request refused before its body was read: its answer closes the connection, so
        // no client reuses one the server is about to close (unread_body.rs).
        .layer(middleware::from_fn(unread_body::close_if_unread))
        .layer(TraceLayer::new_for_http().make_span_with(request_span))
        .with_state(state)
}

/// One span per request, named for its route, with the thread it concerns: log lines of the
/// handler, the workspace and the tool runtime inherit both. Its fields follow OpenTelemetry's
/// HTTP server conventions (the status is filled in by [`metrics::track`]), and a `traceparent`
/// the caller sent makes the span part of the caller's trace.
fn request_span(request: &axum::http::Request<axum::body::Body>) -> tracing::Span {
    let thread = request
        .uri()
        .path()
        .strip_prefix("/api/threads/")
        .or_else(|| request.uri().path().strip_prefix("/mcp/"))
        .and_then(|rest| rest.split('/').next())
        .filter(|id| !id.is_empty());
    let span = tracing::info_span!(
        "request",
        http.request.method = %request.method(),
        url.path = %request.uri().path(),
        thread = thread,
        http.route = tracing::field::Empty,
        http.response.status_code = tracing::field::Empty,
        otel.name = tracing::field::Empty,
        otel.kind = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    );
    if crate::telemetry::enabled() {
        // This layer runs after routing, so the route template is known: the span is named for
        // it (`POST /api/threads/{thread_id}/chat`), never for the raw path.
        let route = request
            .extensions()
            .get::<axum::extract::MatchedPath>()
            .map(|path| path.as_str());
        match route {
            Some(route) => {
                span.record("otel.name", format!("{} {route}", request.method()));
                span.record("http.route", route);
            }
            None => {
                span.record("otel.name", request.method().as_str());
            }
        }
        span.record("otel.kind", "server");
        crate::telemetry::propagation::adopt_from_headers(&span, request.headers());
    }
    span
}

/// Serves `app` on `listener` until `shutdown` resolves, then lets in-flight requests finish;
/// each connection within [`HttpConfig::connections`] (see [`connections`]).
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    config: &HttpConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let closing = state.closing().clone();
    // The study clock runs beside the server: deadlines hold with no browser open.
    let clock = crate::studies::clock::spawn_clock(
        state.studies().clone(),
        state.agent().clone(),
        closing.clone(),
    );
    let app = app(state, config);
    let served = connections::serve(listener, app, &config.connections, closing, shutdown).await;
    clock.abort();
    served
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}
