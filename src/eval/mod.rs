//! `haico eval`: how well the agent co-constructs, measured on scripted tasks.
//!
//! A scenario ([`scenario`]) is what a person brings: a starting workspace, a few messages,
//! and checks ([`checks`]) of what a good partner leaves behind. Task checks name the target
//! the person asked for (which step was ticked, what a preference now says, which numbers a
//! chart shows); guards hold unless something goes wrong (locked preferences left alone, no
//! repeated calls, turns that end with the model's answer). Each scenario runs on a fresh
//! database with the real agent ([`run`]), once or `--repeat` times, against the configured
//! model or, with `--replay`, against its own scripted answers, which is how CI proves that
//! the checks pass for a good agent and bite for a bad one (`tests/integration/agent/eval.rs`).
//! Beside every run the same checks judge an agent that does nothing ([`baseline`]), so the
//! report shows how much better than chatting a model is. Every model call is traced
//! ([`trace`]). The measures ([`measures`]: time, tool calls, tokens) and the outcomes are
//! reported as JSON and Markdown ([`report`]). The format and how to run it against a real
//! model: `docs/EVAL.md`.

pub mod baseline;
pub mod checks;
pub mod cli;
pub mod measures;
pub mod report;
pub mod run;
pub mod scenario;
pub mod tally;
pub mod trace;

use std::path::PathBuf;

pub use baseline::Baseline;
pub use checks::{Check, CheckKind, CheckOutcome};
pub use measures::{Measures, TokenMeasures, Totals, turn_tokens};
pub use report::{Report, ScenarioReport};
pub use run::{ModelChoice, Progress, RunOptions, RunResult, ScenarioRun, run_scenario};
pub use scenario::{Scenario, ScenarioError, load, load_all, select};
pub use tally::{Counts, Tally};
pub use trace::TurnTrace;

use crate::agent::turn::StartError;

use haico_store::StoreError;

use haico_core::workspace::WorkspaceError;

/// Why an evaluation could not run (as opposed to scenarios that ran and failed checks, which
/// is a result). Each names the scenario file.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A scenario file could not be loaded.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// `--replay` was asked for, but the scenario has no script.
    #[error("{}: has no `replay` answers, which --replay plays; add them or run it against a model", path.display())]
    NoReplay {
        /// The scenario file.
        path: PathBuf,
    },
    /// The temporary folder for the scenario's database could not be made.
    #[error("{}: cannot make a temporary folder for its database: {source}", path.display())]
    TempDir {
        /// The scenario file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The scenario's database could not be opened.
    #[error("{}: cannot open its database: {source}", path.display())]
    Database {
        /// The scenario file.
        path: PathBuf,
        /// Why.
        source: StoreError,
    },
    /// Setting up or reading the workspace failed (a starting workspace the workspace's rules
    /// refuse is reported here, naming the item).
    #[error("{}: {what}: {source}", path.display())]
    Workspace {
        /// The scenario file.
        path: PathBuf,
        /// What was being done.
        what: String,
        /// Why it failed.
        source: WorkspaceError,
    },
    /// A turn could not start.
    #[error("{}: message {turn} could not start a turn: {source}", path.display())]
    Start {
        /// The scenario file.
        path: PathBuf,
        /// Which message (from 1).
        turn: usize,
        /// Why.
        source: StartError,
    },
    /// A turn's task ended abnormally (it panicked or was aborted).
    #[error("{}: the turn of message {turn} ended abnormally: {source}", path.display())]
    TurnTask {
        /// The scenario file.
        path: PathBuf,
        /// Which message (from 1).
        turn: usize,
        /// Why.
        source: tokio::task::JoinError,
    },
}

/// Runs `scenarios` one after another, each `options.repeat` times on a fresh database, and
/// reports on them. With [`ModelChoice::Replay`], every scenario must carry a script; that is
/// checked before the first one runs.
pub async fn evaluate(
    scenarios: &[Scenario],
    options: &RunOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Report, EvalError> {
    if matches!(options.model, ModelChoice::Replay)
        && let Some(missing) = scenarios.iter().find(|s| s.replay.is_none())
    {
        return Err(EvalError::NoReplay {
            path: missing.path.clone(),
        });
    }
    let repeat = options.repeat.max(1);
    let started_at = chrono::Utc::now();
    let mut reports = Vec::with_capacity(scenarios.len());
    for (i, scenario) in scenarios.iter().enumerate() {
        let at = Place {
            index: i + 1,
            total: scenarios.len(),
            runs: repeat,
        };
        let first = run_once(scenario, options, at, 1, progress).await?;
        let mut runs = Vec::with_capacity(repeat);
        runs.push(first.result);
        for run in 2..=repeat {
            runs.push(run_once(scenario, options, at, run, progress).await?.result);
        }
        reports.push(ScenarioReport::new(
            scenario,
            run::step_limit(scenario, options),
            first.baseline,
            runs,
        ));
    }
    Ok(Report::new(
        options.model.describe(),
        matches!(options.model, ModelChoice::Replay),
        started_at,
        repeat,
        reports,
    ))
}

/// Where a scenario run stands in the evaluation, for the progress lines.
#[derive(Debug, Clone, Copy)]
struct Place {
    index: usize,
    total: usize,
    runs: usize,
}

/// One run of `scenario`, announced before and after.
async fn run_once(
    scenario: &Scenario,
    options: &RunOptions,
    at: Place,
    run: usize,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<ScenarioRun, EvalError> {
    progress(Progress::Started {
        index: at.index,
        total: at.total,
        run,
        runs: at.runs,
        scenario,
    });
    let done = run_scenario(scenario, options, run, progress).await?;
    progress(Progress::Finished {
        result: &done.result,
        baseline: &done.baseline,
    });
    Ok(done)
}
