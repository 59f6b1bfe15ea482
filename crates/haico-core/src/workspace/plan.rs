//! The plan: an ordered outline of steps, each with a text, a depth and a done mark.
//!
//! The agent names steps by 1-based index in the plan as it stood when its call began (every
//! target of a call is resolved against that snapshot before anything changes); a person names
//! them by stable id. Both paths keep the plan an outline: its first step is at depth 0 and
//! each step is at most one level deeper than the one before it, never deeper than
//! [`MAX_DEPTH`]. A step's sub-steps are the steps right after it that are deeper; placing a
//! step "under" another puts it after that step's last sub-step, and removing a step removes
//! its sub-steps too. Every plan edit holds the thread, so the plan never changes under it
//! between resolving an index and writing.
//!
//! Indices are ranks in the store's key order, not stored numbers: the store finds the step at
//! an index by walking its ordered index, and an insertion or removal writes only the steps it
//! adds or deletes (see `store/plan.rs`).

use crate::workspace::handles::PlanEdit;
use crate::{
    workspace::announce::Source, workspace::error::WorkspaceError, workspace::rules::as_i64,
    workspace::rules::count, workspace::rules::plural, workspace::rules::position_of,
    workspace::rules::require_batch, workspace::rules::resolve_indices,
};
use haico_store::{InsertAt, KeyBefore, PlanStep, StepRange, StepsChanged};

mod by_id;
mod checks;

pub(in crate::workspace) use checks::check_recorded_step;
use checks::{checked_outline, checked_step_text, depth_out_of_range, too_deep};

/// The longest step text, in characters.
pub const MAX_STEP_CHARS: usize = 2_000;
/// The deepest nesting the outline allows (0 is top level).
pub const MAX_DEPTH: i64 = 12;

/// One step of an outline to add: its text and its depth inside that outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepDraft {
    /// What the step is.
    pub text: String,
    /// 0 for a top-level step of the outline, 1 for its sub-step, and so on.
    pub depth: i64,
}

/// Where an outline went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutlinePlace {
    /// After the last step of the plan.
    End,
    /// Nested under the step at this 1-based index, whose text is given.
    Under {
        /// The parent's index.
        index: i64,
        /// The parent's text.
        text: String,
    },
}

/// What adding an outline did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineAdded {
    /// Steps added.
    pub added: usize,
    /// Steps in the plan now.
    pub total: usize,
    /// Where they went.
    pub place: OutlinePlace,
}

/// The outcome of a batch over 1-based indices: what each valid target became, and the
/// indices that named nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepBatch<T> {
    /// Per target that was changed, its 1-based index and what happened to it.
    pub applied: Vec<(i64, T)>,
    /// The indices that name no step, as given.
    pub out_of_range: Vec<i64>,
    /// Steps in the plan when the call began.
    pub len: usize,
}

/// A step that a removal took out, with how many sub-steps went with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemovedStep {
    /// Its text.
    pub text: String,
    /// Sub-steps removed with it.
    pub sub_steps: usize,
}

/// Where a person puts a new step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepPlacement {
    /// At the end of the plan, at this depth (0 when not given), which may be at most one
    /// deeper than the last step.
    End {
        /// The depth asked for.
        depth: Option<i64>,
    },
    /// As the last sub-step of the step with this id.
    Under(i64),
    /// As the next sibling of the step with this id, after its sub-steps.
    After(i64),
}

impl StepPlacement {
    /// The placement a request names with its optional `parent_id`, `after_id` and `depth`;
    /// they exclude each other (the depth follows from a parent or a sibling).
    pub fn from_fields(
        parent_id: Option<i64>,
        after_id: Option<i64>,
        depth: Option<i64>,
    ) -> Result<Self, WorkspaceError> {
        match (parent_id, after_id, depth) {
            (Some(_), Some(_), _) => Err(WorkspaceError::invalid(
                "give `parent_id` (nest under a step) or `after_id` (follow a step), not both",
            )),
            (Some(_), None, Some(_)) | (None, Some(_), Some(_)) => Err(WorkspaceError::invalid(
                "`depth` follows from `parent_id` or `after_id`; send it only when appending \
                     at the end of the plan",
            )),
            (Some(parent), None, None) => Ok(Self::Under(parent)),
            (None, Some(sibling), None) => Ok(Self::After(sibling)),
            (None, None, depth) => {
                if let Some(depth) = depth
                    && !(0..=MAX_DEPTH).contains(&depth)
                {
                    return Err(depth_out_of_range("depth", depth));
                }
                Ok(Self::End { depth })
            }
        }
    }
}

