//! [`People`]: the rules about people over one database, and the words they share: who calls
//! ([`Principal`]), what they may do with a thread ([`Access`]), and why an operation was
//! refused ([`PeopleError`]).

use std::{
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use haico_store::{Database, StoreError, User};

use crate::people::{
    participant::Participant,
    remembered::{self, PeopleBell},
    throttle::Throttle,
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
    /// A study's participant (issue 42), by its token or cookie: it reaches only its own
    /// thread, within its condition (`studies::access`), and is nobody anywhere else.
    Participant(Box<Participant>),
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
    pub fn actor(&self) -> Option<crate::workspace::actor::Actor> {
        if let Principal::Participant(participant) = self {
            // Attributed by its pseudonymous reference; the id is its study owner's (it owns
            // the participant's thread, and a participant makes no threads of its own).
            return Some(crate::workspace::actor::Actor {
                id: participant.owner_id.unwrap_or_default(),
                name: participant.attribution(),
            });
        }
        self.user().map(|user| crate::workspace::actor::Actor {
            id: user.id,
            name: user.name.clone(),
        })
    }

    /// The participant, when it is one.
    pub fn participant(&self) -> Option<&Participant> {
        match self {
            Principal::Participant(participant) => Some(participant),
            _ => None,
        }
    }

    /// Whether this principal administers the server (sees and manages every thread, manages
    /// accounts).
    pub fn is_admin(&self) -> bool {
        match self {
            Principal::Local | Principal::AdminToken => true,
            Principal::User(user) => user.role == ADMIN,
            Principal::Anonymous | Principal::Participant(_) => false,
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

pub(super) const ADMIN: &str = "admin";
pub(super) const MEMBER: &str = "member";

/// The rules about people, over one database. Cheap to clone.
#[derive(Debug, Clone)]
pub struct People {
    pub(super) db: Database,
    pub(super) throttle: Arc<Throttle>,
    /// Whether accounts are known to exist (once they do, they do; removing the last one
    /// does not reopen the server until it restarts).
    pub(super) accounts: Arc<AtomicBool>,
    /// When the database was last asked whether accounts exist, while none did.
    pub(super) last_check: Arc<Mutex<Option<Instant>>>,
    /// Rung when this process changes sharing or accounts: open streams ask again at once
    /// whether their caller may still read their thread ([`People::access_lost`]).
    pub(super) sharing: Arc<tokio::sync::Notify>,
    /// Who tokens are and who may do what with which thread, once [`People::remember_with`]
    /// turned it on (`remembered.rs`).
    pub(super) remembered: Arc<OnceLock<remembered::Remembered>>,
}

/// How long a server without accounts trusts its last look before asking the database again
/// (accounts made by `haico user add`, or by another replica, take effect within this).
pub(super) const RECHECK: Duration = Duration::from_secs(1);

impl People {
    /// The people of `db`.
    pub fn new(db: Database) -> Self {
        Self {
            db,
            throttle: Arc::new(Throttle::default()),
            accounts: Arc::new(AtomicBool::new(false)),
            last_check: Arc::new(Mutex::new(None)),
            sharing: Arc::default(),
            remembered: Arc::default(),
        }
    }

    /// Remembers who tokens are and what people may do with threads between requests, for as
    /// long as `bell` hears other processes' changes (`remembered.rs`). Only on PostgreSQL,
    /// where each of those reads is a round trip; SQLite answers them on the caller's thread
    /// for less than remembering would save. Turned on once; later calls change nothing.
    pub fn remember_with(&self, bell: Arc<dyn PeopleBell>) {
        if self.db.postgres_pool().is_some() {
            let _ = self.remembered.set(remembered::Remembered::new(bell));
        }
    }

    /// Another process changed accounts or sharing: forget what was remembered, and have open
    /// streams ask again whether their caller may still read their thread.
    pub fn changed_elsewhere(&self) {
        if let Some(remembered) = self.remembered.get() {
            remembered.forget();
        }
        self.sharing.notify_waiters();
    }

    /// A thread was deleted, with its sharing: what was remembered about it goes, here and in
    /// the other processes (its id may be used again, by someone else).
    pub fn thread_deleted(&self) {
        self.changed();
    }

    /// A study's members changed: they read its participants' threads, so what was remembered
    /// about those goes, here and in the other processes, and open streams check again.
    pub fn study_members_changed(&self) {
        self.changed();
    }

    /// This process changed accounts or sharing: as [`Self::changed_elsewhere`], and the other
    /// processes are told.
    pub(super) fn changed(&self) {
        self.changed_elsewhere();
        if let Some(remembered) = self.remembered.get() {
            remembered.announce();
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
        let mut repo = self.db.autocommit_read().await?;
        let any = repo.people().any_user().await;
        let _ = repo.rollback().await;
        let any = any?;
        if any {
            self.accounts.store(true, Ordering::Relaxed);
        }
        Ok(any)
    }

    /// Runs `change` in a write transaction, committed when it succeeds; then every answer
    /// remembered is forgotten, here and in the other processes, and open streams check again.
    pub(super) async fn write<T>(
        &self,
        change: impl for<'a> FnOnce(
            &'a mut haico_store::Transaction,
        ) -> futures::future::BoxFuture<'a, Result<T, PeopleError>>,
    ) -> Result<T, PeopleError> {
        let mut repo = self.db.begin_write().await?;
        match change(&mut repo).await {
            Ok(value) => {
                repo.commit().await?;
                self.changed();
                Ok(value)
            }
            Err(err) => {
                let _ = repo.rollback().await;
                Err(err)
            }
        }
    }
}
