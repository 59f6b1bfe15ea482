//! Slowing down password guessing: per account and per address, a few wrong passwords are
//! free, then each further attempt must wait twice as long as the last (up to
//! [`MAX_WAIT`]). A right password clears the account's and the address's count.
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
struct Record {
    failures: u32,
    blocked_until: Option<Instant>,
    last: Instant,
}

/// The failure counts of accounts and addresses.
#[derive(Debug, Default)]
pub struct Throttle {
    entries: Mutex<HashMap<String, Record>>,
}

impl Throttle {
    /// How long `keys` must still wait before another attempt; `None` when they may try now.
    pub fn wait(&self, keys: &[String]) -> Option<Duration> {
        let now = Instant::now();
        let entries = self.entries.lock().ok()?;
        keys.iter()
            .filter_map(|key| entries.get(key))
            .filter_map(|record| record.blocked_until)
            .filter(|until| *until > now)
            .map(|until| until - now)
            .max()
    }

    /// Records a wrong attempt for each of `keys`.
    pub fn failed(&self, keys: &[String]) {
        let now = Instant::now();
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        entries.retain(|_, record| now.duration_since(record.last) < FORGET_AFTER);
        for key in keys {
            let record = entries.entry(key.clone()).or_insert(Record {
                failures: 0,
                blocked_until: None,
                last: now,
            });
            record.failures += 1;
            record.last = now;
            if record.failures >= FREE_ATTEMPTS {
                let doublings = (record.failures - FREE_ATTEMPTS).min(20);
                let wait = FIRST_WAIT.saturating_mul(1 << doublings).min(MAX_WAIT);
                record.blocked_until = Some(now + wait);
            }
        }
    }

    /// Clears the counts of `keys` after a right password.
    pub fn succeeded(&self, keys: &[String]) {
        if let Ok(mut entries) = self.entries.lock() {
            for key in keys {
                entries.remove(key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_begin_after_the_free_attempts_and_double() {
        let throttle = Throttle::default();
        let keys = vec!["account:ada".to_string()];
        for _ in 0..FREE_ATTEMPTS - 1 {
            throttle.failed(&keys);
            assert!(throttle.wait(&keys).is_none());
        }
        throttle.failed(&keys);
        let first = throttle.wait(&keys).unwrap_or_default();
        assert!(first > Duration::from_millis(500) && first <= FIRST_WAIT);
        throttle.failed(&keys);
        assert!(throttle.wait(&keys).unwrap_or_default() > FIRST_WAIT);
        assert!(throttle.wait(&["address:1.2.3.4".to_string()]).is_none());
        throttle.succeeded(&keys);
        assert!(throttle.wait(&keys).is_none());
    }
}
