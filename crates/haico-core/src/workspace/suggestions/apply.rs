//! What a suggestion does to a body, and the diff that shows it.
//!
//! A suggestion keeps a [`DocumentChange`] and applies as that change does, by text and never
//! by position: edits find each passage exactly once (as `edit_document` does), an append adds
//! to whatever the body is now, and a whole rewrite (from `update_document`) applies only to
//! the very body it was made on, since it rewrites everything.

use crate::{workspace::document::change::DocumentChange, workspace::error::WorkspaceError};
use haico_store::Suggestion;

/// The body after `suggestion`, or why it no longer applies to `body`.
pub fn applied_body(body: &str, suggestion: &Suggestion) -> Result<String, WorkspaceError> {
    DocumentChange::of_suggestion(suggestion).applied_to(body)
}

/// A unified diff of `old` to `new` around what changed. Only the lines between the first and
/// last difference (plus three lines of context) are compared, so a small change of a 1 MB
/// body costs two scans, not a line diff of the whole body; hunk headers count lines from the
/// top of the whole body.
pub fn suggestion_diff(old: &str, new: &str, from: &str, to: &str) -> String {
    if old == new {
        return String::new();
    }
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let max_tail = a.len().min(b.len()) - head;
    let tail = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_tail)
        .take_while(|(x, y)| x == y)
        .count();
    // Widen to whole lines, with three lines of context on each side.
    // Newlines are bytes of their own in UTF-8, so every cut below is at a character boundary.
    let line_start = |at: usize| {
        a[..at]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1)
    };
    let mut start = line_start(head);
    let mut skipped_lines = bytecount(&a[..start]);
    for _ in 0..3 {
        if start == 0 {
            break;
        }
        start = line_start(start - 1);
        skipped_lines -= 1;
    }
    let end_old = widen_end(old, old.len() - tail);
    let end_new = widen_end(new, new.len() - tail);
    let old_mid = &old[start..end_old];
    let new_mid = &new[start..end_new];
    let diff = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_millis(15))
        .diff_lines(old_mid, new_mid)
        .unified_diff()
        .context_radius(3)
        .header(from, to)
        .to_string();
    shift_hunks(&diff, skipped_lines)
}

/// The end of the line holding byte `at`, then three more lines (or the end of the text).
fn widen_end(text: &str, at: usize) -> usize {
    let mut end = at;
    for _ in 0..4 {
        match text.as_bytes()[end..].iter().position(|&c| c == b'\n') {
            Some(found) => end += found + 1,
            None => return text.len(),
        }
    }
    end
}

/// How many lines end in `bytes`.
fn bytecount(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&c| c == b'\n').count()
}

/// Adds `lines` to the start line of every `@@ -a,b +c,d @@` header.
fn shift_hunks(diff: &str, lines: usize) -> String {
    if lines == 0 {
        return diff.to_string();
    }
    let mut out = String::with_capacity(diff.len() + 16);
    for line in diff.split_inclusive('\n') {
        match line
            .strip_prefix("@@ -")
            .and_then(|rest| shift_header(rest, lines))
        {
            Some(shifted) => out.push_str(&shifted),
            None => out.push_str(line),
        }
    }
    out
}

fn shift_header(rest: &str, lines: usize) -> Option<String> {
    let (ranges, after) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let shift = |range: &str| -> Option<String> {
        let (first, count) = match range.split_once(',') {
            Some((first, count)) => (first, Some(count)),
            None => (range, None),
        };
        let first: usize = first.parse().ok()?;
        // A range of no lines names the line before it; at the very top that is 0.
        let first = if first == 0 && count == Some("0") {
            lines
        } else {
            first + lines
        };
        Some(match count {
            Some(count) => format!("{first},{count}"),
            None => first.to_string(),
        })
    };
    Some(format!("@@ -{} +{} @@{after}", shift(old)?, shift(new)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(old: &str, new: &str) -> String {
        similar::TextDiff::configure()
            .diff_lines(old, new)
            .unified_diff()
            .context_radius(3)
            .header("a", "b")
            .to_string()
    }

    #[test]
    fn a_local_diff_reads_like_a_whole_one() {
        let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        for (from, to) in [
            ("line 20\n", "line twenty\n"),
            ("line 1\n", ""),
            ("line 40\n", "line 40\nline 41\n"),
            ("line 7\nline 8\n", "line 7b\n"),
        ] {
            let new = old.replacen(from, to, 1);
            assert_eq!(
                suggestion_diff(&old, &new, "a", "b"),
                whole(&old, &new),
                "{from:?}"
            );
        }
        let new = format!("{old}tail without newline");
        assert_eq!(suggestion_diff(&old, &new, "a", "b"), whole(&old, &new));
        assert_eq!(suggestion_diff("same", "same", "a", "b"), "");
        assert_eq!(
            suggestion_diff("", "hello\n", "a", "b"),
            whole("", "hello\n")
        );
        let uni = "héllo\nwörld\n日本\n";
        let changed = uni.replace("wörld", "welt");
        assert_eq!(
            suggestion_diff(uni, &changed, "a", "b"),
            whole(uni, &changed)
        );
    }
}
