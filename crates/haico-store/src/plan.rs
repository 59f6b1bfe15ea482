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

use super::repository::repository;
use crate::panels::Panel;
use crate::thread_id::ThreadId;
use crate::{
    error::Context, error::StoreError, journal::ListOp, models::PlanStep, query::params,
    query::row_shape, repository::Backend, repository::now,
};

mod batch;
mod by_id;
mod keys;

pub use batch::StepRun;
pub use by_id::StepPlace;
pub use keys::{KEY_GAP, StepRange};

/// A step to insert: text and absolute depth.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewPlanStep {
    /// The step's text.
    pub text: String,
    /// Absolute outline depth.
    pub depth: i64,
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

row_shape!(StepAt { id: i64, sort_key: i64, depth: i64, text: String, done: bool } => StepAt {
    id,
    key: sort_key,
    depth,
    text,
    done,
});

row_shape!(PlanStep { id: i64, text: String, depth: i64, done: bool } => PlanStep {
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
    /// The key of the step just before that index, when the caller has already read it.
    pub after: KeyBefore,
}

/// The key of the step ahead of an insertion point, when the caller read it with something
/// else it needed ([`PlanRepo::plan_tail`]), so inserting does not ask for it again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum KeyBefore {
    /// Not read: inserting reads it.
    #[default]
    Unread,
    /// Read: the key, or `None` when the insertion point is the plan's start.
    Read(Option<i64>),
}

/// The plan's length and its last step's key and depth, read together by
/// [`PlanRepo::plan_tail`] for a step added at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanTail {
    /// How many steps the plan has.
    pub len: i64,
    /// The last step's key and depth, when there is one.
    pub last: Option<(i64, i64)>,
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

repository!(
    /// The plan panel (`todos`): steps by position and by id.
    PlanRepo,
    plan
);

