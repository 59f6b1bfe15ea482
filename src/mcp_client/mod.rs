//! haico as an MCP *client*: the other MCP servers whose tools the agent may use (SPEC §13).
//! [`crate::mcp`] is the other direction, haico as a server.
//!
//! [`McpServers`] holds one entry per configured server ([`config`]). Each is kept connected by
//! a task of its own ([`connection`]): started in the background at start-up (start-up never
//! waits for a server), reconnected with backoff when it dies, its tool list re-read on
//! `notifications/tools/list_changed`. The agent asks [`McpServers::offered`] for the tools of
//! the servers that are ready and calls one with [`McpServers::call`], which turns whatever
//! happens (an error, an `isError` result, a timeout, a dead server) into a [`CallOutcome`] or
//! a [`CallError`] the agent hands the model as a failed envelope ([`result`] says what of a
//! result reaches the model). Nothing here touches a workspace: recording a call as a step is
//! the agent's business.
//!
//! The protocol is rmcp's client (the same crate haico's server uses): its child-process
//! transport for stdio servers and its streamable HTTP client for `url` servers.

pub mod approval;
pub mod config;
mod connection;
pub mod result;

use std::{
    sync::{Arc, RwLock},
    time::{Duration, Instant},
};

use rmcp::{RoleClient, model::CallToolRequestParams, service::Peer};
use serde_json::{Map, Value};
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::Instrument;

pub use approval::{ApprovalRequest, Approvals, DEFAULT_APPROVAL_TIMEOUT, Decision, Pending};
pub use config::{Approval, McpConfig, McpConfigError, Secret, ServerConfig, Transport};
pub use connection::use_ring_for_tls;
pub use result::{CallOutcome, RESULT_CHARS};

/// Default wait for one call (`HAICO_MCP_CALL_TIMEOUT_SECS`).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Timing of connections and calls.
#[derive(Debug, Clone, Copy)]
pub struct ClientOptions {
    /// Longest wait for one tool call.
    pub call_timeout: Duration,
    /// Longest wait for a server to start and finish the handshake and its first tool list.
    pub connect_timeout: Duration,
    /// Wait before the first reconnection; doubled after each failure.
    pub backoff_min: Duration,
    /// Longest wait between reconnections.
    pub backoff_max: Duration,
    /// Longest wait for a person's decision on a call that needs approval; then it is
    /// declined.
    pub approval_timeout: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            call_timeout: DEFAULT_CALL_TIMEOUT,
            connect_timeout: Duration::from_secs(30),
            backoff_min: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            approval_timeout: DEFAULT_APPROVAL_TIMEOUT,
        }
    }
}

/// Where a server stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Being started (at start-up, or again after it died); its tools are not offered.
    Connecting,
    /// Connected, its tool list read: its tools are offered.
    Ready,
    /// It could not be started or reached, or it died; `error` says why, and it is retried.
    Failed,
}

impl Status {
    /// The status as `GET /api/mcp-servers` and `/metrics` say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Connecting => "connecting",
            Status::Ready => "ready",
            Status::Failed => "failed",
        }
    }
}

/// One tool as a server lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteTool {
    /// Its name on the server.
    pub name: String,
    /// The server's description of it.
    pub description: String,
    /// The JSON Schema of its arguments (an object schema).
    pub input_schema: Map<String, Value>,
}

/// A server's state as the API reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerStatus {
    /// Its name.
    pub name: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// Where it stands.
    pub status: Status,
    /// The last failure, while it is not ready.
    pub error: Option<String>,
    /// Its tools' names on the server, in its order.
    pub tools: Vec<String>,
}

/// A tool offered to the agent: `<server>__<tool>`.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedTool {
    /// The name the model calls it by.
    pub full_name: String,
    /// The server.
    pub server: String,
    /// The tool as the server lists it.
    pub tool: RemoteTool,
    /// Whether each call waits for the person's approval (`"approval": "always"`).
    pub needs_approval: bool,
}

