//! The parameters of the checks that take more than a number or a list, as written in
//! scenario files. Each refuses fields it does not know, so a typo never turns a condition off.

use serde::Deserialize;

use super::Term;
use haico_store::panels::PreferenceKind;

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

/// The parameter of `document_contains`: terms anywhere in the document, or terms in one
/// section of it (so a CV's summary can be told from its skills list, which may already hold
/// the same words).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum DocumentTerms {
    /// Every term, anywhere in the document.
    Anywhere(Vec<Term>),
    /// Every term, inside one section.
    InSection(SectionTerms),
}

/// `{"section": terms, "terms": terms}`: the terms must be in a section whose heading holds
/// the section terms (the heading and what follows it, up to the next heading of the same or
/// a higher level).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SectionTerms {
    /// What the section's heading holds.
    pub section: Vec<Term>,
    /// What the section must hold.
    pub terms: Vec<Term>,
}

/// The parameter of `plan_step`: a step that names its target (which step, ticked or not,
/// where in the outline).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanStepSpec {
    /// Terms the step's own text holds.
    pub text: Vec<Term>,
    /// Whether it must be ticked off (or must not be).
    #[serde(default)]
    pub done: Option<bool>,
    /// Its outline depth (0 at the top).
    #[serde(default)]
    pub depth: Option<u32>,
    /// Terms its parent's text holds: the parent is the nearest shallower step before it.
    #[serde(default)]
    pub parent: Option<Vec<Term>>,
    /// Terms each found in the step's text or in one of its ancestors' texts, so one check
    /// accepts "iOS smoke tests" as a flat step and "Smoke tests" nested under "iOS".
    #[serde(default)]
    pub path: Option<Vec<Term>>,
}

/// The parameter of `preference`: a preference that says what the person asked for.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreferenceSpec {
    /// Terms its title (or title and subtitle together) holds.
    pub title: Vec<Term>,
    /// `hard` or `soft`.
    #[serde(default)]
    pub kind: Option<PreferenceKind>,
    /// Whether it must be locked (or must not be).
    #[serde(default)]
    pub locked: Option<bool>,
}

/// The parameter of `chart`: an artifact that shows what the person gave.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChartSpec {
    /// The artifact type: `line_chart`, `bar_chart` or `pie_chart`.
    #[serde(default, rename = "type")]
    pub artifact_type: Option<String>,
    /// Terms each found in one of its labels.
    #[serde(default)]
    pub labels: Option<Vec<Term>>,
    /// Numbers each found among its series' values.
    #[serde(default)]
    pub values: Option<Vec<f64>>,
    /// How many series it has at least.
    #[serde(default)]
    pub series_min: Option<usize>,
}

/// The parameter of `document_words`: the document's length in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WordRange {
    /// At least this many words.
    #[serde(default)]
    pub min: Option<usize>,
    /// At most this many words.
    #[serde(default)]
    pub max: Option<usize>,
}
