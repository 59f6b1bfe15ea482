//! The history of each thread's workspace: numbered revisions and, per revision, what each
//! changed panel became.
//!
//! A revision row says who changed what and why; a `panel_changes` row per changed panel holds
//! either the panel's whole state (`full`) or the operations from the previous revision's
//! state ([`super::journal`]). Each row carries the length and size of the chain of
//! operations since the last whole state, so the writer can tell when it is time to store the
//! whole state again (which bounds how many rows a read replays) without reading the chain.
//! Revision numbers come from the thread's counter row (`event_seqs.last_rev`), taken at
//! commit time, so they follow commit order like the event numbers.

use chrono::{DateTime, Utc};

use super::repository::repository;
use crate::panels::{Panel, PanelSet};
use crate::thread_id::ThreadId;
use crate::{
    error::Context, error::StoreError, models::ArtifactSummary, query::params, query::row_shape,
    repository::Backend, repository::now,
};

/// A revision to record.
#[derive(Debug, Clone, Copy)]
pub struct NewRevision<'a> {
    /// `agent` or `user`.
    pub source: &'a str,
    /// Who made it, when known.
    pub by: Option<&'a str>,
    /// The agent turn it belongs to, for a tool call made in a turn.
    pub turn_index: Option<i64>,
    /// The thread's turn counter when it was made.
    pub thread_turn: i64,
    /// The tool that made it.
    pub tool: Option<&'a str>,
    /// The agent's sentence on why.
    pub action_and_reasoning: Option<&'a str>,
    /// The panels it changed.
    pub panels: PanelSet,
    /// One line on what changed.
    pub summary: &'a str,
    /// The revision a restore went back to.
    pub restored_from: Option<i64>,
    /// The turn a revert undid.
    pub reverted_turn: Option<i64>,
}

/// A revision as stored and listed.
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    /// Its number in the thread, from 1.
    pub rev: i64,
    /// When it was committed.
    pub at: DateTime<Utc>,
    /// `agent` (a tool call: the agent, the tools endpoint, MCP) or `user` (a person's edit, a
    /// restore, a revert, a fork).
    pub source: String,
    /// Who made it, when known.
    pub by: Option<String>,
    /// The agent turn it was made in.
    pub turn_index: Option<i64>,
    /// The tool that made it.
    pub tool: Option<String>,
    /// The agent's sentence on what it did and why.
    pub action_and_reasoning: Option<String>,
    /// The panels it changed.
    pub panels: PanelSet,
    /// What changed, in one line.
    pub summary: String,
    /// For a restore: the revision it went back to.
    pub restored_from: Option<i64>,
    /// For an undone turn: that turn.
    pub reverted_turn: Option<i64>,
    /// The thread's turn counter when it was made (which turns a fork from here keeps).
    pub thread_turn: i64,
}

#[derive(sqlx::FromRow)]
struct RevisionRow {
    rev: i64,
    at: DateTime<Utc>,
    source: String,
    by_name: Option<String>,
    turn_index: Option<i64>,
    thread_turn: i64,
    tool: Option<String>,
    action_and_reasoning: Option<String>,
    panels: String,
    summary: String,
    restored_from: Option<i64>,
    reverted_turn: Option<i64>,
}

row_shape!(RevisionRow as REVISION_COLUMNS {
    rev: i64,
    at: DateTime<Utc>,
    source: String,
    by_name: Option<String>,
    turn_index: Option<i64>,
    thread_turn: i64,
    tool: Option<String>,
    action_and_reasoning: Option<String>,
    panels: String,
    summary: String,
    restored_from: Option<i64>,
    reverted_turn: Option<i64>,
} => RevisionRow {
    rev,
    at,
    source,
    by_name,
    turn_index,
    thread_turn,
    tool,
    action_and_reasoning,
    panels,
    summary,
    restored_from,
    reverted_turn,
});

impl TryFrom<RevisionRow> for Revision {
    type Error = StoreError;

