//! The plan: an ordered outline of steps, kept in the `todos` table (the seeds' name for them).
//!
//! Steps are ordered by `sort_key`, a sparse integer: a new step takes a key between its
//! neighbours', so an insertion or a removal writes only the rows it adds or deletes, however
//! long the plan is. When two neighbours' keys leave no room, the thread's plan is renumbered
//! in the same transaction (every row once; rare, since keys are spread [`KEY_GAP`] apart).
//! The 1-based index the agent names is the rank in key order, found by walking the
//! `(thread_id, sort_key)` index (`ORDER BY sort_key LIMIT 1 OFFSET n`), so no stored number
//! has to move when a step before it comes or goes.

use serde::Serialize;

use super::{
    Context, PlanStep, StoreError,
    journal::ListOp,
    query::{params, record},
    repository::{Backend, WorkspaceRepository, now},
};
use crate::panels::Panel;

/// The distance between neighbouring keys after a renumber, and between appended steps: wide
/// enough that 32 insertions into the same gap fit before a renumber is needed.
pub const KEY_GAP: i64 = 1 << 32;

/// No key is ever larger: past it the plan is renumbered instead, so arithmetic on keys never
/// overflows and `i64::MAX` can stand for "the end of the plan" in a range.
const MAX_KEY: i64 = i64::MAX / 4;

/// A step to insert: text and absolute depth.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewPlanStep {
    /// The step's text.
    pub text: String,
    /// Absolute outline depth.
    pub depth: i64,
}

/// A run of steps by key, `[start, end)`; `end` is `None` for "to the end of the plan".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepRange {
    /// The key of the first step in the run.
    pub start: i64,
    /// The key of the first step after the run, if there is one.
    pub end: Option<i64>,
}

impl StepRange {
    /// Whether the step with `key` lies in the run.
    pub fn contains(&self, key: i64) -> bool {
        key >= self.start && self.end.is_none_or(|end| key < end)
    }
}

/// What an index lookup finds: the step's id, key, depth and text.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct StepAt {
    /// Stable id.
    pub id: i64,
    /// Its place in the order (not an index: keys have gaps).
    #[sqlx(rename = "sort_key")]
    pub key: i64,
    /// Outline depth.
    pub depth: i64,
    /// Text.
    pub text: String,
    /// Done flag.
    pub done: bool,
}

record!(StepAt { id: i64, sort_key: i64, depth: i64, text: String, done: bool } => StepAt {
    id,
    key: sort_key,
    depth,
    text,
    done,
});

record!(PlanStep { id: i64, text: String, depth: i64, done: bool } => PlanStep {
    id,
    text,
    depth,
    done,
});

/// Where a new step goes: its 0-based index in the plan (what the history records) and the
/// key of the step that will follow it (`None`: it goes last). The caller found both under
/// the thread lock, so they agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InsertAt {
    /// 0-based index the first new step will have.
    pub index: i64,
    /// The key of the step now at that index, if any.
    pub before: Option<i64>,
}

/// What a batch of edits by position did: the plan's length, and each position that named
/// a step with what the edit reports for it, in plan order.
#[derive(Debug, Clone, PartialEq)]
pub struct StepsChanged<T> {
    /// How many steps the plan has (the edits neither add nor remove any).
    pub len: i64,
    /// `(0-based position, result)` per step changed.
    pub steps: Vec<(i64, T)>,
}

/// The positions a batch statement is given: distinct and not negative, as JSON for the
/// statement, sorted to pair with its rows, and how far into the plan the statement must rank.
struct Targets {
    json: String,
    sorted: Vec<i64>,
    limit: i64,
}

impl Targets {
    fn new(positions: &[i64]) -> Self {
        let mut sorted: Vec<i64> = positions.iter().copied().filter(|p| *p >= 0).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let limit = sorted.last().map_or(0, |last| last.saturating_add(1));
        let json = format!(
            "[{}]",
            sorted
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        );
        Self {
            json,
            sorted,
            limit,
        }
    }
}

