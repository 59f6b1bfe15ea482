//! Who may do what with a thread: owners, members and their roles, the threads a caller sees.

use super::accounts::no_account;
use crate::people::{accounts::checked_name, service::*};
use haico_store::{Member, Thread, ThreadId, User};

impl People {
    /// The account that owns `thread`, if it exists and has an owner.
    pub async fn owner_of(&self, thread: &ThreadId) -> Result<Option<User>, PeopleError> {
        let mut repo = self.db.begin_read().await?;
        let owner = async {
            match repo
                .threads()
                .get_thread(thread)
                .await?
                .and_then(|t| t.owner)
            {
                Some(name) => repo.people().user_named(&name).await,
                None => Ok(None),
            }
        }
        .await;
        let _ = repo.rollback().await;
        Ok(owner?)
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
        self.read_access(principal, thread, true).await
    }

    /// [`Self::thread_access`], from what is remembered (when `recall` and it is) or read
    /// afresh, as an open stream's recheck does: it looks for a change nobody rang for, which
    /// a remembered answer would hide for as long again.
    pub(super) async fn read_access(
        &self,
        principal: &Principal,
        thread: &ThreadId,
        recall: bool,
    ) -> Result<Option<Access>, PeopleError> {
        let user = match principal {
            Principal::Anonymous | Principal::Participant(_) => return Ok(Some(Access::None)),
            Principal::Local | Principal::AdminToken => {
                let mut repo = self.db.autocommit_read().await?;
                let found = repo.threads().get_thread(thread).await;
                let _ = repo.rollback().await;
                return Ok(found?.map(|_| Access::Owner));
            }
            Principal::User(user) => user,
        };
        let remembered = self.remembered.get();
        let recalled = remembered
            .filter(|_| recall)
            .and_then(|kept| kept.access(user.id, thread));
        let row = match recalled {
            Some(row) => Some(row),
            None => {
                let began = remembered.map(|kept| kept.read_begins());
                let mut repo = self.db.autocommit_read().await?;
                let row = repo.people().thread_access(thread, user.id).await;
                let _ = repo.rollback().await;
                let row = row?;
                if let (Some(kept), Some(began), Some(row)) = (remembered, began, &row) {
                    kept.keep_access(began, user.id, thread, row);
                }
                row
            }
        };
        Ok(row.map(|(owner, role)| match (owner, role.as_deref()) {
            _ if user.role == ADMIN => Access::Owner,
            (Some(owner), _) if owner == user.id => Access::Owner,
            (_, Some("editor")) => Access::Editor,
            (_, Some("viewer")) => Access::Viewer,
            _ => Access::None,
        }))
    }

    /// The threads `principal` may see, out of `threads`, each saying what a signed-in
    /// person may do with it (`access`).
    pub async fn visible(
        &self,
        principal: &Principal,
        threads: Vec<Thread>,
    ) -> Result<Vec<Thread>, PeopleError> {
        let user = match principal {
            Principal::Anonymous | Principal::Participant(_) => return Ok(Vec::new()),
            Principal::Local | Principal::AdminToken => return Ok(threads),
            Principal::User(user) => user,
        };
        if user.role == ADMIN {
            return Ok(threads
                .into_iter()
                .map(|thread| with_access(thread, Access::Owner))
                .collect());
        }
        let mut repo = self.db.autocommit_read().await?;
        let roles = repo.people().visible_threads(user.id).await;
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
        let mut repo = self.db.autocommit_read().await?;
        let members = repo.people().members(thread).await;
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
        let id = thread.clone();
        let (name, role) = (name.to_string(), role.to_string());
        self.write(|repo| {
            Box::pin(async move {
                let user = repo
                    .people()
                    .user_named(&name)
                    .await?
                    .ok_or_else(|| no_account(&name))?;
                if let Some((Some(owner), _)) = repo.people().thread_access(&id, user.id).await?
                    && owner == user.id
                {
                    return Err(PeopleError::Invalid(format!(
                        "`{name}` owns this thread already"
                    )));
                }
                repo.people().set_member(&id, user.id, &role).await?;
                Ok(())
            })
        })
        .await?;
        self.members(thread).await
    }

    /// Stops sharing a thread with the account `name`.
    pub async fn unshare(&self, thread: &ThreadId, name: &str) -> Result<Vec<Member>, PeopleError> {
        checked_name(name)?;
        let id = thread.clone();
        let name = name.to_string();
        self.write(|repo| {
            Box::pin(async move {
                let user = repo
                    .people()
                    .user_named(&name)
                    .await?
                    .ok_or_else(|| no_account(&name))?;
                match repo.people().remove_member(&id, user.id).await? {
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
}

/// `thread` saying that the caller may do `access` with it.
pub(super) fn with_access(mut thread: Thread, access: Access) -> Thread {
    thread.access = match access {
        Access::Owner => Some("owner".to_string()),
        Access::Editor => Some("editor".to_string()),
        Access::Viewer => Some("viewer".to_string()),
        Access::None => None,
    };
    thread
}
