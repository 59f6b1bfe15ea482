//! Plan tools: the outline of steps the agent keeps and ticks off.
//!
//! Steps are addressed by 1-based index in the plan as it stands when the call starts; the
//! rules (outline shape, placement, sub-steps) are the workspace's own ([`crate::workspace::plan`]).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::{
    tools::output::ToolResult, tools::spec::schema_bound, tools::summary::nothing_changed,
    tools::summary::out_of_range, tools::summary::skipped_out_of_range,
};

use haico_core::{
    workspace::Edit, workspace::MAX_DEPTH, workspace::MAX_STEP_CHARS, workspace::View,
    workspace::plan::OutlinePlace, workspace::plan::StepBatch, workspace::plan::StepDraft,
    workspace::plan::render_plan, workspace::rules::MAX_BATCH, workspace::rules::plural,
};
use haico_macros::{workspace_tool, workspace_tools};

/// Keeps the plan.
pub struct PlanTools;

/// One step of an outline to add.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepInput {
    /// The step, in a few words.
    #[schemars(length(min = 1, max = schema_bound(MAX_STEP_CHARS)))]
    pub text: String,
    /// 0 for a top-level step, 1 for a sub-step of the step before it, and so on.
    #[serde(default)]
    #[schemars(range(max = MAX_DEPTH))]
    pub depth: u32,
}

/// Arguments of `add_todos`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddTodosArgs {
    /// The outline, in order; the first step has depth 0.
    #[schemars(length(min = 1, max = MAX_BATCH))]
    pub steps: Vec<StepInput>,
    /// Number of the step to nest the outline under; leave it out to add it at the end.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub parent_index: Option<i64>,
}

/// Arguments of `toggle_todos` and `remove_todos`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepIndicesArgs {
    /// Numbers of the steps, as in the current plan.
    #[schemars(length(min = 1, max = MAX_BATCH), inner(range(min = 1)))]
    pub indices: Vec<i64>,
}

/// One rewrite for `update_todos`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepRewrite {
    /// Number of the step, as in the current plan.
    #[schemars(range(min = 1))]
    pub index: i64,
    /// The step's new text.
    #[schemars(length(min = 1, max = schema_bound(MAX_STEP_CHARS)))]
    pub text: String,
}

/// Arguments of `update_todos`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateTodosArgs {
    /// The new texts.
    #[schemars(length(min = 1, max = MAX_BATCH))]
    pub updates: Vec<StepRewrite>,
}

#[workspace_tools]
impl PlanTools {
    #[workspace_tool(
        name = "add_todos",
        description = "Add steps to the plan as one outline; give parent_index to nest it under \
                       an existing step."
    )]
    async fn add_todos(&self, edit: &mut Edit, args: AddTodosArgs) -> ToolResult {
        let drafts: Vec<StepDraft> = args
            .steps
            .into_iter()
            .map(|step| StepDraft {
                text: step.text,
                depth: i64::from(step.depth),
            })
            .collect();
        let added = edit.plan().add_outline(&drafts, args.parent_index).await?;
        let place = match &added.place {
            OutlinePlace::End => "at the end of the plan".to_string(),
            OutlinePlace::Under { index, text } => format!("under step {index} \"{text}\""),
        };
        Ok(format!(
            "added {} {place} (the plan now has {})",
            plural(added.added, "step"),
            plural(added.total, "step")
        )
        .into())
    }

    #[workspace_tool(
        name = "toggle_todos",
        description = "Mark steps done, or done steps not done again, by their numbers in the \
                       plan."
    )]
    async fn toggle_todos(&self, edit: &mut Edit, args: StepIndicesArgs) -> ToolResult {
        let batch = edit.plan().toggle(&args.indices).await?;
        let list = |done: bool| -> Vec<String> {
            batch
                .applied
                .iter()
                .filter(|(_, now_done)| *now_done == done)
                .map(|(index, _)| index.to_string())
                .collect()
        };
        let (done, undone) = (list(true), list(false));
        let mut parts = Vec::new();
        if !done.is_empty() {
            parts.push(format!("marked done: {}", done.join(", ")));
        }
        if !undone.is_empty() {
            parts.push(format!("marked not done: {}", undone.join(", ")));
        }
        Ok(finish(parts, &batch).into())
    }

    #[workspace_tool(
        name = "update_todos",
        description = "Rewrite the text of steps, by their numbers in the plan."
    )]
    async fn update_todos(&self, edit: &mut Edit, args: UpdateTodosArgs) -> ToolResult {
        let updates: Vec<(i64, String)> = args
            .updates
            .into_iter()
            .map(|update| (update.index, update.text))
            .collect();
        let batch = edit.plan().rewrite(&updates).await?;
        let mut parts = Vec::new();
        if !batch.applied.is_empty() {
            let indices: Vec<String> = batch.applied.iter().map(|(i, ())| i.to_string()).collect();
            parts.push(format!("rewrote steps {}", indices.join(", ")));
        }
        Ok(finish(parts, &batch).into())
    }

    #[workspace_tool(
        name = "remove_todos",
        description = "Delete steps, with their sub-steps, by their numbers in the plan."
    )]
    async fn remove_todos(&self, edit: &mut Edit, args: StepIndicesArgs) -> ToolResult {
        let batch = edit.plan().remove(&args.indices).await?;
        let mut parts = Vec::new();
        if !batch.applied.is_empty() {
            let described: Vec<String> = batch
                .applied
                .iter()
                .map(|(index, removed)| {
                    if removed.sub_steps > 0 {
                        format!(
                            "step {index} \"{}\" with {}",
                            removed.text,
                            plural(removed.sub_steps, "sub-step")
                        )
                    } else {
                        format!("step {index} \"{}\"", removed.text)
                    }
                })
                .collect();
            let gone: usize = batch.applied.iter().map(|(_, r)| 1 + r.sub_steps).sum();
            parts.push(format!(
                "removed {} ({} left)",
                described.join(", "),
                plural(batch.len.saturating_sub(gone), "step")
            ));
        }
        Ok(finish(parts, &batch).into())
    }

    #[workspace_tool(
        name = "list_todos",
        read_only,
        description = "Show the numbered plan (it is already in your instructions)."
    )]
    async fn list_todos(&self, view: &mut View) -> ToolResult {
        Ok(render_plan(&view.plan().await?).into())
    }
}

/// Joins the parts of a summary and appends the indices that named no step; when no step
/// was changed, the summary says so first, and what to do.
fn finish<T>(mut parts: Vec<String>, batch: &StepBatch<T>) -> String {
    let out = &batch.out_of_range;
    if parts.is_empty() {
        let advice = if batch.len == 0 {
            "add steps with add_todos first"
        } else {
            "use the step numbers of the current plan"
        };
        return if out.is_empty() {
            nothing_changed(["no step matched", advice])
        } else {
            nothing_changed([
                out_of_range(out, "the plan", batch.len, "step").as_str(),
                advice,
            ])
        };
    }
    if !out.is_empty() {
        parts.push(skipped_out_of_range(out, "the plan", batch.len, "step"));
    }
    parts.join("; ")
}
