//! The HTTP server: the REST API over the workspace, the agent-path tools endpoint, health,
//! and the web UI ([`crate::ui`]).
//!
//! [`app`] builds the router from one module per resource; [`serve`] runs it until a shutdown
//! signal. Every error body is `{"error": "…"}` (see [`ApiError`]). Around the routes: the
//! optional bearer token ([`ApiToken`]), request metrics (`GET /metrics`), the OpenAPI
//! document generated from the handlers (`GET /api/openapi.json`) and response compression
//! (gzip or Brotli when the client asks; never for event streams, which must flush every
//! event as it happens).

mod artifacts;
mod auth;
mod chat;
mod document;
mod error;
mod events;
mod extract;
mod health;
mod html;
mod info;
mod metrics;
mod objective;
mod openapi;
mod preferences;
mod threads;
mod todos;
mod tools;

use std::{future::Future, sync::Arc};

use axum::{Router, extract::DefaultBodyLimit, middleware};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower_http::{compression::CompressionLayer, trace::TraceLayer};

pub use auth::{ACCESS_TOKEN_PARAM, ApiToken, InvalidApiToken};
pub use error::ApiError;
pub use openapi::openapi_document;

use crate::{
    ThreadId,
    agent::{Agent, AgentConfig, model::ChatModel, providers::UnconfiguredModel},
    events::{EventSource, InProcessBus, LiveEvent, SharedBus, workspace_event},
    store::{Database, WorkspaceRepository},
    tools::ToolRuntime,
};

/// Default request body limit: room for a multi-megabyte document in one request.
pub const DEFAULT_MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// What every handler shares.
#[derive(Debug, Clone)]
pub struct AppState {
    inner: Arc<Shared>,
    /// Whether the router this state serves requires an API token; set by [`app`] from its
    /// [`HttpConfig`], for `GET /api/info`.
    auth_required: bool,
}

#[derive(Debug)]
struct Shared {
    db: Database,
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
        let runtime = ToolRuntime::with_bus(db.clone(), bus);
        let agent = Arc::new(Agent::new(runtime.clone(), model, config));
        Self {
            inner: Arc::new(Shared {
                runtime,
                agent,
                db,
                closing: CancellationToken::new(),
            }),
            auth_required: false,
        }
    }

    /// Whether the server requires an API token (`HAICO_API_TOKEN`): what `GET /api/info`
    /// tells the web UI, which then asks for the token before its first API call.
    pub fn auth_required(&self) -> bool {
        self.auth_required
    }

    /// The agent that runs chat turns.
    pub fn agent(&self) -> &Arc<Agent> {
        &self.inner.agent
    }

    /// The database.
    pub fn db(&self) -> &Database {
        &self.inner.db
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

    /// Commits a user-path write and announces the panels it changed (`source: "user"`) on the
    /// thread's events stream. Every user-path handler that changes a panel ends with this
    /// instead of `repo.commit()`.
    pub async fn commit_user_change(
        &self,
        repo: WorkspaceRepository,
        thread_id: &ThreadId,
    ) -> Result<(), ApiError> {
        let mut repo = repo;
        let changed = repo.changed();
        let events = if changed.is_empty() {
            Vec::new()
        } else {
            repo.append_events(
                thread_id.as_str(),
                &[workspace_event(changed, EventSource::User)],
            )
            .await?
        };
        repo.commit().await?;
        if !events.is_empty() {
            self.bus().publish(
                thread_id.as_str(),
                events
                    .into_iter()
                    .map(|e| Arc::new(LiveEvent::from(e)))
                    .collect(),
            );
        }
        Ok(())
    }
}

/// 404s unless the thread exists. A plain read, deliberately not the row lock tool calls take:
/// user-path edits of existing rows must not queue behind an agent call.
pub(crate) async fn require_thread(
    repo: &mut WorkspaceRepository,
    id: &ThreadId,
) -> Result<(), ApiError> {
    if repo.get_thread(id.as_str()).await?.is_none() {
        return Err(ApiError::thread_not_found(id.as_str()));
    }
    Ok(())
}

/// HTTP settings that shape the router.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
    /// When set, every route but `/healthz` and the web UI's static shell requires
    /// `Authorization: Bearer <token>`; `GET /api/info` reports whether it is set.
    pub api_token: Option<ApiToken>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            api_token: None,
        }
    }
}

/// The whole application router.
pub fn app(state: AppState, config: &HttpConfig) -> Router {
    // Installs the process-wide recorder on first use, so `/metrics` and the hooks in the tool
    // runtime and the agent record from the first request on.
    crate::metrics::handle();
    let state = AppState {
        auth_required: config.api_token.is_some(),
        ..state
    };
    let router = Router::new()
        .merge(crate::ui::router())
        .merge(health::router())
        .merge(info::router())
        .merge(html::router())
        .merge(metrics::router())
        .merge(openapi::router())
        .merge(threads::router())
        .merge(tools::router())
        .merge(events::router())
        .merge(chat::router())
        .merge(preferences::router())
        .merge(objective::router())
        .merge(document::router())
        .merge(todos::router())
        .merge(artifacts::router())
        .merge(crate::mcp::router(&state, config.max_body_bytes))
        .fallback(|| async { ApiError::NotFound("no such route".to_string()) })
        .method_not_allowed_fallback(|| async {
            ApiError::MethodNotAllowed("this route does not accept that method".to_string())
        });
    // Layers run after routing (so both see the matched route); the token check sits inside
    // the metrics layer, so refused requests are counted too.
    let router = match &config.api_token {
        Some(token) => router.layer(middleware::from_fn_with_state(
            Arc::new(token.clone()),
            auth::require_token,
        )),
        None => router,
    };
    // Compression's default predicate skips small bodies, images (but SVG) and
    // `text/event-stream`, so event streams are never buffered by an encoder.
    router
        .layer(middleware::from_fn(metrics::track))
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .layer(CompressionLayer::new())
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Serves `app` on `listener` until `shutdown` resolves, then lets in-flight requests finish.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    config: &HttpConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let closing = state.closing().clone();
    axum::serve(listener, app(state, config))
        .with_graceful_shutdown(async move {
            shutdown.await;
            closing.cancel();
        })
        .await
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
