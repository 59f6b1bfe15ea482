//! The system prompt, rebuilt before every model call from the workspace as it stands, so the
//! model always sees what its last tool call did. Large panels are cut to budgets, and a cut
//! says what was left out.

use crate::{
    ThreadId,
    store::{ArtifactSummary, DocumentExcerpt, PlanPage, Preference, Workspace},
    workspace::{
        ArtifactQuery, WorkspaceError, Workspaces, artifact_line, plan::render_plan,
        preferences::render_preferences,
    },
};

/// How much of the workspace the prompt may carry.
#[derive(Debug, Clone, Copy)]
pub struct PromptBudget {
    /// Characters of the document shown (head and tail, the middle elided).
    pub document_chars: usize,
    /// Plan steps shown (the first ones; the rest summarised).
    pub plan_steps: usize,
    /// Artifacts listed (newest first).
    pub artifacts: usize,
}

impl Default for PromptBudget {
    fn default() -> Self {
        Self {
            document_chars: 24_000,
            plan_steps: 400,
            artifacts: 30,
        }
    }
}

const INSTRUCTIONS: &str = "\
You are a co-construction partner. You and the user build a solution together in a shared \
workspace that sits beside this chat: an objective, a working document, a plan, the user's \
preferences and the charts you made. The user sees every panel and edits them too, so what is \
below is the current state, including the user's own changes.

How to work:
- Keep the objective current: when you understand the user's goal, or it changes, set it in one line.
- Keep a plan for anything that takes more than one step. Add steps as an outline, tick them off \
with toggle_todos as you finish them, and prune steps that no longer apply.
- Put the substance of the solution into the document (update_document or append_to_document), \
not only into chat replies. Keep chat replies short and say what you changed.
- Record preferences the user states (hard: must be met; soft: to weigh). Honour every hard \
preference; weigh soft ones and say when you trade one off.
- A preference marked (locked) can only be changed by the user. Never try to change or remove \
it; if it should change, tell the user and ask them to unlock it.
- Use chart_generator when numbers are easier to see than to read.
- Every tool call carries action_and_reasoning: one plain sentence, for the user, on what you \
are doing and why. No jargon.
- Batch: pass every item of one kind in one call instead of many calls.
- Indices in tools are the 1-based numbers shown below, as they are when the call starts.";

/// What the system prompt shows of a workspace: every small panel whole, the document and the
/// plan cut to the budget, with the totals a cut reports.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptWorkspace {
    /// The objective.
    pub objective: Option<String>,
    /// Every preference.
    pub preferences: Vec<Preference>,
    /// The document's head and tail (whole when it fits).
    pub document: Option<DocumentExcerpt>,
    /// The first steps of the plan and its totals.
    pub plan: PlanPage,
    /// The newest artifacts.
    pub artifacts: Vec<ArtifactSummary>,
    /// How many artifacts there are in all.
    pub artifacts_total: i64,
    /// What the person did to the workspace's history since the agent's last turn (restores,
    /// undone turns), one summary each, oldest first.
    pub rewrites: Vec<String>,
}

impl PromptWorkspace {
    /// Reads what the prompt needs, and no more, in one read transaction.
    pub async fn load(
        workspaces: &Workspaces,
        thread: &ThreadId,
        budget: &PromptBudget,
    ) -> Result<Self, WorkspaceError> {
        let (head, tail) = split_budget(budget.document_chars);
        let mut view = workspaces.view(thread).await?;
        let recent = ArtifactQuery {
            artifact_type: None,
            limit: as_i64(budget.artifacts),
        };
        let loaded = Self {
            objective: view.objective().await?,
            preferences: view.preferences().await?,
            document: view.document_excerpt(head, tail).await?,
            plan: view.plan_page(as_i64(budget.plan_steps)).await?,
            artifacts: view.artifacts(&recent).await?,
            artifacts_total: view.artifact_count().await?,
            rewrites: view.rewrites_since_last_turn().await?,
        };
        view.close().await;
        Ok(loaded)
    }

    /// The same view cut from a whole workspace snapshot.
    pub fn from_workspace(ws: &Workspace, budget: &PromptBudget) -> Self {
        let (head, tail) = split_budget(budget.document_chars);
        let document = ws.document.as_ref().map(|doc| {
            let total = doc.content.chars().count();
            let keep = usize::try_from(head + tail).unwrap_or(usize::MAX);
            let (head_text, tail_text) = if total <= keep {
                (doc.content.clone(), String::new())
            } else {
                let head = usize::try_from(head).unwrap_or(0);
                let tail = usize::try_from(tail).unwrap_or(0);
                (
                    doc.content.chars().take(head).collect(),
                    doc.content.chars().skip(total - tail).collect(),
                )
            };
            DocumentExcerpt {
                title: doc.title.clone(),
                head: head_text,
                tail: tail_text,
                total_chars: as_i64(total),
            }
        });
        Self {
            objective: ws.objective.clone(),
            preferences: ws.preferences.clone(),
            document,
            plan: PlanPage {
                steps: ws.plan.iter().take(budget.plan_steps).cloned().collect(),
                total: as_i64(ws.plan.len()),
                done: as_i64(ws.plan.iter().filter(|t| t.done).count()),
            },
            artifacts: ws
                .artifacts
                .iter()
                .take(budget.artifacts)
                .cloned()
                .collect(),
            artifacts_total: as_i64(ws.artifacts.len()),
            rewrites: Vec::new(),
        }
    }
}