/// A step a batch statement changed, with its key (to put the rows in plan order) and the
/// plan's length (counted by the same statement).
struct ChangedRow {
    sort_key: i64,
    id: i64,
    text: String,
    depth: i64,
    done: bool,
    plan_len: i64,
}

record!(ChangedRow { sort_key: i64, id: i64, text: String, depth: i64, done: bool,
    plan_len: i64 } => ChangedRow { sort_key, id, text, depth, done, plan_len });

impl WorkspaceRepository {
    /// The whole plan, in order. On SQLite the rows are read one by one, inline; on
    /// PostgreSQL one row comes back (the plan as a JSON array), because fetching thousands of
    /// rows one by one through sqlx costs more than parsing them.
    pub async fn plan_steps(&mut self, thread_id: &str) -> Result<Vec<PlanStep>, StoreError> {
        if self.backend() == Backend::Sqlite {
            let rows: Vec<(i64, String, i64, bool)> = self
                .fetch_all(
                    "SELECT id, text, depth, done FROM todos WHERE thread_id = $1 \
                     ORDER BY sort_key",
                    &params![thread_id],
                )
                .await
                .context("listing the plan")?;
            return Ok(rows
                .into_iter()
                .map(|(id, text, depth, done)| PlanStep {
                    id,
                    text,
                    depth,
                    done,
                })
                .collect());
        }
        let (json,): (String,) = self
            .fetch_one(
                "SELECT COALESCE(json_agg(json_build_array(id, text, depth, CASE WHEN done \
                 THEN 1 ELSE 0 END) ORDER BY sort_key)::text, '[]') FROM todos \
                 WHERE thread_id = $1",
                &params![thread_id],
            )
            .await
            .context("listing the plan")?;
        decode_steps(&json)
    }

    /// How many steps the plan has.
    pub async fn plan_len(&mut self, thread_id: &str) -> Result<i64, StoreError> {
        let (count,): (i64,) = self
            .fetch_one(
                "SELECT COUNT(*) FROM todos WHERE thread_id = $1",
                &params![thread_id],
            )
            .await
            .context("counting the plan")?;
        Ok(count)
    }

    /// The step at 0-based `index`.
    pub async fn step_at(
        &mut self,
        thread_id: &str,
        index: i64,
    ) -> Result<Option<StepAt>, StoreError> {
        if index < 0 {
            return Ok(None);
        }
        self.fetch_optional(
            "SELECT id, sort_key, depth, text, done FROM todos WHERE thread_id = $1 \
                 ORDER BY sort_key LIMIT 1 OFFSET $2",
            &params![thread_id, index],
        )
        .await
        .context("reading a step")
    }

    /// The last step of the plan, found from the end of the index.
    pub async fn last_step(&mut self, thread_id: &str) -> Result<Option<StepAt>, StoreError> {
        self.fetch_optional(
            "SELECT id, sort_key, depth, text, done FROM todos WHERE thread_id = $1 \
                 ORDER BY sort_key DESC LIMIT 1",
            &params![thread_id],
        )
        .await
        .context("reading the last step")
    }

    /// The 0-based index of the step with key `key`: how many steps come before it.
    pub async fn step_index(&mut self, thread_id: &str, key: i64) -> Result<i64, StoreError> {
        let (count,): (i64,) = self
            .fetch_one(
                "SELECT COUNT(*) FROM todos WHERE thread_id = $1 AND sort_key < $2",
                &params![thread_id, key],
            )
            .await
            .context("numbering a step")?;
        Ok(count)
    }

