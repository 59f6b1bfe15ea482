//! Thread identifiers: short strings that are safe in URLs, file names and SQL.

use std::{fmt, sync::Arc};

use serde::{Deserialize, Serialize};

/// The longest thread id accepted.
pub const MAX_THREAD_ID_LEN: usize = 64;

/// A validated thread id (`[A-Za-z0-9_-]{1,64}`). Cheap to clone, because every tool collection
/// of a thread holds one.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ThreadId(Arc<str>);

/// A string that is not a valid thread id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid thread id {0:?}: use 1 to 64 characters from A-Z, a-z, 0-9, `_` and `-`")]
pub struct InvalidThreadId(pub String);

impl ThreadId {
    /// Checks `raw` against the id alphabet and length.
    pub fn parse(raw: &str) -> Result<Self, InvalidThreadId> {
        let valid = !raw.is_empty()
            && raw.len() <= MAX_THREAD_ID_LEN
            && raw
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if valid {
            Ok(Self(Arc::from(raw)))
        } else {
            Err(InvalidThreadId(raw.chars().take(80).collect()))
        }
    }

    /// A fresh server-made id (a UUID v4).
    pub fn generate() -> Self {
        Self(Arc::from(uuid::Uuid::new_v4().to_string()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ThreadId {
    type Error = InvalidThreadId;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<ThreadId> for String {
    fn from(value: ThreadId) -> Self {
        value.0.to_string()
    }
}

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ThreadId({})", self.0)
    }
}

impl AsRef<str> for ThreadId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_alphabet_and_rejects_the_rest() {
        assert!(ThreadId::parse("abc-DEF_123").is_ok());
        assert!(ThreadId::parse(&"a".repeat(64)).is_ok());
        assert!(ThreadId::parse(&"a".repeat(65)).is_err());
        assert!(ThreadId::parse("").is_err());
        assert!(ThreadId::parse("a b").is_err());
        assert!(ThreadId::parse("../etc").is_err());
        assert!(ThreadId::parse("é").is_err());
    }
}
