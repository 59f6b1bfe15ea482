//! People: accounts, sign-in, who may see and change which thread.
//!
//! haico is one person's tool until accounts exist or `HAICO_API_TOKEN` is set: then every
//! request acts as a [`Principal`] — the administrator (the token, or an admin account), a
//! person signed in (a personal token or a session cookie), or nobody. A thread belongs to the
//! person who made it and may be shared with others as `viewer` (reads everything) or `editor`
//! (also chats, calls tools and edits); owners and administrators manage who it is shared
//! with. For anyone else a thread does not exist. [`People`] holds these rules; the HTTP layer
//! applies them per route (`http/access.rs`), MCP per call.

mod secrets;
mod throttle;

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use chrono::{DateTime, Utc};

pub use secrets::{TOKEN_PREFIX, digest};
pub use throttle::{AttemptKeys, FREE_ATTEMPTS, Throttle};

use crate::{
    ThreadId,
    store::{Database, Member, StoreError, Thread, User},
};

/// How long a sign-in session lasts unless signed out.
pub const SESSION_DAYS: i64 = 14;
/// The shortest password accepted.
pub const MIN_PASSWORD_CHARS: usize = 8;
/// The longest password accepted (Argon2 takes any length; this bounds the work).
pub const MAX_PASSWORD_CHARS: usize = 1_024;

/// Why a people operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum PeopleError {
    /// The input breaks a rule; the text says which.
    #[error("{0}")]
    Invalid(String),
    /// No such account (or thread, for someone who may not see it).
    #[error("{0}")]
    NotFound(String),
    /// An account with that name exists.
    #[error("{0}")]
    Exists(String),
    /// The name and password do not match.
    #[error("the name or the password is wrong")]
    WrongPassword,
    /// Too many wrong passwords: wait this long.
    #[error("too many wrong passwords; try again in {} s", .0.as_secs().max(1))]
    SlowDown(Duration),
    /// Only an administrator may do this.
    #[error("{0}")]
    Forbidden(String),
    /// Something inside failed (no randomness, a hash that could not be made).
    #[error("{0}")]
    Internal(String),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Who a request acts as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// One-person mode: no accounts and no administrator token, so the server is its
    /// person's alone (open on its local address, as it always was).
    Local,
    /// The administrator's token (`HAICO_API_TOKEN`).
    AdminToken,
    /// A person with an account, by personal token or session.
    User(User),
    /// Nobody: accounts or a token exist, and this request brought neither.
    Anonymous,
}

impl Principal {
    /// The name changes are attributed to (`by`), when there is a person.
    pub fn name(&self) -> Option<&str> {
        match self {
            Principal::User(user) => Some(&user.name),
            _ => None,
        }
    }

    /// The person acting, for attribution and ownership: an account, or nobody in particular.
    pub fn actor(&self) -> Option<crate::workspace::Actor> {
        self.user().map(|user| crate::workspace::Actor {
            id: user.id,
            name: user.name.clone(),
        })
    }

    /// Whether this principal administers the server (sees and manages every thread, manages
    /// accounts).
    pub fn is_admin(&self) -> bool {
        match self {
            Principal::Local | Principal::AdminToken => true,
            Principal::User(user) => user.role == ADMIN,
            Principal::Anonymous => false,
        }
    }

    /// The account, when it is one.
    pub fn user(&self) -> Option<&User> {
        match self {
            Principal::User(user) => Some(user),
            _ => None,
        }
    }
}

/// What a principal may do with one thread, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// Nothing: the thread does not exist for them.
    None,
    /// Read everything of it.
    Viewer,
    /// Also chat, call tools, edit, restore, rename.
    Editor,
    /// Also delete it and share it (the owner, or an administrator).
    Owner,
}

const ADMIN: &str = "admin";
const MEMBER: &str = "member";

/// The rules about people, over one database. Cheap to clone.
#[derive(Debug, Clone)]
pub struct People {
    db: Database,
    throttle: Arc<Throttle>,
    /// Whether accounts are known to exist (once they do, they do; removing the last one
    /// does not reopen the server until it restarts).
    accounts: Arc<AtomicBool>,
    /// When the database was last asked whether accounts exist, while none did.
    last_check: Arc<Mutex<Option<Instant>>>,
}

/// How long a server without accounts trusts its last look before asking the database again
/// (accounts made by `haico user add`, or by another replica, take effect within this).
const RECHECK: Duration = Duration::from_secs(1);

impl People {
    /// The people of `db`.
    pub fn new(db: Database) -> Self {
        Self {
            db,
            throttle: Arc::new(Throttle::default()),
            accounts: Arc::new(AtomicBool::new(false)),
            last_check: Arc::new(Mutex::new(None)),
        }
    }

