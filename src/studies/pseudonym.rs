//! Pseudonyms: `HMAC-SHA256(study secret, name ‖ value)`, hex, cut to 32 digits. Keyed by a
//! secret each study makes for itself and never returns, so the same participant id gives the
//! same pseudonym within one study (sessions can be joined across its files) and an unrelated
//! one in any other study (studies cannot be joined on it), and nobody without the secret can
//! test a guessed id against an export.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The pseudonym of `value`, a value of the field `name`, in the study whose secret is
/// `secret`. The name is part of the input, so an id and a parameter with the same text do
/// not share a pseudonym.
pub fn pseudonym(secret: &str, name: &str, value: &str) -> String {
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
        // HMAC takes keys of any length; this cannot happen.
        return String::new();
    };
    mac.update(name.as_bytes());
    // A separator no name contains, so ("ab", "c") and ("a", "bc") differ.
    mac.update(&[0x1f]);
    mac.update(value.as_bytes());
    let digest = mac.finalize().into_bytes();
    digest
        .iter()
        .take(16)
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_same_id_is_the_same_pseudonym_only_within_a_study() {
        let a = pseudonym("secret-a", "PROLIFIC_PID", "5f1c");
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(a, pseudonym("secret-a", "PROLIFIC_PID", "5f1c"));
        assert_ne!(a, pseudonym("secret-b", "PROLIFIC_PID", "5f1c"));
        assert_ne!(a, pseudonym("secret-a", "STUDY_ID", "5f1c"));
    }

    #[test]
    fn it_is_rfc_4231_hmac_sha256() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        let mut mac = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        let hex: String = mac
            .finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert!(hex.starts_with("5bdcc146bf60754e6a042426089575c7"));
    }
}
