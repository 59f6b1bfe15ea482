//! Running one scenario once: a fresh SQLite database in a temporary folder, the starting
//! workspace written through the user path, then the person's messages as turns of the real
//! agent (the same `Agent`, tools and storage as `haico serve`), each awaited before the next,
//! with every model call traced; then the checks judged on what that left behind, and beside
//! them the do-nothing baseline on the same starting workspace.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use serde::{Deserialize, Serialize};

use crate::{
    agent::AgentConfig, agent::model::ChatModel, agent::providers::replay::ReplayModel,
    agent::providers::replay::ReplayScript, agent::turn::Agent, tools::ToolRuntime,
    tools::tool_specs,
};
use crate::{
    eval::baseline, eval::baseline::Baseline, eval::checks::CheckOutcome, eval::checks::Observed,
    eval::error::EvalError, eval::measures::Measures, eval::scenario::Scenario,
    eval::scenario::StartingWorkspace, eval::tally::Counts, eval::trace, eval::trace::TurnTrace,
    eval::trace::recorder::CallLog,
};
use haico_core::{
    events::InProcessBus, workspace::PreferenceDraft, workspace::StepPlacement,
    workspace::WorkspaceError, workspace::Workspaces,
};
use haico_store::{Artifact, Database, PoolConfig, StoredTurn, ThreadId};

/// The one thread each scenario's database holds.
const THREAD: &str = "eval";

/// Which model answers.
#[derive(Clone)]
pub enum ModelChoice {
    /// Each scenario run plays its own `replay` script, on a model of its own (so scripts
    /// never interleave).
    Replay,
    /// The configured model, shared by the scenarios (they run one after another).
    Live(Arc<dyn ChatModel>),
}

impl std::fmt::Debug for ModelChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl ModelChoice {
    /// One line for the report.
    pub fn describe(&self) -> String {
        match self {
            Self::Replay => "replay (each scenario's own script)".to_string(),
            Self::Live(model) => model.describe(),
        }
    }
}

/// How the scenarios run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The model.
    pub model: ModelChoice,
    /// Tool calls a turn may make, for scenarios that do not set `max_steps`.
    pub max_steps: u32,
    /// The agent's other settings (the prompt's snapshot role, text tool calls), as `haico
    /// serve` would run with them; its step limit is replaced per scenario.
    pub agent: AgentConfig,
    /// How many times each scenario runs, each on a fresh database (`--repeat`; at least 1).
    pub repeat: usize,
}

/// What happened, as it happens, for a person watching a slow model.
#[derive(Debug, Clone, Copy)]
pub enum Progress<'a> {
    /// A scenario run starts (`index` and `run` from 1).
    Started {
        /// The scenario's position in the evaluation.
        index: usize,
        /// How many scenarios the evaluation has.
        total: usize,
        /// Which run of the scenario this is.
        run: usize,
        /// How many runs each scenario gets.
        runs: usize,
        /// The scenario.
        scenario: &'a Scenario,
    },
    /// A turn ended.
    Turn {
        /// Which message (from 1).
        number: usize,
        /// How many messages the scenario has.
        of: usize,
        /// The turn as recorded.
        turn: &'a StoredTurn,
        /// How long it took, in milliseconds.
        wall_ms: f64,
    },
    /// A scenario run ended.
    Finished {
        /// Its result.
        result: &'a RunResult,
        /// The do-nothing baseline of its scenario.
        baseline: &'a Baseline,
    },
}

/// The outcome of one run of a scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Which run (from 1).
    pub run: usize,
    /// Whether every check passed.
    pub passed: bool,
    /// Each check's outcome, in the file's order.
    pub checks: Vec<CheckOutcome>,
    /// Their pass counts: task checks, guards, all.
    pub counts: Counts,
    /// Time, calls and tokens.
    pub measures: Measures,
    /// Things worth knowing that are not checks (e.g. replay answers left unplayed).
    pub notes: Vec<String>,
    /// Every model call of every turn, joined with the tool calls' envelopes.
    pub trace: Vec<TurnTrace>,
}

/// One run, with the scenario's do-nothing baseline judged on the same starting workspace.
#[derive(Debug, Clone)]
pub struct ScenarioRun {
    /// The run.
    pub result: RunResult,
    /// The baseline.
    pub baseline: Baseline,
}

