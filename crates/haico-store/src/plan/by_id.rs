//! The plan's operations by stable id (the user path): where a step is, one step inserted,
//! a step and its sub-steps removed, and the whole plan replaced (a restore).

use crate::thread_id::ThreadId;
use crate::{
    error::Context, journal::ListOp, panels::Panel, query::params, query::row_shape,
    repository::now,
};
use crate::{
    plan::InsertAt, plan::PlanRepo, plan::PlanStep, plan::StoreError, plan::keys::KEY_GAP,
};

/// Where a step is in the plan: its stable id, key and depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::FromRow)]
pub struct StepPlace {
    /// Stable id.
    pub id: i64,
    /// Its place in the order.
    #[sqlx(rename = "sort_key")]
    pub key: i64,
    /// Outline depth.
    pub depth: i64,
}

row_shape!(StepPlace { id: i64, sort_key: i64, depth: i64 } => StepPlace { id, key: sort_key, depth });

impl PlanRepo<'_> {
    /// Key and depth of the step with stable id `id` in this thread's plan.
    pub async fn step_place(
        &mut self,
        thread_id: &ThreadId,
        id: i64,
    ) -> Result<Option<StepPlace>, StoreError> {
        self.fetch_optional(
            "SELECT id, sort_key, depth FROM todos WHERE thread_id = $1 AND id = $2",
            &params![thread_id, id],
        )
        .await
        .context("locating a step")
    }

    /// Inserts one step at `at` and returns it with its new id. The caller holds the thread
    /// lock and checks that the outline stays valid.
    pub async fn insert_step(
        &mut self,
        thread_id: &ThreadId,
        at: InsertAt,
        text: &str,
        depth: i64,
    ) -> Result<PlanStep, StoreError> {
        let (key, _) = self.keys_for(thread_id, at, 1).await?;
        let at_time = now();
        let step: PlanStep = self.fetch_one("INSERT INTO todos (thread_id, sort_key, text, depth, done, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, FALSE, $5, $5) RETURNING id, text, depth, done", &params![thread_id, key, text, depth, at_time]).await
        .context("inserting a step")?;
        self.mark(Panel::Plan);
        self.journal_mut().plan.push(ListOp::Insert {
            at: usize::try_from(at.index).unwrap_or(0),
            items: vec![step.clone()],
        });
        Ok(step)
    }

    /// Deletes the step with stable id `id` and its sub-steps (the following deeper steps);
    /// returns how many steps went, or `None` when there is no such step.
    pub async fn remove_step_subtree(
        &mut self,
        thread_id: &ThreadId,
        id: i64,
    ) -> Result<Option<u64>, StoreError> {
        let Some(place) = self.step_place(thread_id, id).await? else {
            return Ok(None);
        };
        let range = self.subtree(thread_id, place.key, place.depth).await?;
        let removed = self.remove_step_ranges(thread_id, &[range]).await?;
        Ok(Some(removed.into_iter().sum()))
    }
}

impl PlanRepo<'_> {
    /// Makes the plan exactly `steps`, in order, keeping their ids: a restore. (Ids never come
    /// back into use otherwise, so an id of this thread's past is free again once its current
    /// steps are gone.)
    pub async fn replace_plan(
        &mut self,
        thread_id: &ThreadId,
        steps: &[PlanStep],
    ) -> Result<(), StoreError> {
        self.execute(
            "DELETE FROM todos WHERE thread_id = $1",
            &params![thread_id],
        )
        .await
        .context("clearing the plan")?;
        let at = now();
        for (rank, step) in (1_i64..).zip(steps) {
            self.execute("INSERT INTO todos (id, thread_id, sort_key, text, depth, done, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $7)", &params![step.id, thread_id, rank * KEY_GAP, &step.text, step.depth, step.done, at]).await
            .context("restoring a step")?;
        }
        self.mark(Panel::Plan);
        self.journal_mut().plan.push(ListOp::Set {
            items: steps.to_vec(),
        });
        Ok(())
    }
}
