//! The evaluation's report: JSON for machines (every run's checks with their details, every
//! measure, the per-call trace, the do-nothing baseline) and Markdown for people (one row per
//! scenario with task checks and guards apart and the baseline beside them, the overall
//! rates, then the failed checks with what was seen).

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{
    baseline::Baseline,
    measures::{Measures, Totals},
    run::RunResult,
    scenario::Scenario,
    tally::{Counts, Tally, points},
};
use haico_core::workspace::rules::plural;

/// The outcome of an evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The model, in one line (never a key).
    pub model: String,
    /// Whether the scenarios played their own scripts.
    pub replay: bool,
    /// When the evaluation started.
    pub started_at: DateTime<Utc>,
    /// How many times each scenario ran (`--repeat`).
    pub repeat: usize,
    /// Every scenario, in the order run.
    pub scenarios: Vec<ScenarioReport>,
    /// Over all scenarios.
    pub overall: Overall,
}

/// One scenario over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioReport {
    /// The scenario's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// The file it came from.
    pub file: String,
    /// The step limit its turns ran with.
    pub max_steps: u32,
    /// Whether every run passed every check.
    pub passed: bool,
    /// Runs that passed every check.
    pub runs_passed: usize,
    /// Pass counts over all runs.
    pub counts: Counts,
    /// The checks on an agent that does nothing (the same for every run).
    pub baseline: Baseline,
    /// Time, calls and tokens over all runs (sums; time to first token as the median).
    pub measures: Measures,
    /// Each run, in order.
    pub runs: Vec<RunResult>,
}

impl ScenarioReport {
    /// The report of `scenario`'s `runs` (at least one), whose turns ran with `max_steps`.
    pub fn new(
        scenario: &Scenario,
        max_steps: u32,
        baseline: Baseline,
        runs: Vec<RunResult>,
    ) -> Self {
        let each: Vec<&Measures> = runs.iter().map(|run| &run.measures).collect();
        let runs_passed = runs.iter().filter(|run| run.passed).count();
        Self {
            name: scenario.name.clone(),
            description: scenario.description.clone(),
            file: scenario.path.display().to_string(),
            max_steps,
            passed: runs_passed == runs.len(),
            runs_passed,
            counts: Counts::sum(runs.iter().map(|run| &run.counts)),
            baseline,
            measures: Totals::of(&each).sum,
            runs,
        }
    }
}

/// Over all scenarios of an evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overall {
    /// Scenarios run.
    pub scenarios: usize,
    /// Runs per scenario.
    pub repeat: usize,
    /// Runs in all.
    pub runs: usize,
    /// Runs that passed every check.
    pub runs_passed: usize,
    /// pass@1: `runs_passed / runs`, the chance one run passes.
    pub pass_at_1: f64,
    /// Scenarios whose every run passed.
    pub scenarios_passed: usize,
    /// pass^k: `scenarios_passed / scenarios`, the share passed every time.
    pub pass_hat_k: f64,
    /// Pass counts over all runs.
    pub counts: Counts,
    /// `counts.all` as a share.
    pub check_pass_rate: f64,
    /// The do-nothing baseline's pass counts (one per scenario).
    pub baseline: Counts,
    /// `baseline.all` as a share.
    pub baseline_pass_rate: f64,
    /// `check_pass_rate` less `baseline_pass_rate`, in percentage points: how much better
    /// than chatting.
    pub points_over_baseline: f64,
    /// Sums and medians of the measures over all runs.
    #[serde(flatten)]
    pub totals: Totals,
}

impl Report {
    /// The report of `scenarios`, each run `repeat` times.
    pub fn new(
        model: String,
        replay: bool,
        started_at: DateTime<Utc>,
        repeat: usize,
        scenarios: Vec<ScenarioReport>,
    ) -> Self {
        let runs: Vec<&RunResult> = scenarios.iter().flat_map(|s| &s.runs).collect();
        let runs_passed = runs.iter().filter(|run| run.passed).count();
        let scenarios_passed = scenarios.iter().filter(|s| s.passed).count();
        let counts = Counts::sum(scenarios.iter().map(|s| &s.counts));
        let baseline = Counts::sum(scenarios.iter().map(|s| &s.baseline.counts));
        let each: Vec<&Measures> = runs.iter().map(|run| &run.measures).collect();
        let overall = Overall {
            scenarios: scenarios.len(),
            repeat,
            runs: runs.len(),
            runs_passed,
            pass_at_1: Tally {
                passed: runs_passed,
                total: runs.len(),
            }
            .rate(),
            scenarios_passed,
            pass_hat_k: Tally {
                passed: scenarios_passed,
                total: scenarios.len(),
            }
            .rate(),
            check_pass_rate: counts.all.rate(),
            baseline_pass_rate: baseline.all.rate(),
            points_over_baseline: ((counts.all.rate() - baseline.all.rate()) * 1000.0).round()
                / 10.0,
            counts,
            baseline,
            totals: Totals::of(&each),
        };
        Self {
            model,
            replay,
            started_at,
            repeat,
            scenarios,
            overall,
        }
    }