    /// The run of the step with key `key` (whose depth is `depth`) and its sub-steps: up to the
    /// first later step that is not deeper, or the end of the plan.
    pub async fn subtree(
        &mut self,
        thread_id: &str,
        key: i64,
        depth: i64,
    ) -> Result<StepRange, StoreError> {
        let (end,): (Option<i64>,) = self
            .fetch_one(
                "SELECT MIN(sort_key) FROM todos \
                 WHERE thread_id = $1 AND sort_key > $2 AND depth <= $3",
                &params![thread_id, key, depth],
            )
            .await
            .context("finding a step's sub-steps")?;
        Ok(StepRange { start: key, end })
    }

    /// How many steps lie in `range`.
    pub async fn count_in(&mut self, thread_id: &str, range: StepRange) -> Result<i64, StoreError> {
        let (count,): (i64,) = self
            .fetch_one(
                "SELECT COUNT(*) FROM todos WHERE thread_id = $1 AND sort_key >= $2 \
                 AND sort_key < $3",
                &params![thread_id, range.start, range.end.unwrap_or(i64::MAX)],
            )
            .await
            .context("counting sub-steps")?;
        Ok(count)
    }

    /// Inserts `steps` so the first lands at `at.index`, ahead of the step keyed `at.before`,
    /// and returns them with their ids. Only the new rows are written, unless the gap there is
    /// used up: then the plan is renumbered first, leaving room for them.
    pub async fn insert_steps(
        &mut self,
        thread_id: &str,
        at: InsertAt,
        steps: &[NewPlanStep],
    ) -> Result<Vec<PlanStep>, StoreError> {
        if steps.is_empty() {
            return Ok(Vec::new());
        }
        let count = i64::try_from(steps.len()).unwrap_or(i64::MAX);
        let (first, stride) = self.keys_for(thread_id, at, count).await?;
        let at_time = now();
        // One statement for the whole batch: the steps travel as one JSON array parameter,
        // each taking key `first + stride * i`.
        let batch = serde_json::to_string(steps)?;
        let sql = match self.backend() {
            Backend::Sqlite => {
                "INSERT INTO todos (thread_id, sort_key, text, depth, done, created_at, updated_at) \
                 SELECT $1, $2 + $3 * CAST(j.key AS INTEGER), json_extract(j.value, '$.text'), \
                        json_extract(j.value, '$.depth'), FALSE, $4, $4 \
                 FROM json_each($5) AS j \
                 RETURNING sort_key, id, text, depth, done"
            }
            Backend::Postgres => {
                "INSERT INTO todos (thread_id, sort_key, text, depth, done, created_at, updated_at) \
                 SELECT $1, $2 + $3 * (s.ord - 1), s.step->>'text', (s.step->>'depth')::bigint, \
                        FALSE, $4, $4 \
                 FROM jsonb_array_elements($5::jsonb) WITH ORDINALITY AS s(step, ord) \
                 RETURNING sort_key, id, text, depth, done"
            }
        };
        let mut rows: Vec<KeyedStep> = self
            .fetch_all(
                sql,
                &params![thread_id, first, stride, at_time, batch.as_str()],
            )
            .await
            .context("inserting steps")?;
        self.mark(Panel::Plan);
        // The order RETURNING lists rows in is not promised; their keys are.
        rows.sort_by_key(|row| row.key);
        let inserted: Vec<PlanStep> = rows.into_iter().map(|row| row.step).collect();
        self.journal_mut().plan.push(ListOp::Insert {
            at: usize::try_from(at.index).unwrap_or(0),
            items: inserted.clone(),
        });
        Ok(inserted)
    }

    /// The first key and the stride of `count` new steps going in at `at`: spread over the
    /// gap there, or, when it is used up, the room a renumber leaves.
    async fn keys_for(
        &mut self,
        thread_id: &str,
        at: InsertAt,
        count: i64,
    ) -> Result<(i64, i64), StoreError> {
        if let Some(room) = self.room(thread_id, at.before, count).await? {
            return Ok(room);
        }
        self.renumber(thread_id, at.index, count).await?;
        Ok(((at.index + 1) * KEY_GAP, KEY_GAP))
    }