/// Why a call gave no result.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// No ready server has a tool of that name.
    #[error("no MCP server offers `{0}`")]
    UnknownTool(String),
    /// The server is marked `"approval": "always"` and the call was made without asking.
    #[error(
        "the tools of MCP server `{0}` need the person's approval for each call; the call was \
         not made"
    )]
    NeedsApproval(String),
    /// The server is not connected now.
    #[error("MCP server `{server}` is not available ({status}): {reason}")]
    Unavailable {
        /// The server.
        server: String,
        /// `connecting` or `failed`.
        status: &'static str,
        /// The last failure.
        reason: String,
    },
    /// The call took longer than the timeout; the server may still finish it.
    #[error("MCP server `{server}` did not answer within {secs} s; the call was abandoned")]
    Timeout {
        /// The server.
        server: String,
        /// The timeout.
        secs: u64,
    },
    /// The server died during the call.
    #[error(
        "MCP server `{0}` closed its connection during the call (it is being restarted); the \
         call may or may not have taken effect"
    )]
    Closed(String),
    /// The server answered with a protocol error (unknown tool, invalid arguments…).
    #[error("MCP server `{server}` refused the call: {message}")]
    Refused {
        /// The server.
        server: String,
        /// Its message.
        message: String,
    },
}

impl CallError {
    /// A fixed word for metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            CallError::UnknownTool(_) => "unknown_tool",
            CallError::NeedsApproval(_) => "needs_approval",
            CallError::Unavailable { .. } => "unavailable",
            CallError::Timeout { .. } => "timeout",
            CallError::Closed(_) => "closed",
            CallError::Refused { .. } => "refused",
        }
    }
}

/// One configured server and what is known of it now.
#[derive(Debug)]
struct Server {
    config: ServerConfig,
    state: RwLock<State>,
}

#[derive(Debug)]
struct State {
    status: Status,
    error: Option<String>,
    tools: Arc<[RemoteTool]>,
    /// The live connection while ready.
    peer: Option<Peer<RoleClient>>,
}

impl Server {
    fn new(config: ServerConfig) -> Self {
        Self {
            config,
            state: RwLock::new(State {
                status: Status::Connecting,
                error: None,
                tools: Arc::from(Vec::new()),
                peer: None,
            }),
        }
    }

    fn update(&self, change: impl FnOnce(&mut State)) {
        let status = match self.state.write() {
            Ok(mut state) => {
                change(&mut state);
                state.status
            }
            Err(_) => return,
        };
        crate::metrics::mcp_server_status(&self.config.name, status.as_str());
    }

    fn read<T>(&self, see: impl FnOnce(&State) -> T) -> Option<T> {
        self.state.read().ok().map(|state| see(&state))
    }
}

/// The configured MCP servers and their connections. Cheap to clone; the connections end when
/// [`McpServers::shutdown`] is called or the last clone is dropped (children are killed with
/// their handles).
#[derive(Debug, Clone)]
pub struct McpServers {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    servers: Vec<Arc<Server>>,
    options: ClientOptions,
    stop: CancellationToken,
    tasks: TaskTracker,
    approvals: Approvals,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl McpServers {
    /// Starts connecting every server of `config` in the background and returns at once.
    /// Must be called inside a Tokio runtime.
    pub fn start(config: &McpConfig, options: ClientOptions) -> Self {
        let servers: Vec<Arc<Server>> = config
            .servers
            .iter()
            .map(|server| Arc::new(Server::new(server.clone())))
            .collect();
        let stop = CancellationToken::new();
        let tasks = TaskTracker::new();
        for server in &servers {
            crate::metrics::mcp_server_status(&server.config.name, Status::Connecting.as_str());
            let span = tracing::info_span!("mcp_server", server = %server.config.name);
            tasks.spawn(tracing::Instrument::instrument(
                connection::supervise(Arc::clone(server), options, stop.clone()),
                span,
            ));
        }
        tasks.close();
        Self {
            inner: Arc::new(Inner {
                servers,
                options,
                stop,
                tasks,
                approvals: Approvals::default(),
            }),
        }
    }

    /// No servers at all (no `HAICO_MCP_SERVERS`).
    pub fn none() -> Self {
        Self::start(&McpConfig::default(), ClientOptions::default())
    }

    /// Whether any server is configured.
    pub fn is_empty(&self) -> bool {
        self.inner.servers.is_empty()
    }

    /// The configured servers' names, in name order (what a thread may choose from).
    pub fn names(&self) -> Vec<String> {
        self.inner
            .servers
            .iter()
            .map(|server| server.config.name.clone())
            .collect()
    }

    /// The configured server whose tool `full_name` names, offered now or not.
    pub fn server_of(&self, full_name: &str) -> Option<&str> {
        self.split(full_name)
            .map(|(server, _)| server.config.name.as_str())
    }

    /// Every server's state, in name order.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.inner
            .servers
            .iter()
            .filter_map(|server| {
                server.read(|state| ServerStatus {
                    name: server.config.name.clone(),
                    transport: server.config.transport.kind(),
                    status: state.status,
                    error: state.error.clone(),
                    tools: state.tools.iter().map(|t| t.name.clone()).collect(),
                })
            })
            .collect()
    }

