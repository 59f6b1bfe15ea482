//! `haico eval`'s flags and what the command does with them: load every scenario (stopping
//! on the first bad file), run them, write the reports and traces, and say whether all
//! passed. `--render-traces` only turns an earlier JSON report's traces into Markdown.

use std::{
    io::Write as _,
    path::{Path, PathBuf},
};

use anyhow::{Context, bail};
use clap::Args;

use crate::{
    agent::AgentConfig, agent::model::CONFIGURE_HINT, agent::providers::build_model,
    agent::providers::config::LlmArgs,
};
use crate::{
    eval::evaluate, eval::report::Report, eval::run::ModelChoice, eval::run::Progress,
    eval::run::RunOptions, eval::run::RunResult, eval::scenario::MAX_STEPS_LIMIT,
    eval::scenario::load_all, eval::scenario::select, eval::trace::markdown,
};
use haico_core::workspace::rules::plural;

/// Most runs `--repeat` asks for (each is a whole scenario on a model).
pub const MAX_REPEAT: u32 = 100;

/// `haico eval`: run scenarios against the model and report.
#[derive(Debug, Clone, Args)]
pub struct EvalArgs {
    /// Scenario files, or folders whose `*.json` files are all scenarios.
    #[arg(default_value = "eval")]
    pub paths: Vec<PathBuf>,
    /// Run only the scenario with this name (repeat the flag for several).
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,
    /// Also write the report as JSON to this file (every run's checks with their details, the
    /// do-nothing baseline, every measure and the per-call trace).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write the Markdown report to this file instead of standard output.
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,
    /// Write each scenario run's trace as Markdown into this folder (made if missing):
    /// `<scenario>.md`, or `<scenario>-run<N>.md` with --repeat: every model call with its
    /// tool calls, their envelopes, tokens and time, turn by turn.
    #[arg(long, value_name = "DIR")]
    pub traces: Option<PathBuf>,
    /// Run every scenario this many times, each on a fresh database, and report pass@1 (the
    /// share of runs that passed) beside pass^k (the share of scenarios whose runs all
    /// passed).
    #[arg(long, value_name = "K", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_REPEAT)))]
    pub repeat: u32,
    /// Run nothing: write the traces of this earlier `--json` report into the `--traces`
    /// folder.
    #[arg(long, value_name = "REPORT", requires = "traces")]
    pub render_traces: Option<PathBuf>,
    /// Play each scenario's own scripted answers (its `replay` list) instead of asking the
    /// configured model: checks the scenarios and the harness, not a model.
    #[arg(long)]
    pub replay: bool,
    /// Tool calls one turn may make, for scenarios that do not set `max_steps`.
    #[arg(long, env = "HAICO_MAX_STEPS", default_value_t = 25,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_STEPS_LIMIT)))]
    pub max_steps: u32,
    /// Language model settings (the same as `haico serve` and `haico chat`); ignored with
    /// `--replay`.
    #[command(flatten)]
    pub llm: LlmArgs,
}

/// Runs the evaluation `args` describe; `Ok(false)` when a scenario failed, an error when the
/// evaluation could not run (a bad scenario file, no model configured, a report not written).
pub async fn run(args: &EvalArgs) -> anyhow::Result<bool> {
    if let (Some(report), Some(dir)) = (&args.render_traces, &args.traces) {
        let written = render_traces(report, dir)?;
        eprintln!("wrote {} into {}", plural(written, "trace"), dir.display());
        return Ok(true);
    }
    let scenarios = select(load_all(&args.paths)?, &args.only)?;
    let model = if args.replay {
        ModelChoice::Replay
    } else {
        let model = build_model(&args.llm.config()).context("configuring the language model")?;
        if !model.is_configured() {
            bail!(
                "{}: {CONFIGURE_HINT}; or pass --replay to play the scenarios' own scripts",
                model.describe()
            );
        }
        ModelChoice::Live(model)
    };
    let options = RunOptions {
        model,
        max_steps: args.max_steps,
        agent: args.llm.agent_config(AgentConfig::default()),
        repeat: usize::try_from(args.repeat).unwrap_or(1),
    };
    let report = evaluate(&scenarios, &options, &mut print_progress).await?;
    if let Some(path) = &args.json {
        let json = report.to_json().context("encoding the JSON report")?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("writing the JSON report to {}", path.display()))?;
    }
    if let Some(dir) = &args.traces {
        write_traces(&report, dir)?;
    }
    let markdown = report.to_markdown();
    match &args.markdown {
        Some(path) => std::fs::write(path, &markdown)
            .with_context(|| format!("writing the Markdown report to {}", path.display()))?,
        None => {
            let mut out = std::io::stdout();
            out.write_all(markdown.as_bytes())
                .and_then(|()| out.flush())
                .context("writing the report to standard output")?;
        }
    }
    Ok(report.passed())
}

/// Writes every scenario run's trace into `dir`.
fn write_traces(report: &Report, dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("making the traces folder {}", dir.display()))?;
    for scenario in &report.scenarios {
        for run in &scenario.runs {
            write_trace(dir, &scenario.name, &report.model, run, report.repeat)?;
        }
    }
    Ok(())
}

fn write_trace(
    dir: &Path,
    scenario: &str,
    model: &str,
    run: &RunResult,
    runs: usize,
) -> anyhow::Result<()> {
    let path = dir.join(markdown::file_name(scenario, run.run, runs));
    std::fs::write(&path, markdown::render(scenario, model, run, runs))
        .with_context(|| format!("writing the trace {}", path.display()))
}

/// Writes the traces of the JSON report at `report` into `dir`; how many it wrote.
fn render_traces(report: &Path, dir: &Path) -> anyhow::Result<usize> {
    let text = std::fs::read_to_string(report)
        .with_context(|| format!("reading the report {}", report.display()))?;
    let report: Report = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a JSON report of this version of haico eval",
            report.display()
        )
    })?;
    write_traces(&report, dir)?;
    Ok(report.scenarios.iter().map(|s| s.runs.len()).sum())
}

/// One line on standard error per scenario run and per turn, for a person waiting on a slow
/// model.
fn print_progress(event: Progress<'_>) {
    match event {
        Progress::Started {
            index,
            total,
            run,
            runs,
            scenario,
        } => {
            if runs > 1 {
                eprintln!("[{index}/{total}] {} (run {run}/{runs})", scenario.name);
            } else {
                eprintln!("[{index}/{total}] {}", scenario.name);
            }
        }
        Progress::Turn {
            number,
            of,
            turn,
            wall_ms,
        } => {
            let failed = turn.tool_calls.iter().filter(|c| !c.success).count();
            eprintln!(
                "    turn {number}/{of}: {}, {} ({failed} failed), {:.1} s",
                turn.status,
                plural(turn.tool_calls.len(), "tool call"),
                wall_ms / 1000.0
            );
        }
        Progress::Finished { result, baseline } => {
            let counts = &result.counts;
            eprintln!(
                "    {} checks {} (task {}, guards {}); do-nothing baseline {}",
                if result.passed { "✓" } else { "✗" },
                counts.all.fraction(),
                counts.task.fraction(),
                counts.guard.fraction(),
                baseline.counts.all.fraction()
            );
        }
    }
}
