//! MCP sessions over streamable HTTP, shared by every server on the database: the stored
//! handshake of each session (rmcp's `SessionState` as JSON, opaque here), the thread it works
//! on, when it was last used, and the resources it subscribed to. See `mcp/sessions.rs`.

use chrono::{DateTime, Utc};

use super::repository::repository;
use crate::thread_id::ThreadId;
use crate::{error::Context, error::StoreError, query::params, query::row_shape};

/// A stored MCP session.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct McpSessionRecord {
    /// The `Mcp-Session-Id`.
    pub id: String,
    /// The thread the session works on.
    pub thread_id: String,
    /// The handshake to replay, as JSON.
    pub state: String,
    /// When it was opened.
    pub created_at: DateTime<Utc>,
    /// When a request last used it (updated at most about once a minute).
    pub last_used_at: DateTime<Utc>,
}

row_shape!(McpSessionRecord {
    id: String,
    thread_id: String,
    state: String,
    created_at: DateTime<Utc>,
    last_used_at: DateTime<Utc>,
} => McpSessionRecord { id, thread_id, state, created_at, last_used_at });

repository!(
    /// MCP sessions kept for every replica.
    McpSessionsRepo,
    mcp_sessions
);

impl McpSessionsRepo<'_> {
    /// Records a session opened on `thread_id` at `at` (a session id seen again replaces the
    /// old record).
    pub async fn save_mcp_session(
        &mut self,
        id: &str,
        thread_id: &ThreadId,
        state: &str,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.execute(
            "INSERT INTO mcp_sessions (id, thread_id, state, created_at, last_used_at) \
             VALUES ($1, $2, $3, $4, $4) \
             ON CONFLICT (id) DO UPDATE SET thread_id = excluded.thread_id, \
             state = excluded.state, created_at = excluded.created_at, \
             last_used_at = excluded.last_used_at",
            &params![id, thread_id, state, at],
        )
        .await
        .map(|_| ())
        .context("recording an MCP session")
    }

    /// The session `id`, whatever its age.
    pub async fn mcp_session(&mut self, id: &str) -> Result<Option<McpSessionRecord>, StoreError> {
        self.fetch_optional(
            "SELECT id, thread_id, state, created_at, last_used_at FROM mcp_sessions \
                 WHERE id = $1",
            &params![id],
        )
        .await
        .context("reading an MCP session")
    }

    /// Notes that the session `id` was used at `at`; false if it does not exist.
    pub async fn touch_mcp_session(
        &mut self,
        id: &str,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let touched = self
            .execute(
                "UPDATE mcp_sessions SET last_used_at = $2 WHERE id = $1",
                &params![id, at],
            )
            .await
            .context("noting the use of an MCP session")?;
        Ok(touched > 0)
    }

    /// Forgets the session `id` (and its subscriptions); with `thread_id`, only if it works on
    /// that thread. True if it existed.
    pub async fn delete_mcp_session(
        &mut self,
        id: &str,
        thread_id: Option<&str>,
    ) -> Result<bool, StoreError> {
        let removed = self
            .execute(
                "DELETE FROM mcp_sessions WHERE id = $1 AND ($2 IS NULL OR thread_id = $2)",
                &params![id, thread_id],
            )
            .await
            .context("ending an MCP session")?;
        Ok(removed > 0)
    }

    /// Forgets every session last used before `unused_since`; returns how many.
    pub async fn prune_mcp_sessions(
        &mut self,
        unused_since: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        self.execute(
            "DELETE FROM mcp_sessions WHERE last_used_at < $1",
            &params![unused_since],
        )
        .await
        .context("forgetting unused MCP sessions")
    }

    /// Subscribes the session `id` to `uri` (once); false if the session does not exist.
    pub async fn add_mcp_subscription(&mut self, id: &str, uri: &str) -> Result<bool, StoreError> {
        let added = self
            .execute(
                "INSERT INTO mcp_subscriptions (session_id, uri) \
                 SELECT id, $2 FROM mcp_sessions WHERE id = $1 \
                 ON CONFLICT (session_id, uri) DO NOTHING",
                &params![id, uri],
            )
            .await
            .context("subscribing an MCP session")?;
        Ok(added > 0)
    }

    /// Unsubscribes the session `id` from `uri`.
    pub async fn remove_mcp_subscription(&mut self, id: &str, uri: &str) -> Result<(), StoreError> {
        self.execute(
            "DELETE FROM mcp_subscriptions WHERE session_id = $1 AND uri = $2",
            &params![id, uri],
        )
        .await
        .map(|_| ())
        .context("unsubscribing an MCP session")
    }

    /// The URIs the session `id` subscribed to, in order.
    pub async fn mcp_subscriptions(&mut self, id: &str) -> Result<Vec<String>, StoreError> {
        let rows: Vec<(String,)> = self
            .fetch_all(
                "SELECT uri FROM mcp_subscriptions WHERE session_id = $1 ORDER BY uri",
                &params![id],
            )
            .await
            .context("reading an MCP session's subscriptions")?;
        Ok(rows.into_iter().map(|(uri,)| uri).collect())
    }
}
