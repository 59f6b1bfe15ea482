//! One tool call of the mixed workload, made through the product's own domain layer: the
//! [`Workspaces`] and [`Edit`] calls that `src/tools/` makes for that tool, on the path
//! `ToolRuntime` runs a call (`src/tools/runtime.rs`), so every statement sent is one the
//! server sends, from the store's own repositories, lender and SQLite writer.
//!
//! What is left out is what sits above the workspace: HTTP, the JSON arguments and their
//! checks, the tool's envelope (a short summary is still written into the revision, as the
//! tool's would be), metrics and logs, and the once-a-second checks the server caches.
//! Arguments are the ones `haico-load` sends (`haico_load::workload`), built typed instead.

use std::sync::Mutex;

use haico_core::{
    ThreadId,
    panels::PreferenceKind,
    workspace::{
        ArtifactQuery, ChangeNote, DocumentChange, Edit, PreferenceChange, PreferenceDraft,
        StepDraft, WorkspaceError, Workspaces, Written, artifact_line,
        charts::{ChartData, ChartDraft, ChartType, Series},
        plan::render_plan,
        preferences::render_preferences,
    },
};
use haico_load::workload::{MAX_PREFERENCES, MAX_TODOS, Op};

/// Artifact ids remembered per thread for `get_artifact` (as `haico-load` remembers them).
const MAX_REMEMBERED_ARTIFACTS: usize = 64;

/// One thread of the workload and what the callers believe about it. Sizes are approximate
/// (concurrent callers race on one thread), which is all the generator needs, as in
/// `haico-load`.
pub struct LoadThread {
    pub id: ThreadId,
    known: Mutex<Known>,
}

#[derive(Debug, Default)]
struct Known {
    todos: i64,
    preferences: i64,
    artifacts: Vec<i64>,
}

/// What an answered call teaches about its thread.
#[derive(Debug, Default)]
struct Learned {
    todos: Option<i64>,
    preferences: Option<i64>,
    preferences_added: i64,
    artifact: Option<i64>,
}

impl LoadThread {
    pub fn new(id: ThreadId) -> Self {
        Self {
            id,
            known: Mutex::new(Known::default()),
        }
    }

