//! What a committed change leaves besides its panels' own rows: its revision (numbered from the
//! thread's counter) with its first panel record, its events (numbered from the same counter
//! row), the thread's activity time (on SQLite; on PostgreSQL the agent's lock sets it) and the
//! revision tag of the artifacts it stored, all written in **one round trip** — one statement
//! with data-modifying CTEs on PostgreSQL; on SQLite up to six statements run inline on the
//! writer (`writer.rs`), which costs no trip at all.
//!
//! Every change on the write path pays this once, so it is where round trips count.
//!
//! The counter row (`event_seqs`) stays locked until the transaction ends, so revision and
//! event numbers are handed out in commit order: a reader never sees 7 committed before 6.

use super::history::HistoryRepo;
use crate::thread_id::ThreadId;
use crate::{
    error::Context, error::StoreError, history::Chain, history::NewRevision, history::PanelWrite,
    lender::Named, models::NewEvent, models::StoredEvent, query::RowShape, query::Value,
    query::params, repository::Backend, repository::Tx, repository::now,
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
    /// Whether to mark the thread as active now (thread lists sort by it). Only SQLite writes
    /// it here: on PostgreSQL the agent's lock (`haico_lock_thread`) has marked it already.
    pub touch: bool,
    /// The artifacts the change stored, to be tagged with its revision.
    pub artifacts: &'a [i64],
}

/// What [`Transaction::log_change`] wrote.
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
/// events as a JSON array, `$21` the events' (and the touch's) time, `$22` the artifacts to tag
/// with the revision, as a JSON array (`NULL` for none).
const SQLITE: [&str; 6] = [
    "INSERT INTO event_seqs (thread_id, last_seq, last_rev) \
     VALUES ($1, $17, CASE WHEN $18 THEN 1 ELSE 0 END) \
     ON CONFLICT (thread_id) DO UPDATE SET last_seq = event_seqs.last_seq + $17, \
       last_rev = event_seqs.last_rev + CASE WHEN $18 THEN 1 ELSE 0 END \
     RETURNING last_seq, last_rev",
    "INSERT INTO revisions (thread_id, rev, at, source, by_name, turn_index, thread_turn, tool, \
       action_and_reasoning, panels, summary, restored_from, reverted_turn) \
     SELECT $1, last_rev, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 \
     FROM event_seqs WHERE thread_id = $1 AND $18",
    "INSERT INTO panel_changes (thread_id, panel, rev, whole, data, chain_len, chain_bytes, \
       base_bytes) \
     SELECT $1, $13, s.last_rev, $14, $15, \
       CASE WHEN $14 THEN 0 ELSE COALESCE(p.chain_len, 0) + 1 END, \
       CASE WHEN $14 THEN 0 ELSE COALESCE(p.chain_bytes, 0) + $16 END, \
       CASE WHEN $14 THEN $16 ELSE COALESCE(p.base_bytes, 0) END \
     FROM event_seqs s LEFT JOIN ( \
       SELECT chain_len, chain_bytes, base_bytes FROM panel_changes \
       WHERE thread_id = $1 AND panel = $13 ORDER BY rev DESC LIMIT 1) AS p ON TRUE \
     WHERE s.thread_id = $1 AND $18 AND $13 IS NOT NULL \
     RETURNING chain_len, chain_bytes, base_bytes",
    "INSERT INTO events (thread_id, seq, event, data, created_at) \
     SELECT $1, s.last_seq - $17 + 1 + CAST(j.key AS INTEGER), json_extract(j.value, '$.event'), \
       json_extract(j.value, '$.data'), $21 \
     FROM event_seqs s, json_each($20) AS j WHERE s.thread_id = $1",
    "UPDATE threads SET updated_at = $21 WHERE id = $1 AND $19",
    "UPDATE artifacts SET rev = (SELECT last_rev FROM event_seqs WHERE thread_id = $1) \
     WHERE thread_id = $1 AND $18 AND id IN (SELECT value FROM json_each($22))",
];

