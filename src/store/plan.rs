//! The plan: an ordered outline of steps with dense positions (0..n-1 per thread), kept in the
//! `todos` table (the seeds' name for them).
//!
//! Every method here keeps positions dense, which is what lets a 1-based index from the agent
//! become a single indexed lookup.

use serde::Serialize;

use super::{
    Context, PlanStep, StoreError,
    journal::ListOp,
    repository::{Tx, WorkspaceRepository, now, with_conn},
};
use crate::panels::Panel;

/// A step to insert: text and absolute depth.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewPlanStep {
    /// The step's text.
    pub text: String,
    /// Absolute outline depth.
    pub depth: i64,
}

/// A contiguous run of positions `[start, end)` that a removal deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepRange {
    /// First removed position.
    pub start: i64,
    /// One past the last removed position.
    pub end: i64,
}

/// What an index lookup finds: the step's id, depth and text.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct StepAt {
    /// Stable id.
    pub id: i64,
    /// Outline depth.
    pub depth: i64,
    /// Text.
    pub text: String,
    /// Done flag.
    pub done: bool,
}

impl WorkspaceRepository {
    /// The whole plan, in order.
    pub async fn plan_steps(&mut self, thread_id: &str) -> Result<Vec<PlanStep>, StoreError> {
        with_conn!(self, conn => {
            sqlx::query_as(
                "SELECT id, text, depth, done FROM todos WHERE thread_id = $1 ORDER BY position",
            )
            .bind(thread_id)
            .fetch_all(conn)
            .await
        })
        .context("listing the plan")
    }

    /// How many steps the plan has.
    pub async fn plan_len(&mut self, thread_id: &str) -> Result<i64, StoreError> {
        let (count,): (i64,) = with_conn!(self, conn => {
            sqlx::query_as("SELECT COUNT(*) FROM todos WHERE thread_id = $1")
                .bind(thread_id)
                .fetch_one(conn)
                .await
        })
        .context("counting the plan")?;
        Ok(count)
    }

    /// The step at 0-based `position`.
    pub async fn step_at(
        &mut self,
        thread_id: &str,
        position: i64,
    ) -> Result<Option<StepAt>, StoreError> {
        with_conn!(self, conn => {
            sqlx::query_as(
                "SELECT id, depth, text, done FROM todos WHERE thread_id = $1 AND position = $2",
            )
            .bind(thread_id)
            .bind(position)
            .fetch_optional(conn)
            .await
        })
        .context("reading a step")
    }

    /// The position of a step by its stable id.
    pub async fn step_position(
        &mut self,
        thread_id: &str,
        id: i64,
    ) -> Result<Option<i64>, StoreError> {
        let row: Option<(i64,)> = with_conn!(self, conn => {
            sqlx::query_as("SELECT position FROM todos WHERE thread_id = $1 AND id = $2")
                .bind(thread_id)
                .bind(id)
                .fetch_optional(conn)
                .await
        })
        .context("locating a step")?;
        Ok(row.map(|(p,)| p))
    }

    /// One past the last descendant of the step at `position` (whose depth is `depth`): the
    /// first later step that is not deeper, or the end of the plan.
    pub async fn subtree_end(
        &mut self,
        thread_id: &str,
        position: i64,
        depth: i64,
    ) -> Result<i64, StoreError> {
        let (end,): (Option<i64>,) = with_conn!(self, conn => {
            sqlx::query_as(
                "SELECT MIN(position) FROM todos \
                 WHERE thread_id = $1 AND position > $2 AND depth <= $3",
            )
            .bind(thread_id)
            .bind(position)
            .bind(depth)
            .fetch_one(conn)
            .await
        })
        .context("finding a step's sub-steps")?;
        match end {
            Some(end) => Ok(end),
            None => self.plan_len(thread_id).await,
        }
    }