    /// The first key and the stride for `count` new steps ahead of the step keyed `before`
    /// (at the end when `None`), or `None` when the keys there leave no room.
    async fn room(
        &mut self,
        thread_id: &str,
        before: Option<i64>,
        count: i64,
    ) -> Result<Option<(i64, i64)>, StoreError> {
        let (previous,): (Option<i64>,) = self
            .fetch_one(
                "SELECT MAX(sort_key) FROM todos WHERE thread_id = $1 AND sort_key < $2",
                &params![thread_id, before.unwrap_or(i64::MAX)],
            )
            .await
            .context("finding room for steps")?;
        let low = previous.unwrap_or(0);
        Ok(match before {
            // At the end: one gap after the other, while the keys stay in range.
            None => KEY_GAP
                .checked_mul(count)
                .and_then(|span| low.checked_add(span))
                .filter(|last| *last <= MAX_KEY)
                .map(|_| (low + KEY_GAP, KEY_GAP)),
            // Between two steps: spread evenly over the gap, when each new key is distinct.
            Some(high) => {
                let stride = (high - low) / (count + 1);
                (stride >= 1).then_some((low + stride, stride))
            }
        })
    }

    /// Gives the thread's steps keys `KEY_GAP` apart in their order, leaving `room` free keys
    /// ahead of the step at 0-based index `at` (the `room` new steps then take keys
    /// `(at + 1) * KEY_GAP` onwards). One statement; every row of the plan is written, which is
    /// why it only happens when a gap is used up.
    async fn renumber(&mut self, thread_id: &str, at: i64, room: i64) -> Result<(), StoreError> {
        self.execute("UPDATE todos SET sort_key = ranked.n * $4 \
                 FROM (SELECT id, row_number() OVER (ORDER BY sort_key) \
                              + CASE WHEN row_number() OVER (ORDER BY sort_key) > $2 THEN $3 ELSE 0 END AS n \
                       FROM todos WHERE thread_id = $1) AS ranked \
                 WHERE todos.id = ranked.id", &params![thread_id, at, room, KEY_GAP]).await
        .context("renumbering the plan")?;
        Ok(())
    }

    /// Flips done/not-done of the steps at these 0-based `positions`, all in one statement
    /// that also counts the plan. Returns the plan's length and each position that named a
    /// step with the step after the change; positions past the end change nothing.
    pub async fn toggle_steps_at(
        &mut self,
        thread_id: &str,
        positions: &[i64],
    ) -> Result<StepsChanged<bool>, StoreError> {
        let targets = Targets::new(positions);
        let sql = match self.backend() {
            Backend::Sqlite => {
                "WITH plan AS (SELECT id, ROW_NUMBER() OVER (ORDER BY sort_key) - 1 AS rank \
                 FROM todos WHERE thread_id = $1 ORDER BY sort_key LIMIT $3) \
                 UPDATE todos SET done = NOT done, updated_at = $4 \
                 WHERE id IN (SELECT id FROM plan WHERE rank IN (SELECT value FROM json_each($2))) \
                 RETURNING sort_key, id, text, depth, done, \
                 (SELECT COUNT(*) FROM todos WHERE thread_id = $1) AS plan_len"
            }
            Backend::Postgres => {
                "WITH plan AS (SELECT id, ROW_NUMBER() OVER (ORDER BY sort_key) - 1 AS rank \
                 FROM todos WHERE thread_id = $1 ORDER BY sort_key LIMIT $3) \
                 UPDATE todos SET done = NOT done, updated_at = $4 FROM plan \
                 WHERE todos.id = plan.id AND plan.rank IN \
                 (SELECT value::bigint FROM jsonb_array_elements_text($2::jsonb)) \
                 RETURNING todos.sort_key, todos.id, todos.text, todos.depth, todos.done, \
                 (SELECT COUNT(*) FROM todos WHERE thread_id = $1) AS plan_len"
            }
        };
        let changed = self
            .batch_edit(thread_id, sql, &targets, "ticking steps")
            .await?;
        Ok(StepsChanged {
            len: changed.len,
            steps: changed
                .steps
                .into_iter()
                .map(|(position, step)| (position, step.done))
                .collect(),
        })
    }

