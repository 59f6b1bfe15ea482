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
mod error;
mod evaluate;
pub mod measures;
pub mod report;
pub mod run;
pub mod scenario;
pub mod tally;
pub mod trace;

pub use baseline::Baseline;
pub use checks::{Check, CheckKind, CheckOutcome};
pub use error::EvalError;
pub use evaluate::evaluate;
pub use measures::{Measures, TokenMeasures, Totals, turn_tokens};
pub use report::{Report, ScenarioReport};
pub use run::{ModelChoice, Progress, RunOptions, RunResult, ScenarioRun, run_scenario};
pub use scenario::{Scenario, ScenarioError, load, load_all, select};
pub use tally::{Counts, Tally};
pub use trace::TurnTrace;
