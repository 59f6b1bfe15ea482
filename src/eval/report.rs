//! The evaluation's report: JSON for machines (every check with its detail, every measure)
//! and a Markdown table for people (one row per scenario, an overall row, then the failed
//! checks with what was seen).

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{
    measures::{Measures, Totals},
    run::ScenarioResult,
};
use crate::workspace::rules::plural;

/// The outcome of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The model, in one line (never a key).
    pub model: String,
    /// Whether the scenarios played their own scripts.
    pub replay: bool,
    /// When the run started.
    pub started_at: DateTime<Utc>,
    /// Every scenario, in the order run.
    pub scenarios: Vec<ScenarioResult>,
    /// Over all scenarios.
    pub overall: Overall,
}

/// Over all scenarios of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overall {
    /// Scenarios run.
    pub scenarios: usize,
    /// Scenarios whose every check passed.
    pub passed: usize,
    /// `passed / scenarios` (0 when none ran).
    pub pass_rate: f64,
    /// Checks that passed, over all scenarios.
    pub checks_passed: usize,
    /// Checks judged, over all scenarios.
    pub checks_total: usize,
    /// `checks_passed / checks_total` (0 when none).
    pub check_pass_rate: f64,
    /// Sums and medians of the measures.
    #[serde(flatten)]
    pub totals: Totals,
}

impl Report {
    /// The report of `results`.
    pub fn new(
        model: String,
        replay: bool,
        started_at: DateTime<Utc>,
        results: Vec<ScenarioResult>,
    ) -> Self {
        let passed = results.iter().filter(|r| r.passed).count();
        let checks_total = results.iter().map(|r| r.checks.len()).sum();
        let checks_passed = results
            .iter()
            .flat_map(|r| &r.checks)
            .filter(|c| c.passed)
            .count();
        let measures: Vec<&Measures> = results.iter().map(|r| &r.measures).collect();
        let overall = Overall {
            scenarios: results.len(),
            passed,
            pass_rate: rate(passed, results.len()),
            checks_passed,
            checks_total,
            check_pass_rate: rate(checks_passed, checks_total),
            totals: Totals::of(&measures),
        };
        Self {
            model,
            replay,
            started_at,
            scenarios: results,
            overall,
        }
    }

    /// Whether every scenario passed.
    pub fn passed(&self) -> bool {
        self.overall.passed == self.overall.scenarios
    }

    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }

    /// The report as Markdown: a table, then the failed checks and the notes.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let overall = &self.overall;
        let _ = writeln!(out, "## haico eval\n");
        let _ = writeln!(
            out,
            "Model: {} · {} · started {}\n",
            self.model,
            plural(overall.scenarios, "scenario"),
            self.started_at.format("%Y-%m-%d %H:%M UTC")
        );
        out.push_str(
            "| scenario | pass | checks | wall s | model calls | prompt tokens | cached | \
             completion tokens | TTFT s | tool calls | failed calls |\n",
        );
        out.push_str("| --- | :-: | --: | --: | --: | --: | --: | --: | --: | --: | --: |\n");
        for result in &self.scenarios {
            let passed = result.checks.iter().filter(|c| c.passed).count();
            let _ = writeln!(
                out,
                "| {} | {} | {passed}/{} | {} |",
                cell(&result.name),
                if result.passed { "✓" } else { "✗" },
                result.checks.len(),
                measure_cells(&result.measures),
            );
        }
        let sum = &overall.totals.sum;
        let _ = writeln!(
            out,
            "| **overall** | **{}/{}** | {}/{} | {} |",
            overall.passed,
            overall.scenarios,
            overall.checks_passed,
            overall.checks_total,
            measure_cells(&Measures {
                tokens: crate::eval::TokenMeasures {
                    first_token_ms: overall.totals.median.first_token_ms,
                    ..sum.tokens
                },
                ..sum.clone()
            }),
        );
        let _ = writeln!(
            out,
            "\nThe overall row sums every column but TTFT, which is the median over scenarios; \
             model time (wall less tool time) was {} s in all. \"n/a\": not reported by the \
             provider.",
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
        let failed: Vec<String> = self
            .scenarios
            .iter()
            .flat_map(|result| {
                result
                    .checks
                    .iter()
                    .filter(|c| !c.passed)
                    .map(move |c| format!("- `{}` · `{}`: {}", result.name, c.check, c.detail))
            })
            .collect();
        if failed.is_empty() {
            out.push_str("\nEvery check passed.\n");
        } else {
            let _ = writeln!(out, "\n### Failed checks\n\n{}", failed.join("\n"));
        }
        let notes: Vec<String> = self
            .scenarios
            .iter()
            .flat_map(|result| {
                result
                    .notes
                    .iter()
                    .map(move |note| format!("- `{}`: {note}", result.name))
            })
            .collect();
        if !notes.is_empty() {
            let _ = writeln!(out, "\n### Notes\n\n{}", notes.join("\n"));
        }
        out
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

/// `part / whole`, 0 when there is no whole.
fn rate(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    let as_f64 = |n: usize| u32::try_from(n).map(f64::from).unwrap_or(f64::MAX);
    as_f64(part) / as_f64(whole)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::CheckOutcome;

    fn result(name: &str, passed: bool) -> ScenarioResult {
        ScenarioResult {
            name: name.into(),
            description: String::new(),
            file: format!("eval/{name}.json"),
            passed,
            checks: vec![
                CheckOutcome {
                    check: "objective_set",
                    passed: true,
                    detail: "objective \"x\"".into(),
                },
                CheckOutcome {
                    check: "tools_used",
                    passed,
                    detail: "not used: edit_document (never called)".into(),
                },
            ],
            measures: Measures {
                turns: 1,
                wall_ms: 1500.0,
                tool_ms: 500.0,
                model_ms: 1000.0,
                tool_calls: 3,
                failed_calls: 0,
                ..Measures::default()
            },
            max_steps: 25,
            notes: Vec::new(),
        }
    }

    #[test]
    fn the_markdown_has_a_row_per_scenario_an_overall_row_and_the_failures() {
        let report = Report::new(
            "replay".into(),
            true,
            Utc::now(),
            vec![result("a|b", true), result("c", false)],
        );
        assert!(!report.passed());
        assert_eq!(report.overall.checks_passed, 3);
        let md = report.to_markdown();
        assert!(md.contains("| a\\|b | ✓ | 2/2 | 1.50 | n/a | n/a | n/a | n/a | n/a | 3 | 0 |"));
        assert!(md.contains("| c | ✗ | 1/2 |"));
        assert!(md.contains("| **overall** | **1/2** | 3/4 | 3.00 |"));
        assert!(md.contains("- `c` · `tools_used`: not used: edit_document"));
        let json: serde_json::Value =
            serde_json::from_str(&report.to_json().unwrap_or_default()).unwrap_or_default();
        assert_eq!(json["overall"]["pass_rate"], 0.5);
        assert_eq!(json["overall"]["sum"]["tool_calls"], 6);
        assert_eq!(json["overall"]["median"]["wall_ms"], 1500.0);
        assert!(json["scenarios"][0]["measures"]["tokens"]["prompt_tokens"].is_null());
    }
}
