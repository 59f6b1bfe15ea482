//! The conversation beside the workspace: turns, their messages and their tool calls, each
//! written and announced through the same commit path as a workspace change.
//!
//! One turn runs per thread at a time, whichever process runs it: opening a turn inserts a
//! `running` row that a unique index allows once per thread.

use crate::{
    workspace::announce::Source, workspace::announce::done_event, workspace::announce::error_event,
    workspace::announce::message_event, workspace::announce::token_data,
    workspace::announce::tool_call_event, workspace::announce::turn_event,
    workspace::edit::Committed, workspace::edit::Edit, workspace::error::WorkspaceError,
    workspace::revision::ChangeNote, workspace::rules::char_count, workspace::rules::scrub_nul,
    workspace::rules::scrub_nul_value, workspace::service::Workspaces,
};
use haico_store::{
    ExpiredTurn, HeldTurn, NewToolCall, StoreError, StoredTurn, ThreadId, TurnLease, TurnStatus,
    usage::TurnUsage,
};

/// The longest user message accepted, in characters.
pub const MAX_MESSAGE_CHARS: usize = 32_000;

/// A turn that has been opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnOpened {
    /// Its index in the thread, from 1.
    pub turn_index: i64,
    /// The sequence number of its `turn` event: a subscription after `first_seq - 1` sees it
    /// all.
    pub first_seq: i64,
}

/// How a turn ended, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnEnd<'a> {
    /// Completed, failed or cancelled.
    pub status: TurnStatus,
    /// The agent's answer, when it gave one.
    pub message: Option<&'a str>,
    /// Why it did not complete.
    pub error: Option<&'a str>,
    /// What its model calls cost.
    pub usage: Option<&'a TurnUsage>,
}

/// A user message as the agent takes it: trimmed, not empty, within [`MAX_MESSAGE_CHARS`].
pub fn checked_message(message: &str) -> Result<&str, WorkspaceError> {
    let message = message.trim();
    if message.is_empty() {
        return Err(WorkspaceError::invalid("the message is empty"));
    }
    super::rules::check_no_nul(message, "message")?;
    let chars = char_count(message);
    if chars > MAX_MESSAGE_CHARS {
        return Err(WorkspaceError::invalid(format!(
            "the message is {chars} characters long; the limit is {MAX_MESSAGE_CHARS}"
        )));
    }
    Ok(message)
}

impl Edit {
    /// Records a tool call of a turn and queues its `step` event, ahead of the change's own
    /// events. What the model made up (a tool name, malformed arguments) is kept with its NUL
    /// characters scrubbed.
    pub async fn record_tool_call(&mut self, call: NewToolCall<'_>) -> Result<(), WorkspaceError> {
        let thread = self.thread_id();
        let tool = scrub_nul(call.tool);
        let arguments = scrub_nul_value(call.arguments);
        let action_and_reasoning = call.action_and_reasoning.map(scrub_nul);
        let result = scrub_nul_value(call.result);
        let call = NewToolCall {
            tool: &tool,
            arguments: &arguments,
            action_and_reasoning: action_and_reasoning.as_deref(),
            result: &result,
            ..call
        };
        self.repo().turns().add_tool_call(&thread, call).await?;
        self.announce(tool_call_event(
            call.tool,
            call.action_and_reasoning,
            call.arguments,
            call.result,
            call.turn_index,
            call.duration_ms,
        ));
        Ok(())
    }
}

impl Workspaces {
    /// Opens the thread's next turn: records the user's message and announces the turn.
    pub async fn open_turn(
        &self,
        thread: &ThreadId,
        message: &str,
        lease: TurnLease<'_>,
    ) -> Result<TurnOpened, WorkspaceError> {
        let message = checked_message(message)?;
        let by = self.by();
        let mut edit = self.edit_unchecked(thread, Source::User).await?;
        let opened = async {
            let thread_id = edit.thread_id();
            let turn_index = match edit.repo().turns().open_turn(&thread_id, lease).await {
                Ok(Some(turn)) => turn,
                Ok(None) => return Err(WorkspaceError::UnknownThread(thread_id.to_string())),
                Err(StoreError::AlreadyExists(_)) => return Err(WorkspaceError::Busy),
                Err(err) => return Err(err.into()),
            };
            edit.repo()
                .turns()
                .add_message(&thread_id, turn_index, "user", message, by.as_deref())
                .await?;
            edit.announce(turn_event(turn_index));
            Ok(turn_index)
        }
        .await;
        let (turn_index, committed) = edit
            .end(opened, |_| ChangeNote::user("opened a turn"))
            .await??;
        Ok(TurnOpened {
            turn_index,
            first_seq: committed.first_seq().unwrap_or(0),
        })
    }

