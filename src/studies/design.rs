//! A study's design as the researcher writes it, and the checks it must pass before anything
//! is stored. Every refusal names the place in the JSON it is about
//! (`conditions[1].tools[0]: no tool named foo`), so a design tool can point at the field.
//!
//! Text fields stay `String`s here (panel names, the document mode, tool names) rather than
//! enums: serde's own error for an unknown enum value would not say which values exist, and
//! the checks below say it in the same words as every other rule.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::eval::scenario::StartingWorkspace;

/// The most conditions a study may have.
pub const MAX_CONDITIONS: usize = 12;
/// The panels a condition may show, in display order.
pub const PANELS: [&str; 5] = ["objective", "document", "plan", "preferences", "artifacts"];
/// The longest title, label or code, in characters.
const MAX_SHORT: usize = 200;
/// The longest free text (instructions, consent, a system prompt), in characters.
const MAX_TEXT: usize = 100_000;

/// What a researcher designs: the task, consent, entry, assignment, limits, completion codes
/// and the conditions compared.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Design {
    /// What the study is called (researchers see it; participants see the task's title).
    pub title: String,
    /// What every participant is asked to do, and the workspace they start from.
    pub task: Task,
    /// The consent form.
    #[serde(default)]
    pub consent: Consent,
    /// How participants arrive (a recruitment platform's parameters).
    #[serde(default)]
    pub entry: Entry,
    /// How consenting participants are spread over the conditions.
    #[serde(default)]
    pub assignment: Assignment,
    /// The clock and the least work before Finish.
    #[serde(default)]
    pub limits: Limits,
    /// The codes participants take back to the platform, per outcome.
    pub completion: Completion,
    /// The conditions compared (1 to 12).
    pub conditions: Vec<Condition>,
}

/// The task.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// Its title, shown to participants.
    pub title: String,
    /// What to do, in Markdown.
    pub instructions: String,
    /// The workspace every session starts from (the shape of an `eval/` scenario's).
    #[serde(default)]
    pub seed: StartingWorkspace,
}

/// The consent form.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Consent {
    /// What participants agree to.
    #[serde(default)]
    pub text: String,
    /// Whether agreeing is asked at all (without it, entering is consenting).
    #[serde(default = "yes")]
    pub required: bool,
}

impl Default for Consent {
    fn default() -> Self {
        Self {
            text: String::new(),
            required: true,
        }
    }
}

fn yes() -> bool {
    true
}

/// How participants arrive.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The query parameter carrying the participant's id on the platform.
    #[serde(default = "prolific_pid")]
    pub participant_param: String,
    /// Whether entering without an id is refused.
    #[serde(default)]
    pub require_participant_id: bool,
    /// Further parameters recorded with the session (`STUDY_ID`, `SESSION_ID`, …).
    #[serde(default)]
    pub params: Vec<String>,
    /// Of those, the ones exported as they are; the others are pseudonymised.
    #[serde(default)]
    pub keep_params: Vec<String>,
}

impl Default for Entry {
    fn default() -> Self {
        Self {
            participant_param: prolific_pid(),
            require_participant_id: false,
            params: Vec::new(),
            keep_params: Vec::new(),
        }
    }
}

fn prolific_pid() -> String {
    "PROLIFIC_PID".to_string()
}

/// How consenting participants are spread.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assignment {
    /// `balanced` (least count per weight; the default) or `random` (by weight).
    #[serde(default = "balanced")]
    pub method: String,
}

impl Default for Assignment {
    fn default() -> Self {
        Self { method: balanced() }
    }
}

fn balanced() -> String {
    "balanced".to_string()
}

/// The clock.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Seconds from Start to the deadline.
    #[serde(default)]
    pub time_limit_s: Option<i64>,
    /// Seconds before the deadline the participant is warned.
    #[serde(default)]
    pub warn_before_s: Option<i64>,
    /// Agent turns a participant must make before Finish is accepted.
    #[serde(default)]
    pub min_turns: Option<i64>,
}