/// A batch's report in the order the caller named its targets: `indices` resolved against the
/// length the statement counted, each in-range target with what the statement did to it.
fn batch_in_order<T: Clone>(indices: &[i64], changed: StepsChanged<T>) -> StepBatch<T> {
    let len = count(changed.len);
    let targets = resolve_indices(indices.iter().copied(), len);
    let applied = targets
        .positions
        .iter()
        .filter_map(|position| {
            let position = as_i64(*position);
            changed
                .steps
                .iter()
                .find(|(at, _)| *at == position)
                .map(|(_, result)| (position + 1, result.clone()))
        })
        .collect();
    StepBatch {
        out_of_range: targets.out_of_range,
        len,
        applied,
    }
}

/// The 0-based positions the store takes for the 1-based indices the tools are given.
fn zero_based(indices: &[i64]) -> Vec<i64> {
    indices
        .iter()
        .map(|index| index.saturating_sub(1))
        .collect()
}

/// Refuses an outline that would go deeper than [`MAX_DEPTH`] once offset by `base`.
fn check_depth(steps: &[haico_store::NewPlanStep], base: i64) -> Result<(), WorkspaceError> {
    let deepest = steps.iter().map(|s| s.depth).max().unwrap_or(0) + base;
    if deepest > MAX_DEPTH {
        return Err(too_deep(format_args!(
            "the outline would reach depth {deepest}"
        )));
    }
    Ok(())
}

