//! The per-thread event log. Events are appended in the same transaction as the change they
//! announce, numbered 1, 2, 3… per thread, so a client that reconnects can ask for exactly
//! what it missed — also after a restart, and from another process.

use serde::Serialize;

use super::{
    Context, StoreError,
    repository::{Tx, WorkspaceRepository, now, with_conn},
};

/// An event to append: its SSE name and its JSON data, already encoded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewEvent {
    /// The SSE `event:` name (`workspace`, `artifact`, `step`, …).
    pub event: &'static str,
    /// The JSON data, encoded once here and sent as is to every subscriber.
    pub data: String,
}

/// An event as stored: its per-thread sequence number is its SSE `id`.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StoredEvent {
    /// Position in the thread's log, from 1.
    pub seq: i64,
    /// The SSE `event:` name.
    pub event: String,
    /// The JSON data.
    pub data: String,
}

impl WorkspaceRepository {
    /// Appends `events` to the thread's log in this transaction and returns them numbered.
    pub async fn append_events(
        &mut self,
        thread_id: &str,
        events: &[NewEvent],
    ) -> Result<Vec<StoredEvent>, StoreError> {
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let count = i64::try_from(events.len()).unwrap_or(i64::MAX);
        let at = now();
        let batch = serde_json::to_string(events)?;
        let last: i64 = match &mut self.tx {
            Tx::Sqlite(tx) => {
                // One writer at a time on SQLite, so the counter and the rows need no CTE.
                let (last,): (i64,) = sqlx::query_as(
                    "INSERT INTO event_seqs (thread_id, last_seq) VALUES ($1, $2) \
                     ON CONFLICT (thread_id) DO UPDATE SET last_seq = event_seqs.last_seq + $2 \
                     RETURNING last_seq",
                )
                .bind(thread_id)
                .bind(count)
                .fetch_one(&mut **tx)
                .await
                .context("numbering events")?;
                sqlx::query(
                    "INSERT INTO events (thread_id, seq, event, data, created_at) \
                     SELECT $1, $2 + CAST(j.key AS INTEGER), json_extract(j.value, '$.event'), \
                            json_extract(j.value, '$.data'), $3 \
                     FROM json_each($4) AS j",
                )
                .bind(thread_id)
                .bind(last - count + 1)
                .bind(at)
                .bind(&batch)
                .execute(&mut **tx)
                .await
                .context("appending events")?;
                last
            }
            Tx::Postgres(tx) => {
                // The counter row is locked until commit, so sequence numbers are handed out
                // in commit order: a reader never sees 7 committed before 6.
                let (last,): (i64,) = sqlx::query_as(
                    "WITH next AS ( \
                       INSERT INTO event_seqs (thread_id, last_seq) VALUES ($1, $2) \
                       ON CONFLICT (thread_id) DO UPDATE SET last_seq = event_seqs.last_seq + $2 \
                       RETURNING last_seq), \
                     rows AS ( \
                       INSERT INTO events (thread_id, seq, event, data, created_at) \
                       SELECT $1, next.last_seq - $2 + e.ord, e.item->>'event', e.item->>'data', $3 \
                       FROM next, jsonb_array_elements($4::jsonb) WITH ORDINALITY AS e(item, ord)) \
                     SELECT last_seq FROM next",
                )
                .bind(thread_id)
                .bind(count)
                .bind(at)
                .bind(&batch)
                .fetch_one(&mut **tx)
                .await
                .context("appending events")?;
                last
            }
        };
        let first = last - count + 1;
        Ok(events
            .iter()
            .zip(first..)
            .map(|(event, seq)| StoredEvent {
                seq,
                event: event.event.to_string(),
                data: event.data.clone(),
            })
            .collect())
    }

    /// Up to `limit` events of the thread after sequence number `after`, in order.
    pub async fn events_after(
        &mut self,
        thread_id: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        with_conn!(self, conn => {
            sqlx::query_as(
                "SELECT seq, event, data FROM events WHERE thread_id = $1 AND seq > $2 \
                 ORDER BY seq LIMIT $3",
            )
            .bind(thread_id)
            .bind(after)
            .bind(limit)
            .fetch_all(conn)
            .await
        })
        .context("reading events")
    }

    /// The thread's latest sequence number (0 before its first event).
    pub async fn last_event_seq(&mut self, thread_id: &str) -> Result<i64, StoreError> {
        let row: Option<(i64,)> = with_conn!(self, conn => {
            sqlx::query_as("SELECT last_seq FROM event_seqs WHERE thread_id = $1")
                .bind(thread_id)
                .fetch_optional(conn)
                .await
        })
        .context("reading the event counter")?;
        Ok(row.map_or(0, |(seq,)| seq))
    }
}