/// The codes per outcome.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Completion {
    /// Finished.
    pub completed: Outcome,
    /// Out of time.
    #[serde(default)]
    pub timed_out: Option<Outcome>,
    /// Declined consent.
    #[serde(default)]
    pub no_consent: Option<Outcome>,
}

/// One outcome's code and where the participant goes next.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outcome {
    /// The code shown (and put into the URL as `{code}`).
    pub code: String,
    /// Where to send the participant; `{code}`, `{session}` and `{param:NAME}` are filled in.
    #[serde(default)]
    pub redirect_url: Option<String>,
}

/// One condition.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// Its key (`[a-z0-9_-]{1,32}`), in data and exports.
    pub key: String,
    /// What researchers call it.
    pub label: String,
    /// Its share of participants, relative to the others'.
    #[serde(default = "one")]
    pub weight: f64,
    /// The most participants it takes, if bounded.
    #[serde(default)]
    pub target: Option<i64>,
    /// Whether it takes new participants.
    #[serde(default = "yes")]
    pub recruiting: bool,
    /// The panels the participant sees (none: a plain chat).
    #[serde(default)]
    pub panels: Vec<String>,
    /// The agent's tools: `"*"` for all, or a list of names (`server__tool` for another MCP
    /// server's). None and no panels: a plain chat, with no snapshot either.
    #[serde(default = "all_tools")]
    pub tools: Value,
    /// `direct` or `suggest`.
    #[serde(default = "direct")]
    pub document_mode: String,
    /// The model's sampling temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Tool calls per turn before the agent stops.
    #[serde(default)]
    pub max_steps: Option<i64>,
    /// Instructions replacing the server's own.
    #[serde(default)]
    pub system_prompt: Option<String>,
}

fn one() -> f64 {
    1.0
}

fn all_tools() -> Value {
    Value::String("*".to_string())
}

fn direct() -> String {
    "direct".to_string()
}

/// A design refused: where, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct DesignError {
    /// The place in the JSON (`conditions[1].tools[0]`).
    pub path: String,
    /// What is wrong and what to do.
    pub message: String,
}

fn refuse(path: impl Into<String>, message: impl Into<String>) -> DesignError {
    DesignError {
        path: path.into(),
        message: message.into(),
    }
}

/// The tools a condition may name: the workspace's own (external `server__tool` names are
/// accepted by shape, since servers come and go while a study runs).
pub trait KnownTools {
    /// Whether a workspace tool has this name.
    fn knows(&self, name: &str) -> bool;
}