    /// Records how a turn ended (the answer, if any) and announces `message` or `error`, then
    /// `done`. `None` when the turn no longer ran (another replica ended it when its lease ran
    /// out): nothing is recorded then, not even the answer, because the thread has moved on.
    pub async fn close_turn(
        &self,
        thread: &ThreadId,
        turn_index: i64,
        end: TurnEnd<'_>,
    ) -> Result<Option<Committed>, WorkspaceError> {
        let mut edit = self.edit_unchecked(thread, Source::Agent).await?;
        let closed = async {
            let thread_id = edit.thread_id();
            // A model's text is kept as a record even with a NUL in it, scrubbed.
            let message = end.message.map(scrub_nul);
            let error = end.error.map(scrub_nul);
            if let Some(text) = message.as_deref() {
                edit.repo()
                    .turns()
                    .add_message(&thread_id, turn_index, "assistant", text, None)
                    .await?;
                edit.announce(message_event(text, turn_index));
            }
            if let Some(reason) = error.as_deref() {
                edit.announce(error_event(reason, turn_index));
            }
            let still_running = edit
                .repo()
                .turns()
                .close_turn(
                    &thread_id,
                    turn_index,
                    end.status,
                    error.as_deref(),
                    end.usage,
                )
                .await?;
            edit.announce(done_event(turn_index, end.status.as_str(), end.usage));
            Ok::<bool, WorkspaceError>(still_running)
        }
        .await;
        commit_if(edit, closed).await
    }

    /// Ends a running turn whose lease ran out before `now_ms` as `failed`, announcing
    /// `reason` as its `error` and then `done`; its tool calls stay. `None` when the turn had
    /// ended or was renewed meanwhile, or another replica ended it first.
    pub async fn expire_turn(
        &self,
        thread: &ThreadId,
        turn_index: i64,
        now_ms: i64,
        reason: &str,
    ) -> Result<Option<Committed>, WorkspaceError> {
        let mut edit = self.edit_unchecked(thread, Source::Agent).await?;
        let expired = async {
            let thread_id = edit.thread_id();
            let expired = edit
                .repo()
                .leases()
                .expire_turn(&thread_id, turn_index, now_ms, reason)
                .await?;
            if expired {
                edit.announce(error_event(reason, turn_index));
                edit.announce(done_event(turn_index, TurnStatus::Failed.as_str(), None));
            }
            Ok::<bool, WorkspaceError>(expired)
        }
        .await;
        commit_if(edit, expired).await
    }

    /// Extends the leases of the turns `owner` runs to `until_ms`; returns them.
    pub async fn renew_leases(
        &self,
        owner: &str,
        until_ms: i64,
    ) -> Result<Vec<HeldTurn>, WorkspaceError> {
        let mut repo = self.db.begin_write().await?;
        let held = repo.leases().renew_leases(owner, until_ms).await;
        settle_write(repo, held).await
    }

    /// Running turns whose lease ran out before `now_ms`, at most `limit`.
    pub async fn expired_turns(
        &self,
        now_ms: i64,
        limit: i64,
    ) -> Result<Vec<ExpiredTurn>, WorkspaceError> {
        let mut repo = self.db.begin_read().await?;
        let found = repo.leases().expired_turns(now_ms, limit).await;
        let _ = repo.rollback().await;
        Ok(found?)
    }

    /// The running turns `owner` holds.
    pub async fn turns_of(&self, owner: &str) -> Result<Vec<ExpiredTurn>, WorkspaceError> {
        let mut repo = self.db.begin_read().await?;
        let found = repo.leases().turns_of(owner).await;
        let _ = repo.rollback().await;
        Ok(found?)
    }

