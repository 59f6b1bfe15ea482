//! A person's plan edits, by stable id: add a step where it was put, change or remove one,
//! and the one-shot operations of the user path around them.

use super::*;
use crate::{workspace::handles::PlanEdit, workspace::handles::ThreadPlan};

/// The text "step 4 not found in this thread".
fn step_not_found(step_id: i64) -> WorkspaceError {
    WorkspaceError::NotFound(format!("step {step_id} not found in this thread"))
}

/// "`parent_id` 9 does not name a step of this thread".
fn unknown_reference(field: &str, step_id: i64) -> WorkspaceError {
    WorkspaceError::invalid(format!(
        "`{field}` {step_id} does not name a step of this thread"
    ))
}

impl PlanEdit<'_> {
    /// Adds one step where a person put it; returns it with its id.
    pub async fn add_step(
        &mut self,
        text: &str,
        placement: StepPlacement,
    ) -> Result<PlanStep, WorkspaceError> {
        let text = checked_step_text(text, "text")?;
        self.edit.lock().await?;
        let thread = self.edit.thread_id();
        let (at, depth) = match placement {
            StepPlacement::Under(parent_id) => {
                let parent = self
                    .edit
                    .repo()
                    .plan()
                    .step_place(&thread, parent_id)
                    .await?
                    .ok_or_else(|| unknown_reference("parent_id", parent_id))?;
                if parent.depth + 1 > MAX_DEPTH {
                    return Err(too_deep(format_args!(
                        "step {parent_id} is at depth {}",
                        parent.depth
                    )));
                }
                let subtree = self
                    .edit
                    .repo()
                    .plan()
                    .subtree(&thread, parent.key, parent.depth)
                    .await?;
                (self.insert_after(&thread, subtree).await?, parent.depth + 1)
            }
            StepPlacement::After(sibling_id) => {
                let sibling = self
                    .edit
                    .repo()
                    .plan()
                    .step_place(&thread, sibling_id)
                    .await?
                    .ok_or_else(|| unknown_reference("after_id", sibling_id))?;
                let subtree = self
                    .edit
                    .repo()
                    .plan()
                    .subtree(&thread, sibling.key, sibling.depth)
                    .await?;
                (self.insert_after(&thread, subtree).await?, sibling.depth)
            }
            StepPlacement::End { depth } => {
                let tail = self.edit.repo().plan().plan_tail(&thread).await?;
                let deepest_allowed = tail.last.map_or(0, |(_, depth)| depth + 1);
                let depth = depth.unwrap_or(0);
                if depth > deepest_allowed {
                    return Err(WorkspaceError::invalid(format!(
                        "`depth` is {depth} but the last step allows at most {deepest_allowed}: a \
                         step is at most one level deeper than the step before it"
                    )));
                }
                (
                    InsertAt {
                        index: tail.len,
                        before: None,
                        after: KeyBefore::Read(tail.last.map(|(key, _)| key)),
                    },
                    depth,
                )
            }
        };
        Ok(self
            .edit
            .repo()
            .plan()
            .insert_step(&thread, at, text, depth)
            .await?)
    }

    /// Where a step placed right after the run `subtree` goes: its index and the step it
    /// precedes.
    async fn insert_after(
        &mut self,
        thread: &haico_store::ThreadId,
        subtree: StepRange,
    ) -> Result<InsertAt, WorkspaceError> {
        let index = match subtree.end {
            Some(end) => self.edit.repo().plan().step_index(thread, end).await?,
            None => self.edit.repo().plan().plan_len(thread).await?,
        };
        Ok(InsertAt {
            index,
            before: subtree.end,
            after: KeyBefore::Unread,
        })
    }

    /// Changes a step's text, its done mark, or both, by id.
    pub async fn update_step(
        &mut self,
        step_id: i64,
        text: Option<&str>,
        done: Option<bool>,
    ) -> Result<PlanStep, WorkspaceError> {
        if text.is_none() && done.is_none() {
            return Err(WorkspaceError::invalid(
                "nothing to change: send text, done or both",
            ));
        }
        let text = text.map(|t| checked_step_text(t, "text")).transpose()?;
        self.edit.lock().await?;
        let thread = self.edit.thread_id();
        self.edit
            .repo()
            .plan()
            .update_step(&thread, step_id, text, done)
            .await?
            .ok_or_else(|| step_not_found(step_id))
    }

    /// Removes a step and its sub-steps by id; returns how many steps went.
    pub async fn remove_step(&mut self, step_id: i64) -> Result<u64, WorkspaceError> {
        self.edit.lock().await?;
        let thread = self.edit.thread_id();
        self.edit
            .repo()
            .plan()
            .remove_step_subtree(&thread, step_id)
            .await?
            .ok_or_else(|| step_not_found(step_id))
    }
}

impl ThreadPlan<'_> {
    /// A person adds a step (see [`StepPlacement`]).
    pub async fn add_step(
        &self,
        text: &str,
        placement: StepPlacement,
    ) -> Result<PlanStep, WorkspaceError> {
        checked_step_text(text, "text")?;
        let mut edit = self.workspaces.edit(self.thread, Source::User).await?;
        let outcome = edit.plan().add_step(text, placement).await;
        self.workspaces
            .settle(edit, outcome, |step| {
                format!("added the step \"{}\"", step.text)
            })
            .await
    }

    /// A person rewrites or ticks a step.
    pub async fn update_step(
        &self,
        step_id: i64,
        text: Option<&str>,
        done: Option<bool>,
    ) -> Result<PlanStep, WorkspaceError> {
        if text.is_none() && done.is_none() {
            return Err(WorkspaceError::invalid(
                "nothing to change: send text, done or both",
            ));
        }
        if let Some(text) = text {
            checked_step_text(text, "text")?;
        }
        let mut edit = self.workspaces.edit(self.thread, Source::User).await?;
        let outcome = edit.plan().update_step(step_id, text, done).await;
        self.workspaces
            .settle(edit, outcome, |step| match (text, done) {
                (Some(_), _) => format!("rewrote the step \"{}\"", step.text),
                (None, Some(true)) => format!("ticked off the step \"{}\"", step.text),
                (None, _) => format!("marked the step \"{}\" not done", step.text),
            })
            .await
    }

    /// A person removes a step with its sub-steps.
    pub async fn remove_step(&self, step_id: i64) -> Result<(), WorkspaceError> {
        let mut edit = self.workspaces.edit(self.thread, Source::User).await?;
        let outcome = edit.plan().remove_step(step_id).await;
        self.workspaces
            .settle(edit, outcome, |removed| {
                format!(
                    "removed {}",
                    plural(usize::try_from(*removed).unwrap_or(usize::MAX), "step")
                )
            })
            .await
            .map(|_| ())
    }

    /// The plan, in order.
    pub async fn steps(&self) -> Result<Vec<PlanStep>, WorkspaceError> {
        {
            let mut view = self.workspaces.view(self.thread).await?;
            let found = view.plan().await;
            view.settle(found).await
        }
    }
}