impl Condition {
    /// The tools the agent gets: `None` for all of them, else the names listed.
    pub fn tool_names(&self) -> Option<Vec<String>> {
        match &self.tools {
            Value::Array(items) => Some(
                items
                    .iter()
                    .filter_map(|item| item.as_str().map(str::to_string))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// Whether this condition is a plain chat: no panels and no tools.
    pub fn is_plain_chat(&self) -> bool {
        self.panels.is_empty() && self.tool_names().is_some_and(|names| names.is_empty())
    }
}

impl Design {
    /// Checks the whole design; the first fault found, by its path.
    pub fn check(&self, tools: &dyn KnownTools) -> Result<(), DesignError> {
        short_text("title", &self.title)?;
        short_text("task.title", &self.task.title)?;
        long_text("task.instructions", &self.task.instructions, false)?;
        check_seed(&self.task.seed)?;
        long_text("consent.text", &self.consent.text, !self.consent.required)?;
        self.check_entry()?;
        if !matches!(self.assignment.method.as_str(), "balanced" | "random") {
            return Err(refuse(
                "assignment.method",
                format!(
                    "{:?} is not a method: use \"balanced\" or \"random\"",
                    self.assignment.method
                ),
            ));
        }
        self.check_limits()?;
        self.check_completion()?;
        if self.conditions.is_empty() || self.conditions.len() > MAX_CONDITIONS {
            return Err(refuse(
                "conditions",
                format!(
                    "a study has 1 to {MAX_CONDITIONS} conditions, not {}",
                    self.conditions.len()
                ),
            ));
        }
        for (i, condition) in self.conditions.iter().enumerate() {
            let at = format!("conditions[{i}]");
            if self.conditions[..i].iter().any(|c| c.key == condition.key) {
                return Err(refuse(
                    format!("{at}.key"),
                    format!(
                        "the key {:?} is used by an earlier condition",
                        condition.key
                    ),
                ));
            }
            check_condition(&at, condition, tools)?;
        }
        Ok(())
    }

    fn check_entry(&self) -> Result<(), DesignError> {
        let entry = &self.entry;
        param_name("entry.participant_param", &entry.participant_param)?;
        for (i, name) in entry.params.iter().enumerate() {
            let at = format!("entry.params[{i}]");
            param_name(&at, name)?;
            if name == &entry.participant_param || entry.params[..i].contains(name) {
                return Err(refuse(at, format!("{name:?} is named twice")));
            }
        }
        for (i, name) in entry.keep_params.iter().enumerate() {
            if !entry.params.contains(name) {
                return Err(refuse(
                    format!("entry.keep_params[{i}]"),
                    format!("{name:?} is not one of `entry.params`"),
                ));
            }
        }
        Ok(())
    }

    fn check_limits(&self) -> Result<(), DesignError> {
        let limits = &self.limits;
        if let Some(limit) = limits.time_limit_s
            && !(5..=86_400).contains(&limit)
        {
            return Err(refuse(
                "limits.time_limit_s",
                "must be between 5 and 86400 seconds",
            ));
        }
        if let Some(warn) = limits.warn_before_s {
            match limits.time_limit_s {
                None => {
                    return Err(refuse(
                        "limits.warn_before_s",
                        "a warning needs `limits.time_limit_s`",
                    ));
                }
                Some(limit) if warn < 1 || warn >= limit => {
                    return Err(refuse(
                        "limits.warn_before_s",
                        format!("must be between 1 and {} seconds", limit - 1),
                    ));
                }
                Some(_) => {}
            }
        }
        if let Some(turns) = limits.min_turns
            && !(0..=1_000).contains(&turns)
        {
            return Err(refuse("limits.min_turns", "must be between 0 and 1000"));
        }
        Ok(())
    }

    fn check_completion(&self) -> Result<(), DesignError> {
        let completion = &self.completion;
        outcome("completion.completed", &completion.completed)?;
        if let Some(timed_out) = &completion.timed_out {
            outcome("completion.timed_out", timed_out)?;
        }
        if let Some(no_consent) = &completion.no_consent {
            outcome("completion.no_consent", no_consent)?;
        }
        Ok(())
    }

    /// The condition with `key`.
    pub fn condition(&self, key: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.key == key)
    }
}

fn check_condition(
    at: &str,
    condition: &Condition,
    tools: &dyn KnownTools,
) -> Result<(), DesignError> {
    key(&format!("{at}.key"), &condition.key)?;
    short_text(&format!("{at}.label"), &condition.label)?;
    if !condition.weight.is_finite() || condition.weight <= 0.0 || condition.weight > 1_000.0 {
        return Err(refuse(
            format!("{at}.weight"),
            "must be a number above 0 and at most 1000",
        ));
    }
    if let Some(target) = condition.target
        && !(1..=1_000_000).contains(&target)
    {
        return Err(refuse(
            format!("{at}.target"),
            "must be between 1 and 1000000",
        ));
    }
    for (i, panel) in condition.panels.iter().enumerate() {
        let path = format!("{at}.panels[{i}]");
        if !PANELS.contains(&panel.as_str()) {
            return Err(refuse(
                path,
                format!("no panel named {panel:?}: use {}", PANELS.join(", ")),
            ));
        }
        if condition.panels[..i].contains(panel) {
            return Err(refuse(path, format!("{panel:?} is listed twice")));
        }
    }
    match &condition.tools {
        Value::String(all) if all == "*" => {}
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let path = format!("{at}.tools[{i}]");
                let Some(name) = item.as_str() else {
                    return Err(refuse(path, "a tool is named by a string"));
                };
                let external = name
                    .split_once("__")
                    .is_some_and(|(server, tool)| server_name(server) && !tool.is_empty());
                if !tools.knows(name) && !external {
                    return Err(refuse(path, format!("no tool named {name}")));
                }
                if items[..i].iter().any(|earlier| earlier == item) {
                    return Err(refuse(path, format!("{name} is listed twice")));
                }
            }
        }
        _ => {
            return Err(refuse(
                format!("{at}.tools"),
                "use \"*\" for every tool, or a list of tool names",
            ));
        }
    }
    if haico_core::workspace::DocumentMode::parse(&condition.document_mode).is_none() {
        return Err(refuse(
            format!("{at}.document_mode"),
            format!(
                "{:?} is not a mode: use \"direct\" or \"suggest\"",
                condition.document_mode
            ),
        ));
    }
    if let Some(t) = condition.temperature
        && !(0.0..=2.0).contains(&t)
    {
        return Err(refuse(
            format!("{at}.temperature"),
            "must be between 0 and 2",
        ));
    }
    if let Some(steps) = condition.max_steps
        && !(1..=200).contains(&steps)
    {
        return Err(refuse(
            format!("{at}.max_steps"),
            "must be between 1 and 200",
        ));
    }
    if let Some(prompt) = &condition.system_prompt {
        long_text(&format!("{at}.system_prompt"), prompt, false)?;
    }
    Ok(())
}

