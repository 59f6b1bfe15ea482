//! Secrets: personal tokens and session keys (random, shown once, kept as SHA-256 digests),
//! and passwords (kept as Argon2id hashes, checked off the async workers).

use argon2::{
    Argon2, PasswordHash, PasswordHasher, PasswordVerifier,
    password_hash::{SaltString, rand_core::OsRng},
};
use base64::Engine as _;
use sha2::{Digest, Sha256};

use crate::people::service::PeopleError;

/// What every personal token starts with, so a leaked one is easy to recognise in logs and
/// secret scanners.
pub const TOKEN_PREFIX: &str = "haico_";

/// A new random secret: 32 bytes from the operating system, URL-safe base64.
fn random_secret() -> Result<String, PeopleError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|err| PeopleError::Internal(format!("no randomness from the system: {err}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// A new personal token.
pub fn new_token() -> Result<String, PeopleError> {
    Ok(format!("{TOKEN_PREFIX}{}", random_secret()?))
}

/// A new session key (the cookie's value).
pub fn new_session_key() -> Result<String, PeopleError> {
    random_secret()
}

/// The digest a token or session key is stored and looked up by. A plain hash is enough: the
/// secrets are 256 random bits, so there is nothing to guess, and a lookup by digest takes the
/// same time whatever part of a wrong secret matched.
pub fn digest(secret: &str) -> String {
    let hash = Sha256::digest(secret.as_bytes());
    base64::engine::general_purpose::STANDARD_NO_PAD.encode(hash)
}

/// Hashes a password with Argon2id and a random salt; slow on purpose, so run it on the
/// blocking pool.
pub fn hash_password(password: &str) -> Result<String, PeopleError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|err| PeopleError::Internal(format!("could not hash the password: {err}")))
}

/// Whether `password` matches `hash` (constant time in the comparison; a stored hash that does
/// not parse matches nothing).
pub fn verify_password(password: &str, hash: &str) -> bool {
    match PasswordHash::new(hash) {
        Ok(parsed) => Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// A hash to check a password against when the account does not exist, so a sign-in takes as
/// long whether the name is known or not.
pub fn decoy_hash() -> &'static str {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DECOY.get_or_init(|| hash_password("no such account").unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_digests_stable() {
        let (a, b) = (
            new_token().unwrap_or_default(),
            new_token().unwrap_or_default(),
        );
        assert!(a.starts_with(TOKEN_PREFIX) && a.len() > 40);
        assert_ne!(a, b);
        assert_eq!(digest(&a), digest(&a));
        assert_ne!(digest(&a), digest(&b));
    }

    #[test]
    fn passwords_verify_only_themselves() {
        let hash = hash_password("correct horse").unwrap_or_default();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &hash));
        assert!(!verify_password("wrong horse", &hash));
        assert!(!verify_password("anything", "not a hash"));
    }
}
