//! Scenario files: what a person brings to the agent, what the workspace holds when they
//! start, and what must be true afterwards. One JSON file per scenario; the format is
//! documented in `docs/EVAL.md`.
//!
//! Every file is read and checked before anything runs, so a typo in the twelfth file is
//! reported before the first scenario spends minutes on a local model. Errors name the file
//! and the place in it (line, column and field path).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::checks::{Check, Term, normalize};
use crate::agent::providers::replay::ReplayResponse;
use haico_core::workspace::checked_message;
use haico_store::panels::PreferenceKind;

/// Most tool calls one turn may be given (the same bound as `HAICO_MAX_STEPS`).
pub const MAX_STEPS_LIMIT: u32 = 1_000;

/// One scenario, as read from its file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short unique name, used by `--only` and in reports.
    pub name: String,
    /// What the person wants and what a good outcome looks like, for readers of the report.
    pub description: String,
    /// The workspace as it stands before the first message (empty when left out).
    #[serde(default)]
    pub workspace: StartingWorkspace,
    /// The person's messages, one turn each, sent in order, each after the last has ended.
    pub messages: Vec<String>,
    /// What must be true after the last turn.
    pub checks: Vec<Check>,
    /// Tool calls one turn may make; the run's `--max-steps` when left out.
    #[serde(default)]
    pub max_steps: Option<u32>,
    /// Scripted model answers, in the replay provider's format, played with `--replay`.
    #[serde(default)]
    pub replay: Option<Vec<ReplayResponse>>,
    /// The file it came from (not part of the format).
    #[serde(skip)]
    pub path: PathBuf,
}

/// The workspace a scenario starts from, written through the user path (as a person would
/// have set it up in the web UI), so locked preferences are really locked.
#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct StartingWorkspace {
    /// The objective.
    #[serde(default)]
    pub objective: Option<String>,
    /// The document.
    #[serde(default)]
    pub document: Option<StartingDocument>,
    /// The plan, as an outline.
    #[serde(default)]
    pub plan: Vec<StartingStep>,
    /// The preferences, in order.
    #[serde(default)]
    pub preferences: Vec<StartingPreference>,
}

/// The starting document.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct StartingDocument {
    /// Its title (the default title when left out).
    #[serde(default)]
    pub title: Option<String>,
    /// Its Markdown body.
    pub content: String,
}

/// One step of the starting plan.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct StartingStep {
    /// What the step is.
    pub text: String,
    /// Nesting level: 0 at the top, at most one deeper than the step before.
    #[serde(default)]
    pub depth: u32,
    /// Whether it is ticked off already.
    #[serde(default)]
    pub done: bool,
}

/// One starting preference.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct StartingPreference {
    /// The constraint in a few words.
    pub title: String,
    /// Optional detail.
    #[serde(default)]
    pub subtitle: Option<String>,
    /// `hard` or `soft`.
    pub kind: PreferenceKind,
    /// Locked by the person: the agent may not change or remove it.
    #[serde(default)]
    pub locked: bool,
}

/// Why scenarios could not be loaded. Each names the file.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file or folder could not be read.
    #[error("{}: cannot read it: {source}", path.display())]
    Read {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a valid scenario.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong and where.
        message: String,
    },
    /// A folder holds no scenario.
    #[error("{}: no scenario files (*.json) in this folder", path.display())]
    EmptyFolder {
        /// The folder.
        path: PathBuf,
    },
    /// Two files use one name, so `--only` and the report could not tell them apart.
    #[error("two scenarios are named `{name}`: {} and {}", first.display(), second.display())]
    DuplicateName {
        /// The name.
        name: String,
        /// The first file.
        first: PathBuf,
        /// The second file.
        second: PathBuf,
    },
    /// `--only` named a scenario that is not among those loaded.
    #[error("no scenario is named `{name}` (names loaded: {known})")]
    UnknownName {
        /// The name asked for.
        name: String,
        /// The names there are, comma-separated.
        known: String,
    },
}

