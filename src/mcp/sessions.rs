//! MCP sessions in the database, so that every replica serves every session.
//!
//! rmcp keeps a session's live state (its handler, its streams) in the memory of the process
//! that opened it. With a [`SessionStore`] configured it also stores the client's `initialize`
//! parameters when a session opens, and a process that gets a request for a session it does
//! not hold loads them and replays the handshake before serving the request. [`McpSessions`]
//! is that store over haico's database (table `mcp_sessions`), plus what rmcp's trait does not
//! cover:
//!
//! - **the thread**: a session is stored with the thread of the URL it was opened on, and is
//!   restored only on that thread's URL. rmcp's `load` gets only the session id, so the `/mcp`
//!   route runs rmcp inside [`McpSessions::for_thread`] (a task-local value) and the store
//!   reads the request's thread from there;
//! - **ending and expiring everywhere**: the route asks [`McpSessions::standing`] before each
//!   request with a session id. A session deleted on another replica (`DELETE`), or unused for
//!   longer than [`MAX_IDLE`], is closed here too and answered like rmcp answers an unknown
//!   session (`404`). The check also notes the use (at most once a minute per session);
//!   expired rows are removed when found and whenever a session opens;
//! - **subscriptions**: `resources/subscribe` URIs are stored per session, and a session's
//!   follower re-reads them at each change, so the replica holding the client's notification
//!   stream announces what was subscribed through another one.

use std::{collections::HashSet, future::Future, time::Duration};

use chrono::{DateTime, Utc};
use rmcp::transport::streamable_http_server::session::{
    SessionState, SessionStore, SessionStoreError,
};

use haico_store::{Database, McpSessionRecord, StoreError, ThreadId, Transaction};

/// A session unused for longer than this is forgotten.
pub const MAX_IDLE: Duration = Duration::from_secs(24 * 60 * 60);

/// A session's last use is written at most this often.
const TOUCH_EVERY: Duration = Duration::from_secs(60);

tokio::task_local! {
    /// The thread of the `/mcp/{thread_id}` request being served.
    static REQUEST_THREAD: ThreadId;
}

/// What can go wrong with a stored session.
#[derive(Debug, thiserror::Error)]
pub enum McpSessionError {
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The stored handshake cannot be read (or written) as JSON.
    #[error("the stored MCP session state is not valid: {0}")]
    State(#[from] serde_json::Error),
    /// rmcp stored a session outside a `/mcp/{thread_id}` request, so its thread is unknown.
    #[error("an MCP session can only be stored while serving /mcp/{{thread_id}}")]
    NoThread,
}

/// Where a session id stands for a request on a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Stored, in use and on this thread.
    Live,
    /// Stored and in use, on another thread.
    OtherThread,
    /// Unknown: never opened, ended, or unused for too long.
    Gone,
}

/// The session store over the database; cheap to clone.
#[derive(Debug, Clone)]
pub struct McpSessions {
    db: Database,
    max_idle: Duration,
}

impl McpSessions {
    /// Sessions in `db`, forgotten after [`MAX_IDLE`] unused.
    pub fn new(db: Database) -> Self {
        Self::with_max_idle(db, MAX_IDLE)
    }

    /// Sessions in `db`, forgotten after `max_idle` unused.
    pub fn with_max_idle(db: Database, max_idle: Duration) -> Self {
        Self { db, max_idle }
    }

    /// Runs `serve` (rmcp serving one request) with `thread` as the request's thread, which
    /// the store's `store`, `load` and `delete` use.
    pub async fn for_thread<F: Future>(thread: ThreadId, serve: F) -> F::Output {
        REQUEST_THREAD.scope(thread, serve).await
    }

    fn request_thread() -> Option<ThreadId> {
        REQUEST_THREAD.try_with(ThreadId::clone).ok()
    }

    /// The oldest last use a live session may have.
    fn oldest_live(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        chrono::Duration::from_std(self.max_idle)
            .ok()
            .and_then(|idle| now.checked_sub_signed(idle))
            .unwrap_or(DateTime::<Utc>::MIN_UTC)
    }

    /// Where the session `id` stands for a request on `thread`; a live session's use is noted
    /// and an expired one is forgotten.
    pub async fn standing(&self, id: &str, thread: &ThreadId) -> Result<Standing, McpSessionError> {
        let now = Utc::now();
        let Some(record) = self.record(id).await? else {
            return Ok(Standing::Gone);
        };
        if record.last_used_at < self.oldest_live(now) {
            let mut repo = self.db.begin_write().await?;
            let done = repo.mcp_sessions().delete_mcp_session(id, None).await;
            finish(repo, done).await?;
            return Ok(Standing::Gone);
        }
        if record.thread_id != thread.as_str() {
            return Ok(Standing::OtherThread);
        }
        let touch_every = chrono::Duration::from_std(TOUCH_EVERY).unwrap_or_default();
        if now - record.last_used_at >= touch_every {
            let mut repo = self.db.begin_write().await?;
            let done = repo.mcp_sessions().touch_mcp_session(id, now).await;
            finish(repo, done).await?;
        }
        Ok(Standing::Live)
    }

