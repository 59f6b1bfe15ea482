//! The checks every panel shares: required text, lengths in code points, batch sizes, and the
//! resolution of the agent's 1-based indices against the list as it stood when a call started.

use crate::workspace::error::WorkspaceError;

/// The most items one batch (of the agent's tools) may carry.
pub const MAX_BATCH: usize = 1_000;

/// Code points in `text`: what every limit and every "chars" in a summary counts.
pub fn char_count(text: &str) -> usize {
    text.chars().count()
}

/// Fails unless `items` has between 1 and [`MAX_BATCH`] entries.
pub fn require_batch<T>(items: &[T], field: &str) -> Result<(), WorkspaceError> {
    if items.is_empty() {
        return Err(WorkspaceError::invalid(format!(
            "`{field}` is empty: pass at least one item"
        )));
    }
    if items.len() > MAX_BATCH {
        return Err(WorkspaceError::invalid(format!(
            "`{field}` has {} items; send at most {MAX_BATCH} per call",
            items.len()
        )));
    }
    Ok(())
}

/// The trimmed text; fails when it is blank or longer than `max` code points.
pub fn require_text<'a>(text: &'a str, field: &str, max: usize) -> Result<&'a str, WorkspaceError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(WorkspaceError::invalid(format!(
            "`{field}` must not be empty"
        )));
    }
    check_length(trimmed, field, max)?;
    Ok(trimmed)
}

/// The trimmed text, or `None` when it is blank; fails when longer than `max` code points.
pub fn optional_text(
    text: Option<&str>,
    field: &str,
    max: usize,
) -> Result<Option<String>, WorkspaceError> {
    match text.map(str::trim).filter(|t| !t.is_empty()) {
        Some(text) => {
            check_length(text, field, max)?;
            Ok(Some(text.to_string()))
        }
        None => Ok(None),
    }
}

/// Fails when `text` is longer than `max` code points, or holds a NUL character (which no
/// engine stores the same way: PostgreSQL refuses it in text, SQLite keeps it).
pub fn check_length(text: &str, field: &str, max: usize) -> Result<(), WorkspaceError> {
    check_no_nul(text, field)?;
    let chars = char_count(text);
    if chars > max {
        return Err(WorkspaceError::invalid(format!(
            "`{field}` is {chars} characters long; the limit is {max}"
        )));
    }
    Ok(())
}

/// Fails when `text` holds a NUL character (U+0000).
pub fn check_no_nul(text: &str, field: &str) -> Result<(), WorkspaceError> {
    if text.contains('\0') {
        return Err(nul_in(field));
    }
    Ok(())
}

/// The error for a NUL character in `field`.
pub fn nul_in(field: &str) -> WorkspaceError {
    WorkspaceError::invalid(format!(
        "`{field}` contains a NUL character (U+0000), which cannot be stored; remove it"
    ))
}

/// The path (`steps[0].text`, `title`, or `.` for the value itself) of the first string in a
/// JSON value that holds a NUL character, keys included.
pub fn find_nul(value: &serde_json::Value) -> Option<String> {
    let mut path = String::new();
    walk_for_nul(value, &mut path).then(|| {
        if path.is_empty() {
            ".".to_string()
        } else {
            path
        }
    })
}

/// [`find_nul`] over the fields of a JSON object.
pub fn find_nul_in_object(map: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    map.iter().find_map(|(key, value)| {
        let mut path = key.clone();
        (key.contains('\0') || walk_for_nul(value, &mut path)).then_some(path)
    })
}

fn walk_for_nul(value: &serde_json::Value, path: &mut String) -> bool {
    match value {
        serde_json::Value::String(text) => text.contains('\0'),
        serde_json::Value::Array(items) => items.iter().enumerate().any(|(i, item)| {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            let found = walk_for_nul(item, path);
            if !found {
                path.truncate(len);
            }
            found
        }),
        serde_json::Value::Object(map) => map.iter().any(|(key, item)| {
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(key);
            let found = key.contains('\0') || walk_for_nul(item, path);
            if !found {
                path.truncate(len);
            }
            found
        }),
        _ => false,
    }
}

/// `text` with every NUL character replaced. The one NUL rule: what people and tools send is
/// refused ([`check_no_nul`], [`find_nul`] with [`nul_in`]'s text); what a model wrote is kept
/// as a record, scrubbed by the workspace as it records it (a turn's answer and error, a tool
/// call's name, arguments and result, a streamed token), never by an adapter.
pub fn scrub_nul(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') {
        std::borrow::Cow::Owned(text.replace('\0', "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// `value` with every NUL character in its strings and keys replaced, as [`scrub_nul`] does;
/// borrowed when it holds none.
pub fn scrub_nul_value(value: &serde_json::Value) -> std::borrow::Cow<'_, serde_json::Value> {
    if find_nul(value).is_some() {
        std::borrow::Cow::Owned(scrubbed(value.clone()))
    } else {
        std::borrow::Cow::Borrowed(value)
    }
}

fn scrubbed(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(text) => Value::String(scrub_nul(&text).into_owned()),
        Value::Array(items) => Value::Array(items.into_iter().map(scrubbed).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, item)| (scrub_nul(&key).into_owned(), scrubbed(item)))
                .collect(),
        ),
        other => other,
    }
}

