//! [`AppState`]: what every handler shares, and who the request acts as.

use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

use super::{
    connections::ConnectionLimits,
    guards::{
        auth::ApiToken,
        limits::{Limiters, RateLimits},
        origin::OriginPolicy,
    },
};
use crate::{
    agent::AgentConfig, agent::model::ChatModel, agent::providers::unconfigured::UnconfiguredModel,
    agent::turn::Agent, replicas::DoorbellStatus, studies::ConditionPolicies, studies::Studies,
    tools::ToolRuntime,
};
use haico_core::{
    events::InProcessBus, events::SharedBus, people::People, people::Principal, workspace::Actor,
    workspace::Workspaces,
};
use haico_store::Database;

/// What every handler shares: the workspaces (the domain layer every change goes through), the
/// tool runtime, the agent, the people, and the server's shutdown signal. A handler's copy
/// acts as the request's [`Principal`] when it takes it through
/// [`Authorized`](super::guards::Authorized): its changes record that person.
#[derive(Debug, Clone)]
pub struct AppState {
    /// One allocation per copy: axum clones the state for every extractor and middleware of
    /// every request, and cloning one `Arc` is one atomic step where cloning the fields was
    /// a dozen (2% of the server's CPU per tool call in a profile).
    copy: Arc<Copy>,
}

/// The fields of one [`AppState`] copy.
#[derive(Debug, Clone)]
struct Copy {
    inner: Arc<Shared>,
    /// The tool runtime (and its workspaces), acting as [`AppState::principal`].
    runtime: ToolRuntime,
    /// Who this copy acts as ([`Principal::Local`] for the server's own copy).
    principal: Principal,
    /// The administrator's token (`HAICO_API_TOKEN`), when the router this state serves was
    /// made with one; set by [`app`](super::app) from its [`HttpConfig`](super::HttpConfig).
    admin_token: Option<Arc<ApiToken>>,
    /// The OpenAPI document as JSON, made once by [`app`](super::app) from the route list.
    openapi_json: Arc<str>,
    /// Where requests may come from, and how often they may start a turn or sign in.
    guards: Arc<Guards>,
}

/// The router's cross-site policy and rate limiters, made by [`app`](super::app).
#[derive(Debug, Default)]
pub(super) struct Guards {
    pub(super) origins: OriginPolicy,
    pub(super) limits: Limiters,
}