    /// The stored session `id`, whatever its age.
    async fn record(&self, id: &str) -> Result<Option<McpSessionRecord>, StoreError> {
        let mut repo = self.db.begin_read().await?;
        let found = repo.mcp_sessions().mcp_session(id).await;
        let _ = repo.rollback().await;
        found
    }

    /// Forgets every session unused for too long; returns how many.
    pub async fn prune(&self) -> Result<u64, McpSessionError> {
        let oldest = self.oldest_live(Utc::now());
        let mut repo = self.db.begin_write().await?;
        let done = repo.mcp_sessions().prune_mcp_sessions(oldest).await;
        Ok(finish(repo, done).await?)
    }

    /// The URIs the session `id` subscribed to.
    pub async fn subscriptions(&self, id: &str) -> Result<HashSet<String>, McpSessionError> {
        let mut repo = self.db.begin_read().await?;
        let found = repo.mcp_sessions().mcp_subscriptions(id).await;
        let _ = repo.rollback().await;
        Ok(found?.into_iter().collect())
    }

    /// Subscribes the session `id` to `uri`; false if the session is not stored.
    pub async fn subscribe(&self, id: &str, uri: &str) -> Result<bool, McpSessionError> {
        let mut repo = self.db.begin_write().await?;
        let done = repo.mcp_sessions().add_mcp_subscription(id, uri).await;
        Ok(finish(repo, done).await?)
    }

    /// Unsubscribes the session `id` from `uri`.
    pub async fn unsubscribe(&self, id: &str, uri: &str) -> Result<(), McpSessionError> {
        let mut repo = self.db.begin_write().await?;
        let done = repo.mcp_sessions().remove_mcp_subscription(id, uri).await;
        Ok(finish(repo, done).await?)
    }

    /// Saves the handshake of the session `id`, opened on `thread`, and forgets the sessions
    /// unused for too long.
    pub async fn save(
        &self,
        id: &str,
        thread: &ThreadId,
        state: &SessionState,
    ) -> Result<(), McpSessionError> {
        let state = serde_json::to_string(state)?;
        let now = Utc::now();
        let oldest = self.oldest_live(now);
        let mut repo = self.db.begin_write().await?;
        let done = match repo.mcp_sessions().prune_mcp_sessions(oldest).await {
            Ok(_) => {
                repo.mcp_sessions()
                    .save_mcp_session(id, thread, &state, now)
                    .await
            }
            Err(err) => Err(err),
        };
        finish(repo, done).await?;
        Ok(())
    }

    /// The handshake of the session `id` if it is live and works on `thread`.
    pub async fn restore(
        &self,
        id: &str,
        thread: &ThreadId,
    ) -> Result<Option<SessionState>, McpSessionError> {
        if self.standing(id, thread).await? != Standing::Live {
            return Ok(None);
        }
        let record = self.record(id).await?;
        match record {
            Some(record) => Ok(Some(serde_json::from_str(&record.state)?)),
            None => Ok(None),
        }
    }

    /// Forgets the session `id`; with `thread`, only if it works on that thread.
    pub async fn end(&self, id: &str, thread: Option<&ThreadId>) -> Result<bool, McpSessionError> {
        let mut repo = self.db.begin_write().await?;
        let done = repo
            .mcp_sessions()
            .delete_mcp_session(id, thread.map(ThreadId::as_str))
            .await;
        Ok(finish(repo, done).await?)
    }
}

/// Commits `repo` if `done` succeeded, else rolls it back.
async fn finish<T>(repo: Transaction, done: Result<T, StoreError>) -> Result<T, StoreError> {
    match done {
        Ok(value) => {
            repo.commit().await?;
            Ok(value)
        }
        Err(err) => {
            let _ = repo.rollback().await;
            Err(err)
        }
    }
}

#[async_trait::async_trait]
impl SessionStore for McpSessions {
    /// A session restores only on the thread it was opened on: elsewhere it is unknown.
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Some(thread) = Self::request_thread() else {
            return Ok(None);
        };
        Ok(self.restore(session_id, &thread).await?)
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let thread = Self::request_thread().ok_or(McpSessionError::NoThread)?;
        Ok(self.save(session_id, &thread, state).await?)
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        let thread = Self::request_thread();
        self.end(session_id, thread.as_ref()).await?;
        Ok(())
    }
}