    /// Whether accounts exist: then every request must say who it is, and the web UI offers a
    /// sign-in form. Cheap: asks the database at most once a second while there are none.
    pub async fn accounts_exist(&self) -> Result<bool, PeopleError> {
        if self.accounts.load(Ordering::Relaxed) {
            return Ok(true);
        }
        {
            let Ok(mut last) = self.last_check.lock() else {
                return Ok(false);
            };
            if last.is_some_and(|at| at.elapsed() < RECHECK) {
                return Ok(false);
            }
            *last = Some(Instant::now());
        }
        let mut repo = self.db.begin_read().await?;
        let any = repo.any_user().await;
        let _ = repo.rollback().await;
        let any = any?;
        if any {
            self.accounts.store(true, Ordering::Relaxed);
        }
        Ok(any)
    }

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
                    .users()
                    .await?
                    .iter()
                    .filter(|u| u.role == ADMIN)
                    .count()
                    == 1;
                if first {
                    repo.adopt_ownerless_threads(user.id).await?;
                }
            }
            Ok::<User, PeopleError>(user)
        }
        .await;
        match made {
            Ok(user) => {
                repo.commit().await?;
                self.accounts.store(true, Ordering::Relaxed);
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
        let mut repo = self.db.begin_read().await?;
        let users = repo.users().await;
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
                match repo.remove_user(&name).await? {
                    true => Ok(()),
                    false => Err(no_account(&name)),
                }
            })
        })
        .await
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
                    repo.set_token(&name, &digest)
                        .await?
                        .ok_or_else(|| no_account(&name))
                })
            })
            .await?;
        Ok((user, token))
    }

    /// The account named `name`.
    pub async fn user_named(&self, name: &str) -> Result<Option<User>, PeopleError> {
        let mut repo = self.db.begin_read().await?;
        let user = repo.user_named(name).await;
        let _ = repo.rollback().await;
        Ok(user?)
    }

    /// The account that owns `thread`, if it exists and has an owner.
    pub async fn owner_of(&self, thread: &ThreadId) -> Result<Option<User>, PeopleError> {
        let mut repo = self.db.begin_read().await?;
        let owner = async {
            match repo
                .get_thread(thread.as_str())
                .await?
                .and_then(|t| t.owner)
            {
                Some(name) => repo.user_named(&name).await,
                None => Ok(None),
            }
        }
        .await;
        let _ = repo.rollback().await;
        Ok(owner?)
    }

    /// The account a personal token belongs to.
    pub async fn user_by_token(&self, token: &str) -> Result<Option<User>, PeopleError> {
        if !token.starts_with(TOKEN_PREFIX) {
            return Ok(None);
        }
        let mut repo = self.db.begin_read().await?;
        let user = repo.user_by_token(&digest(token)).await;
        let _ = repo.rollback().await;
        Ok(user?)
    }

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
        let mut repo = self.db.begin_read().await?;
        let found = repo.user_for_sign_in(name).await;
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
                repo.prune_sessions().await?;
                Ok(repo
                    .create_session(&session_digest, user_id, expires)
                    .await?)
            })
        })
        .await?;
        Ok((user, key, expires))
    }

    /// The person a session key belongs to, while it is neither expired nor ended.
    pub async fn session_user(&self, key: &str) -> Result<Option<User>, PeopleError> {
        let mut repo = self.db.begin_read().await?;
        let user = repo.session_user(&digest(key)).await;
        let _ = repo.rollback().await;
        Ok(user?)
    }

    /// Ends a session on the server (the cookie stops working even if kept).
    pub async fn sign_out(&self, key: &str) -> Result<(), PeopleError> {
        let session_digest = digest(key);
        self.write(|repo| Box::pin(async move { Ok(repo.revoke_session(&session_digest).await?) }))
            .await
    }

    /// What `principal` may do with `thread` (`Access::None` also when it does not exist).
    pub async fn access(
        &self,
        principal: &Principal,
        thread: &ThreadId,
    ) -> Result<Access, PeopleError> {
        Ok(self
            .thread_access(principal, thread)
            .await?
            .unwrap_or(Access::None))
    }

    /// What `principal` may do with `thread`; `None` when the thread does not exist at all
    /// (which only the caller that may create it needs to tell apart).
    pub async fn thread_access(
        &self,
        principal: &Principal,
        thread: &ThreadId,
    ) -> Result<Option<Access>, PeopleError> {
        let mut repo = self.db.begin_read().await?;
        let result = match principal {
            Principal::Anonymous => Ok(Some(Access::None)),
            Principal::Local | Principal::AdminToken => repo
                .get_thread(thread.as_str())
                .await
                .map(|found| found.map(|_| Access::Owner)),
            Principal::User(user) => {
                repo.thread_access(thread.as_str(), user.id)
                    .await
                    .map(|found| {
                        found.map(|(owner, role)| match (owner, role.as_deref()) {
                            _ if user.role == ADMIN => Access::Owner,
                            (Some(owner), _) if owner == user.id => Access::Owner,
                            (_, Some("editor")) => Access::Editor,
                            (_, Some("viewer")) => Access::Viewer,
                            _ => Access::None,
                        })
                    })
            }
        };
        let _ = repo.rollback().await;
        Ok(result?)
    }

    /// The threads `principal` may see, out of `threads`, each saying what a signed-in
    /// person may do with it (`access`).
    pub async fn visible(
        &self,
        principal: &Principal,
        threads: Vec<Thread>,
    ) -> Result<Vec<Thread>, PeopleError> {
        let user = match principal {
            Principal::Anonymous => return Ok(Vec::new()),
            Principal::Local | Principal::AdminToken => return Ok(threads),
            Principal::User(user) => user,
        };
        if user.role == ADMIN {
            return Ok(threads
                .into_iter()
                .map(|thread| with_access(thread, Access::Owner))
                .collect());
        }
        let mut repo = self.db.begin_read().await?;
        let roles = repo.visible_threads(user.id).await;
        let _ = repo.rollback().await;
        let roles: std::collections::HashMap<String, String> = roles?.into_iter().collect();
        Ok(threads
            .into_iter()
            .filter_map(|mut thread| {
                let role = roles.get(&thread.id)?;
                thread.access = Some(role.clone());
                Some(thread)
            })
            .collect())
    }

    /// `thread` as `principal` sees it: with what they may do with it, when they are a person.
    pub async fn annotate(
        &self,
        principal: &Principal,
        thread: Thread,
    ) -> Result<Thread, PeopleError> {
        if principal.user().is_none() {
            return Ok(thread);
        }
        let id = ThreadId::parse(&thread.id).map_err(|err| {
            PeopleError::Internal(format!("a stored thread id is invalid: {err}"))
        })?;
        let access = self.access(principal, &id).await?;
        Ok(with_access(thread, access))
    }

    /// The thread's owner and members.
    pub async fn members(&self, thread: &ThreadId) -> Result<Vec<Member>, PeopleError> {
        let mut repo = self.db.begin_read().await?;
        let members = repo.members(thread.as_str()).await;
        let _ = repo.rollback().await;
        Ok(members?)
    }

    /// Shares a thread with the account `name` as `viewer` or `editor` (or changes its role).
    pub async fn share(
        &self,
        thread: &ThreadId,
        name: &str,
        role: &str,
    ) -> Result<Vec<Member>, PeopleError> {
        checked_name(name)?;
        if role != "viewer" && role != "editor" {
            return Err(PeopleError::Invalid(format!(
                "`role` is {role:?}: share as \"viewer\" (reads everything) or \"editor\" (also edits)"
            )));
        }
        let id = thread.to_string();
        let (name, role) = (name.to_string(), role.to_string());
        self.write(|repo| {
            Box::pin(async move {
                let user = repo
                    .user_named(&name)
                    .await?
                    .ok_or_else(|| no_account(&name))?;
                if let Some((Some(owner), _)) = repo.thread_access(&id, user.id).await?
                    && owner == user.id
                {
                    return Err(PeopleError::Invalid(format!(
                        "`{name}` owns this thread already"
                    )));
                }
                repo.set_member(&id, user.id, &role).await?;
                Ok(())
            })
        })
        .await?;
        self.members(thread).await
    }

    /// Stops sharing a thread with the account `name`.
    pub async fn unshare(&self, thread: &ThreadId, name: &str) -> Result<Vec<Member>, PeopleError> {
        checked_name(name)?;
        let id = thread.to_string();
        let name = name.to_string();
        self.write(|repo| {
            Box::pin(async move {
                let user = repo
                    .user_named(&name)
                    .await?
                    .ok_or_else(|| no_account(&name))?;
                match repo.remove_member(&id, user.id).await? {
                    true => Ok(()),
                    false => Err(PeopleError::NotFound(format!(
                        "the thread is not shared with `{name}`"
                    ))),
                }
            })
        })
        .await?;
        self.members(thread).await
    }

    /// Runs `change` in a write transaction, committed when it succeeds.
    async fn write<T>(
        &self,
        change: impl for<'a> FnOnce(
            &'a mut crate::store::WorkspaceRepository,
        ) -> futures::future::BoxFuture<'a, Result<T, PeopleError>>,
    ) -> Result<T, PeopleError> {
        let mut repo = self.db.begin_write().await?;
        match change(&mut repo).await {
            Ok(value) => {
                repo.commit().await?;
                Ok(value)
            }
            Err(err) => {
                let _ = repo.rollback().await;
                Err(err)
            }
        }
    }
}

/// `thread` saying that the caller may do `access` with it.
fn with_access(mut thread: Thread, access: Access) -> Thread {
    thread.access = match access {
        Access::Owner => Some("owner".to_string()),
        Access::Editor => Some("editor".to_string()),
        Access::Viewer => Some("viewer".to_string()),
        Access::None => None,
    };
    thread
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

fn checked_password(password: &str) -> Result<&str, PeopleError> {
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

async fn hash_off_thread(password: String) -> Result<String, PeopleError> {
    tokio::task::spawn_blocking(move || secrets::hash_password(&password))
        .await
        .map_err(|err| PeopleError::Internal(format!("hashing the password failed: {err}")))?
}

fn no_account(name: &str) -> PeopleError {
    PeopleError::NotFound(format!("no account named `{name}`"))
}
