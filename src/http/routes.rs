//! The API's route list, in one place, and the OpenAPI document made from it.
//!
//! Every handler carries its `#[utoipa::path]` (method, path, parameters, body, responses) next
//! to its code; each resource module registers its handlers with `routes!` on an
//! [`OpenApiRouter`], and [`routes`] merges the modules. The same registration makes the axum
//! route and the document's operation, so the two cannot drift apart. `GET /api/openapi.json`
//! serves the document.

use axum::{
    http::header,
    response::{IntoResponse, Response},
};
use utoipa::{
    Modify, OpenApi,
    openapi::{
        self, ContentBuilder, Ref, RefOr, ResponseBuilder,
        header::Header,
        security::{HttpAuthScheme, HttpBuilder, SecurityScheme},
    },
};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    approvals, artifacts, chat, document, events, health, history, html, info, mcp_servers,
    metrics, objective, participant, people, plan, preferences,
    schema::{DocumentConflict, ErrorBody, ThreadPath},
    state::AppState,
    studies, study_data, suggestions, threads, tools,
};
use crate::http::schema::{FORBIDDEN, UNAUTHORIZED};
use crate::{
    http::guards::authorized::Authorized, http::guards::authorized::Read,
    http::guards::authorized::UseServer,
};

/// The name of the bearer security scheme in the document.
const BEARER: &str = "bearer";

/// Every documented route of the API.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    guarded_routes().merge(health::router())
}

/// Every documented route but the health check: those served behind the guards.
pub(super) fn guarded_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(metrics::router())
        .routes(routes!(openapi_json))
        .merge(info::router())
        .merge(html::router())
        .merge(tools::router())
        .merge(mcp_servers::router())
        .merge(approvals::router())
        .merge(threads::router())
        .merge(objective::router())
        .merge(document::router())
        .merge(plan::router())
        .merge(preferences::router())
        .merge(artifacts::router())
        .merge(history::router())
        .merge(suggestions::router())
        .merge(chat::router())
        .merge(events::router())
        .merge(people::router())
        .merge(studies::router())
        .merge(study_data::router())
        .merge(participant::router())
}

/// The OpenAPI document of the API: every route, its parameters, bodies and responses.
pub fn openapi_document() -> openapi::OpenApi {
    let mut doc = routes().into_openapi();
    Conventions.modify(&mut doc);
    doc
}

/// This document, as JSON.
#[utoipa::path(
    get,
    path = "/api/openapi.json",
    tag = "operations",
    summary = "This document",
    responses(
        UseServer,
        (status = 200, description = "The OpenAPI 3.1 document of this API", content_type = "application/json",
         body = Object),
    ),
)]
async fn openapi_json(Authorized(state, _): Authorized<UseServer>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        state.openapi_json().to_string(),
    )
        .into_response()
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
        Read,
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
        Read,
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
        Read,
        (status = 200, description = "The session is closed"),
        (status = 400, description = "The thread id is malformed", body = ErrorBody),
    ),
)]
#[allow(dead_code)]
fn mcp_delete() {}

/// What the document says besides its routes: its description, tags, the shared schemas, the
/// bearer scheme, and the MCP endpoint (served by the MCP library, described above).
#[derive(OpenApi)]
#[openapi(
    info(
        title = "haico",
        description = "A shared, structured workspace (objective, document, plan, preferences, \
                       artifacts) in which a person and an LLM agent co-construct a solution. \
                       Errors are `{\"error\": \"…\"}` with a 4xx/5xx status. With no \
                       accounts and no `HAICO_API_TOKEN` the server is open to its local \
                       person; otherwise every route but `/healthz`, the web UI's shell and \
                       `/api/session` wants `Authorization: Bearer <token>` (a personal token or \
                       the administrator's) or the web UI's session cookie, and a thread the \
                       caller may not see answers 404 everywhere."
    ),
    paths(mcp_post, mcp_get, mcp_delete),
    components(schemas(ErrorBody, DocumentConflict)),
    security(("bearer" = [])),
    tags(
        (name = "operations", description = "Health, metrics and this document"),
        (name = "ui", description = "What the web UI needs besides the workspace: the server's set-up and Markdown rendered to sanitised HTML"),
        (name = "threads", description = "Threads and their workspace snapshot"),
        (name = "workspace", description = "The user path: objective, document, plan, preferences and artifacts"),
        (name = "suggestions", description = "The agent's proposed document changes in suggest mode: list, accept, reject"),
        (name = "history", description = "Revisions, the workspace at any of them, document diffs, restore, undoing a turn, forks"),
        (name = "agent", description = "Agent turns, the conversation, the live event stream and the tools"),
        (name = "mcp", description = "The same tools for MCP clients (streamable HTTP transport), one endpoint per thread"),
        (name = "people", description = "Accounts, signing in to the web UI, and sharing threads with roles"),
        (name = "studies", description = "Human–AI studies: designs with conditions, previews, sessions, summaries, exports, replay"),
        (name = "participants", description = "A study's participants: entering by the link, consent, Start, Finish, withdraw"),
    ),
)]
struct ApiDoc;

/// What every operation shares: the bearer scheme and the `401` and `403` responses the
/// operations refer to (each lists them through the marker of its `Authorized<…>`, e.g.
/// `responses(Edit, …)`). Applied to the finished document.
pub(super) struct Conventions;

impl Modify for Conventions {
    fn modify(&self, doc: &mut openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            BEARER,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(format!(
                        "A personal token (`haico_…`, from `POST /api/users`) or the \
                         administrator's `HAICO_API_TOKEN`; needed once accounts exist or the \
                         token is set. The events stream also accepts it as `?{}=<token>`, for \
                         `EventSource` clients that cannot set headers.",
                        crate::http::guards::identify::ACCESS_TOKEN_PARAM
                    )))
                    .build(),
            ),
        );
        components.responses.insert(
            UNAUTHORIZED.to_string(),
            RefOr::T(
                error_response("Not signed in: no token or session, or a wrong token")
                    .header(
                        "WWW-Authenticate",
                        Header::new(
                            openapi::ObjectBuilder::new().schema_type(openapi::Type::String),
                        ),
                    )
                    .build(),
            ),
        );
        components.responses.insert(
            FORBIDDEN.to_string(),
            RefOr::T(
                error_response(
                    "The caller may not do this: a viewer changing a thread, someone other \
                     than its owner managing it, or someone other than an administrator \
                     managing accounts (a signed-in change from another site's page too)",
                )
                .build(),
            ),
        );
    }
}

/// A response with the API's error body.
fn error_response(description: &str) -> ResponseBuilder {
    ResponseBuilder::new().description(description).content(
        "application/json",
        ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("ErrorBody")))
            .build(),
    )
}
