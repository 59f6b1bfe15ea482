//! The passage a turn is about: a person's selection, found again in the body as it stands.
//!
//! A selection names code points of one version's body. By the time the turn runs (or the
//! model calls a tool), the body may have moved on: a person typed above the passage, or the
//! agent's own direct edit did. So a [`Focus`] keeps the passage's *text* and where it was last
//! seen, and [`Focus::locate`] finds it again by text in any later body: its only occurrence,
//! or, when it occurs several times, the one nearest to where it was. Finding it by text is the
//! same rule suggestions and `edit_document` follow, so the prompt's marks, the scope check
//! and the person's view of "the passage" agree.

use crate::workspace::error::WorkspaceError;

/// A passage of the document a turn is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Focus {
    /// The passage, exactly as it reads in the document.
    pub text: String,
    /// Where it started (code points) in the body of `version`.
    pub start: usize,
    /// The document version `start` refers to.
    pub version: i64,
}

/// Where a passage sits in a body: code points `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The first code point.
    pub start: usize,
    /// One past the last code point.
    pub end: usize,
}

impl Focus {
    /// The passage's length in code points.
    pub fn chars(&self) -> usize {
        self.text.chars().count()
    }

    /// Where the passage sits in `body`: its only occurrence, or the one starting nearest to
    /// where it was last seen; `None` when the body no longer has it.
    pub fn locate(&self, body: &str) -> Option<Span> {
        nearest(body, &self.text, self.start)
    }

    /// Checks that turning `before` into `after` changes nothing outside the passage: `after`
    /// must still begin with everything before the passage and end with everything after it.
    /// This one rule covers every document tool (a rewrite of the whole body that changes only
    /// the passage passes; an append, or an edit quoting text elsewhere, does not), so a model
    /// that picked an unusual tool is judged by what it would change, not by the tool.
    pub fn confines(&self, before: &str, after: &str) -> Result<(), WorkspaceError> {
        let Some(span) = self.locate(before) else {
            return Err(WorkspaceError::invalid(format!(
                "this turn is about the passage the person selected ({:?}), but the document \
                 no longer contains it, so nothing was suggested; tell the person and ask them \
                 to select the passage again",
                preview(&self.text)
            )));
        };
        let head_end = byte_at(before, span.start);
        let tail_start = byte_at(before, span.end);
        let (head, tail) = (&before[..head_end], &before[tail_start..]);
        let inside = after.len() >= head.len() + tail.len()
            && after.starts_with(head)
            && after.ends_with(tail);
        if inside {
            return Ok(());
        }
        let first_change = before
            .chars()
            .zip(after.chars())
            .take_while(|(a, b)| a == b)
            .count();
        let at = if first_change < span.start {
            format!("at character {first_change}, before it")
        } else {
            "after it".to_string()
        };
        Err(WorkspaceError::invalid(format!(
            "this turn is about the selected passage (characters {}-{}), and this suggestion \
             would also change the document outside it ({at}), so nothing was suggested; \
             suggest changes inside the passage only, with edit_document quoting text from \
             within it",
            span.start, span.end
        )))
    }
}

/// The start, in code points, of every occurrence of `needle` (not empty) in `body`, counting
/// overlapping ones.
pub fn occurrences(body: &str, needle: &str) -> Vec<usize> {
    if needle.is_empty() {
        return Vec::new();
    }
    let mut found = Vec::new();
    let (mut chars_before, mut counted_to) = (0usize, 0usize);
    let mut from = 0usize;
    while let Some(at) = body[from..].find(needle) {
        let byte = from + at;
        chars_before += body[counted_to..byte].chars().count();
        counted_to = byte;
        found.push(chars_before);
        from = byte + body[byte..].chars().next().map_or(1, char::len_utf8);
    }
    found
}

/// The occurrence of `needle` in `body` starting nearest to code point `hint` (the earlier one
/// on a tie).
pub fn nearest(body: &str, needle: &str, hint: usize) -> Option<Span> {
    let start = occurrences(body, needle)
        .into_iter()
        .min_by_key(|&at| at.abs_diff(hint))?;
    Some(Span {
        start,
        end: start + needle.chars().count(),
    })
}

/// Where code point `at` of `old` lands in `new`: unchanged before the first difference, shifted
/// by the change in length after the last one, and at the start of the changed region when it
/// lay inside it.
pub fn mapped_offset(old: &str, new: &str, at: usize) -> usize {
    let prefix = old
        .chars()
        .zip(new.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let (old_len, new_len) = (old.chars().count(), new.chars().count());
    let room = old_len.min(new_len) - prefix;
    let suffix = old
        .chars()
        .rev()
        .zip(new.chars().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    if at < prefix {
        at
    } else if at >= old_len - suffix {
        (at + new_len).saturating_sub(old_len)
    } else {
        prefix
    }
}

/// The byte offset of code point `at` in `text` (its length when `at` is past the end).
pub fn byte_at(text: &str, at: usize) -> usize {
    text.char_indices()
        .nth(at)
        .map_or(text.len(), |(byte, _)| byte)
}

/// The first words of a passage, for an error message.
fn preview(text: &str) -> String {
    const SHOWN: usize = 60;
    if text.chars().count() <= SHOWN {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(SHOWN).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn focus(text: &str, start: usize) -> Focus {
        Focus {
            text: text.to_string(),
            start,
            version: 1,
        }
    }

    #[test]
    fn occurrences_count_code_points_and_overlaps() {
        assert_eq!(occurrences("héé aa é", "é"), vec![1, 2, 7]);
        assert_eq!(occurrences("aaa", "aa"), vec![0, 1]);
        assert!(occurrences("abc", "").is_empty());
    }

    #[test]
    fn the_nearest_occurrence_wins() {
        let body = "one two. one two. one two.";
        assert_eq!(
            focus("one", 17).locate(body),
            Some(Span { start: 18, end: 21 })
        );
        assert_eq!(
            focus("one", 0).locate(body),
            Some(Span { start: 0, end: 3 })
        );
        assert_eq!(focus("three", 0).locate(body), None);
    }

    #[test]
    fn offsets_map_around_a_change() {
        let old = "Intro. The passage. End.";
        let new = "A longer intro. The passage. End.";
        assert_eq!(mapped_offset(old, new, 7), 16);
        assert_eq!(mapped_offset(old, old, 7), 7);
        assert_eq!(mapped_offset("ab", "xab", 0), 1);
    }

    #[test]
    fn only_changes_inside_the_passage_are_confined() {
        let f = focus("very long", 2);
        let before = "A very long day.";
        assert!(f.confines(before, "A short day.").is_ok());
        assert!(f.confines(before, "A very long, long day.").is_ok());
        assert!(f.confines(before, "A very long day, indeed.").is_err());
        assert!(f.confines(before, "A very long day. More.").is_err());
        assert!(f.confines(before, "The very long day.").is_err());
        assert!(f.confines("no such text", "x").is_err());
    }
}
