//! [`AppState`]: what every handler shares.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::{
    agent::{Agent, AgentConfig, model::ChatModel, providers::UnconfiguredModel},
    events::{InProcessBus, SharedBus},
    store::Database,
    tools::ToolRuntime,
    workspace::Workspaces,
};

/// What every handler shares: the workspaces (the domain layer every change goes through), the
/// tool runtime, the agent, and the server's shutdown signal.
#[derive(Debug, Clone)]
pub struct AppState {
    inner: Arc<Shared>,
    /// Whether the router this state serves requires an API token; set by
    /// [`app`](super::app) from its [`HttpConfig`](super::HttpConfig), for `GET /api/info`.
    auth_required: bool,
    /// The OpenAPI document as JSON, made once by [`app`](super::app) from the route list.
    pub(super) openapi_json: Arc<str>,
}

#[derive(Debug)]
struct Shared {
    runtime: ToolRuntime,
    agent: Arc<Agent>,
    closing: CancellationToken,
}

impl AppState {
    /// State over an open database, with no language model configured: everything works but
    /// chat turns, which end with an error saying how to configure a model.
    pub fn new(db: Database) -> Self {
        Self::with_model(
            db,
            Arc::new(UnconfiguredModel::new("no provider is set")),
            AgentConfig::default(),
        )
    }

    /// State over an open database whose agent thinks with `model`.
    pub fn with_model(db: Database, model: Arc<dyn ChatModel>, config: AgentConfig) -> Self {
        Self::with_bus(db, model, config, Arc::new(InProcessBus::new()))
    }

    /// State whose live events travel on `bus`: `haico serve` passes a
    /// [`PollingBus`](crate::events::PollingBus), so changes other processes make on the same
    /// database (a `haico mcp`, another replica) reach this server's event streams too.
    pub fn with_bus(
        db: Database,
        model: Arc<dyn ChatModel>,
        config: AgentConfig,
        bus: SharedBus,
    ) -> Self {
        let runtime = ToolRuntime::over(Workspaces::new(db, bus));
        let agent = Arc::new(Agent::new(runtime.clone(), model, config));
        Self {
            inner: Arc::new(Shared {
                runtime,
                agent,
                closing: CancellationToken::new(),
            }),
            auth_required: false,
            openapi_json: Arc::from("{}"),
        }
    }

    /// This state as a router made with these settings serves it.
    pub(super) fn serving(self, auth_required: bool, openapi_json: Arc<str>) -> Self {
        Self {
            auth_required,
            openapi_json,
            ..self
        }
    }

    /// Whether the server requires an API token (`HAICO_API_TOKEN`): what `GET /api/info`
    /// tells the web UI, which then asks for the token before its first API call.
    pub fn auth_required(&self) -> bool {
        self.auth_required
    }

    /// The workspaces: every read and change of a thread goes through them.
    pub fn workspaces(&self) -> &Workspaces {
        self.inner.runtime.workspaces()
    }

    /// The agent that runs chat turns.
    pub fn agent(&self) -> &Arc<Agent> {
        &self.inner.agent
    }

    /// The database (for health checks and subscriptions).
    pub fn db(&self) -> &Database {
        self.inner.runtime.database()
    }

    /// The tool runtime.
    pub fn runtime(&self) -> &ToolRuntime {
        &self.inner.runtime
    }

    /// Cancelled when the server starts shutting down: long-lived responses (event streams)
    /// end on it, so a graceful shutdown does not wait for them forever.
    pub fn closing(&self) -> &CancellationToken {
        &self.inner.closing
    }

    /// The bus live events are published on.
    pub fn bus(&self) -> &SharedBus {
        self.inner.runtime.bus()
    }
}
