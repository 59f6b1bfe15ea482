//! `GET /api/openapi.json`: the API's OpenAPI 3.1 document, generated from the code.
//!
//! Every handler carries a `#[utoipa::path]` attribute (method, path, parameters, body and
//! responses) next to its code, and the types it reads and answers derive `ToSchema`; [`ApiDoc`]
//! gathers them. A route added to a router must also be listed in `paths(…)` below:
//! `tests/http_openapi.rs` checks that the document and the served routes agree.

use std::sync::OnceLock;

use axum::{
    Router,
    http::header,
    response::{IntoResponse, Response},
    routing::get,
};
use serde::Serialize;
use utoipa::{
    IntoParams, Modify, OpenApi, ToSchema,
    openapi::{
        self, ContentBuilder, Ref, RefOr, ResponseBuilder,
        header::Header,
        path::Operation,
        security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
    },
};

use super::{
    AppState, artifacts, auth, chat, document, events, health, html, info, metrics, objective,
    preferences, threads, todos, tools,
};
use crate::store::Document;

/// The name of the bearer security scheme in the document.
const BEARER: &str = "bearer";
/// The shared `401` response.
const UNAUTHORIZED: &str = "Unauthorized";

pub(super) fn router() -> Router<AppState> {
    Router::new().route("/api/openapi.json", get(openapi_json))
}

/// The OpenAPI document of the API: every route, its parameters, bodies and responses.
pub fn openapi_document() -> openapi::OpenApi {
    ApiDoc::openapi()
}

/// This document, as JSON.
#[utoipa::path(
    get,
    path = "/api/openapi.json",
    tag = "operations",
    responses(
        (status = 200, description = "The OpenAPI 3.1 document of this API", content_type = "application/json",
         body = Object),
    ),
)]
pub(super) async fn openapi_json() -> Response {
    static JSON: OnceLock<String> = OnceLock::new();
    let json = JSON.get_or_init(|| {
        serde_json::to_string_pretty(&openapi_document()).unwrap_or_else(|err| {
            tracing::error!(target: "haico::http", error = %err, "could not encode the OpenAPI document");
            String::from("{}")
        })
    });
    ([(header::CONTENT_TYPE, "application/json")], json.as_str()).into_response()
}

/// The body of every error: `{"error": "<what went wrong and how to fix it>"}`.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct ErrorBody {
    /// What went wrong, in words meant for the person using the API.
    error: String,
}

/// The `409` of a stale document write: the error and the document as it is now.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct DocumentConflict {
    /// What went wrong.
    error: String,
    /// The current document, to merge into and send again with its `version`.
    document: Document,
}

/// The thread in the path.
#[derive(Debug, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub(super) struct ThreadPath {
    /// The thread's id.
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    thread_id: String,
}

/// A step of the thread's plan.
#[derive(Debug, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub(super) struct TodoPath {
    /// The thread's id.
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    thread_id: String,
    /// The step's id.
    todo_id: i64,
}

/// A preference of the thread.
#[derive(Debug, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub(super) struct PreferencePath {
    /// The thread's id.
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    thread_id: String,
    /// The preference's id.
    preference_id: i64,
}

/// An artifact of the thread.
#[derive(Debug, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub(super) struct ArtifactPath {
    /// The thread's id.
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    thread_id: String,
    /// The artifact's id.
    artifact_id: i64,
}

/// A tool called on a thread.
#[derive(Debug, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub(super) struct ToolPath {
    /// The thread's id.
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    thread_id: String,
    /// The tool's name, as in `GET /api/tools`.
    tool_name: String,
}

// The MCP endpoint's handler is the MCP library's service (see `crate::mcp`), not a function
// that can carry the attribute, so these stand-ins describe it. Protocol errors beyond the
// thread id are the library's own (plain text).

/// Sends a JSON-RPC message (`initialize`, `tools/list`, `tools/call`…) to the thread's MCP
/// server; the thread is created if it does not exist.
#[utoipa::path(
    post,
    path = "/mcp/{thread_id}",
    tag = "mcp",
    summary = "Send an MCP JSON-RPC message",
    params(ThreadPath),
    request_body(content = Object, description = "A JSON-RPC 2.0 message; send `Accept: application/json, text/event-stream`", content_type = "application/json"),
    responses(
        (status = 200, description = "The JSON-RPC answer, as JSON or as an event stream", content_type = "text/event-stream", body = String),
        (status = 202, description = "A notification or a response was accepted"),
        (status = 400, description = "The thread id is malformed", body = ErrorBody),
        (status = 413, description = "The body is larger than HAICO_MAX_BODY_BYTES", body = ErrorBody),
    ),
)]
#[allow(dead_code)]
fn mcp_post() {}