/// `text` on one line: every run of whitespace, line breaks included, becomes one space.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// 1-based indices sorted into those that name an item and those that do not.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Resolved {
    /// 0-based positions of the valid targets, in the order first given, without repeats.
    pub positions: Vec<usize>,
    /// The indices that name nothing, as given.
    pub out_of_range: Vec<i64>,
}

/// Resolves every index against a list of `len` items, all up front, so that targets named in
/// one call all refer to the list as it was before the call changed anything.
pub fn resolve_indices(indices: impl IntoIterator<Item = i64>, len: usize) -> Resolved {
    let mut resolved = Resolved::default();
    for index in indices {
        match usize::try_from(index) {
            Ok(i) if i >= 1 && i <= len => {
                if !resolved.positions.contains(&(i - 1)) {
                    resolved.positions.push(i - 1);
                }
            }
            _ => {
                if !resolved.out_of_range.contains(&index) {
                    resolved.out_of_range.push(index);
                }
            }
        }
    }
    resolved
}

/// The 0-based position a 1-based `index` names in a list of `len`, if any.
pub fn position_of(index: i64, len: usize) -> Option<usize> {
    usize::try_from(index)
        .ok()
        .filter(|i| *i >= 1 && *i <= len)
        .map(|i| i - 1)
}

/// "1 step", "3 steps".
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A count from the database as a `usize` (negative counts cannot happen; they read as 0).
pub(crate) fn count(n: i64) -> usize {
    usize::try_from(n).unwrap_or(0)
}

/// A position as the database stores it.
pub(crate) fn as_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_up_front_and_reports_the_rest() {
        let r = resolve_indices([2, -1, 2, 0, 9, i64::MAX, 1], 3);
        assert_eq!(r.positions, vec![1, 0]);
        assert_eq!(r.out_of_range, vec![-1, 0, 9, i64::MAX]);
        assert_eq!(position_of(3, 3), Some(2));
        assert_eq!(position_of(0, 3), None);
        assert_eq!(position_of(i64::MIN, 3), None);
    }

    #[test]
    fn counts_code_points_not_bytes() {
        assert_eq!(char_count("héllo 👋"), 7);
        assert!(check_length("👋👋", "x", 2).is_ok());
        assert!(check_length("👋👋👋", "x", 2).is_err());
    }

    #[test]
    fn batches_must_be_non_empty_and_bounded() {
        assert!(require_batch::<i32>(&[], "items").is_err());
        assert!(require_batch(&[1], "items").is_ok());
        assert!(require_batch(&vec![0; MAX_BATCH + 1], "items").is_err());
    }

    #[test]
    fn text_is_trimmed_before_it_is_measured() {
        let padded = format!("  {}  ", "a".repeat(5));
        assert_eq!(require_text(&padded, "t", 5).ok(), Some("aaaaa"));
        assert!(require_text("   ", "t", 5).is_err());
        assert_eq!(optional_text(Some("  "), "t", 5).ok(), Some(None));
        assert_eq!(one_line(" a \n\t b  c "), "a b c");
    }

    #[test]
    fn nul_characters_are_found_and_named() {
        assert!(require_text("a\0b", "title", 10).is_err());
        assert!(check_length("a\0", "content", 10).is_err());
        let value = serde_json::json!({"steps": [{"text": "ok"}, {"text": "x\0"}]});
        assert_eq!(find_nul(&value).as_deref(), Some("steps[1].text"));
        assert_eq!(find_nul(&serde_json::json!({"a": ["fine"]})), None);
        assert_eq!(find_nul(&serde_json::json!("\0")).as_deref(), Some("."));
        assert_eq!(scrub_nul("a\0b"), "a\u{FFFD}b");
        let dirty = serde_json::json!({"k\0": ["x\0", 1], "ok": "fine"});
        let clean = scrub_nul_value(&dirty);
        assert_eq!(find_nul(&clean), None);
        assert_eq!(clean["k\u{FFFD}"][0], serde_json::json!("x\u{FFFD}"));
        let fine = serde_json::json!({"a": "b"});
        assert!(matches!(
            scrub_nul_value(&fine),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