    /// Rewrites the text of the steps at 0-based positions (`(position, text)`, each position
    /// once), in one statement that also counts the plan; see [`Self::toggle_steps_at`].
    pub async fn set_step_texts_at(
        &mut self,
        thread_id: &str,
        updates: &[(i64, &str)],
    ) -> Result<StepsChanged<()>, StoreError> {
        let positions: Vec<i64> = updates.iter().map(|(position, _)| *position).collect();
        let mut targets = Targets::new(&positions);
        targets.json = serde_json::to_string(
            &updates
                .iter()
                .filter(|(position, _)| *position >= 0)
                .map(|(position, text)| (position, text))
                .collect::<Vec<_>>(),
        )?;
        let sql = match self.backend() {
            Backend::Sqlite => {
                "WITH plan AS (SELECT id, ROW_NUMBER() OVER (ORDER BY sort_key) - 1 AS rank \
                 FROM todos WHERE thread_id = $1 ORDER BY sort_key LIMIT $3), \
                 hit AS (SELECT plan.id, json_extract(u.value, '$[1]') AS text FROM plan \
                 JOIN json_each($2) AS u ON plan.rank = json_extract(u.value, '$[0]')) \
                 UPDATE todos SET text = hit.text, updated_at = $4 FROM hit \
                 WHERE todos.id = hit.id \
                 RETURNING sort_key, id, text, depth, done, \
                 (SELECT COUNT(*) FROM todos WHERE thread_id = $1) AS plan_len"
            }
            Backend::Postgres => {
                "WITH plan AS (SELECT id, ROW_NUMBER() OVER (ORDER BY sort_key) - 1 AS rank \
                 FROM todos WHERE thread_id = $1 ORDER BY sort_key LIMIT $3), \
                 hit AS (SELECT plan.id, u.e->>1 AS text FROM plan \
                 JOIN jsonb_array_elements($2::jsonb) AS u(e) ON plan.rank = (u.e->>0)::bigint) \
                 UPDATE todos SET text = hit.text, updated_at = $4 FROM hit \
                 WHERE todos.id = hit.id \
                 RETURNING todos.sort_key, todos.id, todos.text, todos.depth, todos.done, \
                 (SELECT COUNT(*) FROM todos WHERE thread_id = $1) AS plan_len"
            }
        };
        let changed = self
            .batch_edit(thread_id, sql, &targets, "rewriting steps")
            .await?;
        Ok(StepsChanged {
            len: changed.len,
            steps: changed
                .steps
                .into_iter()
                .map(|(position, _)| (position, ()))
                .collect(),
        })
    }

    /// Runs a batch statement over `targets` (`$1` thread, `$2` the targets' JSON, `$3` how
    /// far to rank, `$4` now) and pairs what it changed with the positions.
    async fn batch_edit(
        &mut self,
        thread_id: &str,
        sql: &str,
        targets: &Targets,
        context: &'static str,
    ) -> Result<StepsChanged<PlanStep>, StoreError> {
        let at = now();
        let rows: Vec<ChangedRow> = self
            .fetch_all(sql, &params![thread_id, &targets.json, targets.limit, at])
            .await
            .context(context)?;
        self.steps_changed(thread_id, targets, rows).await
    }