/// Opens the stream of a session's server-to-client messages (`Mcp-Session-Id` header).
#[utoipa::path(
    get,
    path = "/mcp/{thread_id}",
    tag = "mcp",
    summary = "Listen to an MCP session's notifications",
    params(ThreadPath, ("Mcp-Session-Id" = String, Header, description = "The session, from the answer to `initialize`")),
    responses(
        (status = 200, description = "Server-Sent Events carrying JSON-RPC messages", content_type = "text/event-stream", body = String),
        (status = 400, description = "The thread id is malformed", body = ErrorBody),
    ),
)]
#[allow(dead_code)]
fn mcp_get() {}

/// Ends an MCP session.
#[utoipa::path(
    delete,
    path = "/mcp/{thread_id}",
    tag = "mcp",
    summary = "End an MCP session",
    params(ThreadPath, ("Mcp-Session-Id" = String, Header, description = "The session to end")),
    responses(
        (status = 200, description = "The session is closed"),
        (status = 400, description = "The thread id is malformed", body = ErrorBody),
    ),
)]
#[allow(dead_code)]
fn mcp_delete() {}

/// The document: every route of the router, listed by handler.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "haico",
        description = "A shared, structured workspace (objective, document, plan, preferences, \
                       artifacts) in which a person and an LLM agent co-construct a solution. \
                       Errors are `{\"error\": \"…\"}` with a 4xx/5xx status. When the server \
                       runs with `HAICO_API_TOKEN`, every route but `/healthz` requires \
                       `Authorization: Bearer <token>`."
    ),
    paths(
        health::healthz,
        metrics::metrics_text,
        openapi_json,
        info::server_info,
        html::render_markdown,
        tools::list_tools,
        tools::call_tool,
        threads::list_threads,
        threads::create_thread,
        threads::get_thread,
        threads::rename_thread,
        threads::delete_thread,
        threads::workspace,
        objective::get_objective,
        objective::put_objective,
        document::get_document,
        document::put_document,
        todos::list_todos,
        todos::create_todo,
        todos::update_todo,
        todos::delete_todo,
        preferences::list_preferences,
        preferences::create_preference,
        preferences::update_preference,
        preferences::delete_preference,
        artifacts::list_artifacts,
        artifacts::get_artifact,
        artifacts::chart_svg,
        chat::messages,
        chat::chat,
        chat::cancel,
        events::events,
        mcp_post,
        mcp_get,
        mcp_delete,
    ),
    components(schemas(ErrorBody)),
    modifiers(&Conventions),
    security(("bearer" = [])),
    tags(
        (name = "operations", description = "Health, metrics and this document"),
        (name = "ui", description = "What the web UI needs besides the workspace: the server's set-up and Markdown rendered to sanitised HTML"),
        (name = "threads", description = "Threads and their workspace snapshot"),
        (name = "workspace", description = "The user path: objective, document, plan, preferences and artifacts"),
        (name = "agent", description = "Agent turns, the conversation, the live event stream and the tools"),
        (name = "mcp", description = "The same tools for MCP clients (streamable HTTP transport), one endpoint per thread"),
    ),
)]
pub(super) struct ApiDoc;

/// What every operation shares and the attributes do not repeat: the bearer scheme and the
/// `401` it answers without a valid token.
struct Conventions;

impl Modify for Conventions {
    fn modify(&self, doc: &mut openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            BEARER,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(format!(
                        "Required on every route but `/healthz` when the server runs with \
                         `HAICO_API_TOKEN`. The events stream also accepts the token as \
                         `?{}=<token>`, for `EventSource` clients that cannot set headers.",
                        auth::ACCESS_TOKEN_PARAM
                    )))
                    .build(),
            ),
        );
        components.responses.insert(
            UNAUTHORIZED.to_string(),
            RefOr::T(
                ResponseBuilder::new()
                    .description("No API token, or a wrong one")
                    .header(
                        "WWW-Authenticate",
                        Header::new(
                            openapi::ObjectBuilder::new().schema_type(openapi::Type::String),
                        ),
                    )
                    .content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("ErrorBody")))
                            .build(),
                    )
                    .build(),
            ),
        );
        for (path, item) in &mut doc.paths.paths {
            if path == auth::OPEN_ROUTE {
                continue;
            }
            let operations: [&mut Option<Operation>; 5] = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ];
            for operation in operations.into_iter().flatten() {
                operation
                    .responses
                    .responses
                    .entry("401".to_string())
                    .or_insert_with(|| RefOr::Ref(Ref::from_response_name(UNAUTHORIZED)));
            }
        }
    }
}
