//! A scenario run's trace as Markdown, for a person: each turn's message, then each model
//! call with its timing, tokens, text and tool calls (arguments and envelopes cut to a
//! readable length), then the answer the person got. `haico eval --traces DIR` writes one
//! file per scenario run.

use std::fmt::Write as _;

use super::{ModelCallTrace, ToolCallTrace, TurnTrace, cut};
use crate::eval::run::RunResult;

/// Longest arguments shown per tool call.
const ARGUMENT_CHARS: usize = 400;

/// Longest envelope shown per tool call.
const ENVELOPE_CHARS: usize = 500;

/// Longest model text shown per call.
const TEXT_CHARS: usize = 2_000;

/// The file a scenario run's trace goes to: `<scenario>.md`, or `<scenario>-run<n>.md` when
/// each scenario ran more than once. Characters a file name should not hold become `_`.
pub fn file_name(scenario: &str, run: usize, runs: usize) -> String {
    let safe: String = scenario
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if runs > 1 {
        format!("{safe}-run{run}.md")
    } else {
        format!("{safe}.md")
    }
}

/// The trace of `result`, a run of `scenario` (one of `runs`) against `model`.
pub fn render(scenario: &str, model: &str, result: &RunResult, runs: usize) -> String {
    let mut out = String::new();
    let run = if runs > 1 {
        format!(" (run {} of {runs})", result.run)
    } else {
        String::new()
    };
    let _ = writeln!(out, "# Trace: {scenario}{run}\n");
    let counts = &result.counts;
    let _ = writeln!(
        out,
        "Model: {model}. {}: checks {} (task {}, guards {}).",
        if result.passed { "Passed" } else { "Failed" },
        counts.all.fraction(),
        counts.task.fraction(),
        counts.guard.fraction()
    );
    let failed: Vec<String> = result
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| format!("- `{}` ({}): {}", c.check, c.kind.as_str(), c.detail))
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(out, "\nFailed checks:\n\n{}", failed.join("\n"));
    }
    for turn in &result.trace {
        render_turn(&mut out, turn);
    }
    for note in &result.notes {
        let _ = writeln!(out, "\nNote: {note}");
    }
    out
}

fn render_turn(out: &mut String, turn: &TurnTrace) {
    let steps: usize = turn
        .model_calls
        .iter()
        .flat_map(|call| &call.tool_calls)
        .filter(|call| call.step.is_some())
        .count()
        + turn.unmatched_steps.len();
    let wall = turn
        .seconds
        .map(|s| format!(" · {s:.1} s"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "\n## Turn {} · {} · {} · {}{wall}\n",
        turn.turn,
        turn.status,
        count(turn.model_calls.len(), "model call"),
        count(steps, "tool call")
    );
    let _ = writeln!(out, "**Message:**\n\n{}", quoted(&turn.message));
    for call in &turn.model_calls {
        render_call(out, call);
    }
    if !turn.unmatched_steps.is_empty() {
        let _ = writeln!(
            out,
            "\n**Recorded tool calls no model call accounts for:**\n"
        );
        for (i, step) in turn.unmatched_steps.iter().enumerate() {
            render_tool_call(out, i + 1, step);
        }
    }
    if let Some(error) = &turn.error {
        let _ = writeln!(out, "\n**Error:** {}", one_line(error));
    }
    match &turn.answer {
        Some(answer) => {
            let _ = writeln!(out, "\n**Answer:**\n\n{}", quoted(answer));
        }
        None => {
            let _ = writeln!(out, "\n**Answer:** none");
        }
    }
}

fn render_call(out: &mut String, call: &ModelCallTrace) {
    let mut facts = Vec::new();
    if let Some(s) = call.seconds {
        facts.push(format!("{s:.2} s"));
    }
    if let Some(s) = call.first_token_seconds {
        facts.push(format!("first token {s:.2} s"));
    }
    match (call.prompt_tokens, call.cached_tokens) {
        (Some(prompt), Some(cached)) => {
            facts.push(format!("prompt {prompt} tokens ({cached} cached)"));
        }
        (Some(prompt), None) => facts.push(format!("prompt {prompt} tokens")),
        _ => {}
    }
    if let Some(completion) = call.completion_tokens {
        facts.push(format!("completion {completion} tokens"));
    }
    if let Some(stop) = &call.stop_reason {
        facts.push(format!("stop: {stop}"));
    }
    let facts = if facts.is_empty() {
        String::new()
    } else {
        format!(" · {}", facts.join(" · "))
    };
    let _ = writeln!(out, "\n### Model call {}{facts}\n", call.call);
    if let Some(error) = &call.error {
        let _ = writeln!(out, "**Failed:** {}\n", one_line(error));
    }
    if call.text.trim().is_empty() {
        let _ = writeln!(out, "(no text)");
    } else {
        let mut text = cut(&call.text, TEXT_CHARS);
        if call.text_chars > call.text.chars().count() {
            text.push_str(&format!(" [{} characters in all]", call.text_chars));
        }
        let _ = writeln!(out, "{}", quoted(&text));
    }
    if call.tool_calls.is_empty() {
        return;
    }
    let how = if call.written_as_text {
        " (written as text, taken as calls)"
    } else {
        ""
    };
    let _ = writeln!(out, "\nTool calls{how}:\n");
    for (i, tool_call) in call.tool_calls.iter().enumerate() {
        render_tool_call(out, i + 1, tool_call);
    }
}

fn render_tool_call(out: &mut String, number: usize, call: &ToolCallTrace) {
    let step = call
        .step
        .map(|step| format!("step {step}, "))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{number}. `{}` ({step}{})",
        one_line(&call.name),
        call.outcome.as_str()
    );
    let _ = writeln!(
        out,
        "   - arguments: {}",
        code(&cut(&call.arguments, ARGUMENT_CHARS))
    );
    if let Some(envelope) = &call.envelope {
        let _ = writeln!(
            out,
            "   - envelope: {}",
            code(&cut(&envelope.to_string(), ENVELOPE_CHARS))
        );
    }
}