    /// The tools offered to the agent now: those of every ready server (each marked when its
    /// calls need the person's approval), named `<server>__<tool>`, sorted by that name, so the list (and the head of
    /// every prompt) stays byte-identical until a server's tools change. A tool whose full name
    /// a provider would refuse (over 64 characters, or other than `A-Z a-z 0-9 _ -`) is left
    /// out.
    pub fn offered(&self) -> Vec<OfferedTool> {
        let mut offered = Vec::new();
        for server in &self.inner.servers {
            let Some(Some(tools)) = server
                .read(|state| (state.status == Status::Ready).then(|| Arc::clone(&state.tools)))
            else {
                continue;
            };
            for tool in tools.iter() {
                let full_name = format!("{}__{}", server.config.name, tool.name);
                if offerable(&full_name) {
                    offered.push(OfferedTool {
                        full_name,
                        server: server.config.name.clone(),
                        tool: tool.clone(),
                        needs_approval: server.config.approval == Approval::Always,
                    });
                }
            }
        }
        offered.sort_by(|a, b| a.full_name.cmp(&b.full_name));
        offered
    }

    /// Whether `full_name` is shaped like an external tool's name (`<server>__<tool>` for a
    /// configured server), offered now or not.
    pub fn claims(&self, full_name: &str) -> bool {
        self.split(full_name).is_some()
    }

