//! The plan's input rules: an outline's texts and depths, a step's text, the depth limit and
//! its one text, and what a recording's steps must satisfy.

use super::{MAX_DEPTH, MAX_STEP_CHARS, StepDraft};
use crate::{
    workspace::error::WorkspaceError, workspace::rules::require_batch,
    workspace::rules::require_text,
};
use haico_store::{NewPlanStep, PlanStep};

/// Checks an outline: every text, and depths that start at 0 and deepen one level at a time.
pub(super) fn checked_outline(steps: &[StepDraft]) -> Result<Vec<NewPlanStep>, WorkspaceError> {
    require_batch(steps, "steps")?;
    let mut checked = Vec::with_capacity(steps.len());
    let mut previous: Option<i64> = None;
    for (i, step) in steps.iter().enumerate() {
        let text = require_text(&step.text, &format!("steps[{i}].text"), MAX_STEP_CHARS)?;
        let depth = step.depth;
        match previous {
            None if depth != 0 => {
                return Err(WorkspaceError::invalid(format!(
                    "`steps[0].depth` is {depth}: the first step of an outline must have depth \
                     0. To add sub-steps under an existing step, give parent_index (that \
                     step's number in the plan) and depth 0 for its direct sub-steps"
                )));
            }
            Some(prev) if depth > prev + 1 => {
                return Err(WorkspaceError::invalid(format!(
                    "`steps[{i}].depth` is {depth} right after a step of depth {prev}: a step \
                     can be at most one level deeper than the step before it"
                )));
            }
            _ => {}
        }
        previous = Some(depth);
        checked.push(NewPlanStep {
            text: text.to_string(),
            depth,
        });
    }
    Ok(checked)
}

/// Checks the text of a step to write.
pub(super) fn checked_step_text<'a>(text: &'a str, field: &str) -> Result<&'a str, WorkspaceError> {
    require_text(text, field, MAX_STEP_CHARS)
}

/// "`depth` is -1: give a depth from 0 to 12".
pub(super) fn depth_out_of_range(field: &str, depth: i64) -> WorkspaceError {
    WorkspaceError::invalid(format!(
        "`{field}` is {depth}: give a depth from 0 to {MAX_DEPTH}"
    ))
}

/// "…; the plan nests at most 12 levels": the one text of the depth limit.
pub(super) fn too_deep(what: std::fmt::Arguments<'_>) -> WorkspaceError {
    WorkspaceError::invalid(format!("{what}; the plan nests at most {MAX_DEPTH} levels"))
}

/// Checks a step as a recording brings it in (in a whole plan or an operation's items) by the
/// rules every edit keeps: its text, and a depth from 0 to [`MAX_DEPTH`]. `field` names it in
/// errors (`data[0]`).
pub(in crate::workspace) fn check_recorded_step(
    step: &PlanStep,
    field: &str,
) -> Result<(), WorkspaceError> {
    checked_step_text(&step.text, &format!("{field}.text"))?;
    if step.depth > MAX_DEPTH {
        return Err(too_deep(format_args!("`{field}.depth` is {}", step.depth)));
    }
    if step.depth < 0 {
        return Err(depth_out_of_range(&format!("{field}.depth"), step.depth));
    }
    Ok(())
}
