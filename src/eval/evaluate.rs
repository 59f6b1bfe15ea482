//! [`evaluate`]: every selected scenario, each run as often as asked, beside its do-nothing
//! baseline.

use crate::eval::{
    error::EvalError,
    report::{Report, ScenarioReport},
    run::{self, ModelChoice, Progress, RunOptions, ScenarioRun, run_scenario},
    scenario::Scenario,
};

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