    /// Asks the thread's running turn to stop, wherever it runs: recorded, so its owner sees
    /// it at its next lease renewal even if the doorbell is lost. Returns the turn and its
    /// owner, or `None` when no turn runs (a thread that does not exist is an error).
    pub async fn request_cancel(
        &self,
        thread: &ThreadId,
    ) -> Result<Option<(i64, Option<String>)>, WorkspaceError> {
        let mut repo = self.db.begin_write().await?;
        let found = repo.leases().request_cancel(thread).await;
        let found = settle_write(repo, found).await?;
        if found.is_none() {
            // A 404 for a thread that does not exist.
            self.threads().get(thread).await?;
        }
        Ok(found)
    }

    /// Announces a piece of the agent's answer as it streams: a transient `token` event,
    /// published to the thread's subscribers and never stored (the whole answer is recorded
    /// when the turn closes). Like the answer, it is shown with its NUL characters scrubbed.
    pub fn announce_token(&self, thread: &ThreadId, text: &str) {
        let text = scrub_nul(text);
        self.bus.publish(
            thread.as_str(),
            vec![std::sync::Arc::new(crate::events::LiveEvent::transient(
                "token",
                token_data(&text),
            ))],
        );
    }

    /// Announces an `approval` event (SPEC §13): a call waiting for the person's decision, or
    /// how it was decided. Transient like `token`: what waits is in the turn's memory, and
    /// `GET …/approvals` lists it for a client that connects later; the call's own `step`
    /// is what is stored.
    pub fn announce_approval(&self, thread: &ThreadId, data: String) {
        self.bus.publish(
            thread.as_str(),
            vec![std::sync::Arc::new(crate::events::LiveEvent::transient(
                "approval", data,
            ))],
        );
    }

    /// Records a tool call in a transaction of its own (a call that failed, whose own
    /// transaction was rolled back, or a read-only one) and announces it.
    pub async fn record_tool_call(
        &self,
        thread: &ThreadId,
        call: NewToolCall<'_>,
    ) -> Result<Committed, WorkspaceError> {
        let mut edit = self.edit_unchecked(thread, Source::Agent).await?;
        let recorded = edit.record_tool_call(call).await;
        Ok(edit.end(recorded, |_| ChangeNote::default()).await??.1)
    }

    /// The conversation: every turn with its messages and tool calls.
    pub async fn conversation(&self, thread: &ThreadId) -> Result<Vec<StoredTurn>, WorkspaceError> {
        {
            let mut view = self.view(thread).await?;
            let found = view.conversation().await;
            view.settle(found).await
        }
    }

    /// The user's and the agent's messages of the turns before `before_turn`, oldest first:
    /// `(turn_index, role, content)`.
    pub async fn earlier_messages(
        &self,
        thread: &ThreadId,
        before_turn: i64,
    ) -> Result<Vec<(i64, String, String)>, WorkspaceError> {
        let mut repo = self.db.begin_read().await?;
        let rows = repo.turns().history(thread, before_turn).await;
        let _ = repo.rollback().await;
        Ok(rows?)
    }
}

/// Commits `edit` if the turn's row changed (`Ok(true)`), else discards it: a turn another
/// replica ended first leaves no trace.
async fn commit_if(
    edit: Edit,
    changed: Result<bool, WorkspaceError>,
) -> Result<Option<Committed>, WorkspaceError> {
    if let Ok(false) = changed {
        edit.discard().await;
        return Ok(None);
    }
    Ok(Some(edit.end(changed, |_| ChangeNote::default()).await??.1))
}

/// Commits a plain write transaction if `result` is a success, else rolls it back.
async fn settle_write<T>(
    repo: haico_store::Transaction,
    result: Result<T, StoreError>,
) -> Result<T, WorkspaceError> {
    match result {
        Ok(value) => {
            repo.commit().await?;
            Ok(value)
        }
        Err(err) => {
            let _ = repo.rollback().await;
            Err(err.into())
        }
    }
}
