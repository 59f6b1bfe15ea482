//! Checks judged on the preferences: the locked ones left alone, how many there are, and
//! named ones (what a preference now says, or that one is gone).

use super::*;

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

/// A preference's title and subtitle as one normalised text.
fn said(preference: &Preference) -> String {
    match &preference.subtitle {
        Some(subtitle) => normalize(&format!("{} — {subtitle}", preference.title)),
        None => normalize(&preference.title),
    }
}

/// A preference in a few words: its title, kind and lock.
fn describe(preference: &Preference) -> String {
    format!(
        "{} ({}{})",
        quote(&preference.title),
        preference.kind.as_str(),
        if preference.locked { ", locked" } else { "" }
    )
}

pub(super) fn preference(preferences: &[Preference], spec: &PreferenceSpec) -> (bool, String) {
    let candidates: Vec<(usize, &Preference)> = preferences
        .iter()
        .enumerate()
        .filter(|(_, p)| holds_all(&spec.title, &said(p)))
        .collect();
    if candidates.is_empty() {
        let all: Vec<String> = preferences.iter().map(|p| quote(&p.title)).collect();
        let seen = if all.is_empty() {
            "there are none".to_string()
        } else {
            format!("there are {}", first_few(&all))
        };
        return (
            false,
            format!("no preference has {}; {seen}", labels(&spec.title)),
        );
    }
    let mut near = Vec::new();
    for (i, p) in &candidates {
        let mut why = Vec::new();
        if let Some(kind) = spec.kind
            && p.kind != kind
        {
            why.push(format!("{} instead of {}", p.kind.as_str(), kind.as_str()));
        }
        if let Some(locked) = spec.locked
            && p.locked != locked
        {
            why.push(if p.locked { "locked" } else { "not locked" }.to_string());
        }
        if why.is_empty() {
            return (true, format!("preference {}: {}", i + 1, describe(p)));
        }
        near.push(format!(
            "preference {} {} is {}",
            i + 1,
            quote(&p.title),
            why.join(", ")
        ));
    }
    (
        false,
        format!("the text is there but not as wanted: {}", first_few(&near)),
    )
}

pub(super) fn preference_lacks(preferences: &[Preference], terms: &[Term]) -> (bool, String) {
    let still: Vec<String> = preferences
        .iter()
        .enumerate()
        .filter(|(_, p)| holds_all(terms, &said(p)))
        .map(|(i, p)| format!("preference {} {}", i + 1, describe(p)))
        .collect();
    if still.is_empty() {
        (
            true,
            format!(
                "no preference of {} has {}",
                preferences.len(),
                labels(terms)
            ),
        )
    } else {
        (false, format!("still there: {}", first_few(&still)))
    }
}
