//! The arithmetic of plan keys, apart from the SQL that stores them: where new steps' keys go,
//! what a renumber leaves, which positions a batch names. Pure functions, tested here.

/// The distance between neighbouring keys after a renumber, and between appended steps: wide
/// enough that 32 insertions into the same gap fit before a renumber is needed.
pub const KEY_GAP: i64 = 1 << 32;

/// No key is ever larger: past it the plan is renumbered instead, so arithmetic on keys never
/// overflows and `i64::MAX` can stand for "the end of the plan" in a range.
const MAX_KEY: i64 = i64::MAX / 4;

/// A run of steps by key, `[start, end)`; `end` is `None` for "to the end of the plan".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepRange {
    /// The key of the first step in the run.
    pub start: i64,
    /// The key of the first step after the run, if there is one.
    pub end: Option<i64>,
}

impl StepRange {
    /// Whether the step with `key` lies in the run.
    pub fn contains(&self, key: i64) -> bool {
        key >= self.start && self.end.is_none_or(|end| key < end)
    }
}

/// The first key and the stride for `count` new steps between the step keyed `previous` (none:
/// the plan's start) and the one keyed `before` (none: the end of the plan), or `None` when
/// the keys there leave no room and the plan must be renumbered.
pub(super) fn room(previous: Option<i64>, before: Option<i64>, count: i64) -> Option<(i64, i64)> {
    let low = previous.unwrap_or(0);
    match before {
        // At the end: one gap after the other, while the keys stay in range.
        None => KEY_GAP
            .checked_mul(count)
            .and_then(|span| low.checked_add(span))
            .filter(|last| *last <= MAX_KEY)
            .map(|_| (low + KEY_GAP, KEY_GAP)),
        // Between two steps: spread evenly over the gap, when each new key is distinct.
        Some(high) => {
            let stride = (high - low) / (count + 1);
            (stride >= 1).then_some((low + stride, stride))
        }
    }
}

/// The largest last key after which `count` steps can be appended one gap apart (what
/// [`room`] accepts at the end), or `None` when no plan has room for that many.
pub(super) fn last_key_with_room(count: i64) -> Option<i64> {
    KEY_GAP
        .checked_mul(count)
        .and_then(|span| MAX_KEY.checked_sub(span))
        .filter(|last| *last >= 0)
}

/// The first key and the stride of new steps going in at 0-based index `at` after a renumber
/// that left room for them there: the keys the renumber skipped.
pub(super) fn after_renumber(at: i64) -> (i64, i64) {
    ((at + 1) * KEY_GAP, KEY_GAP)
}

/// The positions a batch statement is given: distinct and not negative, as JSON for the
/// statement, sorted to pair with its rows, and how far into the plan the statement must rank.
pub(super) struct Targets {
    pub(super) json: String,
    pub(super) sorted: Vec<i64>,
    pub(super) limit: i64,
}

impl Targets {
    pub(super) fn new(positions: &[i64]) -> Self {
        let mut sorted: Vec<i64> = positions.iter().copied().filter(|p| *p >= 0).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let limit = sorted.last().map_or(0, |last| last.saturating_add(1));
        let json = format!(
            "[{}]",
            sorted
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        );
        Self {
            json,
            sorted,
            limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_steps_go_one_gap_apart_until_the_keys_run_out() {
        assert_eq!(room(None, None, 3), Some((KEY_GAP, KEY_GAP)));
        assert_eq!(
            room(Some(5 * KEY_GAP), None, 1),
            Some((6 * KEY_GAP, KEY_GAP))
        );
        // Past MAX_KEY (or an overflow), the plan must be renumbered.
        assert_eq!(room(Some(MAX_KEY - KEY_GAP + 1), None, 1), None);
        assert_eq!(room(Some(MAX_KEY), None, 1), None);
        assert_eq!(room(Some(0), None, i64::MAX), None);
    }

    #[test]
    fn inserted_steps_spread_over_the_gap_while_keys_stay_distinct() {
        // Three steps between 0 and 8: keys 2, 4, 6.
        assert_eq!(room(None, Some(8), 3), Some((2, 2)));
        assert_eq!(
            room(Some(KEY_GAP), Some(2 * KEY_GAP), 1),
            Some((KEY_GAP + KEY_GAP / 2, KEY_GAP / 2))
        );
        // Neighbours one apart leave no room.
        assert_eq!(room(Some(7), Some(8), 1), None);
        assert_eq!(room(Some(7), Some(9), 1), Some((8, 1)));
        // 32 halvings of a gap fit before it is used up.
        let (mut low, high) = (0, KEY_GAP);
        for _ in 0..31 {
            let (key, _) = room(Some(low), Some(high), 1).unwrap_or_default();
            assert!(key > low && key < high);
            low = key;
        }
    }

    #[test]
    fn a_renumber_leaves_the_skipped_keys_to_the_new_steps() {
        assert_eq!(after_renumber(0), (KEY_GAP, KEY_GAP));
        assert_eq!(after_renumber(4), (5 * KEY_GAP, KEY_GAP));
    }

    #[test]
    fn ranges_are_half_open() {
        let range = StepRange {
            start: 10,
            end: Some(20),
        };
        assert!(range.contains(10) && range.contains(19));
        assert!(!range.contains(9) && !range.contains(20));
        assert!(
            StepRange {
                start: 10,
                end: None
            }
            .contains(i64::MAX)
        );
    }

    #[test]
    fn batch_targets_are_distinct_sorted_and_not_negative() {
        let targets = Targets::new(&[3, -1, 0, 3, 7]);
        assert_eq!(targets.sorted, vec![0, 3, 7]);
        assert_eq!(targets.json, "[0,3,7]");
        assert_eq!(targets.limit, 8);
        let none = Targets::new(&[-2]);
        assert_eq!((none.json.as_str(), none.limit), ("[]", 0));
        assert_eq!(Targets::new(&[i64::MAX]).limit, i64::MAX);
    }
}
