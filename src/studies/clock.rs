//! The clock: every session's deadline is enforced by the server, with no browser open. A task
//! per server looks, every [`TICK`], for active sessions past their deadline or due a warning;
//! a session past it ends `timed_out` (a conditional update, so one replica wins when several
//! look), its running turn is cancelled wherever it runs, and a `study` event tells the open
//! page. Writes after the deadline are refused by the access guard even before the clock has
//! recorded it (`Participant::write_refusal`).

use std::{collections::HashMap, sync::Arc, time::Duration};

use chrono::Utc;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::agent::turn::Agent;
use crate::{
    studies::design::Design, studies::lifecycle::in_write, studies::service::Studies,
    studies::service::StudyError, studies::service::design_of,
};
use haico_store::{SessionRow, SessionStatus, ThreadId};

/// How often the clock looks: a deadline is acted on within about this long.
pub const TICK: Duration = Duration::from_millis(500);
/// The longest warning ahead (a day: the longest time limit).
const HORIZON_S: i64 = 86_400;

/// Runs the clock until `closing` is cancelled.
pub fn spawn_clock(
    studies: Studies,
    agent: Arc<Agent>,
    closing: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = closing.cancelled() => return,
                () = tokio::time::sleep(TICK) => {}
            }
            if let Err(err) = studies.tick(&agent).await {
                tracing::warn!(error = %err, "the study clock could not look at deadlines");
            }
        }
    })
}

impl Studies {
    /// One look: ends the sessions past their deadline and warns those due a warning.
    pub async fn tick(&self, agent: &Agent) -> Result<(), StudyError> {
        if !self.sessions_exist().await? {
            return Ok(());
        }
        let now = Utc::now();
        let mut repo = self.db.autocommit_read().await?;
        let due = repo
            .studies()
            .clock_due(now, now + chrono::Duration::seconds(HORIZON_S))
            .await;
        let _ = repo.rollback().await;
        let mut designs: HashMap<String, Option<Design>> = HashMap::new();
        for session in due? {
            let Some(deadline) = session.deadline else {
                continue;
            };
            if deadline <= now {
                self.time_out(agent, &session).await?;
                continue;
            }
            if !designs.contains_key(&session.study_id) {
                let mut repo = self.db.autocommit_read().await?;
                let study = repo.studies().study(&session.study_id).await;
                let _ = repo.rollback().await;
                let design = study?.as_ref().map(design_of).transpose()?;
                designs.insert(session.study_id.clone(), design);
            }
            let warn = designs
                .get(&session.study_id)
                .and_then(|d| d.as_ref())
                .and_then(|d| d.limits.warn_before_s);
            let remaining = (deadline - now).num_seconds();
            if let Some(warn) = warn
                && remaining <= warn
            {
                self.warn(&session, remaining).await?;
            }
        }
        Ok(())
    }

    /// Ends a session whose time is up, cancels its running turn and tells its page.
    async fn time_out(&self, agent: &Agent, session: &SessionRow) -> Result<(), StudyError> {
        let session_ref = session.session_ref.clone();
        let ended = in_write(self, |tx| {
            Box::pin(async move {
                Ok(tx
                    .studies()
                    .end(
                        &session_ref,
                        &[SessionStatus::Active],
                        SessionStatus::TimedOut,
                    )
                    .await?)
            })
        })
        .await?;
        if !ended {
            return Ok(());
        }
        tracing::info!(session = %session.session_ref, "a session's time is up");
        if let Some(thread) = thread_of(session) {
            agent.cancel_anywhere(&thread).await?;
            self.workspaces
                .announce_study(&thread, &json!({"kind": "ended", "status": "timed_out"}))
                .await?;
        }
        Ok(())
    }

    /// Warns a session once that its time is nearly up.
    async fn warn(&self, session: &SessionRow, remaining_s: i64) -> Result<(), StudyError> {
        let session_ref = session.session_ref.clone();
        let marked = in_write(self, |tx| {
            Box::pin(async move { Ok(tx.studies().mark_warned(&session_ref).await?) })
        })
        .await?;
        if marked && let Some(thread) = thread_of(session) {
            self.workspaces
                .announce_study(
                    &thread,
                    &json!({"kind": "time_warning", "remaining_s": remaining_s}),
                )
                .await?;
        }
        Ok(())
    }
}

fn thread_of(session: &SessionRow) -> Option<ThreadId> {
    session
        .thread_id
        .as_deref()
        .and_then(|t| ThreadId::parse(t).ok())
}
