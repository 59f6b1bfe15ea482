//! Edits of steps by position in one statement each (the agent's toggles and rewrites): the
//! statement finds the steps by rank, changes them and counts the plan. A removal's targets are
//! found the same way, with the runs of sub-steps it deletes.

use super::{PlanRepo, PlanStep, StepsChanged, keys::Targets};
use crate::thread_id::ThreadId;
use crate::{
    error::Context, error::StoreError, journal::ListOp, panels::Panel, query::params,
    query::row_shape, repository::Backend, repository::now,
};

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

row_shape!(ChangedRow { sort_key: i64, id: i64, text: String, depth: i64, done: bool,
    plan_len: i64 } => ChangedRow { sort_key, id, text, depth, done, plan_len });

/// A step found by position with the run of its sub-steps: what a removal deletes.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRun {
    /// The step's 0-based position.
    pub position: i64,
    /// The step and its sub-steps, by key.
    pub range: super::StepRange,
    /// The step's text.
    pub text: String,
}

/// A row of [`PlanRepo::runs_at`]: the plan's length, and a step found (none when no position
/// named one).
struct RunRow {
    len: i64,
    run: Option<StepRun>,
}

row_shape!(RunRow {
    len: i64,
    rank: Option<i64>,
    sort_key: Option<i64>,
    text: Option<String>,
    end_key: Option<i64>,
} => RunRow {
    len,
    run: match (rank, sort_key, text) {
        (Some(position), Some(start), Some(text)) => Some(StepRun {
            position,
            range: super::StepRange { start, end: end_key },
            text,
        }),
        _ => None,
    },
});

impl PlanRepo<'_> {
    /// The plan's length and, for each 0-based position that names a step, that step with the
    /// run of its sub-steps (up to the next step that is not deeper), in one statement: what a
    /// removal resolves before it deletes (it was a statement for the length and two per
    /// target). Positions past the end find nothing.
    pub async fn runs_at(
        &mut self,
        thread_id: &ThreadId,
        positions: &[i64],
    ) -> Result<(i64, Vec<StepRun>), StoreError> {
        let targets = Targets::new(positions);
        let named = match self.backend() {
            Backend::Sqlite => "rank IN (SELECT value FROM json_each($2))",
            Backend::Postgres => {
                "rank = ANY (ARRAY(SELECT value::bigint FROM jsonb_array_elements_text($2::jsonb)))"
            }
        };
        let sql = format!(
            "WITH plan AS (SELECT sort_key, depth, text, \
               ROW_NUMBER() OVER (ORDER BY sort_key) - 1 AS rank \
               FROM todos WHERE thread_id = $1 ORDER BY sort_key LIMIT $3), \
             hit AS (SELECT * FROM plan WHERE {named}) \
             SELECT (SELECT COUNT(*) FROM todos WHERE thread_id = $1) AS len, hit.rank, \
               hit.sort_key, hit.text, \
               (SELECT MIN(t.sort_key) FROM todos t WHERE t.thread_id = $1 \
                  AND t.sort_key > hit.sort_key AND t.depth <= hit.depth) AS end_key \
             FROM (SELECT 1 AS one) AS one LEFT JOIN hit ON TRUE"
        );
        let rows: Vec<RunRow> = self
            .fetch_all(
                &sql,
                &params![thread_id, targets.json.as_str(), targets.limit],
            )
            .await
            .context("finding steps to remove")?;
        let len = rows.first().map_or(0, |row| row.len);
        Ok((len, rows.into_iter().filter_map(|row| row.run).collect()))
    }

    /// Flips done/not-done of the steps at these 0-based `positions`, all in one statement
    /// that also counts the plan. Returns the plan's length and each position that named a
    /// step with the step after the change; positions past the end change nothing.
    pub async fn toggle_steps_at(
        &mut self,
        thread_id: &ThreadId,
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
            // The positions as an array compared with `= ANY` (not `IN (SELECT …)`): a plain
            // filter, so the ranked steps are narrowed to the named ones before each is looked
            // up; as a semi-join the generic plan looked up every ranked step first.
            Backend::Postgres => {
                "WITH plan AS (SELECT id, ROW_NUMBER() OVER (ORDER BY sort_key) - 1 AS rank \
                 FROM todos WHERE thread_id = $1 ORDER BY sort_key LIMIT $3) \
                 UPDATE todos SET done = NOT done, updated_at = $4 FROM plan \
                 WHERE todos.id = plan.id AND plan.rank = ANY (ARRAY( \
                   SELECT value::bigint FROM jsonb_array_elements_text($2::jsonb))) \
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
        thread_id: &ThreadId,
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
        thread_id: &ThreadId,
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
        thread_id: &ThreadId,
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
    pub(super) fn updated_step(&mut self, step: PlanStep) {
        self.mark(Panel::Plan);
        self.journal_mut().plan.push(ListOp::Update { item: step });
    }
}
