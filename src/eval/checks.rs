//! The checks a scenario asks for, and how each is judged against what a run left behind.
//!
//! A check looks at what a run left behind only: the workspace before the first message and
//! after the last turn (with the artifacts' contents), the recorded turns with their tool
//! calls, and the trace of the model's answers. So the same check means the same thing
//! whichever model ran, and a report can say in one line what it saw.
//!
//! Every check is a *task* check or a *guard* ([`CheckKind`]). A task check needs the agent
//! to have done something the person asked for; a guard holds when nothing is done (no
//! locked preference touched, no call repeated…). An agent that only chats passes every
//! guard, so the report counts the two apart and sets both beside a do-nothing baseline
//! ([`super::baseline`]).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::trace::TurnTrace;
use haico_core::workspace::rules::plural;
use haico_store::{Artifact, PlanStep, Preference, StoredToolCall, StoredTurn, Workspace};

mod charts;
mod document;
mod panels;
mod params;
mod plan;
mod preferences;
mod turns;
mod validate;

pub use params::{
    ArtifactsMin, ChartSpec, DocumentTerms, PlanStepSpec, PreferenceSpec, SectionTerms, TypedCount,
    WordRange,
};

/// One check of a scenario's `checks` list: a bare name (`"objective_set"`) for checks
/// without a parameter, `{"name": parameter}` for the others.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// An objective is set.
    ObjectiveSet,
    /// The objective mentions every term.
    ObjectiveMentions(Vec<Term>),
    /// The plan has at least this many steps (sub-steps count).
    PlanMinSteps(usize),
    /// No two steps under the same parent have the same text (case and spacing ignored).
    PlanNoDuplicates,
    /// At least this many steps are ticked off.
    PlanMinDone(usize),
    /// Some step has these terms and matches the other given fields.
    PlanStep(PlanStepSpec),
    /// No step's text has all of these terms (a step that was to be dropped is gone).
    PlanLacks(Vec<Term>),
    /// The document holds every term (anywhere, or in one section).
    DocumentContains(DocumentTerms),
    /// There is a document, and it holds none of these texts.
    DocumentExcludes(Vec<String>),
    /// Every term of the starting document is still in the final one.
    DocumentKeeps(Vec<Term>),
    /// The document's length in words is in the range.
    DocumentWords(WordRange),
    /// Every preference locked at the start is still there, unchanged and still locked.
    LockedPreferencesUntouched,
    /// No call tried to change or remove a locked preference (the tools skip such targets and
    /// say so; this catches the attempt, which the lock itself makes harmless).
    NoLockedAttempts,
    /// At least this many preferences.
    PreferencesMin(usize),
    /// Some preference says this, with the given kind and lock.
    Preference(PreferenceSpec),
    /// No preference's title and subtitle have all of these terms.
    PreferenceLacks(Vec<Term>),
    /// At least this many artifacts, optionally of one type.
    ArtifactsMin(ArtifactsMin),
    /// Some artifact is a chart of this type, labels and values.
    Chart(ChartSpec),
    /// At most this many tool calls failed, not counting refused repeats and failures the
    /// next call repaired.
    MaxFailedCalls(usize),
    /// No turn made the same call (same tool, same arguments) twice.
    NoRepeatedCalls,
    /// Every turn ended with the model's answer: completed, and its last model answer asked
    /// for no tool call.
    EndedByModel,
    /// Each of these tools was called successfully at least once.
    ToolsUsed(Vec<String>),
    /// The agent's answer to the person in the last turn holds every term.
    AnswerMentions(Vec<Term>),
}

/// Whether a check needs the agent to act, or holds when nothing is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckKind {
    /// Passes only when the agent did what the person asked: fails for an agent that only
    /// chats.
    Task,
    /// Holds unless the agent does something wrong: passes for an agent that only chats.
    Guard,
}

impl CheckKind {
    /// `task` or `guard`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Task => "task",
            Self::Guard => "guard",
        }
    }
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