    /// Pairs the rows a batch statement changed with the positions that named them (both in
    /// plan order), journals each step and finds the plan's length: from the statement, or,
    /// when no position named a step, by counting.
    async fn steps_changed(
        &mut self,
        thread_id: &str,
        targets: &Targets,
        mut rows: Vec<ChangedRow>,
    ) -> Result<StepsChanged<PlanStep>, StoreError> {
        let len = match rows.first() {
            Some(row) => row.plan_len,
            None => self.plan_len(thread_id).await?,
        };
        rows.sort_unstable_by_key(|row| row.sort_key);
        let named: Vec<i64> = targets
            .sorted
            .iter()
            .copied()
            .filter(|position| *position < len)
            .collect();
        if named.len() != rows.len() {
            return Err(StoreError::Inconsistent(format!(
                "a batch of step edits matched {} steps for {} positions",
                rows.len(),
                named.len()
            )));
        }
        let mut steps = Vec::with_capacity(rows.len());
        for (position, row) in named.into_iter().zip(rows) {
            let step = PlanStep {
                id: row.id,
                text: row.text,
                depth: row.depth,
                done: row.done,
            };
            self.updated_step(step.clone());
            steps.push((position, step));
        }
        Ok(StepsChanged { len, steps })
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
        let row: Option<PlanStep> = self.fetch_optional("UPDATE todos SET text = COALESCE($3, text), done = COALESCE($4, done), updated_at = $5 \
                 WHERE thread_id = $1 AND id = $2 RETURNING id, text, depth, done", &params![thread_id, id, text, done, at]).await
        .context("updating a step")?;
        if let Some(step) = &row {
            self.updated_step(step.clone());
        }
        Ok(row)
    }

    /// Deletes the steps of each range; returns how many each one held, in the order given.
    /// Nothing else moves: the steps after a range keep their keys.
    pub async fn remove_step_ranges(
        &mut self,
        thread_id: &str,
        ranges: &[StepRange],
    ) -> Result<Vec<u64>, StoreError> {
        let mut counts = Vec::with_capacity(ranges.len());
        for range in ranges {
            let ids: Vec<(i64,)> = self
                .fetch_all(
                    "DELETE FROM todos WHERE thread_id = $1 AND sort_key >= $2 AND sort_key < $3 \
                     RETURNING id",
                    &params![thread_id, range.start, range.end.unwrap_or(i64::MAX)],
                )
                .await
                .context("removing steps")?;
            counts.push(u64::try_from(ids.len()).unwrap_or(u64::MAX));
            if !ids.is_empty() {
                self.mark(Panel::Plan);
                self.journal_mut().plan.push(ListOp::Remove {
                    ids: ids.into_iter().map(|(id,)| id).collect(),
                });
            }
        }
        Ok(counts)
    }
}

/// Steps from the JSON array the plan's reads aggregate them into: `[id, text, depth, done]`
/// each, `done` as 0 or 1 (what both engines write for a boolean there).
pub(super) fn decode_steps(json: &str) -> Result<Vec<PlanStep>, StoreError> {
    let rows: Vec<(i64, String, i64, i64)> = serde_json::from_str(json)?;
    Ok(rows
        .into_iter()
        .map(|(id, text, depth, done)| PlanStep {
            id,
            text,
            depth,
            done: done != 0,
        })
        .collect())
}

/// A step with its key, as an insert returns it.
struct KeyedStep {
    key: i64,
    step: PlanStep,
}

record!(KeyedStep { sort_key: i64, id: i64, text: String, depth: i64, done: bool } => KeyedStep {
    key: sort_key,
    step: PlanStep { id, text, depth, done },
});

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

record!(StepPlace { id: i64, sort_key: i64, depth: i64 } => StepPlace { id, key: sort_key, depth });

impl WorkspaceRepository {
    /// Key and depth of the step with stable id `id` in this thread's plan.
    pub async fn step_place(
        &mut self,
        thread_id: &str,
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
        thread_id: &str,
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
        thread_id: &str,
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

impl WorkspaceRepository {
    /// Makes the plan exactly `steps`, in order, keeping their ids: a restore. (Ids never come
    /// back into use otherwise, so an id of this thread's past is free again once its current
    /// steps are gone.)
    pub async fn replace_plan(
        &mut self,
        thread_id: &str,
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