    /// Inserts `steps` so the first lands at `position`, moving later steps down.
    pub async fn insert_steps(
        &mut self,
        thread_id: &str,
        position: i64,
        steps: &[NewPlanStep],
    ) -> Result<(), StoreError> {
        if steps.is_empty() {
            return Ok(());
        }
        let count = i64::try_from(steps.len()).unwrap_or(i64::MAX);
        self.shift_steps(thread_id, position, count).await?;
        let at = now();
        // One statement for the whole batch: the steps travel as one JSON array parameter.
        let batch = serde_json::to_string(steps)?;
        let mut rows: Vec<PositionedStep> = match &mut self.tx {
            Tx::Sqlite(tx) => {
                sqlx::query_as(
                    "INSERT INTO todos (thread_id, position, text, depth, done, created_at, updated_at) \
                     SELECT $1, $2 + CAST(j.key AS INTEGER), json_extract(j.value, '$.text'), \
                            json_extract(j.value, '$.depth'), FALSE, $3, $3 \
                     FROM json_each($4) AS j \
                     RETURNING position, id, text, depth, done",
                )
                .bind(thread_id)
                .bind(position)
                .bind(at)
                .bind(batch)
                .fetch_all(&mut **tx)
                .await
            }
            Tx::Postgres(tx) => {
                sqlx::query_as(
                    "INSERT INTO todos (thread_id, position, text, depth, done, created_at, updated_at) \
                     SELECT $1, $2 + (s.ord - 1), s.step->>'text', (s.step->>'depth')::bigint, FALSE, $3, $3 \
                     FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS s(step, ord) \
                     RETURNING position, id, text, depth, done",
                )
                .bind(thread_id)
                .bind(position)
                .bind(at)
                .bind(batch)
                .fetch_all(&mut **tx)
                .await
            }
        }
        .context("inserting steps")?;
        self.mark(Panel::Plan);
        // The order RETURNING lists rows in is not promised; their positions are.
        rows.sort_by_key(|row| row.position);
        self.journal_mut().plan.push(ListOp::Insert {
            at: usize::try_from(position).unwrap_or(0),
            items: rows.into_iter().map(|row| row.step).collect(),
        });
        Ok(())
    }

    /// Adds `delta` to the position of every step at or after `from`.
    async fn shift_steps(
        &mut self,
        thread_id: &str,
        from: i64,
        delta: i64,
    ) -> Result<(), StoreError> {
        with_conn!(self, conn => {
            sqlx::query(
                "UPDATE todos SET position = position + $3 WHERE thread_id = $1 AND position >= $2",
            )
            .bind(thread_id)
            .bind(from)
            .bind(delta)
            .execute(conn)
            .await
            .map(|r| r.rows_affected())
        })
        .context("moving steps")?;
        Ok(())
    }

    /// Flips done/not-done of the step at `position`; returns its new state.
    pub async fn toggle_step_at(
        &mut self,
        thread_id: &str,
        position: i64,
    ) -> Result<Option<bool>, StoreError> {
        let at = now();
        let row: Option<PlanStep> = with_conn!(self, conn => {
            sqlx::query_as(
                "UPDATE todos SET done = NOT done, updated_at = $3 \
                 WHERE thread_id = $1 AND position = $2 RETURNING id, text, depth, done",
            )
            .bind(thread_id)
            .bind(position)
            .bind(at)
            .fetch_optional(conn)
            .await
        })
        .context("ticking a step")?;
        Ok(row.map(|step| {
            let done = step.done;
            self.updated_step(step);
            done
        }))
    }

    /// Rewrites the text of the step at `position`.
    pub async fn set_step_text_at(
        &mut self,
        thread_id: &str,
        position: i64,
        text: &str,
    ) -> Result<bool, StoreError> {
        let at = now();
        let row: Option<PlanStep> = with_conn!(self, conn => {
            sqlx::query_as(
                "UPDATE todos SET text = $3, updated_at = $4 WHERE thread_id = $1 AND position = $2 \
                 RETURNING id, text, depth, done",
            )
            .bind(thread_id)
            .bind(position)
            .bind(text)
            .bind(at)
            .fetch_optional(conn)
            .await
        })
        .context("rewriting a step")?;
        let applied = row.is_some();
        if let Some(step) = row {
            self.updated_step(step);
        }
        Ok(applied)
    }

    /// Records a step that now reads differently.
    fn updated_step(&mut self, step: PlanStep) {
        self.mark(Panel::Plan);
        self.journal_mut().plan.push(ListOp::Update { item: step });
    }

    /// Updates a step by id (the user path): text, done and depth, each only when given.
    pub async fn update_step(
        &mut self,
        thread_id: &str,
        id: i64,
        text: Option<&str>,
        done: Option<bool>,
    ) -> Result<Option<PlanStep>, StoreError> {
        let at = now();
        let row: Option<PlanStep> = with_conn!(self, conn => {
            sqlx::query_as(
                "UPDATE todos SET text = COALESCE($3, text), done = COALESCE($4, done), updated_at = $5 \
                 WHERE thread_id = $1 AND id = $2 RETURNING id, text, depth, done",
            )
            .bind(thread_id)
            .bind(id)
            .bind(text)
            .bind(done)
            .bind(at)
            .fetch_optional(conn)
            .await
        })
        .context("updating a step")?;
        if let Some(step) = &row {
            self.updated_step(step.clone());
        }
        Ok(row)
    }

