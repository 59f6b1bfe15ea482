//! What the model is told: the [`instructions`], the same in every request so that a
//! provider's prompt cache keeps them (with the tool list), and the workspace [`snapshot`],
//! brought up to date before every model call from the workspace as it stands, so the model
//! always sees what its last tool call did — and what a person changed meanwhile. The snapshot
//! is sent last, after the conversation: everything before it is the same as in the previous
//! request, and a cache keeps it. Large panels are cut to budgets, and a cut says what was
//! left out.
//!
//! [`PromptCache`] keeps what the previous call read and rendered, panel by panel, within a
//! turn and from one turn of the thread to its next; the thread's event log says which panels
//! changed since (every committed change, by the agent or by a person, appends a `workspace`
//! event naming its panels in the same transaction), so only those are read and rendered
//! again. A turn about a person's selection also marks the passage in the document
//! ([`focus`]).

use haico_store::{
    ArtifactSummary, DocumentExcerpt, PlanPage, Preference, ThreadId, Workspace, panels::Panel,
    panels::PanelSet,
};

use haico_core::{
    workspace::ArtifactQuery, workspace::View, workspace::WorkspaceError, workspace::Workspaces,
    workspace::artifact_line, workspace::plan::render_plan,
    workspace::preferences::render_preferences,
};

