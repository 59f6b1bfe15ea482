//! Checks judged on the plan: its size, repeats, ticks, and named steps (which step, where in
//! the outline, ticked or not, or gone).

use super::*;

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

/// The index of the parent of step `i`: the nearest step before it that is shallower.
fn parent_of(plan: &[PlanStep], i: usize) -> Option<usize> {
    let depth = plan.get(i)?.depth;
    (0..i).rev().find(|&j| plan[j].depth < depth)
}

/// The texts of step `i` and of its ancestors, nearest first.
fn path_of(plan: &[PlanStep], i: usize) -> Vec<&str> {
    let mut texts = Vec::new();
    let mut at = Some(i);
    while let Some(j) = at {
        texts.push(plan[j].text.as_str());
        at = parent_of(plan, j);
    }
    texts
}

/// Why step `i` (whose text matches) is not the step `spec` wants; empty when it is.
fn mismatches(plan: &[PlanStep], i: usize, spec: &PlanStepSpec) -> Vec<String> {
    let step = &plan[i];
    let mut why = Vec::new();
    if let Some(done) = spec.done
        && step.done != done
    {
        why.push(if step.done { "done" } else { "not done" }.to_string());
    }
    if let Some(depth) = spec.depth
        && step.depth != i64::from(depth)
    {
        why.push(format!("at depth {}", step.depth));
    }
    if let Some(parent) = &spec.parent {
        match parent_of(plan, i) {
            None => why.push("at the top, under no step".to_string()),
            Some(j) if !holds_all(parent, &normalize(&plan[j].text)) => {
                why.push(format!("under {}", quote(&plan[j].text)));
            }
            Some(_) => {}
        }
    }
    if let Some(path) = &spec.path {
        let texts = path_of(plan, i);
        let joined = normalize(&texts.join(" | "));
        let absent = missing(path, &joined);
        if !absent.is_empty() {
            why.push(format!("its outline path lacks {}", absent.join(", ")));
        }
    }
    why
}

pub(super) fn plan_step(plan: &[PlanStep], spec: &PlanStepSpec) -> (bool, String) {
    let candidates: Vec<usize> = (0..plan.len())
        .filter(|&i| holds_all(&spec.text, &normalize(&plan[i].text)))
        .collect();
    if candidates.is_empty() {
        return (
            false,
            format!(
                "no step has {} among {}",
                labels(&spec.text),
                plural(plan.len(), "step")
            ),
        );
    }
    let mut near = Vec::new();
    for &i in &candidates {
        let why = mismatches(plan, i, spec);
        if why.is_empty() {
            return (true, format!("step {}: {}", i + 1, describe(plan, i)));
        }
        near.push(format!(
            "step {} {} is {}",
            i + 1,
            quote(&plan[i].text),
            why.join(", ")
        ));
    }
    (
        false,
        format!(
            "{} the text but none is the one wanted: {}",
            if candidates.len() == 1 {
                "1 step has".to_string()
            } else {
                format!("{} steps have", candidates.len())
            },
            first_few(&near)
        ),
    )
}

/// Step `i` in a few words: its text, where it sits and whether it is done.
fn describe(plan: &[PlanStep], i: usize) -> String {
    let step = &plan[i];
    let place = match parent_of(plan, i) {
        Some(j) => format!("under {}", quote(&plan[j].text)),
        None => "at the top".to_string(),
    };
    format!(
        "{} {place}, {}",
        quote(&step.text),
        if step.done { "done" } else { "not done" }
    )
}

pub(super) fn plan_lacks(plan: &[PlanStep], terms: &[Term]) -> (bool, String) {
    let still: Vec<String> = plan
        .iter()
        .enumerate()
        .filter(|(_, step)| holds_all(terms, &normalize(&step.text)))
        .map(|(i, step)| format!("step {} {}", i + 1, quote(&step.text)))
        .collect();
    if still.is_empty() {
        (
            true,
            format!("no step of {} has {}", plan.len(), labels(terms)),
        )
    } else {
        (false, format!("still there: {}", first_few(&still)))
    }
}