    fn try_from(row: RevisionRow) -> Result<Self, StoreError> {
        Ok(Revision {
            rev: row.rev,
            at: row.at,
            source: row.source,
            by: row.by_name,
            turn_index: row.turn_index,
            tool: row.tool,
            action_and_reasoning: row.action_and_reasoning,
            panels: stored_panels(&row.panels)?,
            summary: row.summary,
            restored_from: row.restored_from,
            reverted_turn: row.reverted_turn,
            thread_turn: row.thread_turn,
        })
    }
}

/// The panels a revision row names (a JSON list of names, as [`PanelSet`] writes it). Every
/// writer writes a `PanelSet`, so a name no panel has cannot occur; one would be left out.
fn stored_panels(json: &str) -> Result<PanelSet, StoreError> {
    let names: Vec<&str> = serde_json::from_str(json)?;
    Ok(names.into_iter().filter_map(Panel::parse).collect())
}

/// One stored state or step of a panel's history.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PanelRecord {
    /// The revision it belongs to.
    pub rev: i64,
    /// Whether `data` is the whole state (else operations on the previous state).
    pub whole: bool,
    /// The state or the operations, as JSON.
    pub data: String,
}

/// Where a panel's chain of operations stands after a record: how many operations and bytes
/// since its last whole state, and how big that state was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::FromRow)]
pub struct Chain {
    /// Records since the last whole state.
    pub len: i64,
    /// Bytes of those records.
    pub bytes: i64,
    /// Bytes of the last whole state.
    pub base: i64,
}

row_shape!(PanelRecord { rev: i64, whole: bool, data: String } => PanelRecord { rev, whole, data });

row_shape!(Chain { len: i64, bytes: i64, base: i64 } => Chain { len, bytes, base });

/// A panel's record to store with its revision: its whole state, or operations on the
/// previous state.
#[derive(Debug, Clone, Copy)]
pub struct PanelWrite<'a> {
    /// `objective`, `document`, `plan` or `preferences`.
    pub panel: &'a str,
    /// Whether `data` is the whole state.
    pub whole: bool,
    /// The state or the operations, as JSON.
    pub data: &'a str,
}

repository!(
    /// Revisions and panel records; the commit's change log (`change_log.rs`).
    HistoryRepo,
    history
);