    /// Whether every run of every scenario passed.
    pub fn passed(&self) -> bool {
        self.overall.scenarios_passed == self.overall.scenarios
    }

    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }

    /// The overall lines: scenarios passed, then checks against the do-nothing baseline.
    pub fn summary(&self) -> String {
        let o = &self.overall;
        let mut out = String::new();
        if self.repeat <= 1 {
            let _ = writeln!(
                out,
                "Scenarios passed: {}.",
                Tally {
                    passed: o.scenarios_passed,
                    total: o.scenarios
                }
                .with_share()
            );
        } else {
            let _ = writeln!(
                out,
                "Runs passed (pass@1): {}; scenarios whose {} runs all passed (pass^{}): {}.",
                Tally {
                    passed: o.runs_passed,
                    total: o.runs
                }
                .with_share(),
                self.repeat,
                self.repeat,
                Tally {
                    passed: o.scenarios_passed,
                    total: o.scenarios
                }
                .with_share()
            );
        }
        let over = if self.repeat <= 1 {
            String::new()
        } else {
            format!(" over all {} runs", o.runs)
        };
        let _ = writeln!(
            out,
            "Checks passed{over}: {}, do-nothing baseline {}, {}.",
            o.counts.all.with_share(),
            o.baseline.all.with_share(),
            points(o.counts.all.rate(), o.baseline.all.rate())
        );
        let _ = writeln!(
            out,
            "Task checks: {}, baseline {}; guards: {}, baseline {}.",
            o.counts.task.with_share(),
            o.baseline.task.with_share(),
            o.counts.guard.with_share(),
            o.baseline.guard.with_share()
        );
        out
    }

    /// The report as Markdown: a table, the overall lines, then the failed checks, checks
    /// the do-nothing baseline judges oddly, and the notes.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let overall = &self.overall;
        let _ = writeln!(out, "## haico eval\n");
        let runs = if self.repeat > 1 {
            format!(" · {} runs each", self.repeat)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "Model: {} · {}{runs} · started {}\n",
            self.model,
            plural(overall.scenarios, "scenario"),
            self.started_at.format("%Y-%m-%d %H:%M UTC")
        );
        out.push_str(
            "| scenario | pass | task | guards | checks | do-nothing | wall s | model calls | \
             prompt tokens | cached | completion tokens | TTFT s | tool calls | failed calls |\n",
        );
        out.push_str(
            "| --- | :-: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |\n",
        );
        for scenario in &self.scenarios {
            let pass = if self.repeat <= 1 {
                if scenario.passed { "✓" } else { "✗" }.to_string()
            } else {
                format!("{}/{}", scenario.runs_passed, scenario.runs.len())
            };
            let _ = writeln!(
                out,
                "| {} | {pass} | {} | {} | {} | {} | {} |",
                cell(&scenario.name),
                scenario.counts.task.fraction(),
                scenario.counts.guard.fraction(),
                scenario.counts.all.fraction(),
                scenario.baseline.counts.all.fraction(),
                measure_cells(&scenario.measures),
            );
        }
        let sum = &overall.totals.sum;
        let _ = writeln!(
            out,
            "| **overall** | **{}/{}** | {} | {} | {} | {} | {} |",
            overall.scenarios_passed,
            overall.scenarios,
            overall.counts.task.fraction(),
            overall.counts.guard.fraction(),
            overall.counts.all.fraction(),
            overall.baseline.all.fraction(),
            measure_cells(&Measures {
                tokens: crate::eval::measures::TokenMeasures {
                    first_token_ms: overall.totals.median.first_token_ms,
                    ..sum.tokens
                },
                ..sum.clone()
            }),
        );
        let _ = writeln!(out, "\n{}", self.summary().trim_end());
        let _ = writeln!(
            out,
            "\n\"do-nothing\": the checks passed by an agent that answers every message in plain \
             text and changes nothing (one run). The overall row sums every column but TTFT, \
             which is the median over scenarios; model time (wall less tool time) was {} s in \
             all. \"n/a\": not reported by the provider.",
            seconds(sum.model_ms)
        );
        if let Some(share) = sum.later_uncached_share {
            let _ = writeln!(
                out,
                "\nAfter each turn's first model call the model read {:.0}% of its prompt anew \
                 (the rest came from the provider's prompt cache) and took {} s to its first \
                 token (medians over scenarios).",
                share * 100.0,
                sum.later_first_token_ms
                    .map(|ms| seconds(u64_ms(ms)))
                    .unwrap_or_else(|| "n/a".into())
            );
        }
        self.failed_checks(&mut out);
        self.odd_baseline(&mut out);
        let notes: Vec<String> = self
            .scenarios
            .iter()
            .flat_map(|scenario| {
                scenario.runs.iter().flat_map(move |run| {
                    run.notes
                        .iter()
                        .map(move |note| format!("- {}: {note}", self.which(scenario, run)))
                })
            })
            .collect();
        if !notes.is_empty() {
            let _ = writeln!(out, "\n### Notes\n\n{}", notes.join("\n"));
        }
        out
    }

    /// `` `name` ``, or `` `name` run 2 `` when scenarios ran more than once.
    fn which(&self, scenario: &ScenarioReport, run: &RunResult) -> String {
        if self.repeat > 1 {
            format!("`{}` run {}", scenario.name, run.run)
        } else {
            format!("`{}`", scenario.name)
        }
    }

    fn failed_checks(&self, out: &mut String) {
        let failed: Vec<String> = self
            .scenarios
            .iter()
            .flat_map(|scenario| {
                scenario.runs.iter().flat_map(move |run| {
                    run.checks.iter().filter(|c| !c.passed).map(move |c| {
                        format!(
                            "- {} · `{}` ({}): {}",
                            self.which(scenario, run),
                            c.check,
                            c.kind.as_str(),
                            c.detail
                        )
                    })
                })
            })
            .collect();
        if failed.is_empty() {
            out.push_str("\nEvery check passed.\n");
        } else {
            let _ = writeln!(out, "\n### Failed checks\n\n{}", failed.join("\n"));
        }
    }

    /// Task checks an agent that does nothing passes, and guards it fails: a scenario that
    /// judges chatting as progress (or chatting as a fault) should be fixed.
    fn odd_baseline(&self, out: &mut String) {
        let odd: Vec<String> = self
            .scenarios
            .iter()
            .flat_map(|scenario| {
                scenario
                    .baseline
                    .checks
                    .iter()
                    .filter(|c| c.passed == (c.kind == super::checks::CheckKind::Task))
                    .map(move |c| {
                        format!(
                            "- `{}` · `{}` ({}) {} when nothing is done: {}",
                            scenario.name,
                            c.check,
                            c.kind.as_str(),
                            if c.passed { "passes" } else { "fails" },
                            c.detail
                        )
                    })
            })
            .collect();
        if !odd.is_empty() {
            let _ = writeln!(
                out,
                "\n### Checks the do-nothing baseline judges oddly\n\n{}",
                odd.join("\n")
            );
        }
    }
}

/// Whole milliseconds as the report's float milliseconds.
fn u64_ms(ms: u64) -> f64 {
    ms as f64
}

/// The measure columns of a row, `|`-separated.
fn measure_cells(m: &Measures) -> String {
    let count = |n: Option<u64>| n.map_or_else(|| "n/a".to_string(), |n| n.to_string());
    let share = m
        .cached_share
        .map_or_else(|| "n/a".to_string(), |s| format!("{:.0}%", s * 100.0));
    let ttft = m.tokens.first_token_ms.map_or_else(
        || "n/a".to_string(),
        |ms| seconds(f64::from(u32::try_from(ms).unwrap_or(u32::MAX))),
    );
    [
        seconds(m.wall_ms),
        count(m.tokens.model_calls),
        count(m.tokens.prompt_tokens),
        share,
        count(m.tokens.completion_tokens),
        ttft,
        m.tool_calls.to_string(),
        m.failed_calls.to_string(),
    ]
    .join(" | ")
}

/// Milliseconds as seconds: two decimals below 10 s, one above.
fn seconds(ms: f64) -> String {
    let s = ms / 1000.0;
    if s < 10.0 {
        format!("{s:.2}")
    } else {
        format!("{s:.1}")
    }
}

/// Text safe inside a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests;
