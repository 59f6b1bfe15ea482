//! Thread rows: create, read, rename, delete, and the per-call lock.

use super::repository::repository;
use crate::thread_id::ThreadId;
use crate::{
    error::Context, error::StoreError, models::Thread, models::ThreadRow, models::Workspace,
    query::params, repository::Backend, repository::now,
};

const THREAD_COLUMNS: &str = "id, title, turn_index, created_at, updated_at, \
     forked_from_thread, forked_from_rev, document_mode, mcp_servers";
/// [`THREAD_COLUMNS`] and the owner's name, for reads of `threads`.
const THREAD_COLUMNS_WITH_OWNER: &str = "id, title, turn_index, created_at, updated_at, \
     forked_from_thread, forked_from_rev, document_mode, mcp_servers, \
     (SELECT name FROM users WHERE users.id = threads.owner_id) AS owner";

repository!(
    /// A thread's own row: create, read, rename, lock, delete; the workspace read whole.
    ThreadsRepo,
    threads
);

impl ThreadsRepo<'_> {
    /// Creates a thread; an existing id is [`StoreError::AlreadyExists`].
    pub async fn create_thread(
        &mut self,
        id: &ThreadId,
        title: &str,
    ) -> Result<Thread, StoreError> {
        let at = now();
        let sql = format!(
            "INSERT INTO threads (id, title, turn_index, created_at, updated_at) \
             VALUES ($1, $2, 0, $3, $3) ON CONFLICT (id) DO NOTHING RETURNING {THREAD_COLUMNS}"
        );
        let row: Option<ThreadRow> = self
            .fetch_optional(&sql, &params![id, title, at])
            .await
            .context("creating a thread")?;
        row.map(Thread::from)
            .ok_or_else(|| StoreError::AlreadyExists(format!("thread {id:?}")))
    }

    /// Reads one thread.
    pub async fn get_thread(&mut self, id: &ThreadId) -> Result<Option<Thread>, StoreError> {
        let sql = format!("SELECT {THREAD_COLUMNS_WITH_OWNER} FROM threads WHERE id = $1");
        let row: Option<ThreadRow> = self
            .fetch_optional(&sql, &params![id])
            .await
            .context("reading a thread")?;
        Ok(row.map(Thread::from))
    }

    /// Lists threads, most recently active first.
    pub async fn list_threads(&mut self) -> Result<Vec<Thread>, StoreError> {
        let sql = format!(
            "SELECT {THREAD_COLUMNS_WITH_OWNER} FROM threads WHERE NOT EXISTS \
                (SELECT 1 FROM study_sessions AS s WHERE s.thread_id = threads.id) \
                ORDER BY updated_at DESC, id"
        );
        let rows: Vec<ThreadRow> = self.fetch_all(&sql, &[]).await.context("listing threads")?;
        Ok(rows.into_iter().map(Thread::from).collect())
    }

    /// Renames a thread; `None` when it does not exist.
    pub async fn rename_thread(
        &mut self,
        id: &ThreadId,
        title: &str,
    ) -> Result<Option<Thread>, StoreError> {
        let at = now();
        let renamed = self
            .execute(
                "UPDATE threads SET title = $2, updated_at = $3 WHERE id = $1",
                &params![id, title, at],
            )
            .await
            .context("renaming a thread")?;
        if renamed == 0 {
            return Ok(None);
        }
        self.get_thread(id).await
    }

    /// Sets which configured MCP servers the thread's agent may use (`None`: all); `false`
    /// when the thread does not exist. Stored as a JSON array of names.
    pub async fn set_mcp_servers(
        &mut self,
        id: &ThreadId,
        servers: Option<&[String]>,
    ) -> Result<bool, StoreError> {
        let stored = servers
            .map(serde_json::to_string)
            .transpose()
            .map_err(StoreError::from)?;
        let at = now();
        let changed = self
            .execute(
                "UPDATE threads SET mcp_servers = $2, updated_at = $3 WHERE id = $1",
                &params![id.as_str(), stored.as_deref(), at],
            )
            .await
            .context("setting a thread's MCP servers")?;
        Ok(changed > 0)
    }

    /// Deletes a thread and, through the foreign keys, its whole workspace. On PostgreSQL the
    /// change log's tables have no foreign key (migration 0019): their rows go in statements
    /// of their own, after the cascade has removed the thread's counter row, which waits for
    /// any change still logging; each statement sees what such a change committed.
    pub async fn delete_thread(&mut self, id: &ThreadId) -> Result<bool, StoreError> {
        let result = self
            .execute("DELETE FROM threads WHERE id = $1", &params![id])
            .await
            .context("deleting a thread")?;
        if result > 0 && self.backend() == Backend::Postgres {
            for table in UNKEYED_LOG_TABLES {
                self.execute(
                    &format!("DELETE FROM {table} WHERE thread_id = $1"),
                    &params![id],
                )
                .await
                .context("deleting a thread's change log")?;
            }
        }
        Ok(result > 0)
    }

    /// Locks the thread for the rest of the transaction and returns its current turn index, or
    /// `None` when the thread does not exist. On PostgreSQL this is a row lock, so two calls on
    /// one thread run one after the other; it is the `NO KEY` kind, so user-path inserts into
    /// the thread's tables (whose foreign-key checks take a key-share lock) do not wait behind
    /// an agent call. On SQLite the transaction already holds the database's write lock.
    pub async fn lock_thread(&mut self, id: &ThreadId) -> Result<Option<i64>, StoreError> {
        let sql = match self.backend() {
            Backend::Sqlite => "SELECT turn_index FROM threads WHERE id = $1",
            Backend::Postgres => "SELECT turn_index FROM threads WHERE id = $1 FOR NO KEY UPDATE",
        };
        let row: Option<(i64,)> = self
            .fetch_optional(sql, &params![id])
            .await
            .context("locking a thread")?;
        Ok(row.map(|(turn,)| turn))
    }

    /// Starts a new turn on the thread and returns its index (1 for the first turn), or `None`
    /// when the thread does not exist. Artifacts made from now on are tagged with it.
    pub async fn begin_turn(&mut self, id: &ThreadId) -> Result<Option<i64>, StoreError> {
        let at = now();
        let row: Option<(i64,)> = self
            .fetch_optional(
                "UPDATE threads SET turn_index = turn_index + 1, updated_at = $2 WHERE id = $1 \
                 RETURNING turn_index",
                &params![id, at],
            )
            .await
            .context("starting a turn")?;
        Ok(row.map(|(turn,)| turn))
    }

    /// Everything the thread's panels show, read in this transaction's snapshot.
    pub async fn workspace(&mut self, thread_id: &ThreadId) -> Result<Workspace, StoreError> {
        Ok(Workspace {
            objective: self.objectives().get_objective(thread_id).await?,
            document: self.documents().get_document(thread_id).await?,
            plan: self.plan().plan_steps(thread_id).await?,
            preferences: self.preferences().list_preferences(thread_id).await?,
            artifacts: self
                .artifacts()
                .list_artifacts(thread_id, None, i64::MAX)
                .await?,
        })
    }
}

/// The change log's tables that PostgreSQL keeps without a foreign key to `threads`.
const UNKEYED_LOG_TABLES: [&str; 3] = ["events", "revisions", "panel_changes"];
