//! Accounts: creating, listing and removing people, their personal tokens, and the rules
//! for names and passwords.

use std::sync::atomic::Ordering;

use crate::people::{
    secrets::{self, TOKEN_PREFIX, digest},
    service::*,
};
use haico_store::{StoreError, User};

impl People {
    /// Makes an account: `admin` or not, with a password or token-only. Returns it with its
    /// personal token (shown once). The first administrator becomes the owner of every thread
    /// made before accounts existed.
    pub async fn create_user(
        &self,
        name: &str,
        admin: bool,
        password: Option<&str>,
    ) -> Result<(User, String), PeopleError> {
        let name = checked_name(name)?;
        let password_hash = match password {
            Some(password) => {
                let password = checked_password(password)?.to_string();
                Some(hash_off_thread(password).await?)
            }
            None => None,
        };
        let token = secrets::new_token()?;
        let mut repo = self.db.begin_write().await?;
        let made = async {
            let role = if admin { ADMIN } else { MEMBER };
            let user = repo
                .people()
                .create_user(name, role, password_hash.as_deref(), &digest(&token))
                .await
                .map_err(|err| match err {
                    StoreError::AlreadyExists(_) => {
                        PeopleError::Exists(format!("an account named `{name}` exists"))
                    }
                    other => other.into(),
                })?;
            if admin {
                let first = repo
                    .people()
                    .users()
                    .await?
                    .iter()
                    .filter(|u| u.role == ADMIN)
                    .count()
                    == 1;
                if first {
                    repo.people().adopt_ownerless_threads(user.id).await?;
                }
            }
            Ok::<User, PeopleError>(user)
        }
        .await;
        match made {
            Ok(user) => {
                repo.commit().await?;
                self.accounts.store(true, Ordering::Relaxed);
                // The first administrator adopts the threads nobody owned.
                self.changed();
                Ok((user, token))
            }
            Err(err) => {
                let _ = repo.rollback().await;
                Err(err)
            }
        }
    }

    /// Every account.
    pub async fn users(&self) -> Result<Vec<User>, PeopleError> {
        let mut repo = self.db.autocommit_read().await?;
        let users = repo.people().users().await;
        let _ = repo.rollback().await;
        Ok(users?)
    }

    /// Removes an account; its sessions end, the threads it owned lose their owner (an
    /// administrator still sees them).
    pub async fn remove_user(&self, name: &str) -> Result<(), PeopleError> {
        checked_name(name)?;
        let name = name.to_string();
        self.write(|repo| {
            Box::pin(async move {
                match repo.people().remove_user(&name).await? {
                    true => Ok(()),
                    false => Err(no_account(&name)),
                }
            })
        })
        .await?;
        Ok(())
    }

    /// Gives an account a new personal token (the old one stops working); returns it, once.
    pub async fn reset_token(&self, name: &str) -> Result<(User, String), PeopleError> {
        checked_name(name)?;
        let token = secrets::new_token()?;
        let digest = digest(&token);
        let name = name.to_string();
        let user = self
            .write(|repo| {
                Box::pin(async move {
                    repo.people()
                        .set_token(&name, &digest)
                        .await?
                        .ok_or_else(|| no_account(&name))
                })
            })
            .await?;
        Ok((user, token))
    }

    /// The account named `name`.
    pub async fn user_named(&self, name: &str) -> Result<Option<User>, PeopleError> {
        let mut repo = self.db.autocommit_read().await?;
        let user = repo.people().user_named(name).await;
        let _ = repo.rollback().await;
        Ok(user?)
    }

    /// The account a personal token belongs to.
    pub async fn user_by_token(&self, token: &str) -> Result<Option<User>, PeopleError> {
        if !token.starts_with(TOKEN_PREFIX) {
            return Ok(None);
        }
        let digest = digest(token);
        let remembered = self.remembered.get();
        if let Some(user) = remembered.and_then(|kept| kept.token(&digest)) {
            return Ok(Some(user));
        }
        let began = remembered.map(|kept| kept.read_begins());
        let mut repo = self.db.autocommit_read().await?;
        let user = repo.people().user_by_token(&digest).await;
        let _ = repo.rollback().await;
        let user = user?;
        if let (Some(kept), Some(began), Some(user)) = (remembered, began, &user) {
            kept.keep_token(began, &digest, user);
        }
        Ok(user)
    }
}

/// An account name: 1 to 64 characters from A–Z, a–z, 0–9, `.`, `_` and `-` (it appears in
/// URLs: `…/members/{name}`).
pub fn checked_name(name: &str) -> Result<&str, PeopleError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(name)
    } else {
        Err(PeopleError::Invalid(format!(
            "`name` {name:?} is not a valid account name: use 1 to 64 characters from A-Z, a-z, \
             0-9, `.`, `_` and `-`"
        )))
    }
}

pub(super) fn checked_password(password: &str) -> Result<&str, PeopleError> {
    let chars = password.chars().count();
    if chars < MIN_PASSWORD_CHARS {
        return Err(PeopleError::Invalid(format!(
            "the password has {chars} characters; use at least {MIN_PASSWORD_CHARS}"
        )));
    }
    if chars > MAX_PASSWORD_CHARS {
        return Err(PeopleError::Invalid(format!(
            "the password has {chars} characters; use at most {MAX_PASSWORD_CHARS}"
        )));
    }
    Ok(password)
}

pub(super) async fn hash_off_thread(password: String) -> Result<String, PeopleError> {
    tokio::task::spawn_blocking(move || secrets::hash_password(&password))
        .await
        .map_err(|err| PeopleError::Internal(format!("hashing the password failed: {err}")))?
}

pub(super) fn no_account(name: &str) -> PeopleError {
    PeopleError::NotFound(format!("no account named `{name}`"))
}
