//! Calls waiting for a person's approval (`pending_approvals`): the request as JSON (opaque
//! here), and the decision once an editor made it. The waiting turn writes and deletes its
//! row; any process lists and decides. A row counts only while its turn is running, so a
//! replica that died mid-wait leaves nothing anyone can list or decide.

use crate::thread_id::ThreadId;
use crate::{
    error::Context, error::StoreError, query::params, repository::now, repository::repository,
};

/// "Its turn still runs", for `pending_approvals AS p`.
const TURN_RUNS: &str = "EXISTS (SELECT 1 FROM turns WHERE turns.thread_id = p.thread_id \
     AND turns.turn_index = p.turn_index AND turns.status = 'running')";

repository!(
    /// Calls waiting for a person's approval, and the decisions made on them.
    ApprovalsRepo,
    approvals
);

impl ApprovalsRepo<'_> {
    /// Records the call `call_id` of turn `turn_index` as waiting (`request`: its JSON). Rows
    /// of the thread's turns that ended without forgetting theirs (their replica died) go.
    pub async fn insert_approval(
        &mut self,
        thread_id: &ThreadId,
        call_id: &str,
        turn_index: i64,
        request: &str,
    ) -> Result<(), StoreError> {
        let stale = format!(
            "DELETE FROM pending_approvals AS p WHERE p.thread_id = $1 AND p.turn_index <> $2 \
             AND NOT {TURN_RUNS}"
        );
        self.execute(&stale, &params![thread_id.as_str(), turn_index])
            .await
            .context("forgetting calls of ended turns")?;
        self.execute(
            "INSERT INTO pending_approvals (thread_id, call_id, turn_index, request, created_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (thread_id, call_id) DO UPDATE SET \
             turn_index = excluded.turn_index, request = excluded.request, decision = NULL, \
             created_at = excluded.created_at",
            &params![thread_id.as_str(), call_id, turn_index, request, now()],
        )
        .await
        .map(|_| ())
        .context("recording a call waiting for approval")
    }

    /// Records an editor's decision on a waiting call; `false` when no such call waits (unknown,
    /// decided already, its wait over, or its turn no longer running).
    pub async fn decide_approval(
        &mut self,
        thread_id: &ThreadId,
        call_id: &str,
        approve: bool,
    ) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE pending_approvals AS p SET decision = $3 WHERE p.thread_id = $1 \
             AND p.call_id = $2 AND p.decision IS NULL AND {TURN_RUNS}"
        );
        let decided = self
            .execute(
                &sql,
                &params![thread_id.as_str(), call_id, i64::from(approve)],
            )
            .await
            .context("deciding a call waiting for approval")?;
        Ok(decided > 0)
    }

    /// The decision on `call_id`, once made (`None` while it waits or when there is no row).
    pub async fn approval_decision(
        &mut self,
        thread_id: &ThreadId,
        call_id: &str,
    ) -> Result<Option<bool>, StoreError> {
        let row: Option<(Option<i64>,)> = self
            .fetch_optional(
                "SELECT decision FROM pending_approvals WHERE thread_id = $1 AND call_id = $2",
                &params![thread_id.as_str(), call_id],
            )
            .await
            .context("reading a decision on a call")?;
        Ok(row.and_then(|(decision,)| decision).map(|d| d != 0))
    }

    /// Forgets `call_id` (its wait is over, however it ended).
    pub async fn delete_approval(
        &mut self,
        thread_id: &ThreadId,
        call_id: &str,
    ) -> Result<(), StoreError> {
        self.execute(
            "DELETE FROM pending_approvals WHERE thread_id = $1 AND call_id = $2",
            &params![thread_id.as_str(), call_id],
        )
        .await
        .map(|_| ())
        .context("forgetting a call that waited for approval")
    }

    /// The requests (as recorded) of the thread's calls still waiting, oldest turn and call
    /// first.
    pub async fn waiting_approvals(
        &mut self,
        thread_id: &ThreadId,
    ) -> Result<Vec<String>, StoreError> {
        let sql = format!(
            "SELECT p.request FROM pending_approvals AS p WHERE p.thread_id = $1 \
             AND p.decision IS NULL AND {TURN_RUNS} \
             ORDER BY p.turn_index, length(p.call_id), p.call_id"
        );
        let rows: Vec<(String,)> = self
            .fetch_all(&sql, &params![thread_id.as_str()])
            .await
            .context("listing the calls waiting for approval")?;
        Ok(rows.into_iter().map(|(request,)| request).collect())
    }
}