impl ScenarioError {
    fn invalid(path: &Path, message: impl Into<String>) -> Self {
        Self::Invalid {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

/// Loads the scenarios `paths` name: files as given, folders as every `*.json` file directly
/// inside them, sorted by file name. Every file is read and checked; names must be unique.
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<Scenario>, ScenarioError> {
    let mut scenarios: Vec<Scenario> = Vec::new();
    for path in paths {
        for file in files_of(path)? {
            let scenario = load(&file)?;
            if let Some(first) = scenarios.iter().find(|s| s.name == scenario.name) {
                return Err(ScenarioError::DuplicateName {
                    name: scenario.name,
                    first: first.path.clone(),
                    second: file,
                });
            }
            scenarios.push(scenario);
        }
    }
    Ok(scenarios)
}

/// Keeps the scenarios named in `only` (all when it is empty); an unknown name is an error.
pub fn select(scenarios: Vec<Scenario>, only: &[String]) -> Result<Vec<Scenario>, ScenarioError> {
    if only.is_empty() {
        return Ok(scenarios);
    }
    for name in only {
        if !scenarios.iter().any(|s| &s.name == name) {
            let known: Vec<&str> = scenarios.iter().map(|s| s.name.as_str()).collect();
            return Err(ScenarioError::UnknownName {
                name: name.clone(),
                known: known.join(", "),
            });
        }
    }
    Ok(scenarios
        .into_iter()
        .filter(|s| only.contains(&s.name))
        .collect())
}

/// The scenario files `path` stands for.
fn files_of(path: &Path) -> Result<Vec<PathBuf>, ScenarioError> {
    let read_error = |source| ScenarioError::Read {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(read_error)?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).map_err(read_error)? {
        let file = entry.map_err(read_error)?.path();
        if file.is_file() && file.extension().is_some_and(|ext| ext == "json") {
            files.push(file);
        }
    }
    if files.is_empty() {
        return Err(ScenarioError::EmptyFolder {
            path: path.to_path_buf(),
        });
    }
    files.sort();
    Ok(files)
}

/// Reads and checks one scenario file.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut scenario = parse(&text).map_err(|message| ScenarioError::invalid(path, message))?;
    scenario.path = path.to_path_buf();
    Ok(scenario)
}

/// Parses and checks scenario text; the error says where the problem is.
pub fn parse(text: &str) -> Result<Scenario, String> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let scenario: Scenario =
        serde_path_to_error::deserialize(&mut deserializer).map_err(|err| {
            let inner = err.inner();
            let at = err.path().to_string();
            let place = if at == "." || at == "?" {
                String::new()
            } else {
                format!(" at `{at}`")
            };
            format!(
                "line {}, column {}{place}: {}",
                inner.line(),
                inner.column(),
                without_position(inner)
            )
        })?;
    deserializer.end().map_err(|err| {
        format!(
            "line {}, column {}: {}",
            err.line(),
            err.column(),
            without_position(&err)
        )
    })?;
    scenario.validate()?;
    Ok(scenario)
}

/// serde_json's message without the " at line L column C" it ends with (the caller says
/// where, once).
fn without_position(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    match text.strip_suffix(&suffix) {
        Some(message) => message.to_string(),
        None => text,
    }
}

impl Scenario {
    /// The rules serde cannot express; each message names the field.
    fn validate(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("`name` is empty: give the scenario a short unique name".into());
        }
        if self.messages.is_empty() {
            return Err("`messages` is empty: give at least one message from the person".into());
        }
        for (i, message) in self.messages.iter().enumerate() {
            checked_message(message).map_err(|err| format!("`messages[{i}]`: {err}"))?;
        }
        if self.checks.is_empty() {
            return Err("`checks` is empty: a scenario without checks always passes".into());
        }
        for (i, check) in self.checks.iter().enumerate() {
            check
                .validate()
                .map_err(|err| format!("`checks[{i}]` ({}): {err}", check.name()))?;
        }
        if self
            .checks
            .iter()
            .any(|check| matches!(check, Check::LockedPreferencesUntouched))
            && !self.workspace.preferences.iter().any(|p| p.locked)
        {
            return Err(
                "`checks` has locked_preferences_untouched but no preference in \
                        `workspace.preferences` is locked"
                    .into(),
            );
        }
        for (i, check) in self.checks.iter().enumerate() {
            if let Check::DocumentKeeps(terms) = check {
                self.workspace
                    .keeps(terms)
                    .map_err(|err| format!("`checks[{i}]` (document_keeps): {err}"))?;
            }
        }
        if let Some(max) = self.max_steps
            && !(1..=MAX_STEPS_LIMIT).contains(&max)
        {
            return Err(format!(
                "`max_steps` is {max}; give a number from 1 to {MAX_STEPS_LIMIT}"
            ));
        }
        self.workspace.validate()?;
        if let Some(replay) = &self.replay {
            validate_replay(replay)?;
        }
        Ok(())
    }
}

