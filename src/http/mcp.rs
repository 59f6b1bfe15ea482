//! Streamable HTTP MCP on the main server: `/mcp/{thread_id}`. The MCP server itself (tools,
//! resources, sessions) is `crate::mcp`; this is its HTTP transport, part of the HTTP adapter.
//!
//! The thread is the last path segment, so any MCP client that takes a URL can pick one (no
//! custom header needed); a thread that does not exist yet is created on the first POST, as
//! `haico mcp` does, owned by the caller. The route sits inside the API router, behind the
//! same guards: MCP clients send `Authorization: Bearer <token>` like any API client, and a
//! personal token acts as that person under the one rule of [`crate::people::may`]: threads
//! they may not see do not exist, a viewer reads resources and calls only the tools that read
//! (as on REST's tools endpoint), every change records them, and a notification stream ends
//! (its session closed) once its caller may no longer read the thread.
//!
//! rmcp's `StreamableHttpService` does the protocol: sessions (`Mcp-Session-Id`) for clients
//! that open with `initialize`, stateless requests for 2026-07-28 clients, SSE responses and
//! the standalone `GET` stream for a session's notifications.
//!
//! Sessions work across replicas without sticky routing: rmcp keeps a live session in the
//! memory of the process serving it, and its handshake in the database ([`McpSessions`]).
//! A request for a session this process does not hold replays that handshake here first, on
//! the thread of the URL only (a session id is unknown on another thread's URL). Before each
//! request with a session id the route checks the stored session: one ended by `DELETE` on
//! another replica or unused for [`MAX_IDLE`](crate::mcp::sessions::MAX_IDLE) is closed here too
//! and answered `404` like any unknown session. Access is checked on every request as before
//! (the caller and its edit right come from this request, never from the session), so a
//! restored session reaches nothing its caller could not. Subscriptions are stored too (see
//! [`crate::mcp::sessions`]); the notifications go out on the session's `GET` stream, on whichever
//! replica the client opened it. Limit: a `GET` stream open on one replica outlives a `DELETE`
//! sent to another until this replica next sees a request for the session, or rmcp's idle
//! time-out (5 minutes) closes the session here.

use std::sync::Arc;

use axum::{
    Router,
    extract::{Path, Request, rejection::PathRejection},
    http::Method,
    response::{IntoResponse, Response},
    routing::{any, get},
};
use rmcp::transport::streamable_http_server::{
    SessionManager, StreamableHttpServerConfig, StreamableHttpService,
    session::local::LocalSessionManager,
};
use tower::ServiceExt;

use crate::{
    http::error::ApiError, http::guards::authorized::Authorized,
    http::guards::authorized::UseServer, http::guards::authorized::refused, http::state::AppState,
};
use crate::{
    mcp::HaicoMcp, mcp::McpCaller, mcp::McpThread, mcp::SessionCloser, mcp::ensure_thread,
    mcp::sessions::McpSessionError, mcp::sessions::McpSessions, mcp::sessions::Standing,
};
use haico_core::{people::Op, people::permits};
use haico_store::ThreadId;

/// The MCP endpoint, one per thread.
pub const THREAD_ROUTE: &str = "/mcp/{thread_id}";

type McpService = StreamableHttpService<HaicoMcp, LocalSessionManager>;

/// The `/mcp` routes, to merge into the application router (inside its middleware).
/// `max_body_bytes` caps one JSON-RPC POST, like the API's body limit.
pub fn router(state: &AppState, max_body_bytes: usize) -> Router<AppState> {
    let runtime = state.runtime().clone();
    let sessions = McpSessions::new(runtime.database().clone());
    let mut config = StreamableHttpServerConfig::default()
        // The API's cross-site policy (`http/guards/origin.rs`) has checked Host and Origin before
        // the request gets here, knowing this server's own origin, its public names and a
        // trusted proxy's `X-Forwarded-Host`; rmcp's static lists would refuse what it allows.
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(max_body_bytes)
        // Open streams end when the server shuts down, so a graceful shutdown does not wait.
        .with_cancellation_token(state.closing().child_token());
    // Every replica stores its sessions' handshakes and restores the others'.
    config.session_store = Some(Arc::new(sessions.clone()));
    let manager = Arc::new(LocalSessionManager::default());
    let shared = sessions.clone();
    // A notification stream whose caller lost access to the thread ends its session here.
    let closer = Arc::clone(&manager);
    let close: SessionCloser = Arc::new(move |id: String| {
        let manager = Arc::clone(&closer);
        Box::pin(async move {
            if let Err(err) = manager.close_session(&id.into()).await {
                tracing::warn!(error = %err, "closing the MCP session of a caller without access");
            }
        })
    });
    let service: McpService = StreamableHttpService::new(
        move || {
            Ok(HaicoMcp::per_request(runtime.clone())
                .sharing(shared.clone())
                .closing_with(Arc::clone(&close)))
        },
        Arc::clone(&manager),
        config,
    );
    let served = Mcp {
        service,
        manager,
        sessions,
    };
    let handler =
        move |caller: Authorized<UseServer>,
              path: Result<Path<String>, PathRejection>,
              request: Request| { mcp(caller, path, request, served.clone()) };
    // POST carries JSON-RPC, GET opens a session's notification stream, DELETE ends a session;
    // other methods get the API's JSON 405.
    Router::new()
        .route(
            THREAD_ROUTE,
            get(handler.clone()).post(handler.clone()).delete(handler),
        )
        .route("/mcp", any(no_thread))
}