/// How much of the workspace the prompt may carry.
#[derive(Debug, Clone, Copy)]
pub struct PromptBudget {
    /// Characters of the document shown (head and tail, the middle elided).
    pub document_chars: usize,
    /// Plan steps shown (the first ones; the rest summarised).
    pub plan_steps: usize,
    /// Artifacts listed (newest first; never more than the agent's own list shows,
    /// [`AGENT_LIST_MAX`](crate::workspace::AGENT_LIST_MAX)).
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
preferences and the charts you made. The user sees every panel and edits them too. The last \
message you receive always shows the workspace as it stands at that moment, including the \
user's own changes and the effect of your tool calls so far: trust it over your memory of \
earlier states.

How to work:
- Keep the objective current: when you understand the user's goal, or it changes, set it in one line.
- Keep a plan for anything that takes more than one step. Add steps as an outline, tick them off \
with toggle_todos as you finish them, and prune steps that no longer apply.
- Put the substance of the solution into the document, not only into chat replies. Keep chat \
replies short and say what you changed.
- To change part of the document, use edit_document with the exact text to replace; it is far \
shorter than rewriting everything. Use append_to_document to add at the end, and \
update_document only to write or restructure the whole document.
- Record preferences the user states (hard: must be met; soft: to weigh). Honour every hard \
preference; weigh soft ones and say when you trade one off.
- A preference marked (locked) can only be changed by the user. Never try to change or remove \
it; if it should change, tell the user and ask them to unlock it.
- Use chart_generator when numbers are easier to see than to read.
- Every tool call carries action_and_reasoning: one plain sentence, for the user, on what you \
are doing and why. No jargon.
- Batch: pass every item of one kind in one call instead of many calls. Never repeat a call \
that already succeeded.
- Indices in tools are the 1-based numbers shown in the workspace, as they are when the call \
starts.
- When the user's request is done, stop calling tools and answer in a sentence or two.";

/// Worked examples for small models (`HAICO_LLM_AIDS=examples`), in a domain none of the
/// evaluation's scenarios uses: they show the way of working, not the answers to the tasks.
const EXAMPLES: &str = "

Examples of the way of working (another task than the user's):
1. The user writes: \"We're repainting the kids' room this month. Budget 150 EUR, and the paint \
must be low-odour.\" You call set_objective {\"objective\": \"Repaint the kids' room this \
month\", \"action_and_reasoning\": \"Noting the goal.\"}, then add_preferences {\"items\": \
[{\"title\": \"Budget 150 EUR\", \"kind\": \"hard\"}, {\"title\": \"Low-odour paint\", \
\"kind\": \"hard\"}], \"action_and_reasoning\": \"Recording the limits.\"}, then add_todos \
{\"steps\": [{\"text\": \"Buy paint and brushes\"}, {\"text\": \"Move the furniture out\"}, \
{\"text\": \"Paint two coats\"}], \"action_and_reasoning\": \"Laying out the steps.\"}. Then \
you answer: \"I noted the goal and both limits and made a three-step plan.\"
2. The user writes: \"In the flyer the sale is on 3 June, not 2 June.\" You call edit_document \
{\"edits\": [{\"old_text\": \"on 2 June\", \"new_text\": \"on 3 June\"}], \
\"action_and_reasoning\": \"Fixing the date.\"} and answer: \"Fixed the date.\" A small fix never \
rewrites the whole document.
3. The user writes: \"Moving the furniture is done.\" The plan shows it as step 2, so you call \
toggle_todos {\"indices\": [2], \"action_and_reasoning\": \"Ticking off the finished step.\"} \
and answer: \"Ticked it off.\"
4. The user writes: \"Raise the budget to 200 EUR.\" and preference 1, \"Budget 150 EUR\", is \
(locked). You call no tool and answer: \"The budget is locked. Unlock it in the preferences \
panel and I will change it.\"
5. The user writes: \"Low-odour paint is only nice to have now, and under 'Paint two coats' add \
sanding and taping.\" Preference 2 is \"Low-odour paint\" and the plan shows \"Paint two coats\" \
as step 3, so you call update_preferences {\"updates\": [{\"index\": 2, \"kind\": \"soft\"}], \
\"action_and_reasoning\": \"It is a wish now, not a must.\"}, then add_todos {\"parent_index\": \
3, \"steps\": [{\"text\": \"Sand the walls\"}, {\"text\": \"Tape the edges\"}], \
\"action_and_reasoning\": \"Adding the sub-steps.\"}, and answer in one sentence.";

/// The instructions' sentence on the whole-document rewrite, which the compact tool set
/// leaves out.
const REWRITE_CLAUSE: &str = ", and \
update_document only to write or restructure the whole document.";

/// The same sentence for the compact tool set, which has no whole-document rewrite.
const NO_REWRITE_CLAUSE: &str = "; there is no tool that rewrites the whole document.";

/// The instructions with the aids that add to them, built once per combination so each
/// configuration's head is the same bytes in every request: indexed by
/// `[compact tools][examples][reply tool][checklist]` (the checklist only with the reply tool).
type Heads = [[[[String; 2]; 2]; 2]; 2];
static WITH_AIDS: std::sync::LazyLock<Heads> = std::sync::LazyLock::new(|| {
    let with = |compact: bool, examples: bool, reply: bool, checklist: bool| {
        let mut text = INSTRUCTIONS.to_string();
        if compact {
            text = text.replacen(REWRITE_CLAUSE, NO_REWRITE_CLAUSE, 1);
        }
        if reply {
            text.push_str(crate::agent::reply::INSTRUCTIONS);
        }
        if examples {
            text.push_str(EXAMPLES);
        }
        // Last, so it also frames the examples, which show the calls after the list.
        if reply && checklist {
            text.push_str(crate::agent::checklist::INSTRUCTIONS);
        }
        text
    };
    [false, true].map(|compact| {
        [false, true].map(|examples| {
            [false, true].map(|reply| {
                [false, true].map(|checklist| with(compact, examples, reply, checklist))
            })
        })
    })
});

/// The head of every request: the same text for every thread and every call, so that with
/// the tool list it forms a prefix a provider's prompt cache keeps.
pub fn instructions() -> &'static str {
    INSTRUCTIONS
}

/// The head for a configuration's aids: byte-identical for every request of one configuration.
pub fn instructions_for(aids: crate::agent::aids::Aids) -> &'static str {
    if !aids.examples && !aids.reply_tool && !aids.compact_tools {
        return INSTRUCTIONS;
    }
    &WITH_AIDS[usize::from(aids.compact_tools)][usize::from(aids.examples)]
        [usize::from(aids.reply_tool)][usize::from(aids.reply_tool && aids.checklist)]
}

/// How the snapshot message begins: it tells the model what the message is, since it comes
/// after the conversation and may carry a role (`system` or `user`) the model reads as a turn.
const SNAPSHOT_PREAMBLE: &str = "\
[Workspace now — not a message from the user. This is the shared workspace as it stands at \
this moment; the numbers are the indices tools take.]";

/// What the snapshot shows of a workspace: every small panel whole, the document and the
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
    /// The document mode and the open suggestions, as the snapshot shows them (issue 25).
    pub suggestions: String,
}

impl PromptWorkspace {
    /// Reads what the prompt needs, and no more, in one read transaction.
    pub async fn load(
        workspaces: &Workspaces,
        thread: &ThreadId,
        budget: &PromptBudget,
    ) -> Result<Self, WorkspaceError> {
        let mut view = workspaces.view(thread).await?;
        let loaded = Self::read(&mut view, budget).await;
        view.close().await;
        loaded
    }

