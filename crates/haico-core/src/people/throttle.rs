//! Slowing down password guessing: per account and per address, a few wrong passwords are
//! free, then each further attempt must wait twice as long as the last (up to
//! [`MAX_WAIT`]).
//!
//! An attempt is counted as wrong when it *starts* ([`Throttle::begin`]) and forgiven when it
//! turns out right ([`Throttle::succeeded`]), so a burst of parallel guesses cannot all slip
//! through before the first failure is recorded. A right password clears the account's count
//! but only forgives its own attempt at the address: an attacker who owns one account cannot
//! sign in to it between rounds of guesses at other accounts to wipe the address's record.
//!
//! Kept in this process's memory: with several replicas, each slows down the attempts it
//! sees (an attacker spreading attempts over N replicas gets N times as many).

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

/// Wrong attempts allowed before waits begin.
pub const FREE_ATTEMPTS: u32 = 5;
/// The first wait.
const FIRST_WAIT: Duration = Duration::from_secs(1);
/// The longest wait.
pub const MAX_WAIT: Duration = Duration::from_secs(15 * 60);
/// Entries older than this are forgotten, so the map stays small.
const FORGET_AFTER: Duration = Duration::from_secs(60 * 60);

#[derive(Debug, Clone, Copy)]
struct Attempts {
    failures: u32,
    blocked_until: Option<Instant>,
    last: Instant,
}

impl Attempts {
    /// Sets the wait that `failures` earns, counted from `now`.
    fn settle(&mut self, now: Instant) {
        self.blocked_until = (self.failures >= FREE_ATTEMPTS).then(|| {
            let doublings = (self.failures - FREE_ATTEMPTS).min(20);
            now + FIRST_WAIT.saturating_mul(1 << doublings).min(MAX_WAIT)
        });
    }
}

/// Who a sign-in attempt counts against.
#[derive(Debug, Clone)]
pub struct AttemptKeys {
    /// The account named in the attempt.
    pub account: String,
    /// The address the attempt came from.
    pub address: String,
}

impl AttemptKeys {
    /// The keys of an attempt at `name` from `address`.
    pub fn new(name: &str, address: &str) -> Self {
        Self {
            account: format!("account:{name}"),
            address: format!("address:{address}"),
        }
    }
}

/// The failure counts of accounts and addresses.
#[derive(Debug, Default)]
pub struct Throttle {
    entries: Mutex<HashMap<String, Attempts>>,
}

impl Throttle {
    /// Starts an attempt: `Err(wait)` when the account or the address must still wait that
    /// long; otherwise the attempt is counted as wrong until [`Throttle::succeeded`] says
    /// otherwise.
    pub fn begin(&self, keys: &AttemptKeys) -> Result<(), Duration> {
        let now = Instant::now();
        // A poisoned lock means a panic elsewhere while holding it; refusing every sign-in
        // would lock everyone out, so the map is used as it was left.
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        entries.retain(|_, record| now.duration_since(record.last) < FORGET_AFTER);
        let wait = [&keys.account, &keys.address]
            .into_iter()
            .filter_map(|key| entries.get(key.as_str()))
            .filter_map(|record| record.blocked_until)
            .filter(|until| *until > now)
            .map(|until| until - now)
            .max();
        if let Some(wait) = wait {
            return Err(wait);
        }
        for key in [&keys.account, &keys.address] {
            let record = entries.entry(key.clone()).or_insert(Attempts {
                failures: 0,
                blocked_until: None,
                last: now,
            });
            record.failures += 1;
            record.last = now;
            record.settle(now);
        }
        Ok(())
    }

    /// The attempt begun with `keys` had the right password: the account starts afresh and
    /// the address is forgiven this one attempt.
    pub fn succeeded(&self, keys: &AttemptKeys) {
        let now = Instant::now();
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        entries.remove(&keys.account);
        // The attempt was let in, so any earlier wait had run out: the only wait left is the
        // one this attempt set up, which is forgiven with it. The earlier failures stay, so
        // the next wrong guess from there waits at once.
        if let Some(record) = entries.get_mut(&keys.address) {
            record.failures = record.failures.saturating_sub(1);
            record.blocked_until = None;
            record.last = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_begin_after_the_free_attempts_and_double() {
        let throttle = Throttle::default();
        let keys = AttemptKeys::new("ada", "1.2.3.4");
        for _ in 0..FREE_ATTEMPTS - 1 {
            assert!(throttle.begin(&keys).is_ok());
        }
        assert!(throttle.begin(&keys).is_ok());
        let first = throttle.begin(&keys).err().unwrap_or_default();
        assert!(first > Duration::from_millis(500) && first <= FIRST_WAIT);
        // Another account from another address is not held up.
        assert!(throttle.begin(&AttemptKeys::new("bob", "5.6.7.8")).is_ok());
        throttle.succeeded(&keys);
        // The account starts afresh, but the address keeps its four earlier failures.
        let again = AttemptKeys::new("ada", "9.9.9.9");
        assert!(throttle.begin(&again).is_ok());
    }

    #[test]
    fn parallel_guesses_are_counted_before_they_are_checked() {
        let throttle = Throttle::default();
        let keys = AttemptKeys::new("ada", "1.2.3.4");
        // Nothing has finished yet: only the free attempts may start.
        let started = (0..50).filter(|_| throttle.begin(&keys).is_ok()).count();
        assert_eq!(started, usize::try_from(FREE_ATTEMPTS).unwrap_or(0));
    }

    #[test]
    fn a_right_password_does_not_wipe_the_address() {
        let throttle = Throttle::default();
        // Four wrong guesses at other accounts from one address…
        for victim in ["b", "c", "d", "e"] {
            assert!(throttle.begin(&AttemptKeys::new(victim, "6.6.6.6")).is_ok());
        }
        // …then a right sign-in to the attacker's own account from the same address…
        let own = AttemptKeys::new("mallory", "6.6.6.6");
        assert!(throttle.begin(&own).is_ok());
        throttle.succeeded(&own);
        // …forgives only that attempt: the next guess is the fifth failure, the one after it
        // waits.
        assert!(throttle.begin(&AttemptKeys::new("f", "6.6.6.6")).is_ok());
        assert!(throttle.begin(&AttemptKeys::new("g", "6.6.6.6")).is_err());
    }
}
