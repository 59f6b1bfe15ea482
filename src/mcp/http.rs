//! Streamable HTTP MCP on the main server: `/mcp/{thread_id}`.
//!
//! The thread is the last path segment, so any MCP client that takes a URL can pick one (no
//! custom header needed); a thread that does not exist yet is created on the first POST, as
//! `haico mcp` does, owned by the caller. The route sits inside the API router, behind the
//! same access rules: MCP clients send `Authorization: Bearer <token>` like any API client,
//! and a personal token acts as that person: threads they may not see do not exist, a viewer
//! reads resources and calls only the tools that read, and every change records them.
//!
//! rmcp's `StreamableHttpService` does the protocol: sessions (`Mcp-Session-Id`) for clients
//! that open with `initialize`, stateless requests for 2026-07-28 clients, SSE responses and
//! the standalone `GET` stream for a session's notifications. Sessions live in this process's
//! memory, so behind a load balancer a session needs sticky routing; stateless clients do not.

use std::sync::Arc;

use axum::{
    Router,
    extract::{Path, Request, State, rejection::PathRejection},
    http::Method,
    response::{IntoResponse, Response},
    routing::{any, get},
};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use tower::ServiceExt;

use super::{
    ensure_thread,
    server::{HaicoMcp, McpCaller, McpThread},
};
use crate::{
    ThreadId,
    http::{ApiError, AppState},
    people::{Access, Principal},
};

/// The MCP endpoint, one per thread.
pub const THREAD_ROUTE: &str = "/mcp/{thread_id}";

type McpService = StreamableHttpService<HaicoMcp, LocalSessionManager>;

/// The `/mcp` routes, to merge into the application router (inside its middleware).
/// `max_body_bytes` caps one JSON-RPC POST, like the API's body limit.
pub fn router(state: &AppState, max_body_bytes: usize) -> Router<AppState> {
    let runtime = state.runtime().clone();
    let config = StreamableHttpServerConfig::default()
        // The API's cross-site policy (`http/origin.rs`) has checked Host and Origin before
        // the request gets here, knowing this server's own origin, its public names and a
        // trusted proxy's `X-Forwarded-Host`; rmcp's static lists would refuse what it allows.
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(max_body_bytes)
        // Open streams end when the server shuts down, so a graceful shutdown does not wait.
        .with_cancellation_token(state.closing().child_token());
    let service: McpService = StreamableHttpService::new(
        move || Ok(HaicoMcp::per_request(runtime.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let handler =
        move |state: State<AppState>,
              path: Result<Path<String>, PathRejection>,
              request: Request| { mcp(state, path, request, service.clone()) };
    // POST carries JSON-RPC, GET opens a session's notification stream, DELETE ends a session;
    // other methods get the API's JSON 405.
    Router::new()
        .route(
            THREAD_ROUTE,
            get(handler.clone()).post(handler.clone()).delete(handler),
        )
        .route("/mcp", any(no_thread))
}

/// Hands the request to rmcp with the thread attached.
async fn mcp(
    State(state): State<AppState>,
    path: Result<Path<String>, PathRejection>,
    mut request: Request,
    service: McpService,
) -> Response {
    let Path(thread_id) = match path {
        Ok(path) => path,
        Err(rejection) => return ApiError::from(rejection).into_response(),
    };
    let thread = match ThreadId::parse(&thread_id) {
        Ok(thread) => thread,
        Err(err) => return ApiError::from(err).into_response(),
    };
    // The access middleware put the caller here; it let the request through because the
    // caller may see the thread, or because the thread does not exist yet.
    let principal = request
        .extensions()
        .get::<Principal>()
        .cloned()
        .unwrap_or(Principal::Anonymous);
    let workspaces = state.workspaces().acting_as(principal.actor());
    if request.method() == Method::POST
        && let Err(err) = ensure_thread(&workspaces, &thread).await
    {
        return ApiError::from(err).into_response();
    }
    // Whoever made the thread a moment ago (this caller, or someone faster), the caller gets
    // only what it may do with it.
    let access = match state.people().access(&principal, &thread).await {
        Ok(access) => access,
        Err(err) => return ApiError::from(err).into_response(),
    };
    if access == Access::None {
        return ApiError::thread_not_found(thread.as_str()).into_response();
    }
    request.extensions_mut().insert(McpCaller {
        actor: principal.actor(),
        may_edit: access >= Access::Editor,
    });
    request.extensions_mut().insert(McpThread(thread));
    match service.oneshot(request).await {
        Ok(response) => response.into_response(),
        Err(never) => match never {},
    }
}

async fn no_thread() -> ApiError {
    ApiError::NotFound(
        "MCP is served per thread: connect to /mcp/{thread_id} (the thread is created if it \
         does not exist)"
            .to_string(),
    )
}
