//! Sign-in sessions: a password exchanged for a session key, checked and ended.

use chrono::{DateTime, Utc};

use crate::people::{
    secrets::{self, digest},
    service::*,
    throttle::AttemptKeys,
};
use haico_store::User;

impl People {
    /// Checks a name and password (slowed down after repeated wrong ones, per account and per
    /// `address`); opens a session and returns its key (the cookie) and when it expires.
    pub async fn sign_in(
        &self,
        name: &str,
        password: &str,
        address: &str,
    ) -> Result<(User, String, DateTime<Utc>), PeopleError> {
        let keys = AttemptKeys::new(name, address);
        self.throttle.begin(&keys).map_err(PeopleError::SlowDown)?;
        if password.chars().count() > MAX_PASSWORD_CHARS {
            return Err(PeopleError::WrongPassword);
        }
        let mut repo = self.db.autocommit_read().await?;
        let found = repo.people().user_for_sign_in(name).await;
        let _ = repo.rollback().await;
        let found = found?;
        // Unknown names and token-only accounts are checked against a decoy, so every wrong
        // sign-in takes as long.
        let hash = found
            .as_ref()
            .and_then(|(_, hash)| hash.clone())
            .unwrap_or_else(|| secrets::decoy_hash().to_string());
        let password = password.to_string();
        let matches =
            tokio::task::spawn_blocking(move || secrets::verify_password(&password, &hash))
                .await
                .map_err(|err| {
                    PeopleError::Internal(format!("checking the password failed: {err}"))
                })?;
        let user = match (found, matches) {
            (Some((user, Some(_))), true) => user,
            // The attempt stays counted as wrong (see `Throttle::begin`).
            _ => return Err(PeopleError::WrongPassword),
        };
        self.throttle.succeeded(&keys);
        let key = secrets::new_session_key()?;
        let expires = Utc::now() + chrono::Duration::days(SESSION_DAYS);
        let session_digest = digest(&key);
        let user_id = user.id;
        self.write(|repo| {
            Box::pin(async move {
                // Each sign-in also forgets the sessions that have ended.
                repo.people().prune_sessions().await?;
                Ok(repo
                    .people()
                    .create_session(&session_digest, user_id, expires)
                    .await?)
            })
        })
        .await?;
        Ok((user, key, expires))
    }

    /// The person a session key belongs to, while it is neither expired nor ended.
    pub async fn session_user(&self, key: &str) -> Result<Option<User>, PeopleError> {
        let mut repo = self.db.autocommit_read().await?;
        let user = repo.people().session_user(&digest(key)).await;
        let _ = repo.rollback().await;
        Ok(user?)
    }

    /// Ends a session on the server (the cookie stops working even if kept).
    pub async fn sign_out(&self, key: &str) -> Result<(), PeopleError> {
        let session_digest = digest(key);
        self.write(|repo| {
            Box::pin(async move { Ok(repo.people().revoke_session(&session_digest).await?) })
        })
        .await
    }
}
