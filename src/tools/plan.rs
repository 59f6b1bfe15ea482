//! Plan tools: the outline of steps the agent keeps and ticks off.
//!
//! Steps are addressed by 1-based index in the plan as it stands when the call starts; the
//! rules (outline shape, placement, sub-steps) are the workspace's own ([`crate::workspace::plan`]).

use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    ToolResult,
    summary::{nothing_changed, out_of_range, skipped_out_of_range},
    workspace_tool, workspace_tools,
};
use crate::workspace::{
    Edit, View,
    plan::{OutlinePlace, StepBatch, StepDraft, render_plan},
    rules::plural,
};

/// Keeps the plan.
pub struct PlanTools;

/// One step of an outline to add.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepInput {
    /// What the step is, in a few words.
    pub text: String,
    /// Nesting level inside this outline: 0 for a top-level step, 1 for its sub-step, and so
    /// on. The first step is 0 and each step is at most one deeper than the one before.
    #[serde(default)]
    pub depth: u32,
}

/// Arguments of `add_todos`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddTodosArgs {
    /// The outline to add, in order.
    pub steps: Vec<StepInput>,
    /// 1-based index of an existing step to nest the whole outline under (it goes after that
    /// step's last sub-step). Leave it out to add the outline at the end of the plan.
    #[serde(default)]
    pub parent_index: Option<i64>,
}

/// Arguments of `toggle_todos` and `remove_todos`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepIndicesArgs {
    /// 1-based indices of the steps, as numbered in the current plan.
    pub indices: Vec<i64>,
}

/// One rewrite for `update_todos`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepRewrite {
    /// 1-based index of the step, as numbered in the current plan.
    pub index: i64,
    /// The step's new text.
    pub text: String,
}

/// Arguments of `update_todos`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateTodosArgs {
    /// The rewrites to apply.
    pub updates: Vec<StepRewrite>,
}

#[workspace_tools]
impl PlanTools {
    #[workspace_tool(
        name = "add_todos",
        description = "Add steps to the plan as a whole outline in one call (each step has a \
                       depth). Pass parent_index to nest the outline under an existing step; leave \
                       it out to append the outline at the end of the plan."
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
        let added = edit.add_outline(&drafts, args.parent_index).await?;
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
        description = "Tick steps off as done, or mark done steps as not done again, by their \
                       1-based indices in the current plan."
    )]
    async fn toggle_todos(&self, edit: &mut Edit, args: StepIndicesArgs) -> ToolResult {
        let batch = edit.toggle_steps(&args.indices).await?;
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
        description = "Rewrite the text of steps, addressed by their 1-based indices in the \
                       current plan. Depth and done state stay as they are."
    )]
    async fn update_todos(&self, edit: &mut Edit, args: UpdateTodosArgs) -> ToolResult {
        let updates: Vec<(i64, String)> = args
            .updates
            .into_iter()
            .map(|update| (update.index, update.text))
            .collect();
        let batch = edit.rewrite_steps(&updates).await?;
        let mut parts = Vec::new();
        if !batch.applied.is_empty() {
            let indices: Vec<String> = batch.applied.iter().map(|(i, ())| i.to_string()).collect();
            parts.push(format!("rewrote steps {}", indices.join(", ")));
        }
        Ok(finish(parts, &batch).into())
    }

    #[workspace_tool(
        name = "remove_todos",
        description = "Delete steps by their 1-based indices in the current plan. Removing a step \
                       also removes its sub-steps."
    )]
    async fn remove_todos(&self, edit: &mut Edit, args: StepIndicesArgs) -> ToolResult {
        let batch = edit.remove_steps(&args.indices).await?;
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
        description = "Show the plan as a numbered outline with done marks. Rarely needed: the \
                       current plan is already in your instructions."
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
