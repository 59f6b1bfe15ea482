//! [`ReplicaId`]: the name a `haico serve` process goes by among the replicas on one database.

use std::{fmt, sync::Arc};

/// The longest replica id.
pub const MAX_REPLICA_ID_LEN: usize = 64;

/// A replica's id: who owns a turn, what logs and `/metrics` call this process. Set with
/// `HAICO_REPLICA_ID` (then a replica that restarts recognises its own interrupted turns and
/// ends them at once) or made up at start-up from the host name and a random suffix.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReplicaId(Arc<str>);

/// A replica id that is empty, too long or has characters other than letters, digits, `.`,
/// `_` and `-`.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "HAICO_REPLICA_ID `{0}` is not a valid replica id: use 1 to 64 letters, digits, `.`, `_` or \
     `-` (e.g. the pod or host name)"
)]
pub struct InvalidReplicaId(String);

impl ReplicaId {
    /// `raw` as a replica id, if it is one.
    pub fn parse(raw: &str) -> Result<Self, InvalidReplicaId> {
        let valid = !raw.is_empty()
            && raw.len() <= MAX_REPLICA_ID_LEN
            && raw
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if valid {
            Ok(Self(Arc::from(raw)))
        } else {
            Err(InvalidReplicaId(raw.chars().take(80).collect()))
        }
    }

    /// A fresh id: this host's name and eight random hex digits, so two processes on one
    /// host differ and a person can still tell where each runs.
    pub fn generate() -> Self {
        let host: String = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap_or_default()
            .trim()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
            .take(MAX_REPLICA_ID_LEN - 9)
            .collect();
        let host = if host.is_empty() {
            "haico".to_string()
        } else {
            host
        };
        let suffix = &uuid::Uuid::new_v4().simple().to_string()[..8];
        Self(Arc::from(format!("{host}-{suffix}")))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ReplicaId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_refuses_the_rest() {
        assert_eq!(
            ReplicaId::parse("web-1.pod_a").unwrap().as_str(),
            "web-1.pod_a"
        );
        for bad in ["", "a b", "ä", &"x".repeat(65), "a/b"] {
            assert!(ReplicaId::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn generated_ids_are_valid_and_differ() {
        let a = ReplicaId::generate();
        let b = ReplicaId::generate();
        assert_ne!(a, b);
        assert!(ReplicaId::parse(a.as_str()).is_ok(), "{a}");
    }
}