    /// Deletes the given position ranges and closes the gaps. Ranges must not overlap.
    pub async fn remove_step_ranges(
        &mut self,
        thread_id: &str,
        ranges: &[StepRange],
    ) -> Result<u64, StoreError> {
        let mut ordered = ranges.to_vec();
        // Last range first, so the positions of earlier ranges stay valid while gaps close.
        ordered.sort_by_key(|range| std::cmp::Reverse(range.start));
        let mut removed = 0;
        for range in ordered {
            let ids: Vec<(i64,)> = with_conn!(self, conn => {
                sqlx::query_as(
                    "DELETE FROM todos WHERE thread_id = $1 AND position >= $2 AND position < $3 \
                     RETURNING id",
                )
                .bind(thread_id)
                .bind(range.start)
                .bind(range.end)
                .fetch_all(conn)
                .await
            })
            .context("removing steps")?;
            removed += u64::try_from(ids.len()).unwrap_or(u64::MAX);
            self.shift_steps(thread_id, range.end, range.start - range.end)
                .await?;
            if !ids.is_empty() {
                self.journal_mut().plan.push(ListOp::Remove {
                    ids: ids.into_iter().map(|(id,)| id).collect(),
                });
            }
        }
        if removed > 0 {
            self.mark(Panel::Plan);
        }
        Ok(removed)
    }
}

/// A step with its position, as an insert returns it.
#[derive(sqlx::FromRow)]
struct PositionedStep {
    position: i64,
    #[sqlx(flatten)]
    step: PlanStep,
}

/// Where a step is in the plan: its stable id, 0-based position and depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::FromRow)]
pub struct StepPlace {
    /// Stable id.
    pub id: i64,
    /// 0-based position in the plan.
    pub position: i64,
    /// Outline depth.
    pub depth: i64,
}

impl WorkspaceRepository {
    /// Position and depth of the step with stable id `id` in this thread's plan.
    pub async fn step_place(
        &mut self,
        thread_id: &str,
        id: i64,
    ) -> Result<Option<StepPlace>, StoreError> {
        with_conn!(self, conn => {
            sqlx::query_as(
                "SELECT id, position, depth FROM todos WHERE thread_id = $1 AND id = $2",
            )
            .bind(thread_id)
            .bind(id)
            .fetch_optional(conn)
            .await
        })
        .context("locating a step")
    }

    /// Inserts one step at `position` (moving later steps down) and returns it with its new id.
    /// The caller holds the thread lock and checks that the outline stays valid.
    pub async fn insert_step(
        &mut self,
        thread_id: &str,
        position: i64,
        text: &str,
        depth: i64,
    ) -> Result<PlanStep, StoreError> {
        self.shift_steps(thread_id, position, 1).await?;
        let at = now();
        let step: PlanStep = with_conn!(self, conn => {
            sqlx::query_as(
                "INSERT INTO todos (thread_id, position, text, depth, done, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, FALSE, $5, $5) RETURNING id, text, depth, done",
            )
            .bind(thread_id)
            .bind(position)
            .bind(text)
            .bind(depth)
            .bind(at)
            .fetch_one(conn)
            .await
        })
        .context("inserting a step")?;
        self.mark(Panel::Plan);
        self.journal_mut().plan.push(ListOp::Insert {
            at: usize::try_from(position).unwrap_or(0),
            items: vec![step.clone()],
        });
        Ok(step)
    }

    /// Deletes the step with stable id `id` and its sub-steps (the following deeper steps),
    /// closing the gap; returns how many steps went, or `None` when there is no such step.
    pub async fn remove_step_subtree(
        &mut self,
        thread_id: &str,
        id: i64,
    ) -> Result<Option<u64>, StoreError> {
        let Some(place) = self.step_place(thread_id, id).await? else {
            return Ok(None);
        };
        let end = self
            .subtree_end(thread_id, place.position, place.depth)
            .await?;
        let range = StepRange {
            start: place.position,
            end,
        };
        let removed = self.remove_step_ranges(thread_id, &[range]).await?;
        Ok(Some(removed))
    }
}

impl WorkspaceRepository {
    /// Makes the plan exactly `steps`, in order, keeping their ids: a restore. (Ids never come
    /// back into use otherwise, so an id of this thread's past is free again once its current
    /// steps are gone.)
    pub async fn replace_plan(
        &mut self,
        thread_id: &str,
        steps: &[PlanStep],
    ) -> Result<(), StoreError> {
        with_conn!(self, conn => {
            sqlx::query("DELETE FROM todos WHERE thread_id = $1")
                .bind(thread_id)
                .execute(conn)
                .await
                .map(|r| r.rows_affected())
        })
        .context("clearing the plan")?;
        let at = now();
        for (position, step) in steps.iter().enumerate() {
            let position = i64::try_from(position).unwrap_or(i64::MAX);
            with_conn!(self, conn => {
                sqlx::query(
                    "INSERT INTO todos (id, thread_id, position, text, depth, done, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $7)",
                )
                .bind(step.id)
                .bind(thread_id)
                .bind(position)
                .bind(&step.text)
                .bind(step.depth)
                .bind(step.done)
                .bind(at)
                .execute(conn)
                .await
                .map(|r| r.rows_affected())
            })
            .context("restoring a step")?;
        }
        self.mark(Panel::Plan);
        self.journal_mut().plan.push(ListOp::Set {
            items: steps.to_vec(),
        });
        Ok(())
    }
}
