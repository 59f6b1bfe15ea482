//! Calls of other MCP servers waiting for a person's approval, as the database keeps them
//! (SPEC §13): the turn that waits records its request and reads the decision; any process
//! (any replica on PostgreSQL) lists the requests and records a decision. None of this is a
//! change of the workspace: nothing is announced or made a revision here (the turn announces
//! its `approval` events itself).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{workspace::error::WorkspaceError, workspace::service::Workspaces};
use haico_store::ThreadId;

/// One call waiting for approval, as the `approval` event and `GET …/approvals` show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ApprovalRequest {
    /// Names the call in `POST …/approvals/{call_id}`: unique in its thread.
    pub call_id: String,
    /// The tool's full name, `<server>__<tool>`.
    pub tool: String,
    /// The arguments the call would be made with (the agent's reason stripped).
    #[schema(value_type = Object)]
    pub arguments: Value,
    /// The agent's sentence saying what the call is for.
    pub action_and_reasoning: String,
    /// The turn that asks.
    pub turn_index: i64,
}

impl Workspaces {
    /// Records `request` as waiting on `thread`.
    pub async fn record_approval(
        &self,
        thread: &ThreadId,
        request: &ApprovalRequest,
    ) -> Result<(), WorkspaceError> {
        let json = serde_json::to_string(request)
            .map_err(|err| WorkspaceError::Store(haico_store::StoreError::from(err)))?;
        let mut repo = self.db.begin_write().await?;
        match repo
            .approvals()
            .insert_approval(thread, &request.call_id, request.turn_index, &json)
            .await
        {
            Ok(()) => Ok(repo.commit().await.map(|_| ())?),
            Err(err) => {
                let _ = repo.rollback().await;
                Err(err.into())
            }
        }
    }

    /// Records an editor's decision; `false` when no such call waits on `thread`.
    pub async fn decide_approval(
        &self,
        thread: &ThreadId,
        call_id: &str,
        approve: bool,
    ) -> Result<bool, WorkspaceError> {
        let mut repo = self.db.begin_write().await?;
        match repo
            .approvals()
            .decide_approval(thread, call_id, approve)
            .await
        {
            Ok(decided) => {
                repo.commit().await?;
                Ok(decided)
            }
            Err(err) => {
                let _ = repo.rollback().await;
                Err(err.into())
            }
        }
    }

    /// The decision on `call_id`, once an editor made it.
    pub async fn approval_decision(
        &self,
        thread: &ThreadId,
        call_id: &str,
    ) -> Result<Option<bool>, WorkspaceError> {
        let mut repo = self.db.begin_read().await?;
        let decision = repo.approvals().approval_decision(thread, call_id).await;
        let _ = repo.rollback().await;
        Ok(decision?)
    }

    /// Forgets `call_id` once its wait is over.
    pub async fn forget_approval(
        &self,
        thread: &ThreadId,
        call_id: &str,
    ) -> Result<(), WorkspaceError> {
        let mut repo = self.db.begin_write().await?;
        match repo.approvals().delete_approval(thread, call_id).await {
            Ok(()) => Ok(repo.commit().await.map(|_| ())?),
            Err(err) => {
                let _ = repo.rollback().await;
                Err(err.into())
            }
        }
    }

    /// The calls waiting on `thread`, whichever process runs its turn; oldest first.
    pub async fn waiting_approvals(
        &self,
        thread: &ThreadId,
    ) -> Result<Vec<ApprovalRequest>, WorkspaceError> {
        let mut repo = self.db.begin_read().await?;
        let rows = repo.approvals().waiting_approvals(thread).await;
        let _ = repo.rollback().await;
        Ok(rows?
            .iter()
            .filter_map(|json| serde_json::from_str(json).ok())
            .collect())
    }
}