/// `n noun(s)`.
fn count(n: usize, noun: &str) -> String {
    haico_core::workspace::rules::plural(n, noun)
}

/// `text` as a Markdown block quote.
fn quoted(text: &str) -> String {
    if text.trim().is_empty() {
        return "> (empty)".to_string();
    }
    text.lines()
        .map(|line| {
            if line.is_empty() {
                ">".to_string()
            } else {
                format!("> {line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` on one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` as inline code on one line, fenced with more backticks than it holds in a row.
fn code(text: &str) -> String {
    let line = text.replace(['\n', '\r'], " ");
    let mut longest = 0;
    let mut run = 0;
    for c in line.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest + 1);
    if longest > 0 {
        format!("{fence} {line} {fence}")
    } else {
        format!("{fence}{line}{fence}")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::eval::{
        checks::{CheckKind, CheckOutcome},
        measures::Measures,
        tally::Counts,
        trace::StepOutcome,
    };

    #[test]
    fn a_trace_reads_turn_by_turn() {
        let checks = vec![CheckOutcome {
            check: "plan_step".into(),
            kind: CheckKind::Task,
            passed: false,
            detail: "no step has \"payment\" among 3 steps".into(),
        }];
        let result = RunResult {
            run: 2,
            passed: false,
            counts: Counts::of(&checks),
            checks,
            measures: Measures::default(),
            notes: Vec::new(),
            trace: vec![TurnTrace {
                turn: 1,
                message: "Set up the checklist.".into(),
                status: "completed".into(),
                error: None,
                seconds: Some(3.3),
                model_calls: vec![ModelCallTrace {
                    call: 1,
                    seconds: Some(1.5),
                    first_token_seconds: Some(0.4),
                    prompt_tokens: Some(1200),
                    cached_tokens: Some(1000),
                    completion_tokens: Some(40),
                    text: String::new(),
                    text_chars: 0,
                    written_as_text: false,
                    tool_calls: vec![
                        ToolCallTrace {
                            name: "add_todos".into(),
                            arguments: r#"{"steps":[{"text":"a `b`"}]}"#.into(),
                            step: Some(1),
                            outcome: StepOutcome::Ok,
                            envelope: Some(json!({"success": true, "summary": "added 1 step"})),
                        },
                        ToolCallTrace {
                            name: "add_todos".into(),
                            arguments: "{}".into(),
                            step: None,
                            outcome: StepOutcome::NotRun,
                            envelope: None,
                        },
                    ],
                    stop_reason: Some("tool_calls".into()),
                    error: None,
                }],
                unmatched_steps: Vec::new(),
                answer: Some("I stopped here.".into()),
            }],
        };
        let md = render("release-checklist", "replay", &result, 3);
        assert!(
            md.starts_with("# Trace: release-checklist (run 2 of 3)"),
            "{md}"
        );
        assert!(
            md.contains("## Turn 1 · completed · 1 model call · 1 tool call · 3.3 s"),
            "{md}"
        );
        assert!(md.contains("> Set up the checklist."), "{md}");
        assert!(md.contains("prompt 1200 tokens (1000 cached)"), "{md}");
        assert!(md.contains("1. `add_todos` (step 1, ok)"), "{md}");
        assert!(md.contains("``"), "{md}");
        assert!(md.contains("2. `add_todos` (not run)"), "{md}");
        assert!(md.contains("> I stopped here."), "{md}");
        assert!(md.contains("- `plan_step` (task): no step"), "{md}");
        assert_eq!(file_name("a/b", 2, 3), "a_b-run2.md");
        assert_eq!(file_name("trip", 1, 1), "trip.md");
    }
}