/// How one check came out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckOutcome {
    /// The check's name, as written in scenario files.
    pub check: String,
    /// Task check or guard.
    pub kind: CheckKind,
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
    /// The final workspace's artifacts with their contents.
    pub artifacts: &'a [Artifact],
    /// Every turn with its tool calls.
    pub turns: &'a [StoredTurn],
    /// The model's answers per turn, when they were recorded (`ended_by_model` then knows
    /// whether the model or the loop ended each turn).
    pub traces: Option<&'a [TurnTrace]>,
    /// The step limit the turns ran with.
    pub max_steps: usize,
    /// The tools this build offers the agent (to say so when a check names another).
    pub offered_tools: &'a [&'a str],
}

/// What the preference tools say when they skip a locked target (`src/tools/preferences.rs`);
/// `tests/integration/agent/eval.rs` fails if the wording drifts.
const LOCK_MARKER: &str = "locked by the user";

/// How the agent's failure envelope for a call repeated within a turn begins
/// (`src/agent/progress.rs`). The stored call keeps no failure kind, so its text is what
/// tells; `tests/integration/agent/eval.rs` fails if the wording drifts.
pub const REPEAT_MARKER: &str = "this exact call";

/// Longest quotation of a text in a detail line.
const QUOTE_CHARS: usize = 80;

/// Longest quotation of a turn's error: its cause comes last ("cannot reach … : connection
/// refused").
const ERROR_CHARS: usize = 240;

/// How many near misses a detail line names.
const SHOWN: usize = 3;

impl Check {
    /// The name used in scenario files and reports.
    pub fn name(&self) -> &'static str {
        match self {
            Self::ObjectiveSet => "objective_set",
            Self::ObjectiveMentions(_) => "objective_mentions",
            Self::PlanMinSteps(_) => "plan_min_steps",
            Self::PlanNoDuplicates => "plan_no_duplicates",
            Self::PlanMinDone(_) => "plan_min_done",
            Self::PlanStep(_) => "plan_step",
            Self::PlanLacks(_) => "plan_lacks",
            Self::DocumentContains(_) => "document_contains",
            Self::DocumentExcludes(_) => "document_excludes",
            Self::DocumentKeeps(_) => "document_keeps",
            Self::DocumentWords(_) => "document_words",
            Self::LockedPreferencesUntouched => "locked_preferences_untouched",
            Self::NoLockedAttempts => "no_locked_attempts",
            Self::PreferencesMin(_) => "preferences_min",
            Self::Preference(_) => "preference",
            Self::PreferenceLacks(_) => "preference_lacks",
            Self::ArtifactsMin(_) => "artifacts_min",
            Self::Chart(_) => "chart",
            Self::MaxFailedCalls(_) => "max_failed_calls",
            Self::NoRepeatedCalls => "no_repeated_calls",
            Self::EndedByModel => "ended_by_model",
            Self::ToolsUsed(_) => "tools_used",
            Self::AnswerMentions(_) => "answer_mentions",
        }
    }

    /// Task check or guard. Every kind is listed, so a new one must be placed.
    pub fn kind(&self) -> CheckKind {
        match self {
            Self::LockedPreferencesUntouched
            | Self::NoLockedAttempts
            | Self::NoRepeatedCalls
            | Self::MaxFailedCalls(_)
            | Self::EndedByModel
            | Self::PlanNoDuplicates
            | Self::DocumentKeeps(_) => CheckKind::Guard,
            Self::ObjectiveSet
            | Self::ObjectiveMentions(_)
            | Self::PlanMinSteps(_)
            | Self::PlanMinDone(_)
            | Self::PlanStep(_)
            | Self::PlanLacks(_)
            | Self::DocumentContains(_)
            | Self::DocumentExcludes(_)
            | Self::DocumentWords(_)
            | Self::PreferencesMin(_)
            | Self::Preference(_)
            | Self::PreferenceLacks(_)
            | Self::ArtifactsMin(_)
            | Self::Chart(_)
            | Self::ToolsUsed(_)
            | Self::AnswerMentions(_) => CheckKind::Task,
        }
    }

    /// Judges the check against `seen`.
    pub fn evaluate(&self, seen: &Observed<'_>) -> CheckOutcome {
        let end = seen.end;
        let (passed, detail) = match self {
            Self::ObjectiveSet => panels::objective_set(end),
            Self::ObjectiveMentions(terms) => panels::objective_mentions(end, terms),
            Self::PlanMinSteps(min) => plan::plan_min_steps(&end.plan, *min),
            Self::PlanNoDuplicates => plan::plan_no_duplicates(&end.plan),
            Self::PlanMinDone(min) => plan::plan_min_done(&end.plan, *min),
            Self::PlanStep(spec) => plan::plan_step(&end.plan, spec),
            Self::PlanLacks(terms) => plan::plan_lacks(&end.plan, terms),
            Self::DocumentContains(wanted) => document::document_contains(end, wanted),
            Self::DocumentExcludes(texts) => document::document_excludes(end, texts),
            Self::DocumentKeeps(terms) => document::document_keeps(seen.start, end, terms),
            Self::DocumentWords(range) => document::document_words(end, *range),
            Self::LockedPreferencesUntouched => {
                preferences::locked_untouched(&seen.start.preferences, &end.preferences)
            }
            Self::NoLockedAttempts => turns::no_locked_attempts(seen.turns),
            Self::PreferencesMin(min) => preferences::preferences_min(&end.preferences, *min),
            Self::Preference(spec) => preferences::preference(&end.preferences, spec),
            Self::PreferenceLacks(terms) => preferences::preference_lacks(&end.preferences, terms),
            Self::ArtifactsMin(min) => charts::artifacts_min(end, min),
            Self::Chart(spec) => charts::chart(seen.artifacts, spec),
            Self::MaxFailedCalls(max) => turns::max_failed_calls(seen.turns, *max),
            Self::NoRepeatedCalls => turns::no_repeated_calls(seen.turns),
            Self::EndedByModel => turns::ended_by_model(seen.turns, seen.traces, seen.max_steps),
            Self::ToolsUsed(tools) => turns::tools_used(seen.turns, tools, seen.offered_tools),
            Self::AnswerMentions(terms) => turns::answer_mentions(seen.turns, terms),
        };
        CheckOutcome {
            check: self.name().to_string(),
            kind: self.kind(),
            passed,
            detail,
        }
    }
}

