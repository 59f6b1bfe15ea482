//! What a check's parameters must be for it to mean something: no empty lists, no blank
//! texts, ranges that can hold, types haico makes. A scenario with a meaningless check is
//! refused when it is loaded, naming the check.

use super::*;
use haico_core::workspace::charts::ChartType;

impl Check {
    /// Rejects parameters that would make the check meaningless (empty lists, blank texts,
    /// empty ranges, unknown artifact types).
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Self::ObjectiveMentions(terms)
            | Self::PlanLacks(terms)
            | Self::DocumentKeeps(terms)
            | Self::PreferenceLacks(terms)
            | Self::AnswerMentions(terms) => terms_given(terms),
            Self::DocumentContains(DocumentTerms::Anywhere(terms)) => terms_given(terms),
            Self::DocumentContains(DocumentTerms::InSection(scoped)) => {
                terms_given(&scoped.terms).map_err(field("terms"))?;
                terms_given(&scoped.section).map_err(field("section"))
            }
            Self::DocumentExcludes(list) | Self::ToolsUsed(list) => texts_given(list),
            Self::DocumentWords(range) => words_range(*range),
            Self::PlanStep(spec) => {
                terms_given(&spec.text).map_err(field("text"))?;
                if let Some(parent) = &spec.parent {
                    terms_given(parent).map_err(field("parent"))?;
                }
                if let Some(path) = &spec.path {
                    terms_given(path).map_err(field("path"))?;
                }
                Ok(())
            }
            Self::Preference(spec) => terms_given(&spec.title).map_err(field("title")),
            Self::Chart(spec) => chart_spec(spec),
            Self::ArtifactsMin(ArtifactsMin::OfType(typed)) => {
                artifact_type(&typed.artifact_type).map_err(field("artifact_type"))
            }
            Self::ObjectiveSet
            | Self::PlanMinSteps(_)
            | Self::PlanNoDuplicates
            | Self::PlanMinDone(_)
            | Self::LockedPreferencesUntouched
            | Self::NoLockedAttempts
            | Self::PreferencesMin(_)
            | Self::ArtifactsMin(ArtifactsMin::Count(_))
            | Self::MaxFailedCalls(_)
            | Self::NoRepeatedCalls
            | Self::EndedByModel => Ok(()),
        }
    }
}

/// Prefixes an error with the field it is about.
fn field(name: &'static str) -> impl Fn(String) -> String {
    move |err| format!("`{name}`: {err}")
}

/// A list of terms: not empty, no empty list of alternatives, no blank text.
fn terms_given(terms: &[Term]) -> Result<(), String> {
    if terms.is_empty() {
        return Err("the list is empty".into());
    }
    for term in terms {
        if let Term::AnyOf(options) = term
            && options.is_empty()
        {
            return Err("a list of alternatives is empty".into());
        }
        if term.texts().iter().any(|text| text.trim().is_empty()) {
            return Err("a text is blank".into());
        }
    }
    Ok(())
}

/// A list of texts: not empty, none blank.
fn texts_given(texts: &[String]) -> Result<(), String> {
    if texts.is_empty() {
        return Err("the list is empty".into());
    }
    if texts.iter().any(|text| text.trim().is_empty()) {
        return Err("a text is blank".into());
    }
    Ok(())
}

/// A word range with at least one bound, and a minimum not above the maximum.
fn words_range(range: WordRange) -> Result<(), String> {
    match (range.min, range.max) {
        (None, None) => Err("give `min`, `max` or both".into()),
        (Some(min), Some(max)) if min > max => Err(format!("`min` ({min}) is above `max` ({max})")),
        _ => Ok(()),
    }
}

/// A chart check that asks for something, with non-empty lists and a type haico makes.
fn chart_spec(spec: &ChartSpec) -> Result<(), String> {
    if spec.artifact_type.is_none()
        && spec.labels.is_none()
        && spec.values.is_none()
        && spec.series_min.is_none()
    {
        return Err(
            "give at least one of `type`, `labels`, `values`, `series_min` (artifacts_min \
             counts charts of any kind)"
                .into(),
        );
    }
    if let Some(kind) = &spec.artifact_type {
        artifact_type(kind).map_err(field("type"))?;
    }
    if let Some(labels) = &spec.labels {
        terms_given(labels).map_err(field("labels"))?;
    }
    if let Some(values) = &spec.values {
        if values.is_empty() {
            return Err("`values`: the list is empty".into());
        }
        if values.iter().any(|v| !v.is_finite()) {
            return Err("`values`: a number is not finite".into());
        }
    }
    if spec.series_min == Some(0) {
        return Err("`series_min` is 0, which every chart meets; leave it out".into());
    }
    Ok(())
}

/// An artifact type haico makes.
fn artifact_type(name: &str) -> Result<(), String> {
    if ChartType::from_artifact_type(name).is_some() {
        Ok(())
    } else {
        Err(format!(
            "\"{name}\" is not an artifact type haico makes (line_chart, bar_chart or pie_chart)"
        ))
    }
}