impl StartingWorkspace {
    /// `document_keeps` means something only for text the starting document holds: a term it
    /// lacks would pass for an agent that wrote it, not one that kept it.
    fn keeps(&self, terms: &[Term]) -> Result<(), String> {
        let Some(document) = &self.document else {
            return Err("`workspace.document` is not given, so there is nothing to keep".into());
        };
        let content = normalize(&document.content);
        let absent: Vec<String> = terms
            .iter()
            .filter(|term| !term.found_in(&content))
            .map(Term::label)
            .collect();
        if absent.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{} not in the starting document; list only text it holds",
                absent.join(", ")
            ))
        }
    }

    /// The starting workspace must be one a person could have made; the workspace's own rules
    /// check the texts when it is written, this checks what would otherwise fail half-way.
    fn validate(&self) -> Result<(), String> {
        let mut previous: Option<u32> = None;
        for (i, step) in self.plan.iter().enumerate() {
            if step.text.trim().is_empty() {
                return Err(format!("`workspace.plan[{i}].text` is empty"));
            }
            let deepest = previous.map_or(0, |depth| depth + 1);
            if step.depth > deepest {
                return Err(format!(
                    "`workspace.plan[{i}].depth` is {} but may be at most {deepest}: a step is at \
                     most one level deeper than the step before it (and the first is at 0)",
                    step.depth
                ));
            }
            previous = Some(step.depth);
        }
        for (i, preference) in self.preferences.iter().enumerate() {
            if preference.title.trim().is_empty() {
                return Err(format!("`workspace.preferences[{i}].title` is empty"));
            }
        }
        if let Some(objective) = &self.objective
            && objective.trim().is_empty()
        {
            return Err("`workspace.objective` is empty: leave it out instead".into());
        }
        Ok(())
    }
}

/// The replay provider's own rules for a script, applied where the script is embedded.
fn validate_replay(responses: &[ReplayResponse]) -> Result<(), String> {
    if responses.is_empty() {
        return Err("`replay` is empty: give the scripted answers, or leave it out".into());
    }
    for (i, response) in responses.iter().enumerate() {
        if response.text.is_empty() && response.tool_calls.is_empty() && response.error.is_none() {
            return Err(format!(
                "`replay[{i}]` is empty: give it `text`, `tool_calls` or both"
            ));
        }
        for (j, call) in response.tool_calls.iter().enumerate() {
            if call.name.trim().is_empty() {
                return Err(format!("`replay[{i}].tool_calls[{j}].name` is empty"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"{"name": "n", "description": "d", "messages": ["hi"],
                             "checks": ["objective_set"]}"#;

    #[test]
    fn a_minimal_scenario_loads_with_an_empty_workspace() {
        let scenario = parse(MINIMAL).unwrap();
        assert_eq!(scenario.messages, ["hi"]);
        assert!(scenario.workspace.plan.is_empty());
        assert!(scenario.replay.is_none());
    }

    #[test]
    fn errors_name_the_field() {
        let typo = parse(r#"{"name": "n", "description": "d", "mesages": []}"#).unwrap_err();
        assert!(typo.contains("mesages"), "{typo}");
        let check = parse(
            r#"{"name": "n", "description": "d", "messages": ["hi"],
                "checks": ["objective_set", {"plan_min_stesp": 2}]}"#,
        )
        .unwrap_err();
        assert!(
            check.contains("checks[1]") && check.contains("plan_min_stesp"),
            "{check}"
        );
        let depth = parse(
            r#"{"name": "n", "description": "d", "messages": ["hi"], "checks": ["objective_set"],
                "workspace": {"plan": [{"text": "a"}, {"text": "b", "depth": 2}]}}"#,
        )
        .unwrap_err();
        assert!(depth.contains("workspace.plan[1].depth"), "{depth}");
        let no_lock = parse(
            r#"{"name": "n", "description": "d", "messages": ["hi"],
                "checks": ["locked_preferences_untouched"]}"#,
        )
        .unwrap_err();
        assert!(no_lock.contains("locked"), "{no_lock}");
        let empty_message = parse(
            r#"{"name": "n", "description": "d", "messages": ["  "], "checks": ["objective_set"]}"#,
        )
        .unwrap_err();
        assert!(empty_message.contains("messages[0]"), "{empty_message}");
        let replay = parse(
            r#"{"name": "n", "description": "d", "messages": ["hi"], "checks": ["objective_set"],
                "replay": [{"text": "ok"}, {"delay_ms": 3}]}"#,
        )
        .unwrap_err();
        assert!(replay.contains("replay[1]"), "{replay}");
    }

    #[test]
    fn document_keeps_names_only_text_the_starting_document_holds() {
        let scenario = |keeps: &str| {
            format!(
                r#"{{"name": "n", "description": "d", "messages": ["hi"],
                    "workspace": {{"document": {{"content": "Met on 12 March with Jon."}}}},
                    "checks": [{{"document_keeps": {keeps}}}]}}"#
            )
        };
        assert!(parse(&scenario(r#"["12 march", ["jon", "john"]]"#)).is_ok());
        let absent = parse(&scenario(r#"["14 March"]"#)).unwrap_err();
        assert!(
            absent.contains("checks[0]") && absent.contains("\"14 March\" not in the starting"),
            "{absent}"
        );
        let nothing = parse(
            r#"{"name": "n", "description": "d", "messages": ["hi"],
                "checks": [{"document_keeps": ["x"]}]}"#,
        )
        .unwrap_err();
        assert!(nothing.contains("nothing to keep"), "{nothing}");
    }
}