    fn with_known<T>(&self, f: impl FnOnce(&mut Known) -> T) -> T {
        match self.known.lock() {
            Ok(mut known) => f(&mut known),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }

    /// The next call on this thread: an op drawn by `haico-load`'s weights and turned, as its
    /// generator turns it, into a removal past a list's cap, or a list when no artifact is
    /// known yet.
    pub fn next_call(&self, rng: &mut fastrand::Rng, client: usize, seq: u64) -> Call {
        let (todos, preferences, artifact) = self.with_known(|k| {
            let artifact = if k.artifacts.is_empty() {
                None
            } else {
                k.artifacts.get(rng.usize(..k.artifacts.len())).copied()
            };
            (k.todos, k.preferences, artifact)
        });
        let op = match haico_load::workload::pick(rng) {
            Op::AddTodos if todos > MAX_TODOS => Op::RemoveTodos,
            Op::AddPreferences if preferences > MAX_PREFERENCES => Op::RemovePreferences,
            Op::GetArtifact if artifact.is_none() => Op::ListArtifacts,
            other => other,
        };
        Call {
            op,
            args: arguments(op, rng, client, seq, todos, preferences, artifact),
        }
    }

    fn learn(&self, learned: Learned) {
        self.with_known(|k| {
            if let Some(n) = learned.todos {
                k.todos = n;
            }
            if let Some(n) = learned.preferences {
                k.preferences = n;
            }
            k.preferences += learned.preferences_added;
            if let Some(id) = learned.artifact {
                if k.artifacts.len() >= MAX_REMEMBERED_ARTIFACTS {
                    k.artifacts.remove(0);
                }
                k.artifacts.push(id);
            }
        });
    }
}

/// One call: the tool and its arguments.
pub struct Call {
    pub op: Op,
    args: Args,
}

/// A tool's arguments, typed as the tool hands them to the workspace.
enum Args {
    Append(String),
    Rewrite {
        title: String,
        content: String,
    },
    Outline {
        steps: Vec<StepDraft>,
        parent_index: Option<i64>,
    },
    Indices(Vec<i64>),
    StepTexts(Vec<(i64, String)>),
    Preferences(Vec<PreferenceDraft>),
    PreferenceChanges(Vec<(i64, PreferenceChange)>),
    Chart(Box<ChartDraft>),
    Artifact(i64),
    Objective(String),
    None,
}

/// The arguments `haico-load` sends for `op` (`haico_load::workload`'s `arguments`).
fn arguments(
    op: Op,
    rng: &mut fastrand::Rng,
    client: usize,
    seq: u64,
    todos: i64,
    preferences: i64,
    artifact: Option<i64>,
) -> Args {
    match op {
        Op::AppendToDocument => Args::Append(format!(
            "\n- Note {seq} from client {client}: keep the budget in view."
        )),
        Op::UpdateDocument => Args::Rewrite {
            title: "Trip plan".into(),
            content: format!(
                "# Trip plan (rewrite {seq} by client {client})\n\n## Goals\n\nA calm week by the \
                 sea, trains only, under the budget.\n\n## Days\n\n1. Arrive and settle.\n2. Coast \
                 walk.\n3. Museum and old town.\n4. Boat trip if the weather holds.\n5. Rest.\n"
            ),
        },
        Op::AddTodos if todos >= 6 && rng.u8(..4) == 0 => Args::Outline {
            steps: vec![step(&format!("Detail {seq}"), 0)],
            parent_index: Some(1),
        },
        Op::AddTodos => Args::Outline {
            steps: vec![
                step(&format!("Book item {seq}"), 0),
                step("Compare prices", 1),
                step("Confirm by mail", 1),
            ],
            parent_index: None,
        },
        Op::ToggleTodos => Args::Indices(indices(rng, todos, 3)),
        Op::UpdateTodos => Args::StepTexts(
            indices(rng, todos, 2)
                .into_iter()
                .map(|i| (i, format!("Revised step {seq}")))
                .collect(),
        ),
        Op::RemoveTodos => {
            let n = if todos > MAX_TODOS { 6 } else { 1 };
            Args::Indices(indices(rng, todos, n))
        }
        Op::AddPreferences => Args::Preferences(vec![PreferenceDraft {
            title: format!("Prefer option {seq}"),
            subtitle: Some("said in passing".into()),
            kind: if rng.bool() {
                PreferenceKind::Soft
            } else {
                PreferenceKind::Hard
            },
        }]),
        Op::UpdatePreferences => Args::PreferenceChanges(vec![(
            rng.i64(1..=preferences.max(1)),
            PreferenceChange {
                subtitle: Some(Some(format!("revised {seq}"))),
                ..PreferenceChange::default()
            },
        )]),
        Op::RemovePreferences => {
            let n = if preferences > MAX_PREFERENCES { 5 } else { 1 };
            Args::Indices(indices(rng, preferences, n))
        }
        Op::ChartGenerator => Args::Chart(Box::new(bar_chart(
            format!("Costs {seq}"),
            [
                f64::from(rng.u32(50..300)),
                f64::from(rng.u32(300..900)),
                f64::from(rng.u32(100..400)),
            ],
            Some("EUR"),
        ))),
        Op::GetArtifact => Args::Artifact(artifact.unwrap_or(0)),
        Op::SetObjective => {
            Args::Objective(format!("Plan a calm week by the sea (revision {seq})"))
        }
        Op::ListTodos | Op::ListPreferences | Op::ListArtifacts => Args::None,
    }
}

fn step(text: &str, depth: i64) -> StepDraft {
    StepDraft {
        text: text.to_string(),
        depth,
    }
}

fn bar_chart(title: String, values: [f64; 3], y_axis_title: Option<&str>) -> ChartDraft {
    ChartDraft {
        chart_type: ChartType::Bar,
        title,
        description: None,
        data: ChartData {
            labels: vec!["Train".into(), "Hotel".into(), "Food".into()],
            series: vec![Series {
                name: "EUR".into(),
                values: values.to_vec(),
            }],
        },
        x_axis_title: None,
        y_axis_title: y_axis_title.map(str::to_string),
        style: None,
    }
}

/// Distinct 1-based indices in `1..=len` (at least `1..=1`), `count` of them at most.
fn indices(rng: &mut fastrand::Rng, len: i64, count: usize) -> Vec<i64> {
    let len = len.max(1);
    let mut out: Vec<i64> = Vec::with_capacity(count);
    for _ in 0..count {
        let i = rng.i64(1..=len);
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// What `haico-load`'s setup gives every thread, through the same tools: an objective, a
/// document, an outline of eight steps, three preferences and a chart.
pub fn seed_calls() -> Vec<Call> {
    let pref = |title: &str, subtitle: Option<&str>, kind| PreferenceDraft {
        title: title.into(),
        subtitle: subtitle.map(str::to_string),
        kind,
    };
    vec![
        Call {
            op: Op::SetObjective,
            args: Args::Objective("Plan a calm week by the sea".into()),
        },
        Call {
            op: Op::UpdateDocument,
            args: Args::Rewrite {
                title: "Trip plan".into(),
                content: "# Trip plan\n\nTrains only, under budget.\n".into(),
            },
        },
        Call {
            op: Op::AddTodos,
            args: Args::Outline {
                steps: vec![
                    step("Choose the town", 0),
                    step("Compare three towns", 1),
                    step("Book the trains", 0),
                    step("Outbound", 1),
                    step("Return", 1),
                    step("Book a room", 0),
                    step("Pack", 0),
                    step("Buy sun cream", 1),
                ],
                parent_index: None,
            },
        },
        Call {
            op: Op::AddPreferences,
            args: Args::Preferences(vec![
                pref("Trains only", None, PreferenceKind::Hard),
                pref("Quiet places", Some("no party towns"), PreferenceKind::Soft),
                pref("Under 1500 EUR", None, PreferenceKind::Hard),
            ]),
        },
        Call {
            op: Op::ChartGenerator,
            args: Args::Chart(Box::new(bar_chart(
                "Budget".into(),
                [180.0, 700.0, 300.0],
                None,
            ))),
        },
    ]
}

/// Whether `op`'s tool is declared read-only (it then runs on a glance, not an edit).
fn reads(op: Op) -> bool {
    matches!(
        op,
        Op::ListTodos | Op::ListPreferences | Op::ListArtifacts | Op::GetArtifact
    )
}

/// Makes `call` on `thread` as the tool runtime makes it, and learns from the answer.
pub async fn run(
    workspaces: &Workspaces,
    thread: &LoadThread,
    call: Call,
) -> Result<(), WorkspaceError> {
    let learned = if reads(call.op) {
        read(workspaces, &thread.id, call).await?
    } else {
        write(workspaces, &thread.id, call).await?
    };
    thread.learn(learned);
    Ok(())
}

/// A read-only tool: the runtime's `run_read` (outside a turn): a glance, the panel's one
/// statement checking the thread too, then the check and the close.
async fn read(
    workspaces: &Workspaces,
    thread: &ThreadId,
    call: Call,
) -> Result<Learned, WorkspaceError> {
    let mut view = workspaces.glance(thread).await?;
    let mut learned = Learned::default();
    let outcome = match (call.op, call.args) {
        (Op::ListTodos, _) => view.plan().await.map(|steps| {
            learned.todos = Some(steps.len() as i64);
            render_plan(&steps)
        }),
        (Op::ListPreferences, _) => view.preferences().await.map(|list| {
            learned.preferences = Some(list.len() as i64);
            render_preferences(&list)
        }),
        (Op::GetArtifact, Args::Artifact(id)) => view
            .artifact(id)
            .await
            .map(|artifact| artifact.payload.to_string()),
        _ => match ArtifactQuery::for_agent(None, Some(10)) {
            Ok(query) => view.artifacts(&query).await.map(|list| {
                list.iter()
                    .map(artifact_line)
                    .collect::<Vec<_>>()
                    .join("\n")
            }),
            Err(err) => Err(err),
        },
    };
    let checked = view.check().await;
    view.close().await;
    checked?;
    outcome?;
    Ok(learned)
}

/// A tool that writes: the runtime's `run_write` (outside a turn): an edit whose thread lock
/// rides with its first statement, the tool's workspace call, the confirmation that the
/// thread exists, and the one commit path, which logs and announces the change.
async fn write(
    workspaces: &Workspaces,
    thread: &ThreadId,
    call: Call,
) -> Result<Learned, WorkspaceError> {
    let tool = call.op.tool();
    let reason = format!("Load test: exercising {tool} on a busy thread.");
    let mut edit = workspaces.edit_for_call(thread).await?;
    edit.set_reason(Some(reason.clone()));
    let outcome = body(&mut edit, call).await;
    // A missing thread is reported as such, whatever else the body ran into.
    match (edit.turn().await, &outcome) {
        (Ok(_), _) | (Err(_), Err(_)) => {}
        (Err(err), Ok(_)) => {
            edit.discard().await;
            return Err(err);
        }
    }
    let ((_, learned), _) = edit
        .end(outcome, |(summary, _)| {
            ChangeNote::tool(tool, Some(reason), summary.clone())
        })
        .await??;
    Ok(learned)
}

/// The tool's body: the workspace call `src/tools/` makes for it, and a summary of what it
/// did for the revision.
async fn body(edit: &mut Edit, call: Call) -> Result<(String, Learned), WorkspaceError> {
    let mut learned = Learned::default();
    let summary = match call.args {
        Args::Append(text) => {
            let change = DocumentChange::Append {
                text: text.as_str().into(),
            };
            match edit.document().write_or_suggest(&change, false).await? {
                Written::Direct(appended) => format!("appended ({} chars total)", appended.chars),
                Written::Suggested(suggestion) => format!("suggested #{}", suggestion.id),
            }
        }
        Args::Rewrite { title, content } => {
            let change = DocumentChange::Replace {
                body: &content,
                title: Some(&title),
                replaces: None,
            };
            match edit.document().write_or_suggest(&change, true).await? {
                Written::Direct(rewritten) => {
                    format!("document updated ({} chars)", rewritten.chars)
                }
                Written::Suggested(suggestion) => format!("suggested #{}", suggestion.id),
            }
        }
        Args::Outline {
            steps,
            parent_index,
        } => {
            let added = edit.plan().add_outline(&steps, parent_index).await?;
            learned.todos = Some(added.total as i64);
            format!(
                "added {} steps (the plan now has {} steps)",
                added.added, added.total
            )
        }
        Args::Indices(indices) if call.op == Op::ToggleTodos => {
            let batch = edit.plan().toggle(&indices).await?;
            learned.todos = Some(batch.len as i64);
            format!("toggled {} steps", batch.applied.len())
        }
        Args::Indices(indices) if call.op == Op::RemoveTodos => {
            let batch = edit.plan().remove(&indices).await?;
            let gone: usize = batch.applied.iter().map(|(_, r)| 1 + r.sub_steps).sum();
            let left = batch.len.saturating_sub(gone);
            learned.todos = Some(left as i64);
            format!("removed {} steps ({left} steps left)", batch.applied.len())
        }
        Args::Indices(indices) if call.op == Op::RemovePreferences => {
            let batch = edit.preferences().remove(&indices).await?;
            let removed = batch
                .targets
                .iter()
                .filter(|t| t.outcome == haico_store::WriteOutcome::Applied)
                .count();
            learned.preferences = Some(batch.len.saturating_sub(removed) as i64);
            format!("removed {removed} preferences")
        }
        Args::StepTexts(updates) => {
            let batch = edit.plan().rewrite(&updates).await?;
            learned.todos = Some(batch.len as i64);
            format!("rewrote {} steps", batch.applied.len())
        }
        Args::Preferences(drafts) => {
            let added = edit.preferences().add(&drafts).await?;
            learned.preferences_added = added.len() as i64;
            format!("recorded {} preferences", added.len())
        }
        Args::PreferenceChanges(changes) => {
            let batch = edit.preferences().change(&changes).await?;
            learned.preferences = Some(batch.len as i64);
            format!("updated {} preferences", batch.targets.len())
        }
        Args::Chart(draft) => {
            let added = edit.artifacts().add_chart(*draft).await?;
            learned.artifact = Some(added.artifact.artifact_id);
            format!("created bar chart \"{}\"", added.chart.title)
        }
        Args::Objective(objective) => {
            let set = edit.objective().set(&objective).await?;
            format!("objective set: {}", set.objective)
        }
        Args::Indices(_) | Args::Artifact(_) | Args::None => {
            return Err(WorkspaceError::invalid(format!(
                "`{}` does not write",
                call.op.tool()
            )));
        }
    };
    Ok((summary, learned))
}