fn check_seed(seed: &StartingWorkspace) -> Result<(), DesignError> {
    if let Some(objective) = &seed.objective
        && objective.trim().is_empty()
    {
        return Err(refuse(
            "task.seed.objective",
            "must not be empty (leave it out for none)",
        ));
    }
    let mut previous: Option<u32> = None;
    for (i, step) in seed.plan.iter().enumerate() {
        if step.text.trim().is_empty() {
            return Err(refuse(
                format!("task.seed.plan[{i}].text"),
                "must not be empty",
            ));
        }
        let deepest = previous.map_or(0, |d| d + 1);
        if step.depth > deepest {
            return Err(refuse(
                format!("task.seed.plan[{i}].depth"),
                format!("must be at most {deepest} (one deeper than the step before)"),
            ));
        }
        previous = Some(step.depth);
    }
    for (i, preference) in seed.preferences.iter().enumerate() {
        if preference.title.trim().is_empty() {
            return Err(refuse(
                format!("task.seed.preferences[{i}].title"),
                "must not be empty",
            ));
        }
    }
    Ok(())
}

fn outcome(at: &str, outcome: &Outcome) -> Result<(), DesignError> {
    let code_ok = !outcome.code.is_empty()
        && outcome.code.len() <= 64
        && outcome
            .code
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !code_ok {
        return Err(refuse(
            format!("{at}.code"),
            "a code is 1 to 64 letters, digits, `_` or `-`",
        ));
    }
    if let Some(url) = &outcome.redirect_url {
        let filled = url
            .replace("{code}", "CODE")
            .replace("{session}", "SESSION");
        let filled = fill_params(&filled, |_| Some("x".to_string()));
        let parsed = url::Url::parse(&filled);
        if !parsed.is_ok_and(|u| matches!(u.scheme(), "http" | "https")) {
            return Err(refuse(
                format!("{at}.redirect_url"),
                "must be an http(s) URL (placeholders {code}, {session}, {param:NAME} allowed)",
            ));
        }
    }
    Ok(())
}