impl Term {
    /// Whether `haystack` (already normalised) holds the term.
    pub fn found_in(&self, haystack: &str) -> bool {
        match self {
            Self::One(text) => haystack.contains(&normalize(text)),
            Self::AnyOf(options) => options.iter().any(|t| haystack.contains(&normalize(t))),
        }
    }

    /// The term as a detail line shows it: `"a"`, or `("a" or "b")`.
    pub fn label(&self) -> String {
        match self {
            Self::One(text) => format!("\"{text}\""),
            Self::AnyOf(options) => {
                let quoted: Vec<String> = options.iter().map(|t| format!("\"{t}\"")).collect();
                format!("({})", quoted.join(" or "))
            }
        }
    }

    /// Its texts (one, or every alternative).
    fn texts(&self) -> Vec<&str> {
        match self {
            Self::One(text) => vec![text.as_str()],
            Self::AnyOf(options) => options.iter().map(String::as_str).collect(),
        }
    }
}

/// The labels of the terms `haystack` (normalised) lacks.
fn missing(terms: &[Term], haystack: &str) -> Vec<String> {
    terms
        .iter()
        .filter(|term| !term.found_in(haystack))
        .map(Term::label)
        .collect()
}

/// Whether `haystack` (normalised) holds every term.
fn holds_all(terms: &[Term], haystack: &str) -> bool {
    terms.iter().all(|term| term.found_in(haystack))
}

/// The terms' labels, joined.
fn labels(terms: &[Term]) -> String {
    terms.iter().map(Term::label).collect::<Vec<_>>().join(", ")
}

/// Lower case, every run of whitespace one space: what a match ignores.
pub(super) fn normalize(text: &str) -> String {
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

/// The first [`SHOWN`] of `items` joined by "; ", with how many more there were.
fn first_few(items: &[String]) -> String {
    let mut text = items
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if items.len() > SHOWN {
        text.push_str(&format!("; and {} more", items.len() - SHOWN));
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
