//! Checks judged on the objective.

use super::*;

pub(super) fn objective_set(end: &Workspace) -> (bool, String) {
    match end.objective.as_deref().filter(|o| !o.trim().is_empty()) {
        Some(objective) => (true, format!("objective {}", quote(objective))),
        None => (false, "no objective is set".into()),
    }
}

pub(super) fn objective_mentions(end: &Workspace, terms: &[Term]) -> (bool, String) {
    let Some(objective) = end.objective.as_deref() else {
        return (false, "no objective is set".into());
    };
    let absent = missing(terms, &normalize(objective));
    if absent.is_empty() {
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
            format!("missing {} in {}", absent.join(", "), quote(objective)),
        )
    }
}
