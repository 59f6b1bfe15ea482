//! Plan tools: the ordered outline of steps the agent keeps and ticks off.
//!
//! Steps are addressed by 1-based index in the plan as it stands when the call starts; every
//! target of a call is resolved against that snapshot before anything changes.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    ToolError, ToolResult,
    checks::{describe_out_of_range, plural, require_batch, require_text, resolve_indices},
    workspace_tool, workspace_tools,
};
use crate::{
    ThreadId,
    store::{NewTodo, RemovedRange, Todo, WorkspaceRepository},
};

/// The longest step text, in characters.
pub const MAX_STEP_CHARS: usize = 2_000;
/// The deepest nesting the outline allows (0 is top level).
pub const MAX_DEPTH: i64 = 12;

/// Keeps a thread's plan.
pub struct TodoTools {
    thread_id: ThreadId,
}

impl TodoTools {
    /// The plan tools of one thread.
    pub fn new(thread_id: ThreadId) -> Self {
        Self { thread_id }
    }
}

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
pub struct TodoIndicesArgs {
    /// 1-based indices of the steps, as numbered in the current plan.
    pub indices: Vec<i64>,
}

/// One rewrite for `update_todos`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoUpdate {
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
    pub updates: Vec<TodoUpdate>,
}

#[workspace_tools]
impl TodoTools {
    #[workspace_tool(
        name = "add_todos",
        description = "Add steps to the plan as a whole outline in one call (each step has a \
                       depth). Pass parent_index to nest the outline under an existing step; leave \
                       it out to append the outline at the end of the plan."
    )]
    async fn add_todos(&self, repo: &mut WorkspaceRepository, args: AddTodosArgs) -> ToolResult {
        require_batch(&args.steps, "steps")?;
        let mut steps = Vec::with_capacity(args.steps.len());
        let mut previous: Option<i64> = None;
        for (i, step) in args.steps.iter().enumerate() {
            let text = require_text(&step.text, &format!("steps[{i}].text"), MAX_STEP_CHARS)?;
            let depth = i64::from(step.depth);
            match previous {
                None if depth != 0 => {
                    return Err(ToolError::invalid(format!(
                        "`steps[0].depth` is {depth}: the first step of an outline must have depth 0"
                    )));
                }
                Some(prev) if depth > prev + 1 => {
                    return Err(ToolError::invalid(format!(
                        "`steps[{i}].depth` is {depth} right after a step of depth {prev}: a step \
                         can be at most one level deeper than the step before it"
                    )));
                }
                _ => {}
            }
            previous = Some(depth);
            steps.push(NewTodo {
                text: text.to_string(),
                depth,
            });
        }

        let thread = self.thread_id.as_str();
        let count = repo.count_todos(thread).await?;
        let (position, base, placement) = match args.parent_index {
            None => (count, 0, "at the end of the plan".to_string()),
            Some(index) => {
                let parent = match usize::try_from(index) {
                    Ok(i) if i >= 1 && i64::try_from(i).unwrap_or(i64::MAX) <= count => {
                        repo.todo_at(thread, index - 1).await?
                    }
                    _ => None,
                };
                let Some(parent) = parent else {
                    return Err(ToolError::invalid(format!(
                        "`parent_index` {index} does not name a step (the plan has {}); nothing \
                         was added",
                        plural(usize::try_from(count).unwrap_or(0), "step")
                    )));
                };
                let end = repo.subtree_end(thread, index - 1, parent.depth).await?;
                (
                    end,
                    parent.depth + 1,
                    format!("under step {index} \"{}\"", parent.text),
                )
            }
        };
        let deepest = steps.iter().map(|s| s.depth).max().unwrap_or(0) + base;
        if deepest > MAX_DEPTH {
            return Err(ToolError::invalid(format!(
                "the outline would reach depth {deepest}; the plan nests at most {MAX_DEPTH} levels"
            )));
        }
        for step in &mut steps {
            step.depth += base;
        }
        repo.insert_todos(thread, position, &steps).await?;
        let total = usize::try_from(count).unwrap_or(0) + steps.len();
        Ok(format!(
            "added {} {placement} (the plan now has {})",
            plural(steps.len(), "step"),
            plural(total, "step")
        )
        .into())
    }

    #[workspace_tool(
        name = "toggle_todos",
        description = "Tick steps off as done, or mark done steps as not done again, by their \
                       1-based indices in the current plan."
    )]
    async fn toggle_todos(
        &self,
        repo: &mut WorkspaceRepository,
        args: TodoIndicesArgs,
    ) -> ToolResult {
        require_batch(&args.indices, "indices")?;
        let thread = self.thread_id.as_str();
        let len = plan_len(repo.count_todos(thread).await?);
        let targets = resolve_indices(args.indices.iter().copied(), len);
        let (mut done, mut undone) = (Vec::new(), Vec::new());
        for &position in &targets.positions {
            let index = position + 1;
            match repo.toggle_todo_at(thread, as_i64(position)).await? {
                Some(true) => done.push(index.to_string()),
                Some(false) => undone.push(index.to_string()),
                None => {}
            }
        }
        let mut parts = Vec::new();
        if !done.is_empty() {
            parts.push(format!("marked done: {}", done.join(", ")));
        }
        if !undone.is_empty() {
            parts.push(format!("marked not done: {}", undone.join(", ")));
        }
        Ok(finish(parts, &targets.out_of_range, len, "no matching steps found").into())
    }

    #[workspace_tool(
        name = "update_todos",
        description = "Rewrite the text of steps, addressed by their 1-based indices in the \
                       current plan. Depth and done state stay as they are."
    )]
    async fn update_todos(
        &self,
        repo: &mut WorkspaceRepository,
        args: UpdateTodosArgs,
    ) -> ToolResult {
        require_batch(&args.updates, "updates")?;
        let mut texts = Vec::with_capacity(args.updates.len());
        for (i, update) in args.updates.iter().enumerate() {
            let text = require_text(&update.text, &format!("updates[{i}].text"), MAX_STEP_CHARS)?;
            if args.updates[..i].iter().any(|u| u.index == update.index) {
                return Err(ToolError::invalid(format!(
                    "index {} appears more than once in `updates`; give each step one new text",
                    update.index
                )));
            }
            texts.push(text);
        }
        let thread = self.thread_id.as_str();
        let len = plan_len(repo.count_todos(thread).await?);
        let targets = resolve_indices(args.updates.iter().map(|u| u.index), len);
        let mut rewritten = Vec::new();
        for (update, text) in args.updates.iter().zip(&texts) {
            // `checked_sub`: an index of i64::MIN must be reported, not overflow.
            let Some(position) = update
                .index
                .checked_sub(1)
                .and_then(|i| usize::try_from(i).ok())
            else {
                continue;
            };
            if targets.positions.contains(&position)
                && repo
                    .set_todo_text_at(thread, as_i64(position), text)
                    .await?
            {
                rewritten.push(update.index.to_string());
            }
        }
        let mut parts = Vec::new();
        if !rewritten.is_empty() {
            parts.push(format!("rewrote steps {}", rewritten.join(", ")));
        }
        Ok(finish(parts, &targets.out_of_range, len, "no matching steps found").into())
    }

    #[workspace_tool(
        name = "remove_todos",
        description = "Delete steps by their 1-based indices in the current plan. Removing a step \
                       also removes its sub-steps."
    )]
    async fn remove_todos(
        &self,
        repo: &mut WorkspaceRepository,
        args: TodoIndicesArgs,
    ) -> ToolResult {
        require_batch(&args.indices, "indices")?;
        let thread = self.thread_id.as_str();
        let len = plan_len(repo.count_todos(thread).await?);
        let targets = resolve_indices(args.indices.iter().copied(), len);

        // Resolve every target and its sub-steps against the plan as it is now.
        let mut ranges: Vec<(RemovedRange, String)> = Vec::new();
        for &position in &targets.positions {
            let start = as_i64(position);
            let Some(step) = repo.todo_at(thread, start).await? else {
                continue;
            };
            let end = repo.subtree_end(thread, start, step.depth).await?;
            ranges.push((RemovedRange { start, end }, step.text));
        }
        ranges.sort_by_key(|(range, _)| range.start);
        // Sub-trees either nest or are disjoint: drop ranges inside an earlier one.
        let mut kept: Vec<(RemovedRange, String)> = Vec::new();
        for (range, text) in ranges {
            if kept.last().is_some_and(|(last, _)| range.start < last.end) {
                continue;
            }
            kept.push((range, text));
        }
        let only_ranges: Vec<RemovedRange> = kept.iter().map(|(r, _)| *r).collect();
        let removed = repo.remove_todo_ranges(thread, &only_ranges).await?;

        let mut parts = Vec::new();
        if !kept.is_empty() {
            let described: Vec<String> = kept
                .iter()
                .map(|(range, text)| {
                    let index = range.start + 1;
                    let subs = range.end - range.start - 1;
                    if subs > 0 {
                        format!(
                            "step {index} \"{text}\" with {}",
                            plural(usize::try_from(subs).unwrap_or(0), "sub-step")
                        )
                    } else {
                        format!("step {index} \"{text}\"")
                    }
                })
                .collect();
            let left = len.saturating_sub(usize::try_from(removed).unwrap_or(0));
            parts.push(format!(
                "removed {} ({} left)",
                described.join(", "),
                plural(left, "step")
            ));
        }
        Ok(finish(parts, &targets.out_of_range, len, "no matching steps found").into())
    }

    #[workspace_tool(
        name = "list_todos",
        read_only,
        description = "Show the plan as a numbered outline with done marks. Rarely needed: the \
                       current plan is already in your instructions."
    )]
    async fn list_todos(&self, repo: &mut WorkspaceRepository) -> ToolResult {
        let todos = repo.list_todos(self.thread_id.as_str()).await?;
        Ok(render_plan(&todos).into())
    }
}

/// The plan as numbered lines (`N. [ ] text`), two spaces of indent per depth level; the same
/// text the agent's prompt shows.
pub fn render_plan(todos: &[Todo]) -> String {
    if todos.is_empty() {
        return "(the plan is empty)".to_string();
    }
    let mut out = String::new();
    for (i, todo) in todos.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for _ in 0..todo.depth.max(0) {
            out.push_str("  ");
        }
        let mark = if todo.done { 'x' } else { ' ' };
        out.push_str(&format!("{}. [{mark}] {}", i + 1, todo.text));
    }
    out
}

fn plan_len(count: i64) -> usize {
    usize::try_from(count).unwrap_or(0)
}

fn as_i64(position: usize) -> i64 {
    i64::try_from(position).unwrap_or(i64::MAX)
}

/// Joins the parts of a summary and appends the out-of-range report.
fn finish(mut parts: Vec<String>, out_of_range: &[i64], len: usize, nothing: &str) -> String {
    if parts.is_empty() {
        parts.push(nothing.to_string());
    }
    if !out_of_range.is_empty() {
        parts.push(describe_out_of_range(
            out_of_range,
            len,
            "the plan has",
            "step",
        ));
    }
    parts.join("; ")
}