/// The change log's data-modifying CTEs, shared by [`POSTGRES`] and [`POSTGRES_STAMPING`].
macro_rules! log_change_ctes {
    () => {
        "\
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
      FROM s, jsonb_array_elements($20::jsonb) WITH ORDINALITY AS x(item, ord))"
    };
}

/// The change log's answer: the counters, and the first record's chain.
macro_rules! log_change_answer {
    () => {
        " SELECT s.last_seq AS a, s.last_rev AS b, p.chain_len AS c, p.chain_bytes AS d, \
          p.base_bytes AS e FROM s LEFT JOIN p ON TRUE"
    };
}

/// See [`SQLITE`] for the parameters (all but `$22`; `$19` is declared but unused, since the
/// agent's lock marked the thread active already).
const POSTGRES: &str = concat!(log_change_ctes!(), log_change_answer!());

/// [`POSTGRES`] for a change that stored artifacts: the same, and the artifacts (`$22`) tagged
/// with the revision. A statement of its own, because an `UPDATE` in the common statement costs
/// every change its setup even when it changes no row (the change log's mean time went from 91
/// to 105 µs under load, `pg_stat_statements`).
const POSTGRES_STAMPING: &str = concat!(
    log_change_ctes!(),
    ", a AS ( \
       UPDATE artifacts SET rev = r.rev FROM r \
       WHERE artifacts.thread_id = $1 \
         AND artifacts.id IN (SELECT CAST(x AS int8) FROM jsonb_array_elements_text($22::jsonb) AS x))",
    log_change_answer!(),
);

/// [`POSTGRES`], prepared on each connection along with the thread's lock
/// ([`Lender::also_preparing`](super::lender::Lender::also_preparing)), so that the change log
/// and `COMMIT` go in one round trip ([`HistoryRepo::log_change_and_commit`]). Its parameter
/// types are those sqlx declares when it binds the same values (checked by a test).
pub(super) const LOG_CHANGE: Named = Named {
    name: "haico_log_change",
    params: "(text, timestamptz, text, text, int8, int8, text, text, text, text, int8, int8, \
             text, bool, text, int8, int8, bool, bool, text, timestamptz)",
    definition: POSTGRES,
};

/// [`POSTGRES_STAMPING`], prepared as [`LOG_CHANGE`] is.
pub(super) const LOG_CHANGE_STAMPING: Named = Named {
    name: "haico_log_change_stamping",
    params: "(text, timestamptz, text, text, int8, int8, text, text, text, text, int8, int8, \
             text, bool, text, int8, int8, bool, bool, text, timestamptz, text)",
    definition: POSTGRES_STAMPING,
};

/// A [`ChangeLog`]'s statement parameters (see [`SQLITE`]), with what is needed to read the
/// answer.
struct Prepared<'a> {
    params: [Value<'a>; 22],
    count: i64,
}

/// The JSON texts the parameters borrow.
struct Texts {
    batch: String,
    panels: Option<String>,
    artifacts: Option<String>,
}

impl<'a> ChangeLog<'a> {
    fn texts(&self) -> Result<Texts, StoreError> {
        Ok(Texts {
            batch: serde_json::to_string(self.events)?,
            panels: self
                .revision
                .map(|(r, _, _)| serde_json::to_string(&r.panels))
                .transpose()?,
            artifacts: (!self.artifacts.is_empty())
                .then(|| serde_json::to_string(self.artifacts))
                .transpose()?,
        })
    }