impl PlanRepo<'_> {
    /// The whole plan, in order. On SQLite the rows are read one by one, inline; on
    /// PostgreSQL one row comes back (the plan as a JSON array), because fetching thousands of
    /// rows one by one through sqlx costs more than parsing them.
    pub async fn plan_steps(&mut self, thread_id: &ThreadId) -> Result<Vec<PlanStep>, StoreError> {
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

    /// The thread's turn index and its plan, or `None` when the thread does not exist: what a
    /// read-only tool needs. On PostgreSQL one statement reads both (one round trip); SQLite's
    /// two run inline, which costs no trip.
    pub async fn plan_on_thread(
        &mut self,
        thread_id: &ThreadId,
    ) -> Result<Option<(i64, Vec<PlanStep>)>, StoreError> {
        if self.backend() == Backend::Sqlite {
            let Some(thread) = self.threads().get_thread(thread_id).await? else {
                return Ok(None);
            };
            return Ok(Some((thread.turn_index, self.plan_steps(thread_id).await?)));
        }
        let row: Option<(i64, String)> = self
            .fetch_optional(
                "SELECT t.turn_index, COALESCE((SELECT json_agg(json_build_array(id, text, \
                 depth, CASE WHEN done THEN 1 ELSE 0 END) ORDER BY sort_key)::text FROM todos \
                 WHERE thread_id = $1), '[]') FROM threads t WHERE t.id = $1",
                &params![thread_id.as_str()],
            )
            .await
            .context("listing the plan")?;
        row.map(|(turn, json)| Ok((turn, decode_steps(&json)?)))
            .transpose()
    }

    /// How many steps the plan has.
    pub async fn plan_len(&mut self, thread_id: &ThreadId) -> Result<i64, StoreError> {
        let (count,): (i64,) = self
            .fetch_one(
                "SELECT COUNT(*) FROM todos WHERE thread_id = $1",
                &params![thread_id],
            )
            .await
            .context("counting the plan")?;
        Ok(count)
    }

    /// The plan's length and its last step, in one statement, for adding at the end.
    pub async fn plan_tail(&mut self, thread_id: &ThreadId) -> Result<PlanTail, StoreError> {
        let (len, key, depth): (i64, Option<i64>, Option<i64>) = self
            .fetch_one(
                "SELECT COUNT(*), MAX(sort_key), (SELECT depth FROM todos WHERE thread_id = $1 \
                     ORDER BY sort_key DESC LIMIT 1) FROM todos WHERE thread_id = $1",
                &params![thread_id],
            )
            .await
            .context("reading the plan's end")?;
        Ok(PlanTail {
            len,
            last: key.zip(depth),
        })
    }

    /// The 0-based index of the step with key `key`: how many steps come before it.
    pub async fn step_index(&mut self, thread_id: &ThreadId, key: i64) -> Result<i64, StoreError> {
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
        thread_id: &ThreadId,
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

    /// The plan's length and, when a step stands at 0-based `position`, where steps nested
    /// under it go: the parent, its sub-steps, their count and the key of the last one, in one
    /// statement (so an agent's call sends it with the thread's lock; it was four).
    pub async fn nesting_place(
        &mut self,
        thread_id: &ThreadId,
        position: Option<i64>,
    ) -> Result<(i64, Option<NestingPlace>), StoreError> {
        let row: NestingRow = self
            .fetch_one(
                "WITH plan AS (SELECT COUNT(*) AS len FROM todos WHERE thread_id = $1), \
                 parent AS ( \
                   SELECT id, sort_key, depth, text, done FROM todos \
                   WHERE thread_id = $1 ORDER BY sort_key LIMIT 1 OFFSET $2), \
                 run AS ( \
                   SELECT parent.sort_key AS start_key, \
                     (SELECT MIN(t.sort_key) FROM todos t WHERE t.thread_id = $1 \
                        AND t.sort_key > parent.sort_key AND t.depth <= parent.depth) AS end_key \
                   FROM parent) \
                 SELECT plan.len, parent.id, parent.sort_key, parent.depth, parent.text, \
                   parent.done, run.end_key, \
                   (SELECT COUNT(*) FROM todos t WHERE t.thread_id = $1 \
                      AND t.sort_key >= run.start_key \
                      AND t.sort_key < COALESCE(run.end_key, $3)) AS size, \
                   (SELECT MAX(t.sort_key) FROM todos t WHERE t.thread_id = $1 \
                      AND t.sort_key < COALESCE(run.end_key, $3)) AS last_key \
                 FROM plan LEFT JOIN parent ON TRUE LEFT JOIN run ON TRUE",
                // No position: an offset past any plan, so no parent.
                &params![thread_id, position.unwrap_or(i64::MAX), i64::MAX],
            )
            .await
            .context("finding where nested steps go")?;
        Ok((row.len, row.place))
    }

    /// Inserts `steps` so the first lands at `at.index`, ahead of the step keyed `at.before`,
    /// and returns them with their ids. Only the new rows are written, unless the gap there is
    /// used up: then the plan is renumbered first, leaving room for them.
    pub async fn insert_steps(
        &mut self,
        thread_id: &ThreadId,
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

    /// Appends `steps` at the end of the plan and returns the plan's length before them, with
    /// the new steps and their ids. On PostgreSQL the length, the last key and the insert are
    /// one statement, so an agent's call sends it with the thread's lock: one round trip where
    /// reading the end and inserting were two. When the keys at the end have no room left, it
    /// inserts nothing and falls back to [`insert_steps`](Self::insert_steps), which renumbers.
    pub async fn append_steps(
        &mut self,
        thread_id: &ThreadId,
        steps: &[NewPlanStep],
    ) -> Result<(i64, Vec<PlanStep>), StoreError> {
        let count = i64::try_from(steps.len()).unwrap_or(i64::MAX);
        if let (Backend::Postgres, Some(last_with_room)) =
            (self.backend(), keys::last_key_with_room(count))
            && !steps.is_empty()
        {
            let batch = serde_json::to_string(steps)?;
            let rows: Vec<AppendedRow> = self
                .fetch_all(
                    "WITH tail AS ( \
                       SELECT COUNT(*) AS len, COALESCE(MAX(sort_key), 0) AS last \
                       FROM todos WHERE thread_id = $1), \
                     added AS ( \
                       INSERT INTO todos (thread_id, sort_key, text, depth, done, created_at, \
                         updated_at) \
                       SELECT $1, tail.last + $2 * s.ord, s.step->>'text', \
                         (s.step->>'depth')::bigint, FALSE, $3, $3 \
                       FROM tail, jsonb_array_elements($4::jsonb) WITH ORDINALITY AS s(step, ord) \
                       WHERE tail.last <= $5 \
                       RETURNING sort_key, id, text, depth, done) \
                     SELECT tail.len, added.* FROM tail LEFT JOIN added ON TRUE",
                    &params![
                        thread_id,
                        keys::KEY_GAP,
                        now(),
                        batch.as_str(),
                        last_with_room
                    ],
                )
                .await
                .context("appending steps")?;
            let len = rows.first().map_or(0, |row| row.len);
            let mut added: Vec<(i64, PlanStep)> =
                rows.into_iter().filter_map(|row| row.step).collect();
            if !added.is_empty() {
                self.mark(Panel::Plan);
                // The order RETURNING lists rows in is not promised; their keys are.
                added.sort_by_key(|(key, _)| *key);
                let inserted: Vec<PlanStep> = added.into_iter().map(|(_, step)| step).collect();
                self.journal_mut().plan.push(ListOp::Insert {
                    at: usize::try_from(len).unwrap_or(0),
                    items: inserted.clone(),
                });
                return Ok((len, inserted));
            }
        }
        let tail = self.plan_tail(thread_id).await?;
        let at = InsertAt {
            index: tail.len,
            before: None,
            after: KeyBefore::Read(tail.last.map(|(key, _)| key)),
        };
        Ok((tail.len, self.insert_steps(thread_id, at, steps).await?))
    }

    /// The first key and the stride of `count` new steps going in at `at`: spread over the
    /// gap there, or, when it is used up, the room a renumber leaves.
    async fn keys_for(
        &mut self,
        thread_id: &ThreadId,
        at: InsertAt,
        count: i64,
    ) -> Result<(i64, i64), StoreError> {
        let previous = match at.after {
            KeyBefore::Read(key) => key,
            KeyBefore::Unread => self.key_before(thread_id, at.before).await?,
        };
        if let Some(room) = keys::room(previous, at.before, count) {
            return Ok(room);
        }
        self.renumber(thread_id, at.index, count).await?;
        Ok(keys::after_renumber(at.index))
    }

    /// The key of the step ahead of the step keyed `before` (of the last step when `None`).
    async fn key_before(
        &mut self,
        thread_id: &ThreadId,
        before: Option<i64>,
    ) -> Result<Option<i64>, StoreError> {
        let (previous,): (Option<i64>,) = self
            .fetch_one(
                "SELECT MAX(sort_key) FROM todos WHERE thread_id = $1 AND sort_key < $2",
                &params![thread_id, before.unwrap_or(i64::MAX)],
            )
            .await
            .context("finding room for steps")?;
        Ok(previous)
    }

    /// Gives the thread's steps keys `KEY_GAP` apart in their order, leaving `room` free keys
    /// ahead of the step at 0-based index `at` (the `room` new steps then take keys
    /// `(at + 1) * KEY_GAP` onwards). One statement; every row of the plan is written, which is
    /// why it only happens when a gap is used up.
    async fn renumber(
        &mut self,
        thread_id: &ThreadId,
        at: i64,
        room: i64,
    ) -> Result<(), StoreError> {
        self.execute("UPDATE todos SET sort_key = ranked.n * $4 \
                 FROM (SELECT id, row_number() OVER (ORDER BY sort_key) \
                              + CASE WHEN row_number() OVER (ORDER BY sort_key) > $2 THEN $3 ELSE 0 END AS n \
                       FROM todos WHERE thread_id = $1) AS ranked \
                 WHERE todos.id = ranked.id", &params![thread_id, at, room, KEY_GAP]).await
        .context("renumbering the plan")?;
        Ok(())
    }

    /// Updates a step by id (the user path): text, done and depth, each only when given.
    pub async fn update_step(
        &mut self,
        thread_id: &ThreadId,
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
        thread_id: &ThreadId,
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

/// A row of [`PlanRepo::append_steps`]: the plan's length before, and a new step with its
/// key (none when nothing was inserted).
struct AppendedRow {
    len: i64,
    step: Option<(i64, PlanStep)>,
}

row_shape!(AppendedRow {
    len: i64,
    sort_key: Option<i64>,
    id: Option<i64>,
    text: Option<String>,
    depth: Option<i64>,
    done: Option<bool>,
} => AppendedRow {
    len,
    step: match (sort_key, id, text, depth, done) {
        (Some(key), Some(id), Some(text), Some(depth), Some(done)) => {
            Some((key, PlanStep { id, text, depth, done }))
        }
        _ => None,
    },
});

/// Where steps nested under a parent go: the parent, the run of its sub-steps, how many steps
/// that run holds (the parent included), and the key of the run's last step.
#[derive(Debug, Clone, PartialEq)]
pub struct NestingPlace {
    /// The parent step.
    pub parent: StepAt,
    /// The parent and its sub-steps, by key.
    pub subtree: StepRange,
    /// How many steps the run holds, the parent included.
    pub size: i64,
    /// The key of the last step of the run: the new steps go after it.
    pub last_key: Option<i64>,
}

/// A row of [`PlanRepo::nesting_place`].
struct NestingRow {
    len: i64,
    place: Option<NestingPlace>,
}

row_shape!(NestingRow {
    len: i64,
    id: Option<i64>,
    sort_key: Option<i64>,
    depth: Option<i64>,
    text: Option<String>,
    done: Option<bool>,
    end_key: Option<i64>,
    size: Option<i64>,
    last_key: Option<i64>,
} => NestingRow {
    len,
    place: match (id, sort_key, depth, text, done, size) {
        (Some(id), Some(key), Some(depth), Some(text), Some(done), Some(size)) => {
            Some(NestingPlace {
                parent: StepAt { id, key, depth, text, done },
                subtree: StepRange { start: key, end: end_key },
                size,
                last_key,
            })
        }
        _ => None,
    },
});

/// A step with its key, as an insert returns it.
struct KeyedStep {
    key: i64,
    step: PlanStep,
}

row_shape!(KeyedStep { sort_key: i64, id: i64, text: String, depth: i64, done: bool } => KeyedStep {
    key: sort_key,
    step: PlanStep { id, text, depth, done },
});
