//! The administrator's token (`HAICO_API_TOKEN`, `--api-token`).
//!
//! Whoever presents it as `Authorization: Bearer <token>` acts as the administrator: sees and
//! manages every thread and every account (see [`super::identify`] for how a request says who it
//! is, and what each route allows). Only the token's SHA-256 digest is kept, and a presented
//! token is compared by digest in constant time, so neither the comparison's timing nor its
//! length reveals the token.

use std::{fmt, str::FromStr};

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The API token the server requires. Holds only the token's SHA-256 digest, and prints as
/// `ApiToken(<redacted>)`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiToken {
    digest: [u8; 32],
}

/// Why a configured token was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidApiToken {
    /// The token is empty.
    #[error("the API token is empty: unset HAICO_API_TOKEN to run without one")]
    Empty,
    /// The token holds a character an `Authorization` header cannot carry as is.
    #[error(
        "the API token may only hold visible ASCII characters (no spaces or control characters)"
    )]
    InvalidCharacter,
}

impl ApiToken {
    /// Accepts a token of visible ASCII characters (`!` to `~`), so it can be sent in a header.
    pub fn new(token: &str) -> Result<Self, InvalidApiToken> {
        if token.is_empty() {
            return Err(InvalidApiToken::Empty);
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(InvalidApiToken::InvalidCharacter);
        }
        Ok(Self {
            digest: Sha256::digest(token.as_bytes()).into(),
        })
    }

    /// Whether `presented` is the token, compared in constant time.
    pub fn matches(&self, presented: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        digest.ct_eq(&self.digest).into()
    }
}

impl FromStr for ApiToken {
    type Err = InvalidApiToken;

    fn from_str(token: &str) -> Result<Self, Self::Err> {
        Self::new(token)
    }
}

impl fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiToken(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_match_only_themselves() {
        let token = ApiToken::new("s3cret-token").unwrap_or_else(|_| unreachable!());
        assert!(token.matches("s3cret-token"));
        assert!(!token.matches("s3cret-toke"));
        assert!(!token.matches("s3cret-token2"));
        assert!(!token.matches(""));
        assert_eq!(format!("{token:?}"), "ApiToken(<redacted>)");
    }

    #[test]
    fn unusable_tokens_are_refused() {
        assert_eq!(ApiToken::new(""), Err(InvalidApiToken::Empty));
        assert_eq!(
            ApiToken::new("two words"),
            Err(InvalidApiToken::InvalidCharacter)
        );
        assert_eq!(
            ApiToken::new("tab\t"),
            Err(InvalidApiToken::InvalidCharacter)
        );
    }
}