impl PlanEdit<'_> {
    /// Adds a whole outline: at the end of the plan, or nested under the step at the 1-based
    /// `parent_index` (after its last sub-step, every depth offset by the parent's depth + 1).
    /// A malformed outline or an unknown parent adds nothing.
    pub async fn add_outline(
        &mut self,
        steps: &[StepDraft],
        parent_index: Option<i64>,
    ) -> Result<OutlineAdded, WorkspaceError> {
        let mut steps = checked_outline(steps)?;
        self.edit.lock().await?;
        let thread = self.edit.thread_id();
        let Some(index) = parent_index else {
            // At the end (the usual case): reading the end and inserting are one statement.
            check_depth(&steps, 0)?;
            let (len, added) = self
                .edit
                .repo()
                .plan()
                .append_steps(&thread, &steps)
                .await?;
            return Ok(OutlineAdded {
                added: added.len(),
                total: count(len) + added.len(),
                place: OutlinePlace::End,
            });
        };
        // The length, the parent and the run of its sub-steps come in one statement.
        let position = (index >= 1).then(|| index - 1);
        let (len, place) = self
            .edit
            .repo()
            .plan()
            .nesting_place(&thread, position)
            .await?;
        let len = count(len);
        let Some(place) = place.filter(|_| position_of(index, len).is_some()) else {
            return Err(WorkspaceError::invalid(format!(
                "`parent_index` {index} does not name a step (the plan has {}); nothing was \
                 added",
                plural(len, "step")
            )));
        };
        let parent = place.parent;
        let at = InsertAt {
            index: index - 1 + place.size,
            before: place.subtree.end,
            after: KeyBefore::Read(place.last_key),
        };
        let base = parent.depth + 1;
        check_depth(&steps, base)?;
        for step in &mut steps {
            step.depth += base;
        }
        self.edit
            .repo()
            .plan()
            .insert_steps(&thread, at, &steps)
            .await?;
        Ok(OutlineAdded {
            added: steps.len(),
            total: len + steps.len(),
            place: OutlinePlace::Under {
                index,
                text: parent.text,
            },
        })
    }

    /// Flips done / not done of the steps at these 1-based indices; each applied target
    /// reports its new state (`true`: done). One statement finds, ticks and counts them all.
    pub async fn toggle(&mut self, indices: &[i64]) -> Result<StepBatch<bool>, WorkspaceError> {
        require_batch(indices, "indices")?;
        self.edit.lock().await?;
        let thread = self.edit.thread_id();
        let positions = zero_based(indices);
        let changed = self
            .edit
            .repo()
            .plan()
            .toggle_steps_at(&thread, &positions)
            .await?;
        Ok(batch_in_order(indices, changed))
    }

    /// Rewrites the text of the steps at these 1-based indices (depth and done stay). Each
    /// index may appear once. One statement finds, rewrites and counts them all.
    pub async fn rewrite(
        &mut self,
        updates: &[(i64, String)],
    ) -> Result<StepBatch<()>, WorkspaceError> {
        require_batch(updates, "updates")?;
        let mut texts = Vec::with_capacity(updates.len());
        for (i, (index, text)) in updates.iter().enumerate() {
            let text = checked_step_text(text, &format!("updates[{i}].text"))?;
            if updates[..i].iter().any(|(earlier, _)| earlier == index) {
                return Err(WorkspaceError::invalid(format!(
                    "index {index} appears more than once in `updates`; give each step one new text"
                )));
            }
            texts.push((index.saturating_sub(1), text));
        }
        self.edit.lock().await?;
        let thread = self.edit.thread_id();
        let changed = self
            .edit
            .repo()
            .plan()
            .set_step_texts_at(&thread, &texts)
            .await?;
        let indices: Vec<i64> = updates.iter().map(|(index, _)| *index).collect();
        Ok(batch_in_order(&indices, changed))
    }

    /// Removes the steps at these 1-based indices with their sub-steps. A target inside
    /// another target's sub-steps goes with it and is not reported on its own.
    pub async fn remove(
        &mut self,
        indices: &[i64],
    ) -> Result<StepBatch<RemovedStep>, WorkspaceError> {
        require_batch(indices, "indices")?;
        self.edit.lock().await?;
        let thread = self.edit.thread_id();
        // Resolve every target and its sub-steps against the plan as it is now, in one
        // statement with the plan's length: (index, run of keys, text).
        let (len, runs) = self
            .edit
            .repo()
            .plan()
            .runs_at(&thread, &zero_based(indices))
            .await?;
        let len = count(len);
        let targets = resolve_indices(indices.iter().copied(), len);
        let mut ranges: Vec<(i64, StepRange, String)> = Vec::new();
        for position in targets.positions {
            let index = as_i64(position);
            if let Some(run) = runs.iter().find(|run| run.position == index) {
                ranges.push((index, run.range, run.text.clone()));
            }
        }
        ranges.sort_by_key(|(index, _, _)| *index);
        // Sub-trees either nest or are disjoint: drop the ranges inside an earlier one.
        let mut kept: Vec<(i64, StepRange, String)> = Vec::new();
        for (index, range, text) in ranges {
            if kept
                .last()
                .is_some_and(|(_, last, _)| last.contains(range.start))
            {
                continue;
            }
            kept.push((index, range, text));
        }
        let only_ranges: Vec<StepRange> = kept.iter().map(|(_, r, _)| *r).collect();
        let removed = self
            .edit
            .repo()
            .plan()
            .remove_step_ranges(&thread, &only_ranges)
            .await?;
        Ok(StepBatch {
            applied: kept
                .into_iter()
                .zip(removed)
                .map(|((index, _, text), gone)| {
                    (
                        index + 1,
                        RemovedStep {
                            text,
                            sub_steps: usize::try_from(gone.saturating_sub(1))
                                .unwrap_or(usize::MAX),
                        },
                    )
                })
                .collect(),
            out_of_range: targets.out_of_range,
            len,
        })
    }
}

/// The plan as numbered lines (`N. [ ] text`), two spaces of indent per depth level: what
/// `list_todos` answers and the agent's prompt shows. Written into one buffer sized up front,
/// since a long plan is rendered on every `list_todos`.
pub fn render_plan(steps: &[PlanStep]) -> String {
    use std::fmt::Write as _;
    if steps.is_empty() {
        return "(the plan is empty)".to_string();
    }
    let size: usize = steps
        .iter()
        .map(|step| step.text.len() + 2 * usize::try_from(step.depth).unwrap_or(0) + 12)
        .sum();
    let mut out = String::with_capacity(size);
    for (i, step) in steps.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for _ in 0..step.depth.max(0) {
            out.push_str("  ");
        }
        let mark = if step.done { "[x] " } else { "[ ] " };
        // Writing into a String cannot fail.
        let _ = write!(out, "{}. ", i + 1);
        out.push_str(mark);
        out.push_str(&step.text);
    }
    out
}