/// What the route hands requests to: rmcp, its sessions in this process, and the stored ones.
#[derive(Clone)]
struct Mcp {
    service: McpService,
    manager: Arc<LocalSessionManager>,
    sessions: McpSessions,
}

/// Hands the request to rmcp with the thread attached.
async fn mcp(
    Authorized(state, _): Authorized<UseServer>,
    path: Result<Path<String>, PathRejection>,
    mut request: Request,
    mcp: Mcp,
) -> Response {
    let Path(thread_id) = match path {
        Ok(path) => path,
        Err(rejection) => return ApiError::from(rejection).into_response(),
    };
    let thread = match ThreadId::parse(&thread_id) {
        Ok(thread) => thread,
        Err(err) => return ApiError::from(err).into_response(),
    };
    // Anyone signed in gets here: a thread that does not exist yet is made for its caller.
    let principal = state.principal().clone();
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
    // For everyone, administrators too, a thread that does not exist (a `GET` or `DELETE` for
    // one never made) is `404`; every tool call asks again what this access allows.
    if let Err(refusal) = permits(access, Op::Read) {
        return refused(refusal, Some(&thread));
    }
    request.extensions_mut().insert(McpCaller {
        actor: principal.actor(),
        access,
        watch: Some((state.people().clone(), principal)),
    });
    request.extensions_mut().insert(McpThread(thread.clone()));
    let session = request
        .headers()
        .get(SESSION_ID_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    if let Some(session) = session {
        match mcp.sessions.standing(&session, &thread).await {
            // Ended on another replica, or unused for too long: end it here too.
            Ok(Standing::Gone) => {
                let id = session.into();
                if let Err(err) = mcp.manager.close_session(&id).await {
                    tracing::warn!(error = %err, "closing an ended MCP session");
                }
                if request.method() != Method::DELETE {
                    return unknown_session();
                }
            }
            // Another thread's session cannot be ended from here. Answered before rmcp, which
            // knows nothing of threads: it would close its copy of the session on this
            // replica (the stored one stays), and a request racing that close got a stream
            // that ended without its answer.
            Ok(Standing::OtherThread) if request.method() == Method::DELETE => {
                return unknown_session();
            }
            // Another thread's session: rmcp refuses it (the handler if it lives here, the
            // store's restore if not).
            Ok(Standing::Live | Standing::OtherThread) => {}
            Err(McpSessionError::Store(err)) => return ApiError::Store(err).into_response(),
            Err(err) => return ApiError::Internal(err.to_string()).into_response(),
        }
    }
    match McpSessions::for_thread(thread, mcp.service.oneshot(request)).await {
        Ok(response) => response.into_response(),
        Err(never) => match never {},
    }
}

/// The header naming a request's session.
const SESSION_ID_HEADER: &str = "mcp-session-id";

/// rmcp's own answer for a session it does not know, which clients take as "initialize again".
fn unknown_session() -> Response {
    (
        axum::http::StatusCode::NOT_FOUND,
        "Not Found: Session not found",
    )
        .into_response()
}

async fn no_thread(_: Authorized<UseServer>) -> ApiError {
    ApiError::NotFound(
        "MCP is served per thread: connect to /mcp/{thread_id} (the thread is created if it \
         does not exist)"
            .to_string(),
    )
}
