//! Checks judged on the workspace: the objective, the plan, the document, the preferences and
//! the artifacts a run left behind (compared with where it started, for locks).

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

pub(super) fn plan_min_steps(plan: &[PlanStep], min: usize) -> (bool, String) {
    let top = plan.iter().filter(|step| step.depth == 0).count();
    (
        plan.len() >= min,
        format!(
            "{}, {top} at the top (at least {min} wanted)",
            plural(plan.len(), "step")
        ),
    )
}

pub(super) fn plan_no_duplicates(plan: &[PlanStep]) -> (bool, String) {
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

pub(super) fn plan_min_done(plan: &[PlanStep], min: usize) -> (bool, String) {
    let done = plan.iter().filter(|step| step.done).count();
    (
        done >= min,
        format!(
            "{done} of {} done (at least {min} wanted)",
            plural(plan.len(), "step")
        ),
    )
}

pub(super) fn document_contains(end: &Workspace, terms: &[Term]) -> (bool, String) {
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

pub(super) fn document_excludes(end: &Workspace, texts: &[String]) -> (bool, String) {
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

pub(super) fn locked_untouched(start: &[Preference], end: &[Preference]) -> (bool, String) {
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

pub(super) fn preferences_min(preferences: &[Preference], min: usize) -> (bool, String) {
    let locked = preferences.iter().filter(|p| p.locked).count();
    (
        preferences.len() >= min,
        format!(
            "{}, {locked} locked (at least {min} wanted)",
            plural(preferences.len(), "preference")
        ),
    )
}

pub(super) fn artifacts_min(end: &Workspace, min: &ArtifactsMin) -> (bool, String) {
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