    fn prepare(
        &self,
        thread_id: &'a ThreadId,
        texts: &'a Texts,
        at: DateTime<Utc>,
    ) -> Prepared<'a> {
        let count = i64::try_from(self.events.len()).unwrap_or(i64::MAX);
        let (revision, revision_at, first) = match self.revision {
            Some((revision, revision_at, first)) => (Some(revision), revision_at, first),
            None => (None, at, None),
        };
        let size = first.map_or(0, |w| i64::try_from(w.data.len()).unwrap_or(i64::MAX));
        Prepared {
            params: params![
                thread_id,
                revision_at,
                revision.map(|r| r.source),
                revision.and_then(|r| r.by),
                revision.and_then(|r| r.turn_index),
                revision.map_or(0, |r| r.thread_turn),
                revision.and_then(|r| r.tool),
                revision.and_then(|r| r.action_and_reasoning),
                texts.panels.as_deref(),
                revision.map(|r| r.summary),
                revision.and_then(|r| r.restored_from),
                revision.and_then(|r| r.reverted_turn),
                first.map(|w| w.panel),
                first.is_some_and(|w| w.whole),
                first.map(|w| w.data),
                size,
                count,
                revision.is_some(),
                self.touch,
                texts.batch.as_str(),
                at,
                texts.artifacts.as_deref(),
            ],
            count,
        }
    }

    /// The PostgreSQL statement for this log, with the parameters it takes: the stamping one
    /// only when the change stored artifacts.
    fn postgres_statement<'p, 'v>(
        &self,
        params: &'p [Value<'v>; 22],
    ) -> (&'static Named, &'p [Value<'v>]) {
        if self.artifacts.is_empty() {
            (&LOG_CHANGE, &params[..21])
        } else {
            (&LOG_CHANGE_STAMPING, &params[..])
        }
    }

    /// Whether the log writes nothing on `backend` (where the touch is the lock's, it is no
    /// reason to send the log).
    fn is_empty_on(&self, backend: Backend) -> bool {
        self.revision.is_none()
            && self.events.is_empty()
            && (!self.touch || backend == Backend::Postgres)
    }

    /// What was logged, from the counters the statement answered.
    fn logged(
        &self,
        count: i64,
        last_seq: i64,
        last_rev: i64,
        chain: Option<Chain>,
    ) -> LoggedChange {
        let first = self.revision.and_then(|(_, _, first)| first);
        let first_seq = last_seq - count + 1;
        LoggedChange {
            rev: self.revision.map(|_| last_rev),
            chain: chain.filter(|_| first.is_some_and(|w| !w.whole)),
            events: self
                .events
                .iter()
                .zip(first_seq..)
                .map(|(event, seq)| StoredEvent {
                    seq,
                    event: event.event.to_string(),
                    data: event.data.clone(),
                })
                .collect(),
        }
    }
}

/// The row [`POSTGRES`] answers: the counters, and the first record's chain.
type PostgresRow = (i64, i64, Option<i64>, Option<i64>, Option<i64>);

fn chain_of(len: Option<i64>, bytes: Option<i64>, base: Option<i64>) -> Option<Chain> {
    match (len, bytes, base) {
        (Some(len), Some(bytes), Some(base)) => Some(Chain { len, bytes, base }),
        _ => None,
    }
}

