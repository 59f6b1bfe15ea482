//! `GET /api/mcp-servers`: the other MCP servers the agent may use, and where each stands, so
//! an operator (or the web UI) can see why a tool is missing without reading the logs.
//!
//! Anyone who may use the server may read it, as `GET /api/tools`: it shows names, tool names
//! and failures haico wrote itself (never a server's `env` or `headers`).

use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{extract::Json, state::AppState};
use crate::mcp_client::ServerStatus;
use crate::{http::guards::authorized::Authorized, http::guards::authorized::UseServer};

pub(super) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_mcp_servers))
}

/// One configured MCP server, as `GET /api/mcp-servers` reports it.
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct McpServerBody {
    /// Its name in `HAICO_MCP_SERVERS`; its tools reach the model as `<name>__<tool>`.
    name: String,
    /// `stdio` (a child process) or `http` (streamable HTTP).
    #[schema(example = "stdio")]
    transport: &'static str,
    /// `ready` (its tools are offered), `connecting` (starting, or restarting after it died)
    /// or `failed` (it could not be started or reached; retried with backoff).
    #[schema(example = "ready")]
    status: &'static str,
    /// Why it is not ready, or why its tools are not offered; `null` when all is well.
    error: Option<String>,
    /// Its tools' names, as the server lists them.
    tools: Vec<String>,
}

impl From<ServerStatus> for McpServerBody {
    fn from(status: ServerStatus) -> Self {
        Self {
            name: status.name,
            transport: status.transport,
            status: status.status.as_str(),
            error: status.error,
            tools: status.tools,
        }
    }
}

#[utoipa::path(
    get,
    path = "/api/mcp-servers",
    tag = "agent",
    summary = "The other MCP servers the agent may use, and where each stands",
    responses(
        UseServer,
        (status = 200, description = "Every server of `HAICO_MCP_SERVERS`, in name order (empty when none is configured)", body = Vec<McpServerBody>),
    ),
)]
async fn list_mcp_servers(Authorized(state, _): Authorized<UseServer>) -> Json<Vec<McpServerBody>> {
    let servers = state
        .agent()
        .mcp_servers()
        .map(|servers| servers.statuses())
        .unwrap_or_default();
    Json(servers.into_iter().map(McpServerBody::from).collect())
}
