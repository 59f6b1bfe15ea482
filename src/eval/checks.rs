//! The checks a scenario asks for, and how each is judged against what a run left behind.
//!
//! A check looks at three things only: the workspace before the first message, the workspace
//! after the last turn, and the recorded turns with their tool calls. So the same check means
//! the same thing whichever model ran, and a report can say in one line what it saw.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    store::{PlanStep, Preference, ToolCallRecord, TurnRecord, Workspace},
    workspace::rules::plural,
};

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
    pub turns: &'a [TurnRecord],
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

fn objective_set(end: &Workspace) -> (bool, String) {
    match end.objective.as_deref().filter(|o| !o.trim().is_empty()) {
        Some(objective) => (true, format!("objective {}", quote(objective))),
        None => (false, "no objective is set".into()),
    }
}

fn objective_mentions(end: &Workspace, terms: &[Term]) -> (bool, String) {
    let Some(objective) = end.objective.as_deref() else {
        return (false, "no objective is set".into());
    };
    let haystack = normalize(objective);
    let missing: Vec<String> = terms
        .iter()
        .filter(|term| !term.found_in(&haystack))
        .map(Term::label)
        .collect();
    if missing.is_empty() {
        (
            true,
            format!(
                "found {} in {}",
                plural(terms.len(), "term"),
                quote(objective)
            ),
        )
    } else {
        (
            false,
            format!("missing {} in {}", missing.join(", "), quote(objective)),
        )
    }
}

fn plan_min_steps(plan: &[PlanStep], min: usize) -> (bool, String) {
    let top = plan.iter().filter(|step| step.depth == 0).count();
    (
        plan.len() >= min,
        format!(
            "{}, {top} at the top (at least {min} wanted)",
            plural(plan.len(), "step")
        ),
    )
}

fn plan_no_duplicates(plan: &[PlanStep]) -> (bool, String) {
    // Each step keyed by its parents' texts and its own, so the same sub-step under two
    // different parents ("Book tickets" for two cities) is not a repeat.
    let mut path: Vec<String> = Vec::new();
    let mut seen: BTreeMap<Vec<String>, Vec<usize>> = BTreeMap::new();
    for (i, step) in plan.iter().enumerate() {
        path.truncate(usize::try_from(step.depth).unwrap_or(0));
        path.push(normalize(&step.text));
        seen.entry(path.clone()).or_default().push(i + 1);
    }
    let repeated: Vec<String> = seen
        .iter()
        .filter(|(_, positions)| positions.len() > 1)
        .map(|(key, positions)| {
            let numbers: Vec<String> = positions.iter().map(usize::to_string).collect();
            let text = key.last().map_or("", String::as_str);
            format!("{} at steps {}", quote(text), numbers.join(", "))
        })
        .collect();
    if repeated.is_empty() {
        (true, format!("no step repeated among {}", plan.len()))
    } else {
        (false, format!("repeated: {}", repeated.join("; ")))
    }
}

fn plan_min_done(plan: &[PlanStep], min: usize) -> (bool, String) {
    let done = plan.iter().filter(|step| step.done).count();
    (
        done >= min,
        format!(
            "{done} of {} done (at least {min} wanted)",
            plural(plan.len(), "step")
        ),
    )
}

fn document_contains(end: &Workspace, terms: &[Term]) -> (bool, String) {
    let Some(document) = &end.document else {
        return (false, "there is no document".into());
    };
    let haystack = normalize(&document.content);
    let missing: Vec<String> = terms
        .iter()
        .filter(|term| !term.found_in(&haystack))
        .map(Term::label)
        .collect();
    let size = document.content.chars().count();
    if missing.is_empty() {
        (
            true,
            format!("found {} ({size} characters)", plural(terms.len(), "term")),
        )
    } else {
        (
            false,
            format!("missing {} ({size} characters)", missing.join(", ")),
        )
    }
}

fn document_excludes(end: &Workspace, texts: &[String]) -> (bool, String) {
    let haystack = end
        .document
        .as_ref()
        .map(|document| normalize(&document.content))
        .unwrap_or_default();
    let present: Vec<String> = texts
        .iter()
        .filter(|text| haystack.contains(&normalize(text)))
        .map(|text| format!("\"{text}\""))
        .collect();
    if present.is_empty() {
        (true, format!("none of {} present", texts.len()))
    } else {
        (false, format!("still present: {}", present.join(", ")))
    }
}