#[derive(Debug)]
struct Shared {
    agent: Arc<Agent>,
    people: People,
    studies: Studies,
    closing: CancellationToken,
    /// How the doorbell to the other replicas is doing, on a replicated server.
    doorbell: OnceLock<Arc<DoorbellStatus>>,
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
        let people = People::new(db.clone());
        let runtime = ToolRuntime::over(Workspaces::new(db, bus));
        let agent = Arc::new(Agent::new(runtime.clone(), model, config));
        let studies = Studies::new(runtime.workspaces().clone());
        agent.use_policies(Arc::new(ConditionPolicies(studies.clone())));
        let copy = Copy {
            inner: Arc::new(Shared {
                agent,
                people,
                studies,
                closing: CancellationToken::new(),
                doorbell: OnceLock::new(),
            }),
            runtime,
            principal: Principal::Local,
            admin_token: None,
            openapi_json: Arc::from("{}"),
            guards: Arc::default(),
        };
        Self {
            copy: Arc::new(copy),
        }
    }

    /// This state as a router made with these settings serves it.
    pub(super) fn serving(self, config: &HttpConfig, openapi_json: Arc<str>) -> Self {
        let copy = Copy {
            admin_token: config.api_token.clone().map(Arc::new),
            openapi_json,
            guards: Arc::new(Guards {
                origins: config.origins.clone(),
                limits: Limiters::new(config.rate_limits),
            }),
            ..Copy::clone(&self.copy)
        };
        Self {
            copy: Arc::new(copy),
        }
    }

    /// The OpenAPI document as JSON.
    pub(super) fn openapi_json(&self) -> &Arc<str> {
        &self.copy.openapi_json
    }

    /// The cross-site policy and rate limiters of the router this state serves.
    pub(super) fn guards(&self) -> &Guards {
        &self.copy.guards
    }

    /// The same state acting as `principal`: changes made through it record that person.
    pub(super) fn acting_as(&self, principal: Principal) -> Self {
        let copy = Copy {
            runtime: self.copy.runtime.acting_as(principal.actor()),
            principal,
            ..Copy::clone(&self.copy)
        };
        Self {
            copy: Arc::new(copy),
        }
    }

    /// Whether the server requires an API token (`HAICO_API_TOKEN`): what `GET /api/info`
    /// tells the web UI, which then asks for the token before its first API call.
    pub fn auth_required(&self) -> bool {
        self.copy.admin_token.is_some()
    }

    /// The administrator's token, when one is configured.
    pub(super) fn admin_token(&self) -> Option<&ApiToken> {
        self.copy.admin_token.as_deref()
    }

    /// Who this copy of the state acts as.
    pub fn principal(&self) -> &Principal {
        &self.copy.principal
    }

    /// The person changes are attributed to, if any.
    pub fn actor(&self) -> Option<Actor> {
        self.copy.principal.actor()
    }

    /// Accounts, sessions and who may see which thread.
    pub fn people(&self) -> &People {
        &self.copy.inner.people
    }

    /// The studies and their participants.
    pub fn studies(&self) -> &Studies {
        &self.copy.inner.studies
    }

    /// The workspaces: every read and change of a thread goes through them.
    pub fn workspaces(&self) -> &Workspaces {
        self.copy.runtime.workspaces()
    }

    /// The agent that runs chat turns.
    pub fn agent(&self) -> &Arc<Agent> {
        &self.copy.inner.agent
    }

    /// The database (for health checks and subscriptions).
    pub fn db(&self) -> &Database {
        self.copy.runtime.database()
    }

    /// The tool runtime.
    pub fn runtime(&self) -> &ToolRuntime {
        &self.copy.runtime
    }

    /// Cancelled when the server starts shutting down: long-lived responses (event streams)
    /// end on it, so a graceful shutdown does not wait for them forever.
    pub fn closing(&self) -> &CancellationToken {
        &self.copy.inner.closing
    }

    /// Reports `status` (the doorbell to the other replicas) in `/healthz`. Set once.
    pub fn watch_doorbell(&self, status: Arc<DoorbellStatus>) {
        let _ = self.copy.inner.doorbell.set(status);
    }

    /// The doorbell's status, on a server that rings other replicas.
    pub fn doorbell(&self) -> Option<&Arc<DoorbellStatus>> {
        self.copy.inner.doorbell.get()
    }

    /// The bus live events are published on.
    pub fn bus(&self) -> &SharedBus {
        self.copy.runtime.bus()
    }
}

/// Default request body limit: room for a multi-megabyte document in one request.
pub const DEFAULT_MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// HTTP settings that shape the router.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
    /// The administrator's token (`HAICO_API_TOKEN`). When set, or when accounts exist, every
    /// request must say who it is (see `http/guards`); `GET /api/info` reports whether it is set.
    pub api_token: Option<ApiToken>,
    /// Header and idle timeouts, and the cap on open connections.
    pub connections: ConnectionLimits,
    /// Which names the server answers to and which other sites' pages may use it
    /// (`HAICO_PUBLIC_HOSTS`, `HAICO_ALLOWED_ORIGINS`, `HAICO_TRUST_FORWARDED_HOST`).
    pub origins: OriginPolicy,
    /// How often a caller may start a chat turn or try to sign in.
    pub rate_limits: RateLimits,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            api_token: None,
            connections: ConnectionLimits::default(),
            origins: OriginPolicy::default(),
            rate_limits: RateLimits::default(),
        }
    }
}