/// `text` with every `{param:NAME}` replaced by `value(NAME)` (an unknown one by nothing).
pub fn fill_params(text: &str, value: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{param:") {
        out.push_str(&rest[..start]);
        let after = &rest[start + "{param:".len()..];
        match after.find('}') {
            Some(end) => {
                out.push_str(&value(&after[..end]).unwrap_or_default());
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

fn short_text(at: &str, text: &str) -> Result<(), DesignError> {
    if text.trim().is_empty() {
        return Err(refuse(at, "must not be empty"));
    }
    if text.chars().count() > MAX_SHORT {
        return Err(refuse(
            at,
            format!("must be at most {MAX_SHORT} characters"),
        ));
    }
    Ok(())
}

fn long_text(at: &str, text: &str, may_be_empty: bool) -> Result<(), DesignError> {
    if !may_be_empty && text.trim().is_empty() {
        return Err(refuse(at, "must not be empty"));
    }
    if text.chars().count() > MAX_TEXT {
        return Err(refuse(at, format!("must be at most {MAX_TEXT} characters")));
    }
    Ok(())
}

fn key(at: &str, key: &str) -> Result<(), DesignError> {
    let ok = !key.is_empty()
        && key.len() <= 32
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(refuse(at, "a key is 1 to 32 of a-z, 0-9, `_` or `-`"))
    }
}

/// Whether `name` is shaped like an MCP server's name (`[a-z0-9_-]{1,32}`).
fn server_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

fn param_name(at: &str, name: &str) -> Result<(), DesignError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(refuse(
            at,
            "a parameter name is 1 to 64 letters, digits or `_`",
        ))
    }
}

/// Reads a design from JSON: a field of the wrong type is `Err(Ok(DesignError))` naming it; an
/// unknown field is `Err(Err(text))` (a request the server does not understand, not a design
/// it refuses).
pub fn parse(value: Value) -> Result<Design, Result<DesignError, String>> {
    serde_path_to_error::deserialize::<_, Design>(value).map_err(|err| {
        let path = err.path().to_string();
        let message = err.inner().to_string();
        if message.starts_with("unknown field") {
            Err(if path == "." {
                message
            } else {
                format!("{path}: {message}")
            })
        } else {
            Ok(refuse(
                if path == "." {
                    "body".to_string()
                } else {
                    path
                },
                message,
            ))
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Two;
    impl KnownTools for Two {
        fn knows(&self, name: &str) -> bool {
            matches!(name, "set_objective" | "update_document")
        }
    }

    fn design() -> Value {
        json!({
            "title": "t", "task": {"title": "x", "instructions": "do it"},
            "consent": {"text": "We record your messages."},
            "completion": {"completed": {"code": "C1"}},
            "conditions": [{"key": "a", "label": "A"}],
        })
    }

    #[test]
    fn a_minimal_design_passes() {
        parse(design()).unwrap().check(&Two).unwrap();
    }

    #[test]
    fn each_fault_names_its_path() {
        let mut bad = design();
        bad["conditions"] =
            json!([{"key": "a", "label": "A"}, {"key": "b", "label": "B", "tools": ["foo"]}]);
        let err = parse(bad).unwrap().check(&Two).unwrap_err();
        assert_eq!(err.to_string(), "conditions[1].tools[0]: no tool named foo");
        let mut typed = design();
        typed["limits"] = json!({"time_limit_s": "ten"});
        let err = parse(typed).unwrap_err().unwrap();
        assert_eq!(err.path, "limits.time_limit_s");
        let mut unknown = design();
        unknown["colour"] = json!("red");
        assert!(parse(unknown).unwrap_err().is_err());
    }

    #[test]
    fn placeholders_are_filled() {
        let filled = fill_params("https://x/?a={param:A}&b={param:B}", |n| {
            (n == "A").then(|| "1".to_string())
        });
        assert_eq!(filled, "https://x/?a=1&b=");
    }
}
