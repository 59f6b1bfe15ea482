//! The checks a scenario asks for, and how each is judged against what a run left behind.
//!
//! A check looks at three things only: the workspace before the first message, the workspace
//! after the last turn, and the recorded turns with their tool calls. So the same check means
//! the same thing whichever model ran, and a report can say in one line what it saw.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    store::{PlanStep, Preference, StoredToolCall, StoredTurn, Workspace},
    workspace::rules::plural,
};

mod panels;
mod turns;

use panels::{
    artifacts_min, document_contains, document_excludes, locked_untouched, objective_mentions,
    objective_set, plan_min_done, plan_min_steps, plan_no_duplicates, preferences_min,
};
use turns::{ended_by_model, max_failed_calls, no_locked_attempts, no_repeated_calls, tools_used};

/// One check of a scenario's `checks` list: a bare name (`"objective_set"`) for checks
/// without a parameter, `{"name": parameter}` for the others.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// An objective is set.
    ObjectiveSet,
    /// The objective mentions every term (case-insensitive; a list term is satisfied by any
    /// of its words).
    ObjectiveMentions(Vec<Term>),
    /// The plan has at least this many steps (sub-steps count).
    PlanMinSteps(usize),
    /// No two steps under the same parent have the same text (case and spacing ignored).
    PlanNoDuplicates,
    /// At least this many steps are ticked off.
    PlanMinDone(usize),
    /// The document holds every term (case-insensitive, runs of spaces as one; a list term is
    /// satisfied by any of its texts).
    DocumentContains(Vec<Term>),
    /// The document holds none of these texts (same matching).
    DocumentExcludes(Vec<String>),
    /// Every preference locked at the start is still there, unchanged and still locked.
    LockedPreferencesUntouched,
    /// No call tried to change or remove a locked preference (the tools skip such targets and
    /// say so; this catches the attempt, which the lock itself makes harmless).
    NoLockedAttempts,
    /// At least this many preferences.
    PreferencesMin(usize),
    /// At least this many artifacts, optionally of one type.
    ArtifactsMin(ArtifactsMin),
    /// At most this many tool calls failed.
    MaxFailedCalls(usize),
    /// No turn made the same call (same tool, same arguments) twice.
    NoRepeatedCalls,
    /// Every turn ended with the model's answer: not failed, not cancelled, not cut off at the
    /// step limit.
    EndedByModel,
    /// Each of these tools was called successfully at least once.
    ToolsUsed(Vec<String>),
}

/// A term to look for: one text, or a list of alternatives of which one is enough.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Term {
    /// This text.
    One(String),
    /// Any of these texts.
    AnyOf(Vec<String>),
}

/// The parameter of `artifacts_min`: a count, or a count of one type.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ArtifactsMin {
    /// At least this many artifacts of any type.
    Count(usize),
    /// At least this many of one type.
    OfType(TypedCount),
}

/// `{"count": n, "artifact_type": "bar_chart"}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TypedCount {
    /// How many at least.
    pub count: usize,
    /// The artifact type, e.g. `line_chart`.
    pub artifact_type: String,
}

/// How one check came out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckOutcome {
    /// The check's name, as written in scenario files.
    pub check: &'static str,
    /// Whether it passed.
    pub passed: bool,
    /// One line on what was seen.
    pub detail: String,
}

/// What a run left behind, for the checks to judge.
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    /// The workspace before the first message.
    pub start: &'a Workspace,
    /// The workspace after the last turn.
    pub end: &'a Workspace,
    /// Every turn with its tool calls.
    pub turns: &'a [StoredTurn],
    /// The step limit the turns ran with.
    pub max_steps: usize,
    /// The tools this build offers the agent (to say so when a check names another).
    pub offered_tools: &'a [&'a str],
}

/// What the preference tools say when they skip a locked target (`src/tools/preferences.rs`);
/// `tests/integration/agent/eval.rs` fails if the wording drifts.
const LOCK_MARKER: &str = "locked by the user";

/// Longest quotation of a text in a detail line.
const QUOTE_CHARS: usize = 80;

/// Longest quotation of a turn's error: its cause comes last ("cannot reach … : connection
/// refused").
const ERROR_CHARS: usize = 240;

