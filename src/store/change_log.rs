//! What a committed change leaves besides its panels' own rows: its revision (numbered from the
//! thread's counter) with its first panel record, its events (numbered from the same counter
//! row), and the thread's activity time, all written in **one round trip** — one statement
//! with data-modifying CTEs on PostgreSQL, one batch of statements on SQLite (which runs a
//! batch in a single call to its connection's thread).
//!
//! Every change on the write path pays this once, so it is where round trips count: SQLite's
//! writer is one connection, and every statement sent to it is a trip to its thread and back.
//!
//! The counter row (`event_seqs`) stays locked until the transaction ends, so revision and
//! event numbers are handed out in commit order: a reader never sees 7 committed before 6.

use super::{
    Chain, Context, NewEvent, NewRevision, PanelWrite, StoreError, StoredEvent,
    repository::{Tx, WorkspaceRepository, now},
};
use chrono::{DateTime, Utc};

/// What to log for a change about to commit.
#[derive(Debug, Clone, Copy)]
pub struct ChangeLog<'a> {
    /// Its revision, when it changed a panel: the row, when it was made, and the first
    /// changed panel's record.
    pub revision: Option<(NewRevision<'a>, DateTime<Utc>, Option<PanelWrite<'a>>)>,
    /// Its events, in order.
    pub events: &'a [NewEvent],
    /// Whether to mark the thread as active now (thread lists sort by it).
    pub touch: bool,
}

/// What [`WorkspaceRepository::log_change`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoggedChange {
    /// The revision's number, when there was one.
    pub rev: Option<i64>,
    /// Where the first panel record's chain stands, when it was a record of operations.
    pub chain: Option<Chain>,
    /// The events, numbered.
    pub events: Vec<StoredEvent>,
}

/// Both engines' statements take the same parameters:
/// `$1` thread, `$2` revision time, `$3`–`$12` the revision's columns, `$13` the first panel,
/// `$14` whether its record is a whole state, `$15` its data, `$16` its size, `$17` how many
/// events, `$18` whether there is a revision, `$19` whether to touch the thread, `$20` the
/// events as a JSON array, `$21` the events' (and the touch's) time.
const SQLITE: &str = "\
    INSERT INTO event_seqs (thread_id, last_seq, last_rev) \
    VALUES ($1, $17, CASE WHEN $18 THEN 1 ELSE 0 END) \
    ON CONFLICT (thread_id) DO UPDATE SET last_seq = event_seqs.last_seq + $17, \
      last_rev = event_seqs.last_rev + CASE WHEN $18 THEN 1 ELSE 0 END \
    RETURNING last_seq AS a, last_rev AS b, NULL AS c, NULL AS d; \
    INSERT INTO revisions (thread_id, rev, at, source, by_name, turn_index, thread_turn, tool, \
      action_and_reasoning, panels, summary, restored_from, reverted_turn) \
    SELECT $1, last_rev, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 \
    FROM event_seqs WHERE thread_id = $1 AND $18; \
    INSERT INTO panel_changes (thread_id, panel, rev, whole, data, chain_len, chain_bytes, \
      base_bytes) \
    SELECT $1, $13, s.last_rev, $14, $15, \
      CASE WHEN $14 THEN 0 ELSE COALESCE(p.chain_len, 0) + 1 END, \
      CASE WHEN $14 THEN 0 ELSE COALESCE(p.chain_bytes, 0) + $16 END, \
      CASE WHEN $14 THEN $16 ELSE COALESCE(p.base_bytes, 0) END \
    FROM event_seqs s LEFT JOIN ( \
      SELECT chain_len, chain_bytes, base_bytes FROM panel_changes \
      WHERE thread_id = $1 AND panel = $13 ORDER BY rev DESC LIMIT 1) AS p ON TRUE \
    WHERE s.thread_id = $1 AND $18 AND $13 IS NOT NULL \
    RETURNING NULL AS a, chain_len AS b, chain_bytes AS c, base_bytes AS d; \
    INSERT INTO events (thread_id, seq, event, data, created_at) \
    SELECT $1, s.last_seq - $17 + 1 + CAST(j.key AS INTEGER), json_extract(j.value, '$.event'), \
      json_extract(j.value, '$.data'), $21 \
    FROM event_seqs s, json_each($20) AS j WHERE s.thread_id = $1; \
    UPDATE threads SET updated_at = $21 WHERE id = $1 AND $19";