/// The step limit `scenario`'s turns run with.
pub fn step_limit(scenario: &Scenario, options: &RunOptions) -> u32 {
    scenario.max_steps.unwrap_or(options.max_steps).max(1)
}

/// What one run left behind, judged.
struct Judged {
    checks: Vec<CheckOutcome>,
    measures: Measures,
    trace: Vec<TurnTrace>,
    baseline: Baseline,
}

/// Runs `scenario` once (as run number `run`) and judges its checks.
pub async fn run_scenario(
    scenario: &Scenario,
    options: &RunOptions,
    run: usize,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<ScenarioRun, EvalError> {
    let (model, replay) = match &options.model {
        ModelChoice::Live(model) => (Arc::clone(model), None),
        ModelChoice::Replay => {
            let Some(responses) = &scenario.replay else {
                return Err(EvalError::NoReplay {
                    path: scenario.path.clone(),
                });
            };
            let replay = Arc::new(ReplayModel::new(
                &scenario.path,
                ReplayScript {
                    responses: responses.clone(),
                },
            ));
            let model: Arc<dyn ChatModel> = replay.clone();
            (model, Some(replay))
        }
    };
    let folder = tempfile::Builder::new()
        .prefix("haico-eval-")
        .tempdir()
        .map_err(|source| EvalError::TempDir {
            path: scenario.path.clone(),
            source,
        })?;
    let url = format!("sqlite:{}", folder.path().join("eval.db").display());
    let db = Database::connect(&url, &PoolConfig::default())
        .await
        .map_err(|source| EvalError::Database {
            path: scenario.path.clone(),
            source,
        })?;
    let max_steps = step_limit(scenario, options);
    let config = AgentConfig {
        max_tool_calls: usize::try_from(max_steps).unwrap_or(usize::MAX),
        ..options.agent.clone()
    };
    let outcome = run_on(&db, scenario, model, config, progress).await;
    db.close().await;
    let judged = outcome?;
    let mut notes = Vec::new();
    if let (Some(replay), Some(responses)) = (replay, &scenario.replay) {
        let played = replay.played();
        if played < responses.len() {
            notes.push(format!(
                "the replay script has {} answers but only {played} were asked for",
                responses.len()
            ));
        }
    }
    let unmatched: usize = judged.trace.iter().map(|t| t.unmatched_steps.len()).sum();
    if unmatched > 0 {
        notes.push(format!(
            "the trace could not join {unmatched} recorded tool call(s) to a model call"
        ));
    }
    let counts = Counts::of(&judged.checks);
    Ok(ScenarioRun {
        result: RunResult {
            run,
            passed: judged.checks.iter().all(|check| check.passed),
            counts,
            checks: judged.checks,
            measures: judged.measures,
            notes,
            trace: judged.trace,
        },
        baseline: judged.baseline,
    })
}

/// Seeds the workspace, runs the turns and judges the checks, on an open database.
async fn run_on(
    db: &Database,
    scenario: &Scenario,
    model: Arc<dyn ChatModel>,
    config: AgentConfig,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Judged, EvalError> {
    let max_steps = config.max_tool_calls;
    let path = &scenario.path;
    let in_workspace = |what: &str| {
        let what = what.to_string();
        move |source| EvalError::Workspace {
            path: path.clone(),
            what,
            source,
        }
    };
    let runtime = ToolRuntime::with_bus(db.clone(), Arc::new(InProcessBus::new()));
    let workspaces = runtime.workspaces().clone();
    let thread = ThreadId::parse(THREAD).map_err(|err| EvalError::Workspace {
        path: path.clone(),
        what: "naming the thread".into(),
        source: WorkspaceError::invalid(err.to_string()),
    })?;
    workspaces
        .threads()
        .create(&thread, Some("haico eval"))
        .await
        .map_err(in_workspace("creating the thread"))?;
    seed(&workspaces, &thread, &scenario.workspace)
        .await
        .map_err(|(what, source)| EvalError::Workspace {
            path: path.clone(),
            what: format!("writing the starting workspace ({what})"),
            source,
        })?;
    let start = workspaces
        .snapshot(&thread)
        .await
        .map_err(in_workspace("reading the starting workspace"))?;
    let offered: Vec<&str> = tool_specs().iter().map(|spec| spec.name).collect();
    let log = CallLog::new(&offered, config.text_tool_calls);
    let agent = Arc::new(Agent::new(
        runtime,
        trace::traced(model, Arc::clone(&log)),
        config,
    ));
    // As in `haico chat`: the turn's lease is renewed while it runs, however slow the model.
    let _leases = AbortOnDrop(agent.keep_leases());
    let mut walls = Vec::with_capacity(scenario.messages.len());
    for (i, message) in scenario.messages.iter().enumerate() {
        let number = i + 1;
        log.set_turn(number);
        let began = Instant::now();
        let started = agent
            .start(&thread, message, None)
            .await
            .map_err(|source| EvalError::Start {
                path: path.clone(),
                turn: number,
                source,
            })?;
        started.task.await.map_err(|source| EvalError::TurnTask {
            path: path.clone(),
            turn: number,
            source,
        })?;
        let wall_ms = millis(began.elapsed());
        walls.push(wall_ms);
        let turns = workspaces
            .conversation(&thread)
            .await
            .map_err(in_workspace("reading the conversation"))?;
        if let Some(turn) = turns.last() {
            progress(Progress::Turn {
                number,
                of: scenario.messages.len(),
                turn,
                wall_ms,
            });
        }
    }
    let turns = workspaces
        .conversation(&thread)
        .await
        .map_err(in_workspace("reading the conversation"))?;
    let end = workspaces
        .snapshot(&thread)
        .await
        .map_err(in_workspace("reading the final workspace"))?;
    let mut artifacts: Vec<Artifact> = Vec::with_capacity(end.artifacts.len());
    for summary in &end.artifacts {
        artifacts.push(
            workspaces
                .artifacts(&thread)
                .get(summary.id)
                .await
                .map_err(in_workspace("reading an artifact"))?,
        );
    }
    let trace = trace::join(&turns, &scenario.messages, &walls, &log.calls());
    let seen = Observed {
        start: &start,
        end: &end,
        artifacts: &artifacts,
        turns: &turns,
        traces: Some(&trace),
        max_steps,
        offered_tools: &offered,
    };
    let checks = scenario
        .checks
        .iter()
        .map(|check| check.evaluate(&seen))
        .collect();
    Ok(Judged {
        checks,
        measures: Measures::of(&turns, &walls),
        baseline: baseline::judge(scenario, &start, max_steps, &offered),
        trace,
    })
}

/// Writes the starting workspace as a person would, panel by panel; an error says which item
/// it came from.
pub(crate) async fn seed(
    workspaces: &Workspaces,
    thread: &ThreadId,
    start: &StartingWorkspace,
) -> Result<(), (String, WorkspaceError)> {
    if let Some(objective) = &start.objective {
        workspaces
            .objective(thread)
            .put(objective)
            .await
            .map_err(|err| ("workspace.objective".to_string(), err))?;
    }
    if let Some(document) = &start.document {
        workspaces
            .document(thread)
            .put(&document.content, document.title.as_deref(), None)
            .await
            .map_err(|err| ("workspace.document".to_string(), err))?;
    }
    for (i, step) in start.plan.iter().enumerate() {
        let at = |err| (format!("workspace.plan[{i}]"), err);
        let placement = StepPlacement::End {
            depth: Some(i64::from(step.depth)),
        };
        let added = workspaces
            .plan(thread)
            .add_step(&step.text, placement)
            .await
            .map_err(at)?;
        if step.done {
            workspaces
                .plan(thread)
                .update_step(added.id, None, Some(true))
                .await
                .map_err(at)?;
        }
    }
    for (i, preference) in start.preferences.iter().enumerate() {
        let draft = PreferenceDraft {
            title: preference.title.clone(),
            subtitle: preference.subtitle.clone(),
            kind: preference.kind,
        };
        workspaces
            .preferences(thread)
            .create(&draft, preference.locked)
            .await
            .map_err(|err| (format!("workspace.preferences[{i}]"), err))?;
    }
    Ok(())
}

/// A duration in milliseconds.
fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Aborts the task when dropped, however the run ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
