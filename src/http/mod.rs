//! The HTTP server: the REST API over the workspace, the agent-path tools endpoint and health.
//!
//! [`app`] builds the router from one module per resource; [`serve`] runs it until a shutdown
//! signal. Every error body is `{"error": "…"}` (see [`ApiError`]).

mod error;
mod extract;
mod health;
mod preferences;
mod threads;
mod tools;

use std::{future::Future, sync::Arc};

use axum::{Router, extract::DefaultBodyLimit};
use tokio::net::TcpListener;
use tower_http::trace::TraceLayer;

pub use error::ApiError;

use crate::{store::Database, tools::ToolRuntime};

/// Default request body limit: room for a multi-megabyte document in one request.
pub const DEFAULT_MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// What every handler shares.
#[derive(Debug, Clone)]
pub struct AppState {
    inner: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    db: Database,
    runtime: ToolRuntime,
}

impl AppState {
    /// State over an open database.
    pub fn new(db: Database) -> Self {
        Self {
            inner: Arc::new(Shared {
                runtime: ToolRuntime::new(db.clone()),
                db,
            }),
        }
    }

    /// The database.
    pub fn db(&self) -> &Database {
        &self.inner.db
    }

    /// The tool runtime.
    pub fn runtime(&self) -> &ToolRuntime {
        &self.inner.runtime
    }
}

/// HTTP settings that shape the router.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// The whole application router.
pub fn app(state: AppState, config: &HttpConfig) -> Router {
    Router::new()
        .merge(health::router())
        .merge(threads::router())
        .merge(tools::router())
        .merge(preferences::router())
        .fallback(|| async { ApiError::NotFound("no such route".to_string()) })
        .method_not_allowed_fallback(|| async {
            ApiError::MethodNotAllowed("this route does not accept that method".to_string())
        })
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
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
    axum::serve(listener, app(state, config))
        .with_graceful_shutdown(shutdown)
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