impl HistoryRepo<'_> {
    /// The thread's latest revision (0 before its first change).
    pub async fn last_revision(&mut self, thread_id: &ThreadId) -> Result<i64, StoreError> {
        let row: Option<(i64,)> = self
            .fetch_optional(
                "SELECT last_rev FROM event_seqs WHERE thread_id = $1",
                &params![thread_id],
            )
            .await
            .context("reading the revision counter")?;
        Ok(row.map_or(0, |(rev,)| rev))
    }

    /// Stores a revision row.
    pub async fn insert_revision(
        &mut self,
        thread_id: &ThreadId,
        rev: i64,
        at: DateTime<Utc>,
        revision: &NewRevision<'_>,
    ) -> Result<(), StoreError> {
        let panels = serde_json::to_string(&revision.panels)?;
        self.execute(
            "INSERT INTO revisions (thread_id, rev, at, source, by_name, turn_index, \
                 thread_turn, tool, action_and_reasoning, panels, summary, restored_from, \
                 reverted_turn) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
            &params![
                thread_id,
                rev,
                at,
                revision.source,
                revision.by,
                revision.turn_index,
                revision.thread_turn,
                revision.tool,
                revision.action_and_reasoning,
                &panels,
                revision.summary,
                revision.restored_from,
                revision.reverted_turn
            ],
        )
        .await
        .context("recording a revision")?;
        Ok(())
    }

    /// Stores a panel's operations for `rev`, extending its chain; returns where the chain
    /// stands now.
    pub async fn record_panel_ops(
        &mut self,
        thread_id: &ThreadId,
        panel: &str,
        rev: i64,
        data: &str,
    ) -> Result<Chain, StoreError> {
        let size = i64::try_from(data.len()).unwrap_or(i64::MAX);
        let chain: Chain = self
            .fetch_one(
                "INSERT INTO panel_changes (thread_id, panel, rev, whole, data, chain_len, \
                 chain_bytes, base_bytes) \
                 SELECT $1, $2, $3, FALSE, $4, COALESCE(p.chain_len, 0) + 1, \
                        COALESCE(p.chain_bytes, 0) + $5, COALESCE(p.base_bytes, 0) \
                 FROM (SELECT 1 AS one) AS o LEFT JOIN ( \
                     SELECT chain_len, chain_bytes, base_bytes FROM panel_changes \
                     WHERE thread_id = $1 AND panel = $2 ORDER BY rev DESC LIMIT 1) AS p ON TRUE \
                 RETURNING chain_len AS len, chain_bytes AS bytes, base_bytes AS base",
                &params![thread_id, panel, rev, data, size],
            )
            .await
            .context("recording a panel's change")?;
        Ok(chain)
    }

    /// Stores (or turns the record of `rev` into) the panel's whole state.
    pub async fn record_panel_state(
        &mut self,
        thread_id: &ThreadId,
        panel: &str,
        rev: i64,
        data: &str,
    ) -> Result<(), StoreError> {
        self.write_panel_state(thread_id, panel, rev, data, false)
            .await
            .map(|_| ())
    }

    /// [`record_panel_state`](Self::record_panel_state), only while `rev` is the panel's
    /// latest record; returns whether it wrote. For a whole state read after the change of
    /// `rev` committed: a later change committed before the read is seen here, and nothing
    /// is written.
    pub async fn record_panel_state_if_latest(
        &mut self,
        thread_id: &ThreadId,
        panel: &str,
        rev: i64,
        data: &str,
    ) -> Result<bool, StoreError> {
        self.write_panel_state(thread_id, panel, rev, data, true)
            .await
    }

    async fn write_panel_state(
        &mut self,
        thread_id: &ThreadId,
        panel: &str,
        rev: i64,
        data: &str,
        only_if_latest: bool,
    ) -> Result<bool, StoreError> {
        let size = i64::try_from(data.len()).unwrap_or(i64::MAX);
        let written = self
            .execute(
                "INSERT INTO panel_changes (thread_id, panel, rev, whole, data, chain_len, \
                     chain_bytes, base_bytes) SELECT $1, $2, $3, TRUE, $4, 0, 0, $5 \
                 WHERE NOT $6 OR NOT EXISTS (SELECT 1 FROM panel_changes WHERE thread_id = $1 \
                     AND panel = $2 AND rev > $3) \
                 ON CONFLICT (thread_id, panel, rev) DO UPDATE SET whole = TRUE, \
                     data = excluded.data, chain_len = 0, chain_bytes = 0, \
                     base_bytes = excluded.base_bytes",
                &params![thread_id, panel, rev, data, size, only_if_latest],
            )
            .await
            .context("recording a panel's state")?;
        Ok(written > 0)
    }

    /// What a panel's state at `rev` is made from: its last whole state at or before `rev`
    /// (if any) and every record after it up to `rev`, oldest first.
    pub async fn panel_records(
        &mut self,
        thread_id: &ThreadId,
        panel: &str,
        rev: i64,
    ) -> Result<Vec<PanelRecord>, StoreError> {
        self.fetch_all(
            "SELECT rev, whole, data FROM panel_changes \
                 WHERE thread_id = $1 AND panel = $2 AND rev <= $3 AND rev >= COALESCE( \
                     (SELECT MAX(rev) FROM panel_changes \
                      WHERE thread_id = $1 AND panel = $2 AND rev <= $3 AND whole), 0) \
                 ORDER BY rev",
            &params![thread_id, panel, rev],
        )
        .await
        .context("reading a panel's history")
    }

    /// Revisions older than `before` (all when `None`), newest first, at most `limit`.
    pub async fn revisions(
        &mut self,
        thread_id: &ThreadId,
        before: Option<i64>,
        limit: i64,
    ) -> Result<Vec<Revision>, StoreError> {
        let sql = format!(
            "SELECT {REVISION_COLUMNS} FROM revisions WHERE thread_id = $1 AND rev < $2 \
             ORDER BY rev DESC LIMIT $3"
        );
        let rows: Vec<RevisionRow> = self
            .fetch_all(&sql, &params![thread_id, before.unwrap_or(i64::MAX), limit])
            .await
            .context("listing revisions")?;
        rows.into_iter().map(Revision::try_from).collect()
    }

    /// Revisions from `from` to `to` (inclusive), oldest first.
    pub async fn revisions_between(
        &mut self,
        thread_id: &ThreadId,
        from: i64,
        to: i64,
    ) -> Result<Vec<Revision>, StoreError> {
        let sql = format!(
            "SELECT {REVISION_COLUMNS} FROM revisions WHERE thread_id = $1 AND rev >= $2 \
             AND rev <= $3 ORDER BY rev"
        );
        let rows: Vec<RevisionRow> = self
            .fetch_all(&sql, &params![thread_id, from, to])
            .await
            .context("reading revisions")?;
        rows.into_iter().map(Revision::try_from).collect()
    }

    /// The revisions an agent turn made, oldest first.
    pub async fn revisions_of_turn(
        &mut self,
        thread_id: &ThreadId,
        turn_index: i64,
    ) -> Result<Vec<Revision>, StoreError> {
        let sql = format!(
            "SELECT {REVISION_COLUMNS} FROM revisions WHERE thread_id = $1 AND turn_index = $2 \
             ORDER BY rev"
        );
        let rows: Vec<RevisionRow> = self
            .fetch_all(&sql, &params![thread_id, turn_index])
            .await
            .context("reading a turn's revisions")?;
        rows.into_iter().map(Revision::try_from).collect()
    }

    /// The restores and undone turns made while the thread's turn counter was at least
    /// `thread_turn`, oldest first.
    pub async fn rewrites_since(
        &mut self,
        thread_id: &ThreadId,
        thread_turn: i64,
    ) -> Result<Vec<Revision>, StoreError> {
        let sql = format!(
            "SELECT {REVISION_COLUMNS} FROM revisions WHERE thread_id = $1 AND thread_turn >= $2 \
             AND (restored_from IS NOT NULL OR reverted_turn IS NOT NULL) ORDER BY rev"
        );
        let rows: Vec<RevisionRow> = self
            .fetch_all(&sql, &params![thread_id, thread_turn])
            .await
            .context("reading restores")?;
        rows.into_iter().map(Revision::try_from).collect()
    }

    /// The thread's artifacts as they stood at `rev`, newest first.
    pub async fn artifacts_at(
        &mut self,
        thread_id: &ThreadId,
        rev: i64,
    ) -> Result<Vec<ArtifactSummary>, StoreError> {
        self.fetch_all(
            "SELECT id, artifact_type, title, turn_index, created_at FROM artifacts \
                 WHERE thread_id = $1 AND rev <= $2 ORDER BY id DESC",
            &params![thread_id, rev],
        )
        .await
        .context("listing artifacts as they were")
    }

    /// Bytes the thread's history takes in its own tables (revision rows and panel records),
    /// for the storage benchmark.
    pub async fn history_bytes(&mut self, thread_id: &ThreadId) -> Result<i64, StoreError> {
        let sql = match self.backend() {
            Backend::Sqlite => {
                "SELECT CAST(COALESCE((SELECT SUM(length(CAST(data AS BLOB))) FROM panel_changes \
                 WHERE thread_id = $1), 0) + COALESCE((SELECT SUM(length(CAST(summary AS BLOB)) \
                 + length(CAST(panels AS BLOB)) + 64) FROM revisions WHERE thread_id = $1), 0) \
                 AS BIGINT)"
            }
            Backend::Postgres => {
                "SELECT (COALESCE((SELECT SUM(pg_column_size(p.*)) FROM panel_changes p \
                 WHERE thread_id = $1), 0) + COALESCE((SELECT SUM(pg_column_size(r.*)) \
                 FROM revisions r WHERE thread_id = $1), 0))::bigint"
            }
        };
        let (bytes,): (Option<i64>,) = self
            .fetch_one(sql, &params![thread_id])
            .await
            .context("measuring the history")?;
        Ok(bytes.unwrap_or(0))
    }
}

/// The time revisions are stamped with.
pub fn revision_time() -> DateTime<Utc> {
    now()
}
