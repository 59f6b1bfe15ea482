//! Checks shared by the tool domains: required text, batch sizes, and 1-based index
//! resolution against the list as it stood when the call started.

use super::output::ToolError;

/// The most items one batch call may carry.
pub const MAX_BATCH: usize = 1_000;

/// Code points in `text` (what every "chars" in a summary counts).
pub fn char_count(text: &str) -> usize {
    text.chars().count()
}

/// Fails unless `items` has between 1 and [`MAX_BATCH`] entries.
pub fn require_batch<T>(items: &[T], field: &str) -> Result<(), ToolError> {
    if items.is_empty() {
        return Err(ToolError::invalid(format!(
            "`{field}` is empty: pass at least one item"
        )));
    }
    if items.len() > MAX_BATCH {
        return Err(ToolError::invalid(format!(
            "`{field}` has {} items; send at most {MAX_BATCH} per call",
            items.len()
        )));
    }
    Ok(())
}

/// Returns the trimmed text, failing when it is blank or longer than `max` code points.
pub fn require_text<'a>(text: &'a str, field: &str, max: usize) -> Result<&'a str, ToolError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(ToolError::invalid(format!("`{field}` must not be empty")));
    }
    check_length(trimmed, field, max)?;
    Ok(trimmed)
}

/// Fails when `text` is longer than `max` code points.
pub fn check_length(text: &str, field: &str, max: usize) -> Result<(), ToolError> {
    let chars = char_count(text);
    if chars > max {
        return Err(ToolError::invalid(format!(
            "`{field}` is {chars} characters long; the limit is {max}"
        )));
    }
    Ok(())
}

/// 1-based indices sorted into those that name an item and those that do not.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Resolved {
    /// 0-based positions of the valid targets, in the order first given, without repeats.
    pub positions: Vec<usize>,
    /// The indices that name nothing, as given.
    pub out_of_range: Vec<i64>,
}

/// Resolves every index against a list of `len` items, all up front.
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

/// "out of range: 7, 9 (the plan has 3 steps)" — `noun` is e.g. `("the plan has", "step")`.
pub fn describe_out_of_range(out: &[i64], len: usize, owner: &str, noun: &str) -> String {
    let list: Vec<String> = out.iter().map(i64::to_string).collect();
    format!(
        "out of range: {} ({owner} {})",
        list.join(", "),
        plural(len, noun)
    )
}

/// "1 step", "3 steps".
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_up_front_and_reports_the_rest() {
        let r = resolve_indices([2, -1, 2, 0, 9, i64::MAX, 1], 3);
        assert_eq!(r.positions, vec![1, 0]);
        assert_eq!(r.out_of_range, vec![-1, 0, 9, i64::MAX]);
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
}