/// See [`SQLITE`] for the parameters.
const POSTGRES: &str = "\
    WITH s AS ( \
      INSERT INTO event_seqs (thread_id, last_seq, last_rev) \
      VALUES ($1, $17, CASE WHEN $18 THEN 1 ELSE 0 END) \
      ON CONFLICT (thread_id) DO UPDATE SET last_seq = event_seqs.last_seq + $17, \
        last_rev = event_seqs.last_rev + CASE WHEN $18 THEN 1 ELSE 0 END \
      RETURNING last_seq, last_rev), \
    r AS ( \
      INSERT INTO revisions (thread_id, rev, at, source, by_name, turn_index, thread_turn, \
        tool, action_and_reasoning, panels, summary, restored_from, reverted_turn) \
      SELECT $1, s.last_rev, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 FROM s WHERE $18 \
      RETURNING rev), \
    p AS ( \
      INSERT INTO panel_changes (thread_id, panel, rev, whole, data, chain_len, chain_bytes, \
        base_bytes) \
      SELECT $1, $13::text, r.rev, $14, $15, \
        CASE WHEN $14 THEN 0 ELSE COALESCE(prev.chain_len, 0) + 1 END, \
        CASE WHEN $14 THEN 0 ELSE COALESCE(prev.chain_bytes, 0) + $16 END, \
        CASE WHEN $14 THEN $16 ELSE COALESCE(prev.base_bytes, 0) END \
      FROM r LEFT JOIN ( \
        SELECT chain_len, chain_bytes, base_bytes FROM panel_changes \
        WHERE thread_id = $1 AND panel = $13::text ORDER BY rev DESC LIMIT 1) AS prev ON TRUE \
      WHERE $13::text IS NOT NULL \
      RETURNING chain_len, chain_bytes, base_bytes), \
    e AS ( \
      INSERT INTO events (thread_id, seq, event, data, created_at) \
      SELECT $1, s.last_seq - $17 + x.ord, x.item->>'event', x.item->>'data', $21 \
      FROM s, jsonb_array_elements($20::jsonb) WITH ORDINALITY AS x(item, ord)), \
    t AS (UPDATE threads SET updated_at = $21 WHERE id = $1 AND $19) \
    SELECT s.last_seq AS a, s.last_rev AS b, p.chain_len AS c, p.chain_bytes AS d, \
      p.base_bytes AS e FROM s LEFT JOIN p ON TRUE";

impl WorkspaceRepository {
    /// Writes `log` for the thread in this transaction, in one round trip.
    pub async fn log_change(
        &mut self,
        thread_id: &str,
        log: ChangeLog<'_>,
    ) -> Result<LoggedChange, StoreError> {
        if log.revision.is_none() && log.events.is_empty() && !log.touch {
            return Ok(LoggedChange::default());
        }
        let count = i64::try_from(log.events.len()).unwrap_or(i64::MAX);
        let at = now();
        let batch = serde_json::to_string(log.events)?;
        let (revision, revision_at, first) = match log.revision {
            Some((revision, revision_at, first)) => (Some(revision), revision_at, first),
            None => (None, at, None),
        };
        let panels = revision
            .map(|r| serde_json::to_string(&r.panels))
            .transpose()?;
        let size = first.map_or(0, |w| i64::try_from(w.data.len()).unwrap_or(i64::MAX));
        macro_rules! bound {
            ($query:expr) => {
                $query
                    .bind(thread_id)
                    .bind(revision_at)
                    .bind(revision.map(|r| r.source))
                    .bind(revision.and_then(|r| r.by))
                    .bind(revision.and_then(|r| r.turn_index))
                    .bind(revision.map_or(0, |r| r.thread_turn))
                    .bind(revision.and_then(|r| r.tool))
                    .bind(revision.and_then(|r| r.action_and_reasoning))
                    .bind(panels.as_deref())
                    .bind(revision.map(|r| r.summary))
                    .bind(revision.and_then(|r| r.restored_from))
                    .bind(revision.and_then(|r| r.reverted_turn))
                    .bind(first.map(|w| w.panel))
                    .bind(first.is_some_and(|w| w.whole))
                    .bind(first.map(|w| w.data))
                    .bind(size)
                    .bind(count)
                    .bind(revision.is_some())
                    .bind(log.touch)
                    .bind(&batch)
                    .bind(at)
            };
        }
        let (last_seq, last_rev, chain) = match &mut self.tx {
            Tx::Sqlite(tx) => {
                // One row from the counter, one more when a panel record of operations was
                // written.
                type Row = (Option<i64>, Option<i64>, Option<i64>, Option<i64>);
                let rows: Vec<Row> = bound!(sqlx::query_as::<_, Row>(SQLITE))
                    .fetch_all(&mut **tx)
                    .await
                    .context("logging a change")?;
                let (last_seq, last_rev) = match rows.first() {
                    Some((Some(seq), Some(rev), ..)) => (*seq, *rev),
                    _ => return Err(missing_counter()),
                };
                let chain = rows.get(1).and_then(|&(_, len, bytes, base)| {
                    Some(Chain {
                        len: len?,
                        bytes: bytes?,
                        base: base?,
                    })
                });
                (last_seq, last_rev, chain)
            }
            Tx::Postgres(tx) => {
                type Row = (i64, i64, Option<i64>, Option<i64>, Option<i64>);
                let (last_seq, last_rev, len, bytes, base): Row =
                    bound!(sqlx::query_as::<_, Row>(POSTGRES))
                        .fetch_one(&mut **tx)
                        .await
                        .context("logging a change")?;
                let chain = match (len, bytes, base) {
                    (Some(len), Some(bytes), Some(base)) => Some(Chain { len, bytes, base }),
                    _ => None,
                };
                (last_seq, last_rev, chain)
            }
        };
        let first_seq = last_seq - count + 1;
        Ok(LoggedChange {
            rev: revision.map(|_| last_rev),
            chain: chain.filter(|_| first.is_some_and(|w| !w.whole)),
            events: log
                .events
                .iter()
                .zip(first_seq..)
                .map(|(event, seq)| StoredEvent {
                    seq,
                    event: event.event.to_string(),
                    data: event.data.clone(),
                })
                .collect(),
        })
    }
}

fn missing_counter() -> StoreError {
    StoreError::Database {
        context: "logging a change: the thread's counter row did not answer",
        source: sqlx::Error::RowNotFound,
    }
}