    /// Everything the prompt shows, read in `view`.
    async fn read(view: &mut View, budget: &PromptBudget) -> Result<Self, WorkspaceError> {
        let mut ws = Self {
            objective: None,
            preferences: Vec::new(),
            document: None,
            plan: PlanPage {
                steps: Vec::new(),
                total: 0,
                done: 0,
            },
            artifacts: Vec::new(),
            artifacts_total: 0,
            rewrites: Vec::new(),
            suggestions: String::new(),
        };
        ws.reread(view, every_panel(), true, budget).await?;
        Ok(ws)
    }

    /// Reads `panels` (and the restores and undos, when `rewrites`) again in `view`, keeping
    /// the rest as they are.
    async fn reread(
        &mut self,
        view: &mut View,
        panels: PanelSet,
        rewrites: bool,
        budget: &PromptBudget,
    ) -> Result<(), WorkspaceError> {
        for panel in panels.iter() {
            match panel {
                Panel::Objective => self.objective = view.objective().await?,
                Panel::Preferences => self.preferences = view.preferences().await?,
                Panel::Document => {
                    let (head, tail) = split_budget(budget.document_chars);
                    self.document = view.document_excerpt(head, tail).await?;
                }
                Panel::Plan => self.plan = view.plan_page(as_i64(budget.plan_steps)).await?,
                Panel::Artifacts => {
                    let recent = ArtifactQuery::for_prompt(budget.artifacts);
                    self.artifacts = view.artifacts(&recent).await?;
                    self.artifacts_total = view.artifact_count().await?;
                }
                Panel::Suggestions => self.suggestions = view.suggestions_note().await?,
            }
        }
        if rewrites {
            self.rewrites = view.rewrites_since_last_turn().await?;
        }
        Ok(())
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
                .take(
                    usize::try_from(ArtifactQuery::for_prompt(budget.artifacts).limit())
                        .unwrap_or(0),
                )
                .cloned()
                .collect(),
            artifacts_total: as_i64(ws.artifacts.len()),
            rewrites: Vec::new(),
            suggestions: String::new(),
        }
    }
}

/// The workspace snapshot for the workspace view `ws`.
pub fn snapshot(ws: &PromptWorkspace) -> String {
    Sections::render(ws).join()
}

/// The prompt's parts that depend on the workspace, each rendered from its panel alone, so a
/// change re-renders only its own.
#[derive(Debug, Clone, Default, PartialEq)]
struct Sections {
    rewrites: String,
    objective: String,
    preferences: String,
    plan: String,
    document: String,
    artifacts: String,
    suggestions: String,
}

impl Sections {
    fn render(ws: &PromptWorkspace) -> Self {
        let mut sections = Self::default();
        sections.update(ws, every_panel(), true);
        sections
    }

    /// Renders `panels` (and the rewrites note, when `rewrites`) again from `ws`.
    fn update(&mut self, ws: &PromptWorkspace, panels: PanelSet, rewrites: bool) {
        for panel in panels.iter() {
            match panel {
                Panel::Objective => {
                    self.objective = ws
                        .objective
                        .as_deref()
                        .unwrap_or("(not set yet)")
                        .to_string();
                }
                Panel::Preferences => self.preferences = render_preferences(&ws.preferences),
                Panel::Plan => self.plan = plan_section(&ws.plan),
                Panel::Document => self.document = document_section(ws.document.as_ref()),
                Panel::Artifacts => {
                    self.artifacts = artifact_index(&ws.artifacts, ws.artifacts_total);
                }
                Panel::Suggestions => self.suggestions = ws.suggestions.clone(),
            }
        }
        if rewrites {
            self.rewrites = if ws.rewrites.is_empty() {
                String::new()
            } else {
                format!(
                    "\n\nSince your last turn the user went back in the workspace's history ({}); \
                     the panels below show the result, so build on them rather than on what you \
                     did before.",
                    ws.rewrites.join("; ")
                )
            };
        }
    }

    /// The whole snapshot: its preamble, then every section in order.
    fn join(&self) -> String {
        self.join_about(None)
    }

    /// The whole snapshot, with the document marked and the `<selection>` note in a turn
    /// about a person's selection.
    fn join_about(&self, focused: Option<&focus::Focused>) -> String {
        let document = focused
            .and_then(|f| f.document.as_deref())
            .unwrap_or(&self.document);
        let note = focused.map_or("", |f| f.note.as_str());
        let mut out = String::with_capacity(
            SNAPSHOT_PREAMBLE.len()
                + self.rewrites.len()
                + self.objective.len()
                + self.preferences.len()
                + self.plan.len()
                + document.len()
                + note.len()
                + self.artifacts.len()
                + self.suggestions.len()
                + 128,
        );
        out.push_str(SNAPSHOT_PREAMBLE);
        out.push_str(&self.rewrites);
        out.push_str("\n\n<objective>\n");
        out.push_str(&self.objective);
        out.push_str("\n</objective>\n\n<preferences>\n");
        out.push_str(&self.preferences);
        out.push_str("\n</preferences>\n\n<plan>\n");
        out.push_str(&self.plan);
        out.push_str("\n</plan>\n\n");
        out.push_str(document);
        out.push_str(note);
        out.push_str(&self.suggestions);
        out.push_str("<artifacts>\n");
        out.push_str(&self.artifacts);
        out.push_str("\n</artifacts>");
        out
    }
}