fn locked_untouched(start: &[Preference], end: &[Preference]) -> (bool, String) {
    let locked: Vec<&Preference> = start.iter().filter(|p| p.locked).collect();
    let mut problems = Vec::new();
    for before in &locked {
        let label = quote(&before.title);
        match end.iter().find(|after| after.id == before.id) {
            None => problems.push(format!("{label} was removed")),
            Some(after) => {
                let mut changed = Vec::new();
                if after.title != before.title {
                    changed.push(format!("title now {}", quote(&after.title)));
                }
                if after.subtitle != before.subtitle {
                    changed.push("subtitle changed".to_string());
                }
                if after.kind != before.kind {
                    changed.push(format!("kind now {}", after.kind.as_str()));
                }
                if !after.locked {
                    changed.push("unlocked".to_string());
                }
                if !changed.is_empty() {
                    problems.push(format!("{label}: {}", changed.join(", ")));
                }
            }
        }
    }
    if problems.is_empty() {
        (
            true,
            format!("{} unchanged", plural(locked.len(), "locked preference")),
        )
    } else {
        (false, problems.join("; "))
    }
}

/// The envelope's text: its summary, or its error.
fn envelope_text(call: &ToolCallRecord) -> &str {
    call.result
        .get("summary")
        .or_else(|| call.result.get("error"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Every call of every turn with its turn's index.
fn calls(turns: &[TurnRecord]) -> impl Iterator<Item = (i64, &ToolCallRecord)> {
    turns
        .iter()
        .flat_map(|turn| turn.tool_calls.iter().map(move |c| (turn.turn_index, c)))
}

fn no_locked_attempts(turns: &[TurnRecord]) -> (bool, String) {
    let attempts: Vec<String> = calls(turns)
        .filter(|(_, call)| {
            matches!(
                call.tool.as_str(),
                "update_preferences" | "remove_preferences"
            )
        })
        .filter(|(_, call)| envelope_text(call).contains(LOCK_MARKER))
        .map(|(turn, call)| {
            format!(
                "turn {turn} step {} {}: {}",
                call.call_index,
                call.tool,
                quote(envelope_text(call))
            )
        })
        .collect();
    match attempts.first() {
        None => (true, "no call aimed at a locked preference".into()),
        Some(first) => (
            false,
            format!(
                "{} aimed at a locked preference; {first}",
                plural(attempts.len(), "call")
            ),
        ),
    }
}

fn preferences_min(preferences: &[Preference], min: usize) -> (bool, String) {
    let locked = preferences.iter().filter(|p| p.locked).count();
    (
        preferences.len() >= min,
        format!(
            "{}, {locked} locked (at least {min} wanted)",
            plural(preferences.len(), "preference")
        ),
    )
}

fn artifacts_min(end: &Workspace, min: &ArtifactsMin) -> (bool, String) {
    let types: Vec<&str> = end
        .artifacts
        .iter()
        .map(|a| a.artifact_type.as_str())
        .collect();
    let all = if types.is_empty() {
        "none".to_string()
    } else {
        types.join(", ")
    };
    match min {
        ArtifactsMin::Count(count) => (
            types.len() >= *count,
            format!(
                "{}: {all} (at least {count} wanted)",
                plural(types.len(), "artifact")
            ),
        ),
        ArtifactsMin::OfType(typed) => {
            let matching = types.iter().filter(|t| **t == typed.artifact_type).count();
            (
                matching >= typed.count,
                format!(
                    "{matching} of type {} (at least {} wanted); all: {all}",
                    typed.artifact_type, typed.count
                ),
            )
        }
    }
}

fn max_failed_calls(turns: &[TurnRecord], max: usize) -> (bool, String) {
    let failed: Vec<String> = calls(turns)
        .filter(|(_, call)| !call.success)
        .map(|(turn, call)| {
            format!(
                "turn {turn} step {} {}: {}",
                call.call_index,
                call.tool,
                quote(envelope_text(call))
            )
        })
        .collect();
    let total = calls(turns).count();
    match failed.first() {
        None => (
            true,
            format!("no failed call among {total} (at most {max})"),
        ),
        Some(first) => (
            failed.len() <= max,
            format!(
                "{} of {} failed (at most {max}); first: {first}",
                failed.len(),
                plural(total, "call")
            ),
        ),
    }
}

fn no_repeated_calls(turns: &[TurnRecord]) -> (bool, String) {
    let mut repeats = Vec::new();
    for turn in turns {
        let mut seen: BTreeMap<(String, String), Vec<i64>> = BTreeMap::new();
        for call in &turn.tool_calls {
            // `arguments` is stored without `action_and_reasoning`, so a call repeated with a
            // new sentence is still the same call.
            let key = (call.tool.clone(), call.arguments.to_string());
            seen.entry(key).or_default().push(call.call_index);
        }
        for ((tool, _), steps) in seen.iter().filter(|(_, steps)| steps.len() > 1) {
            let numbers: Vec<String> = steps.iter().map(i64::to_string).collect();
            repeats.push(format!(
                "turn {}: {tool} with the same arguments at steps {}",
                turn.turn_index,
                numbers.join(", ")
            ));
        }
    }
    if repeats.is_empty() {
        (
            true,
            format!("no call repeated in {}", plural(turns.len(), "turn")),
        )
    } else {
        (false, repeats.join("; "))
    }
}

fn ended_by_model(turns: &[TurnRecord], max_steps: usize) -> (bool, String) {
    let mut problems = Vec::new();
    for turn in turns {
        let calls = turn.tool_calls.len();
        let problem = match turn.status.as_str() {
            // At the limit the loop ends without asking the model again, and still records the
            // turn as completed: the count is what tells.
            "completed" if calls >= max_steps => Some(format!(
                "stopped at the step limit ({calls} of {max_steps} tool calls)"
            )),
            "completed" => None,
            status => Some(match &turn.error {
                Some(error) => format!("{status}: {}", quote_up_to(error, ERROR_CHARS)),
                None => status.to_string(),
            }),
        };
        if let Some(problem) = problem {
            problems.push(format!("turn {} {problem}", turn.turn_index));
        }
    }
    if problems.is_empty() {
        (
            true,
            format!("{} answered by the model", plural(turns.len(), "turn")),
        )
    } else {
        (false, problems.join("; "))
    }
}

fn tools_used(turns: &[TurnRecord], wanted: &[String], offered: &[&str]) -> (bool, String) {
    let succeeded: BTreeSet<&str> = calls(turns)
        .filter(|(_, call)| call.success)
        .map(|(_, call)| call.tool.as_str())
        .collect();
    let missing: Vec<String> = wanted
        .iter()
        .filter(|tool| !succeeded.contains(tool.as_str()))
        .map(|tool| {
            let failed = calls(turns).filter(|(_, call)| &call.tool == tool).count();
            let mut note = if failed == 0 {
                format!("{tool} (never called")
            } else {
                format!("{tool} ({}", plural(failed, "failed call"))
            };
            if !offered.contains(&tool.as_str()) {
                note.push_str(", not a tool this build offers");
            }
            note.push(')');
            note
        })
        .collect();
    if missing.is_empty() {
        (true, format!("used {}", wanted.join(", ")))
    } else {
        (false, format!("not used: {}", missing.join("; ")))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use chrono::Utc;
    use serde_json::json;

    use super::*;
    use crate::store::{ArtifactSummary, Document, PreferenceKind};

    fn step(text: &str, depth: i64, done: bool) -> PlanStep {
        PlanStep {
            id: 0,
            text: text.into(),
            depth,
            done,
        }
    }

    fn preference(id: i64, title: &str, locked: bool) -> Preference {
        Preference {
            id,
            title: title.into(),
            subtitle: None,
            kind: PreferenceKind::Hard,
            locked,
        }
    }

    fn workspace() -> Workspace {
        Workspace {
            objective: None,
            document: None,
            plan: Vec::new(),
            preferences: Vec::new(),
            artifacts: Vec::new(),
        }
    }

    fn call(index: i64, tool: &str, arguments: Value, result: Value) -> ToolCallRecord {
        ToolCallRecord {
            call_index: index,
            tool: tool.into(),
            success: result["success"] == json!(true),
            arguments,
            action_and_reasoning: Some("why".into()),
            result,
            duration_ms: 1.0,
            created_at: Utc::now(),
        }
    }

    fn turn(index: i64, status: &str, calls: Vec<ToolCallRecord>) -> TurnRecord {
        TurnRecord {
            turn_index: index,
            status: status.into(),
            error: (status == "failed").then(|| "the model went away".to_string()),
            started_at: Utc::now(),
            finished_at: Some(Utc::now()),
            messages: Vec::new(),
            tool_calls: calls,
            usage: None,
        }
    }

    fn judge(check: &str, start: &Workspace, end: &Workspace, turns: &[TurnRecord]) -> bool {
        let check: Check = serde_json::from_str(check).unwrap();
        let outcome = check.evaluate(&Observed {
            start,
            end,
            turns,
            max_steps: 3,
            offered_tools: &["set_objective"],
        });
        assert!(!outcome.detail.is_empty());
        outcome.passed
    }

    fn on_end(check: &str, end: &Workspace) -> bool {
        judge(check, &workspace(), end, &[])
    }

    fn on_turns(check: &str, turns: &[TurnRecord]) -> bool {
        judge(check, &workspace(), &workspace(), turns)
    }

    #[test]
    fn objective_checks() {
        let mut end = workspace();
        assert!(!on_end(r#""objective_set""#, &end));
        assert!(!on_end(r#"{"objective_mentions": ["lisbon"]}"#, &end));
        end.objective = Some("Plan a relaxed week in Lisbon".into());
        assert!(on_end(r#""objective_set""#, &end));
        assert!(on_end(
            r#"{"objective_mentions": ["LISBON", ["trip", "week"]]}"#,
            &end
        ));
        assert!(!on_end(
            r#"{"objective_mentions": ["lisbon", "budget"]}"#,
            &end
        ));
    }

    #[test]
    fn plan_checks() {
        let mut end = workspace();
        end.plan = vec![
            step("Porto", 0, true),
            step("Book tickets", 1, false),
            step("Lisbon", 0, true),
            step("Book  tickets", 1, false),
        ];
        assert!(on_end(r#"{"plan_min_steps": 4}"#, &end));
        assert!(!on_end(r#"{"plan_min_steps": 5}"#, &end));
        assert!(on_end(r#""plan_no_duplicates""#, &end));
        assert!(on_end(r#"{"plan_min_done": 2}"#, &end));
        assert!(!on_end(r#"{"plan_min_done": 3}"#, &end));
        end.plan.push(step("lisbon", 0, false));
        assert!(!on_end(r#""plan_no_duplicates""#, &end));
    }

    #[test]
    fn document_checks() {
        let mut end = workspace();
        assert!(!on_end(r#"{"document_contains": ["x"]}"#, &end));
        assert!(on_end(r#"{"document_excludes": ["x"]}"#, &end));
        end.document = Some(Document {
            title: "Notes".into(),
            content: "Meeting on 14 March\nwith   John".into(),
            version: 1,
        });
        assert!(on_end(
            r#"{"document_contains": ["14 march", ["Jon ", "with john"]]}"#,
            &end
        ));
        assert!(!on_end(r#"{"document_contains": ["12 March"]}"#, &end));
        assert!(on_end(r#"{"document_excludes": ["12 March"]}"#, &end));
        assert!(!on_end(r#"{"document_excludes": ["14 MARCH"]}"#, &end));
    }

    #[test]
    fn locked_preferences_must_stay_as_they_were() {
        let mut start = workspace();
        start.preferences = vec![preference(1, "Budget", true), preference(2, "Sea", false)];
        let mut end = start.clone();
        end.preferences.remove(1);
        assert!(judge(
            r#""locked_preferences_untouched""#,
            &start,
            &end,
            &[]
        ));
        let mut changed = start.clone();
        changed.preferences[0].title = "Bigger budget".into();
        assert!(!judge(
            r#""locked_preferences_untouched""#,
            &start,
            &changed,
            &[]
        ));
        let mut unlocked = start.clone();
        unlocked.preferences[0].locked = false;
        assert!(!judge(
            r#""locked_preferences_untouched""#,
            &start,
            &unlocked,
            &[]
        ));
        let mut removed = start.clone();
        removed.preferences.remove(0);
        assert!(!judge(
            r#""locked_preferences_untouched""#,
            &start,
            &removed,
            &[]
        ));
    }

    #[test]
    fn counts_of_preferences_and_artifacts() {
        let mut end = workspace();
        end.preferences = vec![preference(1, "a", false), preference(2, "b", true)];
        assert!(on_end(r#"{"preferences_min": 2}"#, &end));
        assert!(!on_end(r#"{"preferences_min": 3}"#, &end));
        end.artifacts = vec![ArtifactSummary {
            id: 1,
            artifact_type: "bar_chart".into(),
            title: None,
            turn_index: 1,
            created_at: Utc::now(),
        }];
        assert!(on_end(r#"{"artifacts_min": 1}"#, &end));
        assert!(!on_end(r#"{"artifacts_min": 2}"#, &end));
        assert!(on_end(
            r#"{"artifacts_min": {"count": 1, "artifact_type": "bar_chart"}}"#,
            &end
        ));
        assert!(!on_end(
            r#"{"artifacts_min": {"count": 1, "artifact_type": "pie_chart"}}"#,
            &end
        ));
    }

    #[test]
    fn call_checks() {
        let ok = json!({"success": true, "summary": "done"});
        let failed = json!({"success": false, "error": "bad"});
        let locked = json!({"success": true,
            "summary": "no matching preferences found; skipped #1 \"Budget\": locked by the user"});
        let turns = vec![turn(
            1,
            "completed",
            vec![
                call(1, "set_objective", json!({"objective": "a"}), ok.clone()),
                call(2, "add_todos", json!({"steps": []}), failed),
            ],
        )];
        assert!(!on_turns(r#"{"max_failed_calls": 0}"#, &turns));
        assert!(on_turns(r#"{"max_failed_calls": 1}"#, &turns));
        assert!(on_turns(r#""no_repeated_calls""#, &turns));
        assert!(on_turns(r#"{"tools_used": ["set_objective"]}"#, &turns));
        assert!(!on_turns(r#"{"tools_used": ["add_todos"]}"#, &turns));
        assert!(on_turns(r#""no_locked_attempts""#, &turns));
        let repeated = vec![turn(
            1,
            "completed",
            vec![
                call(1, "set_objective", json!({"objective": "a"}), ok.clone()),
                call(2, "set_objective", json!({"objective": "a"}), ok.clone()),
            ],
        )];
        assert!(!on_turns(r#""no_repeated_calls""#, &repeated));
        let across_turns = vec![
            turn(
                1,
                "completed",
                vec![call(1, "list_todos", json!({}), ok.clone())],
            ),
            turn(
                2,
                "completed",
                vec![call(1, "list_todos", json!({}), ok.clone())],
            ),
        ];
        assert!(on_turns(r#""no_repeated_calls""#, &across_turns));
        let touched = vec![turn(
            1,
            "completed",
            vec![call(
                1,
                "remove_preferences",
                json!({"indices": [1]}),
                locked,
            )],
        )];
        assert!(!on_turns(r#""no_locked_attempts""#, &touched));
    }

    #[test]
    fn turns_must_end_with_the_models_answer() {
        let ok = json!({"success": true, "summary": "done"});
        let two = vec![
            call(1, "list_todos", json!({}), ok.clone()),
            call(2, "list_preferences", json!({}), ok.clone()),
        ];
        assert!(on_turns(
            r#""ended_by_model""#,
            &[turn(1, "completed", two.clone())]
        ));
        let mut three = two.clone();
        three.push(call(3, "list_artifacts", json!({}), ok));
        assert!(!on_turns(
            r#""ended_by_model""#,
            &[turn(1, "completed", three)]
        ));
        assert!(!on_turns(
            r#""ended_by_model""#,
            &[turn(1, "failed", two.clone())]
        ));
        assert!(!on_turns(
            r#""ended_by_model""#,
            &[turn(1, "cancelled", two)]
        ));
    }

    #[test]
    fn meaningless_parameters_are_refused() {
        for bad in [
            r#"{"objective_mentions": []}"#,
            r#"{"document_contains": [[]]}"#,
            r#"{"document_excludes": [" "]}"#,
            r#"{"tools_used": []}"#,
        ] {
            let check: Check = serde_json::from_str(bad).unwrap();
            assert!(check.validate().is_err(), "{bad}");
        }
    }
}