impl HistoryRepo<'_> {
    /// Writes `log` and commits the transaction, in **one round trip** when this is an agent's
    /// write on PostgreSQL (whose connection holds [`LOG_CHANGE`] prepared): `EXECUTE` and
    /// `COMMIT` in one simple query. Returns `None`, having sent nothing, anywhere else; the
    /// caller then logs with [`log_change`](Self::log_change) and commits as usual. (Nor for an
    /// empty log, which writes nothing.)
    ///
    /// After it the transaction is over: statements sent later run each in its own
    /// transaction, and [`Transaction::commit`] sends nothing.
    pub async fn log_change_and_commit(
        &mut self,
        thread_id: &ThreadId,
        log: ChangeLog<'_>,
    ) -> Result<Option<LoggedChange>, StoreError> {
        let Tx::Postgres(lent) = &mut self.tx else {
            return Ok(None);
        };
        if log.is_empty_on(Backend::Postgres) || !lent.can_execute_and_commit() {
            return Ok(None);
        }
        let texts = log.texts()?;
        let prepared = log.prepare(thread_id, &texts, now());
        let (statement, params) = log.postgres_statement(&prepared.params);
        let rows = lent
            .execute_and_commit(statement, params)
            .await
            .map_err(|source| StoreError::Database {
                context: "logging a change and committing",
                source: source.into(),
            })?;
        let row = rows.first().ok_or_else(missing_counter)?;
        let (last_seq, last_rev, len, bytes, base): PostgresRow = RowShape::from_postgres(row)
            .map_err(|source| StoreError::Database {
                context: "logging a change and committing",
                source: source.into(),
            })?;
        Ok(Some(log.logged(
            prepared.count,
            last_seq,
            last_rev,
            chain_of(len, bytes, base),
        )))
    }

    /// Writes `log` for the thread in this transaction, in one round trip.
    pub async fn log_change(
        &mut self,
        thread_id: &ThreadId,
        log: ChangeLog<'_>,
    ) -> Result<LoggedChange, StoreError> {
        if log.is_empty_on(self.backend()) {
            return Ok(LoggedChange::default());
        }
        let texts = log.texts()?;
        let Prepared { params, count } = log.prepare(thread_id, &texts, now());
        let (last_seq, last_rev, chain) = match self.backend() {
            Backend::Sqlite => {
                // On SQLite's writer these run inline, so six statements cost no more hops
                // than one.
                let [counter, revision_row, record, events, touch, stamp] = SQLITE;
                let (last_seq, last_rev): (i64, i64) = self
                    .fetch_optional(counter, &params)
                    .await
                    .context("logging a change")?
                    .ok_or_else(missing_counter)?;
                self.execute(revision_row, &params)
                    .await
                    .context("logging a change")?;
                let chain: Option<(i64, i64, i64)> = self
                    .fetch_optional(record, &params)
                    .await
                    .context("logging a change")?;
                self.execute(events, &params)
                    .await
                    .context("logging a change")?;
                self.execute(touch, &params)
                    .await
                    .context("logging a change")?;
                if texts.artifacts.is_some() {
                    self.execute(stamp, &params)
                        .await
                        .context("tagging artifacts with their revision")?;
                }
                let chain = chain.map(|(len, bytes, base)| Chain { len, bytes, base });
                (last_seq, last_rev, chain)
            }
            Backend::Postgres => {
                let (statement, params) = log.postgres_statement(&params);
                let (last_seq, last_rev, len, bytes, base): PostgresRow = self
                    .fetch_one(statement.definition, params)
                    .await
                    .context("logging a change")?;
                (last_seq, last_rev, chain_of(len, bytes, base))
            }
        };
        Ok(log.logged(count, last_seq, last_rev, chain))
    }
}

fn missing_counter() -> StoreError {
    StoreError::Database {
        context: "logging a change: the thread's counter row did not answer",
        source: crate::error::DriverError::NoRow,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The types `PREPARE` declares are the ones the parameters carry (what sqlx declares when
    /// it binds them), so the one-trip commit and the bound statement read the same values.
    #[test]
    fn the_prepared_types_are_the_parameters_types() {
        let thread = ThreadId::parse("t").unwrap();
        let events = [NewEvent {
            event: "workspace",
            data: "{}".to_string(),
        }];
        let log = ChangeLog {
            revision: None,
            events: &events,
            touch: true,
            artifacts: &[3, 5],
        };
        let texts = log.texts().unwrap();
        let prepared = log.prepare(&thread, &texts, now());
        let declared = |named: &Named| {
            named
                .params
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        let (statement, params) = log.postgres_statement(&prepared.params);
        assert_eq!(statement.name, LOG_CHANGE_STAMPING.name);
        assert_eq!(super::super::literal::types(params), declared(statement));
        let plain = ChangeLog {
            artifacts: &[],
            ..log
        };
        let (statement, params) = plain.postgres_statement(&prepared.params);
        assert_eq!(statement.name, LOG_CHANGE.name);
        assert_eq!(super::super::literal::types(params), declared(statement));
    }
}