/// The `<document>` element, with its title and, for a long body, the note on what is cut.
fn document_section(document: Option<&DocumentExcerpt>) -> String {
    let Some(doc) = document else {
        return "<document>\n(no document yet)\n</document>\n\n".to_string();
    };
    let mut out = String::with_capacity(doc.head.len() + doc.tail.len() + 256);
    out.push_str(&document_open_tag(&doc.title));
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
    out
}

/// The `<document>` element's opening tag, with the title.
fn document_open_tag(title: &str) -> String {
    let title = if title.is_empty() {
        "(untitled)"
    } else {
        title
    };
    format!("<document title=\"{}\">\n", title.replace('"', "'"))
}

/// What the prompt of a thread has read and rendered so far, so that the next model call — of
/// this turn or of the thread's next one — reads and renders again only the panels changed
/// since, by the agent's tool calls or by anyone else. Which ones comes from the thread's event
/// log, not from the tool calls' own reports, because a person's edit (or another replica's)
/// must show up too.
#[derive(Debug, Default)]
pub struct PromptCache {
    state: Option<Cached>,
}

#[derive(Debug)]
struct Cached {
    /// When the thread was made: a thread deleted and made again under the same id numbers
    /// its events from 1 again, so its old reads must not count.
    created_at: chrono::DateTime<chrono::Utc>,
    /// The thread's turn counter at the last read: the restores note looks back from it.
    turn_index: i64,
    /// The thread's last event number when `workspace` was read.
    seq: i64,
    workspace: PromptWorkspace,
    sections: Sections,
}

impl PromptCache {
    /// The workspace snapshot for the thread as it stands now. The first call reads
    /// everything; later ones read, in one snapshot, the `workspace` events since the last read
    /// and only the panels they name (and the restores and undos when a person changed
    /// something). When `workspaces` are about a person's selection
    /// ([`Workspaces::focus`]), the document is read whole too, to mark the passage where it
    /// sits now.
    pub async fn snapshot(
        &mut self,
        workspaces: &Workspaces,
        thread: &ThreadId,
        budget: &PromptBudget,
    ) -> Result<String, WorkspaceError> {
        let mut view = workspaces.view(thread).await?;
        let mut outcome = self.bring_up_to_date(&mut view, budget).await;
        let mut focused = None;
        if let (Some(about), Ok(())) = (workspaces.focus(), &outcome) {
            match focus::focused(&mut view, about, budget).await {
                Ok(found) => focused = Some(found),
                Err(err) => outcome = Err(err),
            }
        }
        view.close().await;
        outcome?;
        Ok(self
            .state
            .as_ref()
            .map(|cached| cached.sections.join_about(focused.as_ref()))
            .unwrap_or_default())
    }

    async fn bring_up_to_date(
        &mut self,
        view: &mut View,
        budget: &PromptBudget,
    ) -> Result<(), WorkspaceError> {
        let seq = view.last_event_seq().await?;
        let created_at = view.thread_created_at().await?;
        let turn_index = view.turn_index();
        match &mut self.state {
            Some(cached) if cached.created_at == created_at && cached.seq <= seq => {
                let (panels, by_person) = if cached.seq == seq {
                    (PanelSet::default(), false)
                } else {
                    view.changes_since(cached.seq).await?
                };
                // A new turn looks back from a later turn for restores and undos.
                let rewrites = by_person || cached.turn_index != turn_index;
                cached
                    .workspace
                    .reread(view, panels, rewrites, budget)
                    .await?;
                cached.sections.update(&cached.workspace, panels, rewrites);
                cached.seq = seq;
                cached.turn_index = turn_index;
            }
            _ => {
                let workspace = PromptWorkspace::read(view, budget).await?;
                let sections = Sections::render(&workspace);
                self.state = Some(Cached {
                    created_at,
                    turn_index,
                    seq,
                    workspace,
                    sections,
                });
            }
        }
        Ok(())
    }
}

fn every_panel() -> PanelSet {
    Panel::ALL.into_iter().collect()
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

mod focus;
#[cfg(test)]
mod tests;
