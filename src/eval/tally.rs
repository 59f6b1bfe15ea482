//! Pass counts of checks: all of them, and task checks and guards apart, since an agent that
//! only chats passes the guards and the overall count alone would hide that.

use serde::{Deserialize, Serialize};

use super::checks::{CheckKind, CheckOutcome};

/// How many checks passed of how many.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Checks that passed.
    pub passed: usize,
    /// Checks judged.
    pub total: usize,
}

impl Tally {
    /// `passed / total`, 0 when nothing was judged.
    pub fn rate(self) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let as_f64 = |n: usize| u32::try_from(n).map(f64::from).unwrap_or(f64::MAX);
        as_f64(self.passed) / as_f64(self.total)
    }

    /// `7/9`.
    pub fn fraction(self) -> String {
        format!("{}/{}", self.passed, self.total)
    }

    /// `7/9 (78 %)`.
    pub fn with_share(self) -> String {
        format!("{} ({})", self.fraction(), percent(self.rate()))
    }

    fn add(&mut self, passed: bool) {
        self.total += 1;
        if passed {
            self.passed += 1;
        }
    }

    fn plus(self, other: Tally) -> Tally {
        Tally {
            passed: self.passed + other.passed,
            total: self.total + other.total,
        }
    }
}

/// Pass counts of task checks, guards and all checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Task checks: those that need the agent to act.
    pub task: Tally,
    /// Guards: those that hold when nothing is done.
    pub guard: Tally,
    /// Every check.
    pub all: Tally,
}

impl Counts {
    /// The counts of `outcomes`.
    pub fn of(outcomes: &[CheckOutcome]) -> Counts {
        let mut counts = Counts::default();
        for outcome in outcomes {
            match outcome.kind {
                CheckKind::Task => counts.task.add(outcome.passed),
                CheckKind::Guard => counts.guard.add(outcome.passed),
            }
            counts.all.add(outcome.passed);
        }
        counts
    }

    /// Several counts added up.
    pub fn sum<'a>(parts: impl IntoIterator<Item = &'a Counts>) -> Counts {
        parts
            .into_iter()
            .fold(Counts::default(), |total, part| Counts {
                task: total.task.plus(part.task),
                guard: total.guard.plus(part.guard),
                all: total.all.plus(part.all),
            })
    }
}

/// A share as a whole percentage, `65 %`.
pub fn percent(share: f64) -> String {
    format!("{:.0} %", share * 100.0)
}

/// How many percentage points `rate` is above `baseline`, signed: `+28 points`.
pub fn points(rate: f64, baseline: f64) -> String {
    let points = ((rate - baseline) * 100.0).round();
    if points.abs() < 0.5 {
        "+0 points".to_string()
    } else if points > 0.0 {
        format!("+{points:.0} points")
    } else {
        format!("{points:.0} points")
    }
}
