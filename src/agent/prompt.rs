//! The system prompt, rebuilt before every model call from the workspace as it stands, so the
//! model always sees what its last tool call did. Large panels are cut to budgets, and a cut
//! says what was left out.

use crate::{
    store::{ArtifactSummary, Workspace},
    tools::{artifacts::artifact_line, preferences::render_preferences, todos::render_plan},
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

/// The system prompt for the workspace `ws` and its artifact index.
pub fn system_prompt(ws: &Workspace, budget: &PromptBudget) -> String {
    let mut out = String::with_capacity(4096);
    out.push_str(INSTRUCTIONS);
    out.push_str("\n\n<objective>\n");
    out.push_str(ws.objective.as_deref().unwrap_or("(not set yet)"));
    out.push_str("\n</objective>\n\n<preferences>\n");
    out.push_str(&render_preferences(&ws.preferences));
    out.push_str("\n</preferences>\n\n<plan>\n");
    out.push_str(&plan_section(ws, budget.plan_steps));
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
            out.push_str(&elide_middle(&doc.content, budget.document_chars));
            out.push_str("\n</document>\n\n");
        }
        None => out.push_str("<document>\n(no document yet)\n</document>\n\n"),
    }
    out.push_str("<artifacts>\n");
    out.push_str(&artifact_index(&ws.artifacts, budget.artifacts));
    out.push_str("\n</artifacts>");
    out
}

fn plan_section(ws: &Workspace, max_steps: usize) -> String {
    if ws.todos.len() <= max_steps {
        return render_plan(&ws.todos);
    }
    let shown = render_plan(&ws.todos[..max_steps]);
    let done = ws.todos[max_steps..].iter().filter(|t| t.done).count();
    format!(
        "{shown}\n[… {} more steps not shown ({done} of them done); use list_todos to see them all …]",
        ws.todos.len() - max_steps
    )
}

fn artifact_index(artifacts: &[ArtifactSummary], max: usize) -> String {
    if artifacts.is_empty() {
        return "(no artifacts yet)".to_string();
    }
    let mut lines: Vec<String> = artifacts.iter().take(max).map(artifact_line).collect();
    if artifacts.len() > max {
        lines.push(format!(
            "[… {} older artifacts; use list_artifacts …]",
            artifacts.len() - max
        ));
    }
    lines.join("\n")
}

/// Keeps the first and last parts of `text` within `max` characters and says how much of the
/// middle was left out.
pub fn elide_middle(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let head = max * 2 / 3;
    let tail = max - head;
    let head_text: String = text.chars().take(head).collect();
    let tail_text: String = text.chars().skip(total - tail).collect();
    format!(
        "{head_text}\n[… {} characters of the document omitted here; it is {total} characters long …]\n{tail_text}",
        total - head - tail
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Document, Preference, PreferenceKind, Todo};

    fn workspace() -> Workspace {
        Workspace {
            objective: Some("Plan a trip".into()),
            document: Some(Document {
                title: "Trip".into(),
                content: "Day 1".into(),
                version: 1,
            }),
            todos: vec![
                Todo {
                    id: 1,
                    text: "Book".into(),
                    depth: 0,
                    done: true,
                },
                Todo {
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
        let prompt = system_prompt(&workspace(), &PromptBudget::default());
        assert!(prompt.contains("<objective>\nPlan a trip\n</objective>"));
        assert!(prompt.contains("#1 [hard] Budget — under 2k (locked)"));
        assert!(prompt.contains("1. [x] Book\n  2. [ ] Flights"));
        assert!(prompt.contains("<document title=\"Trip\">\nDay 1\n</document>"));
        assert!(prompt.contains("(no artifacts yet)"));
    }

    #[test]
    fn cuts_long_documents_and_says_so() {
        let text = "é".repeat(1000);
        let cut = elide_middle(&text, 100);
        assert!(cut.contains("900 characters of the document omitted"));
        assert!(cut.chars().filter(|c| *c == 'é').count() == 100);
        assert_eq!(elide_middle("short", 100), "short");
    }

    #[test]
    fn cuts_long_plans_and_says_so() {
        let mut ws = workspace();
        ws.todos = (0..10)
            .map(|i| Todo {
                id: i,
                text: format!("s{i}"),
                depth: 0,
                done: i % 2 == 0,
            })
            .collect();
        let prompt = system_prompt(
            &ws,
            &PromptBudget {
                plan_steps: 4,
                ..PromptBudget::default()
            },
        );
        assert!(prompt.contains("4. [ ] s3"));
        assert!(!prompt.contains("s4"));
        assert!(prompt.contains("6 more steps not shown (3 of them done)"));
    }
}
