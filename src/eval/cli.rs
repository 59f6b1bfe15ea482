//! `haico eval`'s flags and what the command does with them: load every scenario (stopping
//! on the first bad file), run them, write the reports, and say whether all passed.

use std::{io::Write as _, path::PathBuf};

use anyhow::{Context, bail};
use clap::Args;

use super::{
    ModelChoice, Progress, RunOptions, evaluate,
    scenario::{MAX_STEPS_LIMIT, load_all, select},
};
use crate::{
    agent::{
        AgentConfig,
        model::CONFIGURE_HINT,
        providers::{LlmArgs, build_model},
    },
    workspace::rules::plural,
};

/// `haico eval`: run scenarios against the model and report.
#[derive(Debug, Clone, Args)]
pub struct EvalArgs {
    /// Scenario files, or folders whose `*.json` files are all scenarios.
    #[arg(default_value = "eval")]
    pub paths: Vec<PathBuf>,
    /// Run only the scenario with this name (repeat the flag for several).
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,
    /// Also write the report as JSON to this file (every check's detail and every measure).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write the Markdown report to this file instead of standard output.
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,
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
    };
    let report = evaluate(&scenarios, &options, &mut print_progress).await?;
    if let Some(path) = &args.json {
        let json = report.to_json().context("encoding the JSON report")?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("writing the JSON report to {}", path.display()))?;
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

/// One line on standard error per scenario and per turn, for a person waiting on a slow model.
fn print_progress(event: Progress<'_>) {
    match event {
        Progress::Started {
            index,
            total,
            scenario,
        } => eprintln!("[{index}/{total}] {}", scenario.name),
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
        Progress::Finished { result } => {
            let passed = result.checks.iter().filter(|c| c.passed).count();
            eprintln!(
                "    {} {passed}/{} checks",
                if result.passed { "✓" } else { "✗" },
                result.checks.len()
            );
        }
    }
}