/// The system prompt for the workspace view `ws`.
pub fn system_prompt(ws: &PromptWorkspace) -> String {
    let mut out = String::with_capacity(4096);
    out.push_str(INSTRUCTIONS);
    if !ws.rewrites.is_empty() {
        out.push_str(&format!(
            "\n\nSince your last turn the user went back in the workspace's history ({}); the \
             panels below show the result, so build on them rather than on what you did before.",
            ws.rewrites.join("; ")
        ));
    }
    out.push_str("\n\n<objective>\n");
    out.push_str(ws.objective.as_deref().unwrap_or("(not set yet)"));
    out.push_str("\n</objective>\n\n<preferences>\n");
    out.push_str(&render_preferences(&ws.preferences));
    out.push_str("\n</preferences>\n\n<plan>\n");
    out.push_str(&plan_section(&ws.plan));
    out.push_str("\n</plan>\n\n");
    match &ws.document {
        Some(doc) => {
            let title = if doc.title.is_empty() {
                "(untitled)"
            } else {
                doc.title.as_str()
            };
            out.push_str(&format!(
                "<document title=\"{}\">\n",
                title.replace('"', "'")
            ));
            out.push_str(&doc.head);
            if !doc.tail.is_empty() {
                let shown = as_i64(doc.head.chars().count() + doc.tail.chars().count());
                out.push_str(&format!(
                    "\n[… {} characters of the document omitted here; it is {} characters long …]\n",
                    doc.total_chars - shown,
                    doc.total_chars
                ));
                out.push_str(&doc.tail);
            }
            out.push_str("\n</document>\n\n");
        }
        None => out.push_str("<document>\n(no document yet)\n</document>\n\n"),
    }
    out.push_str("<artifacts>\n");
    out.push_str(&artifact_index(&ws.artifacts, ws.artifacts_total));
    out.push_str("\n</artifacts>");
    out
}

fn plan_section(plan: &PlanPage) -> String {
    let shown = as_i64(plan.steps.len());
    if plan.total <= shown {
        return render_plan(&plan.steps);
    }
    let done_shown = as_i64(plan.steps.iter().filter(|t| t.done).count());
    format!(
        "{}\n[… {} more steps not shown ({} of them done); use list_todos to see them all …]",
        render_plan(&plan.steps),
        plan.total - shown,
        plan.done - done_shown
    )
}

fn artifact_index(artifacts: &[ArtifactSummary], total: i64) -> String {
    if artifacts.is_empty() {
        return "(no artifacts yet)".to_string();
    }
    let mut lines: Vec<String> = artifacts.iter().map(artifact_line).collect();
    let shown = as_i64(artifacts.len());
    if total > shown {
        lines.push(format!(
            "[… {} older artifacts; use list_artifacts …]",
            total - shown
        ));
    }
    lines.join("\n")
}

/// Two thirds of the document budget for its start, the rest for its end.
fn split_budget(chars: usize) -> (i64, i64) {
    let head = chars * 2 / 3;
    (as_i64(head), as_i64(chars - head))
}

fn as_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Document, PlanStep, Preference, PreferenceKind};

    fn workspace() -> Workspace {
        Workspace {
            objective: Some("Plan a trip".into()),
            document: Some(Document {
                title: "Trip".into(),
                content: "Day 1".into(),
                version: 1,
            }),
            plan: vec![
                PlanStep {
                    id: 1,
                    text: "Book".into(),
                    depth: 0,
                    done: true,
                },
                PlanStep {
                    id: 2,
                    text: "Flights".into(),
                    depth: 1,
                    done: false,
                },
            ],
            preferences: vec![Preference {
                id: 1,
                title: "Budget".into(),
                subtitle: Some("under 2k".into()),
                kind: PreferenceKind::Hard,
                locked: true,
            }],
            artifacts: Vec::new(),
        }
    }

    #[test]
    fn shows_every_panel() {
        let prompt = system_prompt(&PromptWorkspace::from_workspace(
            &workspace(),
            &PromptBudget::default(),
        ));
        assert!(prompt.contains("<objective>\nPlan a trip\n</objective>"));
        assert!(prompt.contains("#1 [hard] Budget — under 2k (locked)"));
        assert!(prompt.contains("1. [x] Book\n  2. [ ] Flights"));
        assert!(prompt.contains("<document title=\"Trip\">\nDay 1\n</document>"));
        assert!(prompt.contains("(no artifacts yet)"));
    }

    #[test]
    fn cuts_long_documents_and_says_so() {
        let mut ws = workspace();
        if let Some(doc) = ws.document.as_mut() {
            doc.content = format!("{}{}", "é".repeat(500), "ü".repeat(500));
        }
        let budget = PromptBudget {
            document_chars: 99,
            ..PromptBudget::default()
        };
        let prompt = system_prompt(&PromptWorkspace::from_workspace(&ws, &budget));
        assert!(prompt.contains("901 characters of the document omitted here; it is 1000"));
        assert_eq!(prompt.chars().filter(|c| *c == 'é').count(), 66);
        assert_eq!(prompt.chars().filter(|c| *c == 'ü').count(), 33);
        let whole = system_prompt(&PromptWorkspace::from_workspace(&workspace(), &budget));
        assert!(whole.contains("<document title=\"Trip\">\nDay 1\n</document>"));
    }

    #[test]
    fn cuts_long_plans_and_says_so() {
        let mut ws = workspace();
        ws.plan = (0..10)
            .map(|i| PlanStep {
                id: i,
                text: format!("s{i}"),
                depth: 0,
                done: i % 2 == 0,
            })
            .collect();
        let prompt = system_prompt(&PromptWorkspace::from_workspace(
            &ws,
            &PromptBudget {
                plan_steps: 4,
                ..PromptBudget::default()
            },
        ));
        assert!(prompt.contains("4. [ ] s3"));
        assert!(!prompt.contains("s4"));
        assert!(prompt.contains("6 more steps not shown (3 of them done)"));
    }
}