    /// The server and tool a full name points at, by the configured names (a server's name
    /// may itself hold `__`, so the longest matching server wins).
    fn split<'a>(&self, full_name: &'a str) -> Option<(&Arc<Server>, &'a str)> {
        self.inner
            .servers
            .iter()
            .filter_map(|server| {
                full_name
                    .strip_prefix(server.config.name.as_str())
                    .and_then(|rest| rest.strip_prefix("__"))
                    .filter(|tool| !tool.is_empty())
                    .map(|tool| (server, tool))
            })
            .max_by_key(|(server, _)| server.config.name.len())
    }

    /// Whether calls of `full_name` wait for the person's approval (its server is marked
    /// `"approval": "always"`).
    pub fn needs_approval(&self, full_name: &str) -> bool {
        self.split(full_name)
            .is_some_and(|(server, _)| server.config.approval == Approval::Always)
    }

    /// The calls waiting for a person's decision, in this process.
    pub fn approvals(&self) -> &Approvals {
        &self.inner.approvals
    }

    /// Longest wait for a decision (`HAICO_APPROVAL_TIMEOUT_SECS`).
    pub fn approval_timeout(&self) -> Duration {
        self.inner.options.approval_timeout
    }

    /// Calls the tool `full_name` with `arguments` (already without the agent's own
    /// `action_and_reasoning`, unless the tool asks for it), waiting at most the call timeout.
    /// A tool whose calls need approval is refused ([`CallError::NeedsApproval`]): those go
    /// through [`McpServers::call_approved`] once a person has said yes.
    pub async fn call(
        &self,
        full_name: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallOutcome, CallError> {
        self.call_tool(full_name, arguments, false).await
    }

    /// Calls `full_name` as [`McpServers::call`] does, after a person approved this very call.
    pub async fn call_approved(
        &self,
        full_name: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallOutcome, CallError> {
        self.call_tool(full_name, arguments, true).await
    }

    async fn call_tool(
        &self,
        full_name: &str,
        arguments: Map<String, Value>,
        approved: bool,
    ) -> Result<CallOutcome, CallError> {
        let (server, tool) = self
            .split(full_name)
            .ok_or_else(|| CallError::UnknownTool(full_name.to_string()))?;
        let name = server.config.name.clone();
        if server.config.approval == Approval::Always && !approved {
            return Err(CallError::NeedsApproval(name));
        }
        let (status, error, peer, known) = server
            .read(|state| {
                (
                    state.status,
                    state.error.clone(),
                    state.peer.clone(),
                    state.tools.iter().any(|t| t.name == tool),
                )
            })
            .ok_or_else(|| CallError::UnknownTool(full_name.to_string()))?;
        let peer = match (status, peer) {
            (Status::Ready, Some(peer)) => peer,
            (status, _) => {
                return Err(CallError::Unavailable {
                    server: name,
                    status: status.as_str(),
                    reason: error.unwrap_or_else(|| "it is still starting".to_string()),
                });
            }
        };
        if !known {
            return Err(CallError::UnknownTool(full_name.to_string()));
        }
        let span = tracing::info_span!(
            "mcp_call",
            server = %name,
            tool = tool,
            otel.name = tracing::field::Empty,
            otel.kind = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            mcp.method.name = tracing::field::Empty,
            gen_ai.operation.name = tracing::field::Empty,
            gen_ai.tool.name = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = Some(arguments);
        if crate::telemetry::enabled() {
            span.record("otel.name", format!("tools/call {tool}"));
            span.record("otel.kind", "client");
            span.record("mcp.method.name", "tools/call");
            span.record("gen_ai.operation.name", "execute_tool");
            span.record("gen_ai.tool.name", tool);
            // The server joins the trace through the request's `_meta` (MCP's SEP-414), which
            // every transport carries, stdio as well as HTTP.
            let fields = span.in_scope(crate::telemetry::propagation::current_fields);
            if !fields.is_empty() {
                let mut meta = rmcp::model::RequestMetaObject::new();
                for (key, value) in fields {
                    meta.0.0.insert(key, Value::String(value));
                }
                params.meta = Some(meta);
            }
        }
        let timeout = self.inner.options.call_timeout;
        let started = Instant::now();
        let answer = tokio::time::timeout(timeout, peer.call_tool(params))
            .instrument(span.clone())
            .await;
        let outcome = match answer {
            Err(_) => Err(CallError::Timeout {
                server: name.clone(),
                secs: timeout.as_secs().max(1),
            }),
            Ok(Err(err)) => Err(connection::call_error(&name, err)),
            Ok(Ok(result)) => Ok(result::render(&result, RESULT_CHARS)),
        };
        let label = match &outcome {
            Ok(outcome) if outcome.is_error => "is_error",
            Ok(_) => "success",
            Err(err) => err.kind(),
        };
        if crate::telemetry::enabled() && label != "success" {
            span.record("error.type", label);
            span.record("otel.status_code", "ERROR");
        }
        crate::metrics::mcp_call(&name, tool, label, started.elapsed());
        outcome
    }

    /// Closes every connection (children get their standard input closed, then are killed)
    /// and waits for the connection tasks to end.
    pub async fn shutdown(&self) {
        self.inner.stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(10), self.inner.tasks.wait()).await;
    }
}

/// Whether providers accept `name` as a tool name.
fn offerable(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_safe_names_only() {
        assert!(offerable("files__read_file"));
        assert!(!offerable("files__read.file"));
        assert!(!offerable(&format!("files__{}", "x".repeat(60))));
    }

    #[tokio::test]
    async fn names_split_on_the_longest_configured_server() -> Result<(), McpConfigError> {
        let config = McpConfig::parse(
            std::path::Path::new("t.json"),
            r#"{"mcpServers": {"a": {"command": "/nonexistent/a"},
                               "a__b": {"command": "/nonexistent/b"}}}"#,
        )?;
        let servers = McpServers::start(&config, ClientOptions::default());
        let named = |full: &str| {
            servers
                .split(full)
                .map(|(server, tool)| (server.config.name.clone(), tool.to_string()))
        };
        assert_eq!(named("a__b__c"), Some(("a__b".into(), "c".into())));
        assert_eq!(named("a__c"), Some(("a".into(), "c".into())));
        assert_eq!(named("b__c"), None);
        assert_eq!(named("a__"), None);
        assert!(servers.claims("a__x") && !servers.claims("x__a"));
        servers.shutdown().await;
        Ok(())
    }
}
