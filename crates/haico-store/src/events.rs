//! The per-thread event log. Events are appended in the same transaction as the change they
//! announce, numbered 1, 2, 3… per thread, so a client that reconnects can ask for exactly
//! what it missed — also after a restart, and from another process.

use super::repository::repository;
use crate::thread_id::ThreadId;
use crate::{
    database::Database, error::Context, error::StoreError, models::StoredEvent, query::params,
    query::row_shape, repository::Backend,
};

row_shape!(StoredEvent { seq: i64, event: String, data: String } => StoredEvent { seq, event, data });

repository!(
    /// The per-thread event log.
    EventsRepo,
    events
);

impl EventsRepo<'_> {
    /// Up to `limit` events of the thread after sequence number `after`, in order.
    pub async fn events_after(
        &mut self,
        thread_id: &ThreadId,
        after: i64,
        limit: i64,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        self.fetch_all(
            "SELECT seq, event, data FROM events WHERE thread_id = $1 AND seq > $2 \
                 ORDER BY seq LIMIT $3",
            &params![thread_id, after, limit],
        )
        .await
        .context("reading events")
    }

    /// The data of the thread's `workspace` events after sequence number `after`, in order:
    /// which panels changed since, without the (possibly large) records of tool calls.
    pub async fn workspace_events_after(
        &mut self,
        thread_id: &ThreadId,
        after: i64,
    ) -> Result<Vec<String>, StoreError> {
        let rows: Vec<(String,)> = self
            .fetch_all(
                "SELECT data FROM events WHERE thread_id = $1 AND seq > $2 \
                 AND event = 'workspace' ORDER BY seq",
                &params![thread_id, after],
            )
            .await
            .context("reading workspace events")?;
        Ok(rows.into_iter().map(|(data,)| data).collect())
    }

    /// The thread's latest sequence number (0 before its first event).
    pub async fn last_event_seq(&mut self, thread_id: &ThreadId) -> Result<i64, StoreError> {
        let row: Option<(i64,)> = self
            .fetch_optional(
                "SELECT last_seq FROM event_seqs WHERE thread_id = $1",
                &params![thread_id],
            )
            .await
            .context("reading the event counter")?;
        Ok(row.map_or(0, |(seq,)| seq))
    }
}

impl Database {
    /// The event counters of the threads `ids` (threads without events are left out), in
    /// one statement outside any transaction: what a poller compares with what it has seen.
    pub async fn last_event_seqs(&self, ids: &[String]) -> Result<Vec<(String, i64)>, StoreError> {
        // The ids go as one JSON array, which both engines take apart in SQL.
        let sql = match self.backend() {
            Backend::Sqlite => {
                "SELECT thread_id, last_seq FROM event_seqs \
                 WHERE thread_id IN (SELECT value FROM json_each($1))"
            }
            Backend::Postgres => {
                "SELECT thread_id, last_seq FROM event_seqs \
                 WHERE thread_id IN (SELECT json_array_elements_text($1::json))"
            }
        };
        let list = serde_json::to_string(ids)?;
        let mut repo = self.autocommit_read().await?;
        let rows = repo.fetch_all(sql, &params![&list]).await;
        repo.rollback().await?;
        rows.context("polling the event counters")
    }
}
