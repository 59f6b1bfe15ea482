//! The shared words of the summaries the model reads after a successful call.
//!
//! A small model reads `success: true` as "done" unless the text says otherwise, and then
//! repeats the call. So a call that changed nothing says so in its first words
//! ([`nothing_changed`]), with why and what to do; a call that changed part of what it was
//! asked to names what it skipped after what it did ([`skipped`]).

use std::fmt::Display;

use haico_core::workspace::rules::plural;

/// The words every summary of a call that changed nothing starts with.
pub const NOTHING_CHANGED: &str = "nothing changed: ";

/// `nothing changed: <why>`, the reasons joined by "; ".
pub fn nothing_changed<I>(reasons: I) -> String
where
    I: IntoIterator,
    I::Item: Display,
{
    let reasons: Vec<String> = reasons.into_iter().map(|r| r.to_string()).collect();
    format!("{NOTHING_CHANGED}{}", reasons.join("; "))
}

/// `skipped <what>: <why>`, the part of a call that did not apply, after the part that did.
pub fn skipped(what: impl Display, why: impl Display) -> String {
    format!("skipped {what}: {why}")
}

/// "index 9" / "indices 0, 9", as given.
pub fn indices(list: &[i64]) -> String {
    let joined: Vec<String> = list.iter().map(i64::to_string).collect();
    match list {
        [_] => format!("index {}", joined.join("")),
        _ => format!("indices {}", joined.join(", ")),
    }
}

/// How long the list the indices were read against was: "(the plan has 7 steps)", "(the
/// plan is empty)".
pub fn list_size(list: &str, len: usize, noun: &str) -> String {
    if len == 0 {
        format!("({list} is empty)")
    } else {
        format!("({list} has {})", plural(len, noun))
    }
}

/// "index 9 is out of range (the plan has 7 steps)": why nothing was done for them.
pub fn out_of_range(out: &[i64], list: &str, len: usize, noun: &str) -> String {
    let verb = if out.len() == 1 { "is" } else { "are" };
    format!(
        "{} {verb} out of range {}",
        indices(out),
        list_size(list, len, noun)
    )
}

/// "skipped index 9: out of range (the plan has 7 steps)": the same, after what was done.
pub fn skipped_out_of_range(out: &[i64], list: &str, len: usize, noun: &str) -> String {
    skipped(
        indices(out),
        format_args!("out of range {}", list_size(list, len, noun)),
    )
}

/// `"Budget" and "Beach"`-style lists: "a", "a and b", "a, b and c".
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_changed_comes_first() {
        assert_eq!(
            nothing_changed([out_of_range(&[9], "the plan", 7, "step")]),
            "nothing changed: index 9 is out of range (the plan has 7 steps)"
        );
        assert_eq!(
            nothing_changed(["a", "b"]),
            "nothing changed: a; b".to_string()
        );
        assert_eq!(
            out_of_range(&[0, -2], "the list", 0, "preference"),
            "indices 0, -2 are out of range (the list is empty)"
        );
        assert_eq!(
            skipped_out_of_range(&[4], "the plan", 1, "step"),
            "skipped index 4: out of range (the plan has 1 step)"
        );
    }

    #[test]
    fn lists_read_as_prose() {
        let items = |n: usize| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>();
        assert_eq!(and_list(&items(1)), "1");
        assert_eq!(and_list(&items(2)), "1 and 2");
        assert_eq!(and_list(&items(3)), "1, 2 and 3");
    }
}