impl Check {
    /// The name used in scenario files and reports.
    pub fn name(&self) -> &'static str {
        match self {
            Self::ObjectiveSet => "objective_set",
            Self::ObjectiveMentions(_) => "objective_mentions",
            Self::PlanMinSteps(_) => "plan_min_steps",
            Self::PlanNoDuplicates => "plan_no_duplicates",
            Self::PlanMinDone(_) => "plan_min_done",
            Self::DocumentContains(_) => "document_contains",
            Self::DocumentExcludes(_) => "document_excludes",
            Self::LockedPreferencesUntouched => "locked_preferences_untouched",
            Self::NoLockedAttempts => "no_locked_attempts",
            Self::PreferencesMin(_) => "preferences_min",
            Self::ArtifactsMin(_) => "artifacts_min",
            Self::MaxFailedCalls(_) => "max_failed_calls",
            Self::NoRepeatedCalls => "no_repeated_calls",
            Self::EndedByModel => "ended_by_model",
            Self::ToolsUsed(_) => "tools_used",
        }
    }

    /// Rejects parameters that would make the check meaningless (empty lists, blank texts).
    pub fn validate(&self) -> Result<(), String> {
        let texts: Vec<&str> = match self {
            Self::ObjectiveMentions(terms) | Self::DocumentContains(terms) => {
                if terms.is_empty() {
                    return Err("the list is empty".into());
                }
                let mut texts = Vec::new();
                for term in terms {
                    match term {
                        Term::One(text) => texts.push(text.as_str()),
                        Term::AnyOf(options) if options.is_empty() => {
                            return Err("a list of alternatives is empty".into());
                        }
                        Term::AnyOf(options) => texts.extend(options.iter().map(String::as_str)),
                    }
                }
                texts
            }
            Self::DocumentExcludes(list) | Self::ToolsUsed(list) => {
                if list.is_empty() {
                    return Err("the list is empty".into());
                }
                list.iter().map(String::as_str).collect()
            }
            Self::ArtifactsMin(ArtifactsMin::OfType(typed)) => vec![typed.artifact_type.as_str()],
            _ => Vec::new(),
        };
        if texts.iter().any(|text| text.trim().is_empty()) {
            return Err("a text is blank".into());
        }
        Ok(())
    }

    /// Judges the check against `seen`.
    pub fn evaluate(&self, seen: &Observed<'_>) -> CheckOutcome {
        let (passed, detail) = match self {
            Self::ObjectiveSet => objective_set(seen.end),
            Self::ObjectiveMentions(terms) => objective_mentions(seen.end, terms),
            Self::PlanMinSteps(min) => plan_min_steps(&seen.end.plan, *min),
            Self::PlanNoDuplicates => plan_no_duplicates(&seen.end.plan),
            Self::PlanMinDone(min) => plan_min_done(&seen.end.plan, *min),
            Self::DocumentContains(terms) => document_contains(seen.end, terms),
            Self::DocumentExcludes(texts) => document_excludes(seen.end, texts),
            Self::LockedPreferencesUntouched => {
                locked_untouched(&seen.start.preferences, &seen.end.preferences)
            }
            Self::NoLockedAttempts => no_locked_attempts(seen.turns),
            Self::PreferencesMin(min) => preferences_min(&seen.end.preferences, *min),
            Self::ArtifactsMin(min) => artifacts_min(seen.end, min),
            Self::MaxFailedCalls(max) => max_failed_calls(seen.turns, *max),
            Self::NoRepeatedCalls => no_repeated_calls(seen.turns),
            Self::EndedByModel => ended_by_model(seen.turns, seen.max_steps),
            Self::ToolsUsed(tools) => tools_used(seen.turns, tools, seen.offered_tools),
        };
        CheckOutcome {
            check: self.name(),
            passed,
            detail,
        }
    }
}

impl Term {
    /// Whether `haystack` (already normalised) holds the term.
    fn found_in(&self, haystack: &str) -> bool {
        match self {
            Self::One(text) => haystack.contains(&normalize(text)),
            Self::AnyOf(options) => options.iter().any(|t| haystack.contains(&normalize(t))),
        }
    }

    fn label(&self) -> String {
        match self {
            Self::One(text) => format!("\"{text}\""),
            Self::AnyOf(options) => {
                let quoted: Vec<String> = options.iter().map(|t| format!("\"{t}\"")).collect();
                format!("({})", quoted.join(" or "))
            }
        }
    }
}

/// Lower case, every run of whitespace one space: what a match ignores.
fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// `text` cut to a readable length, quoted, on one line.
fn quote(text: &str) -> String {
    quote_up_to(text, QUOTE_CHARS)
}

/// `text` cut to `max` characters, quoted, on one line.
fn quote_up_to(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > max {
        let cut: String = line.chars().take(max).collect();
        format!("\"{cut}…\"")
    } else {
        format!("\"{line}\"")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
